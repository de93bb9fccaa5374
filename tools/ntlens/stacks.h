/* What `ntlens stacks` shares between its command and its printers. */
#ifndef NTLENS_TOOL_STACKS_H
#define NTLENS_TOOL_STACKS_H

#include <stddef.h>
#include <stdio.h>

#include "ntlens/stack.h"
#include "out.h"

/* --format's values: out.h's, then folded stacks, then the text blocks. */
#define STACKS_FOLDED (OUT_JSONL + 1)
#define STACKS_TEXT (OUT_JSONL + 2)

/* "module!function+0x1c", "module+0x1c40" without a name, "0x7f..."
 * without a module; cut to size - 1 bytes. */
void stacks_frame_label(const struct ntl_stack_frame *f, char *buf, size_t size);

/* A block per thread, Process Explorer's way. 0, or -1 on a write error. */
int stacks_print_text(FILE *f, const struct ntl_stack_process *p);
/* One record per frame (a thread without frames: one with its note). 0, or -1. */
int stacks_print_records(struct out *o, const struct ntl_stack_process *p);
/* One "state;outer;...;inner COUNT" line per distinct stack. 0, or -1
 * (out of memory or a write error; errno tells). */
int stacks_print_folded(FILE *f, const struct ntl_stack_process *p);

#endif
