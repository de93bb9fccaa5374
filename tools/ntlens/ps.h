/* `ntlens ps`: what only the CLI's ps uses beside the library (PsList's rows
 * come from ntlens/perf_ps.h, taken from a source by ntlens/source_perf.h). */
#ifndef NTLENS_TOOL_PS_H
#define NTLENS_TOOL_PS_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

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
