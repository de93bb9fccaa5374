/* The clock of the performance-data commands on Windows. */
#include <windows.h>

#include "perf-cli.h"

int64_t perf_now_unix_ns(void)
{
    FILETIME ft;
    GetSystemTimeAsFileTime(&ft);
    int64_t t100 = (int64_t)(((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime);
    return (t100 - 116444736000000000LL) * 100;
}
