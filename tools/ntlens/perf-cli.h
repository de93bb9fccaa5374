/* The platform's clock for the performance-data commands
 * (perf-clock-linux.c, perf-clock-win32.c); sleeping is cli-stop.h's. Only
 * the CLI paces samples, so these stay here; the library logic the commands share is in
 * ntlens/perf_path.h and ntlens/source_perf.h. */
#ifndef NTLENS_TOOL_PERF_CLI_H
#define NTLENS_TOOL_PERF_CLI_H

#include <stdint.h>

/* Wall clock, Unix ns, UTC. */
int64_t perf_now_unix_ns(void);

#endif
