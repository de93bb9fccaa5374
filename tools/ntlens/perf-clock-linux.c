/* The clock of the performance-data commands on POSIX hosts. */
#include <time.h>

#include "perf-cli.h"

int64_t perf_now_unix_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
