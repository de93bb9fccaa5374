#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "ntlens %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'ntlens %s --help'.\n", cmd);
    return EXIT_USAGE;
}

int cli_fail(const char *cmd, const struct ntl_error *err, const char *context)
{
    char buf[512];
    ntl_error_format(err, buf, sizeof buf);
    if (context)
        fprintf(stderr, "ntlens %s: %s: %s\n", cmd, context, buf);
    else
        fprintf(stderr, "ntlens %s: %s\n", cmd, buf);
    return EXIT_FAIL;
}

/* One stderr line: "ntlens CMD: PREFIXmessage". */
static void vmessage(const char *cmd, const char *prefix, const char *fmt, va_list ap)
{
    fprintf(stderr, "ntlens %s: %s", cmd, prefix);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int cli_failf(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(cmd, "", fmt, ap);
    va_end(ap);
    return EXIT_FAIL;
}

void cli_warn(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(cmd, "warning: ", fmt, ap);
    va_end(ap);
}

bool cli_parse_u64(const char *s, uint64_t *v)
{
    char *end;
    unsigned long long x;
    if (!s || !*s || *s == '-')
        return false;
    errno = 0;
    x = strtoull(s, &end, 0);
    if (errno || *end)
        return false;
    *v = x;
    return true;
}

bool cli_parse_int(const char *s, long min, long max, long *v)
{
    char *end;
    long x;
    if (!s || !*s)
        return false;
    errno = 0;
    x = strtol(s, &end, 10);
    if (errno || *end || x < min || x > max)
        return false;
    *v = x;
    return true;
}

bool cli_parse_double(const char *s, double *v)
{
    char *end;
    double x;
    if (!s || !*s)
        return false;
    errno = 0;
    x = strtod(s, &end);
    if (errno || *end)
        return false;
    *v = x;
    return true;
}

bool cli_is_decimal(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

bool cli_stderr_is_terminal(void)
{
    return isatty(2) != 0;
}

bool cli_stdout_is_terminal(void)
{
    return isatty(1) != 0;
}
