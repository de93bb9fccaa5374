/* ntlens.exe under Wine, end to end through the Windows local source:
 * `counters` answers from Wine's HKEY_PERFORMANCE_DATA, `capture` stores
 * Wine's own title database ("1847", "1846" "End Marker"), and `ps` says
 * clearly that Wine has no Process object. argv[1]: ntlens.exe. */
#include "check.h"

#include <windows.h>

#include <stdbool.h>

#include "ntlens/buf.h"
#include "run-win32.h"

static bool file_has_utf16(const char *path, const char *ascii)
{
    struct ntl_buf b;
    struct ntl_error err;
    uint8_t pat[128];
    size_t n = strlen(ascii);
    bool found = false;

    for (size_t i = 0; i < n; i++) {
        pat[2 * i] = (uint8_t)ascii[i];
        pat[2 * i + 1] = 0;
    }
    if (ntl_file_read(path, 1u << 24, &b, &err) < 0)
        return false;
    for (size_t i = 0; i + 2 * n <= b.len && !found; i++)
        found = !memcmp(b.data + i, pat, 2 * n);
    ntl_buf_free(&b);
    return found;
}

int main(int argc, char **argv)
{
    static struct run r;
    char exe[4096], tmp[MAX_PATH], cap[MAX_PATH + 32], args[MAX_PATH + 64];

    if (argc < 2) {
        fprintf(stderr, "usage: test_wine_cli NTLENS_EXE\n");
        return 2;
    }
    snprintf(exe, sizeof exe, "%s", argv[1]);
    for (char *p = exe; *p; p++)
        if (*p == '/')
            *p = '\\';
    GetTempPathA(sizeof tmp, tmp);
    snprintf(cap, sizeof cap, "%sntlens-wine-%lu.cap", tmp, (unsigned long)GetCurrentProcessId());

    run(exe, "counters --format json", &r);
    CHECK_EQ_INT(r.status, 0);
    CHECK(r.out[0] == '[');

    snprintf(args, sizeof args, "capture -n 1 -o \"%s\"", cap);
    run(exe, args, &r);
    CHECK_EQ_INT(r.status, 0);
    CHECK(file_has_utf16(cap, "End Marker"));
    CHECK(file_has_utf16(cap, "1847"));
    snprintf(args, sizeof args, "counters -S \"%s\" --format csv", cap);
    run(exe, args, &r);
    CHECK_EQ_INT(r.status, 0);
    CHECK(!strncmp(r.out, "index,", 6));
    DeleteFileA(cap);

    run(exe, "ps", &r);
    CHECK_EQ_INT(r.status, 1);
    CHECK(strstr(r.out, "no Process object") != NULL);
    if (check_failures)
        fprintf(stderr, "last output: %s\n", r.out);
    return check_exit();
}
