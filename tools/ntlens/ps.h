/* `ntlens ps`: the platform helper only the CLI uses (ps-parallel-*.c). The
 * rows themselves come from the library: PsList's view of a block
 * (ntlens/perf_ps.h), taken from a source (ntlens/source_perf.h). */
#ifndef NTLENS_TOOL_PS_H
#define NTLENS_TOOL_PS_H

#include <stdbool.h>
#include <stddef.h>

#include "ntlens/perf_ps.h"
#include "ntlens/source_perf.h"

/* Calls fn(arg, i) for i in [0, n), each in its own thread when n > 1, and
 * returns when all are done. */
void ps_parallel(size_t n, void (*fn)(void *arg, size_t i), void *arg);

#endif
