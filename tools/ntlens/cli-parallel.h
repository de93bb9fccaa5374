/* Running one job per source at once, so that a server that stalls costs
 * its own timeout, not the sum of everyone's (cli-parallel-*.c). */
#ifndef NTLENS_TOOL_CLI_PARALLEL_H
#define NTLENS_TOOL_CLI_PARALLEL_H

#include <stddef.h>

/* Calls fn(arg, i) for i in [0, n), each in its own thread when n > 1, and
 * returns when all are done. */
void cli_parallel(size_t n, void (*fn)(void *arg, size_t i), void *arg);

#endif
