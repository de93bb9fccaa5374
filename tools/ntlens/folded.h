/* Folded stacks (Brendan Gregg's format, read by flamegraph.pl, speedscope
 * and inferno): one "root;caller;...;leaf COUNT" line per distinct stack,
 * identical stacks merged. `ntlens profile` and `ntlens stacks` both write
 * them through this. */
#ifndef NTLENS_TOOL_FOLDED_H
#define NTLENS_TOOL_FOLDED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Longest line kept; longer stacks are cut at their leaf end. */
#define FOLDED_LINE_MAX 65536

/* Appends frame to line (of length len, FOLDED_LINE_MAX bytes), after a
 * ';' unless it is the first; ';' and ' ' in names become '_'. Returns
 * the new length. */
size_t folded_append(char *line, size_t len, const char *frame);

struct folded_set;

struct folded_set *folded_new(void);
/* Counts weight more for line (copied). 0, or -1 when out of memory. */
int folded_add(struct folded_set *s, const char *line, uint64_t weight);
/* Writes the merged lines, sorted. 0, or -1 on a write error. */
int folded_write(struct folded_set *s, FILE *f);
void folded_free(struct folded_set *s);

#endif
