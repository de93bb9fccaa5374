/* The Windows CLI tests' way to run ntlens.exe (under Wine): a command
 * line through the C runtime's shell, stderr folded into stdout, with its
 * exit status and wall time. */
#ifndef NTLENS_TEST_RUN_WIN32_H
#define NTLENS_TEST_RUN_WIN32_H

#include <windows.h>

#include <stdio.h>

struct run {
    int status; /* -1 when it could not start */
    ULONGLONG ms;
    char out[1 << 18];
};

/* Runs "EXE ARGS" (stderr to stdout) and collects its output. */
static inline void run(const char *exe, const char *args, struct run *r)
{
    char cmd[8192];
    ULONGLONG t0 = GetTickCount64();
    FILE *p;
    size_t n = 0;

    snprintf(cmd, sizeof cmd, "\"\"%s\" %s 2>&1\"", exe, args);
    r->out[0] = '\0';
    r->status = -1;
    if (!(p = _popen(cmd, "r")))
        return;
    while (n < sizeof r->out - 1) {
        size_t k = fread(r->out + n, 1, sizeof r->out - 1 - n, p);
        if (!k)
            break;
        n += k;
    }
    r->out[n] = '\0';
    r->status = _pclose(p);
    r->ms = GetTickCount64() - t0;
}

#endif
