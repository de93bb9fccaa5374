/* `ntlens ps`: the platform helper only the CLI uses (ps-parallel-*.c). The
 * rows themselves come from the library: PsList's view of a block
 * (ntlens/perf_ps.h), taken from a source (ntlens/source_perf.h). */
#ifndef NTLENS_TOOL_PS_H
#define NTLENS_TOOL_PS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/perf_ps.h"
#include "ntlens/source_perf.h"

/* Calls fn(arg, i) for i in [0, n), each in its own thread when n > 1, and
 * returns when all are done. */
void ps_parallel(size_t n, void (*fn)(void *arg, size_t i), void *arg);

/* -d --stacks: each thread's innermost frames, each process walked once
 * (ps-stacks.c). */
struct ps_stacks;
struct ps_stacks *ps_stacks_new(const volatile sig_atomic_t *stop);
void ps_stacks_free(struct ps_stacks *s);
/* "read+0x4c < block_in_read+0x21 < reader+0x9"; "(not allowed)"; "" when
 * the thread was not walked. Returns buf or a constant. */
const char *ps_stacks_cell(struct ps_stacks *s, uint32_t pid, uint32_t tid, char *buf,
                           size_t size);

#endif
