/* Rendering for every subcommand: a command fills an out_table with typed
 * cells, then renders it as an aligned table, CSV or JSON. Commands that
 * stream (one line per event or packet) use the JSON and CSV helpers
 * directly. */
#ifndef NTLENS_TOOL_OUTPUT_H
#define NTLENS_TOOL_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ntlens/error.h"
#include "out.h"

/* Parses "table", "csv" or "json". */
bool out_format_parse(const char *s, enum out_format *fmt);


struct out_table;

struct out_table *out_table_new(void);
void out_table_free(struct out_table *t);
/* key is the JSON member name and CSV header; title the table heading
 * (NULL: same as key). */
void out_table_column(struct out_table *t, const char *key, const char *title, enum out_align align);
/* Cells are added left to right; a row ends with out_table_row_end. A cell's
 * JSON type follows the function: str -> string, u64/i64/num -> number,
 * bool -> true/false, null -> null (shown as "" in table and CSV). */
void out_table_str(struct out_table *t, const char *s);
void out_table_strf(struct out_table *t, const char *fmt, ...) NTL_PRINTF(2, 3);
void out_table_u64(struct out_table *t, uint64_t v);
void out_table_i64(struct out_table *t, int64_t v);
/* A number shown with `decimals` places in table and CSV output. */
void out_table_num(struct out_table *t, double v, int decimals);
/* A number rendered as text in table/CSV (e.g. "0x7ff6...", "1:02:03.004")
 * but as the plain number in JSON. */
void out_table_num_text(struct out_table *t, double v, const char *text);
void out_table_bool(struct out_table *t, bool v);
void out_table_null(struct out_table *t);
void out_table_row_end(struct out_table *t);
size_t out_table_rows(const struct out_table *t);
/* Indents the next row's first cell by depth levels in table output (trees). */
void out_table_indent(struct out_table *t, int depth);

/* Table: columns padded to width with a header line. CSV: RFC 4180 with a
 * header. JSON: an array of objects. Returns 0, or -1 on a write error. */
int out_table_render(const struct out_table *t, FILE *f, enum out_format fmt);
/* JSON Lines: one object per row, no enclosing array. */
int out_table_render_jsonl(const struct out_table *t, FILE *f);


#endif
