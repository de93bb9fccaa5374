/* logfmt lines on stderr (go-kit's log format, which Prometheus' own
 * servers write), one write per line so threads never interleave. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "exporter.h"

static size_t put_value(char *buf, size_t n, size_t size, const char *v)
{
    bool quote = !*v || strpbrk(v, " =\"\\\n\t") != NULL;
    if (quote && n < size)
        buf[n++] = '"';
    for (; *v && n + 2 < size; v++) {
        if (*v == '"' || *v == '\\')
            buf[n++] = '\\';
        if (*v == '\n') {
            buf[n++] = '\\';
            buf[n++] = 'n';
            continue;
        }
        buf[n++] = *v;
    }
    if (quote && n < size)
        buf[n++] = '"';
    return n;
}

void exp_log(const char *level, const char *msg, ...)
{
    char buf[2048];
    struct timespec ts;
    struct tm tm;
    size_t n;
    va_list ap;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = strftime(buf, sizeof buf, "ts=%Y-%m-%dT%H:%M:%S", &tm);
    n += (size_t)snprintf(buf + n, sizeof buf - n, ".%03ldZ level=%s msg=", ts.tv_nsec / 1000000,
                          level);
    n = put_value(buf, n, sizeof buf - 2, msg);
    va_start(ap, msg);
    for (const char *k; (k = va_arg(ap, const char *)) != NULL && n + 4 < sizeof buf;) {
        const char *v = va_arg(ap, const char *);
        n += (size_t)snprintf(buf + n, sizeof buf - n, " %s=", k);
        if (n >= sizeof buf - 2)
            break;
        n = put_value(buf, n, sizeof buf - 2, v ? v : "");
    }
    va_end(ap);
    if (n > sizeof buf - 2)
        n = sizeof buf - 2;
    buf[n++] = '\n';
    fwrite(buf, 1, n, stderr);
    fflush(stderr);
}
