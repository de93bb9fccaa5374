/* ntlens.exe under Wine reading a remote host through the Windows pipe
 * transport: the test serves \\.\pipe\winreg itself (replay_server.h, a
 * real smbd's recorded winreg answers), so `-S \\.` opens \\.\PIPE\winreg
 * exactly as `-S \\HOST` opens \\HOST\PIPE\winreg.
 *   1. `counters -N -S \\.`: exit 0, the objects of the host's Global
 *      snapshot named by its own titles (Process, 121 instances).
 *   2. The same with --call-timeout 2 against a server that sends Global one
 *      fragment every 700 ms (7.7 s): exit 1 about 2 s after the call
 *      started, the error naming QueryValue("Global"), the pipe and the 2 s.
 *   3. `--timeout 2` with \\.\pipe\winreg's only instance held by the test
 *      (the open never completes): exit 1 about 2 s in, the error naming
 *      the pipe, what it waited for and the 2 s.
 * argv[1]: the session file; argv[2]: ntlens.exe. */
#include <windows.h>

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "replay_server.h"
#include "run-win32.h"

/* \\.\pipe\winreg with its one instance taken: the open waits for a free
 * one until --timeout. */
static void open_timeout(const char *exe, struct run *r)
{
    const wchar_t *path = L"\\\\.\\pipe\\winreg";
    HANDLE server = CreateNamedPipeW(path, PIPE_ACCESS_DUPLEX, PIPE_TYPE_MESSAGE | PIPE_WAIT, 1,
                                     4096, 4096, 0, NULL);
    HANDLE holder = CreateFileW(path, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING, 0,
                                NULL);

    CHECK(server != INVALID_HANDLE_VALUE && holder != INVALID_HANDLE_VALUE);
    run(exe, "counters -N -S \\\\. --timeout 2", r);
    printf("busy pipe, --timeout 2: exit %d after %llu ms: %s", r->status,
           (unsigned long long)r->ms, r->out);
    CHECK_EQ_INT(r->status, 1);
    CHECK(r->ms >= 2000 && r->ms < 4500); /* ntlens.exe starts in about 0.3 s under Wine */
    CHECK(strstr(r->out, "opening \\\\.\\PIPE\\winreg: every instance stayed busy for 2 s "
                         "(see --timeout)") != NULL);
    CloseHandle(holder);
    CloseHandle(server);
}

int main(int argc, char **argv)
{
    static struct run r;
    struct replay_server s;
    char exe[4096];

    if (argc < 3)
        return 2;
    snprintf(exe, sizeof exe, "%s", argv[2]);
    for (char *p = exe; *p; p++)
        if (*p == '/')
            *p = '\\';
    CHECK(replay_load(&s, argv[1]));
    if (check_failures)
        return check_exit();

    CHECK(replay_start(&s, "winreg"));
    run(exe, "counters -N -S \\\\. --format csv", &r);
    CHECK(replay_wait(&s));
    CHECK_EQ_INT(r.status, 0);
    CHECK(strstr(r.out, "\n230,Process,novice,121,") != NULL); /* named by the host's titles */
    CHECK(s.closed_key);
    printf("counters -S \\\\.: exit %d, %zu bytes of CSV in %llu ms\n", r.status, strlen(r.out),
           (unsigned long long)r.ms);
    if (check_failures)
        fprintf(stderr, "output: %.2000s\n", r.out);

    s.delay_ms = 700;
    CHECK(replay_start(&s, "winreg"));
    run(exe, "counters -N -S \\\\. --call-timeout 2", &r);
    CHECK(replay_wait(&s));
    printf("slow loris, --call-timeout 2: exit %d after %llu ms: %s", r.status,
           (unsigned long long)r.ms, r.out);
    CHECK_EQ_INT(r.status, 1);
    CHECK(r.ms >= 2000 && r.ms < 7000); /* the whole reply would take 7.7 s */
    CHECK(strstr(r.out, "QueryValue(\"Global\")") != NULL);
    CHECK(strstr(r.out, "\\\\.\\PIPE\\winreg") != NULL);
    CHECK(strstr(r.out, "within 2 s") != NULL);
    CHECK(!s.closed_key);
    replay_free(&s);
    open_timeout(exe, &r);
    return check_exit();
}
