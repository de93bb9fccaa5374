/* The one output writer for every command that prints records: an aligned
 * table, CSV, TSV, JSON (one document) or JSON lines. A command declares its
 * columns, then adds typed cells row by row; the writer applies the rules of
 * docs/cli.md so no command renders a format its own way:
 *   - keys (JSON members, CSV headers) are snake_case; table headings are
 *     Title Case, derived from the key unless given;
 *   - nothing loses precision: addresses are hex strings in every format,
 *     integers are exact, floats print the fewest digits that read back the
 *     same value;
 *   - times are ISO 8601, UTC unless out_set_local_time(true);
 *   - one table per CSV stream: a second section is refused;
 *   - a progress bar on the terminal is cleared before a row is written.
 * Table output waits for out_flush() (or out_close()) to align its columns,
 * unless every column has a width, when rows stream like the other formats.
 * CSV and TSV write the header once per stream; JSON is one array (an object
 * of arrays with sections) that out_close() ends. */
#ifndef NTLENS_TOOL_OUT_H
#define NTLENS_TOOL_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ntlens/error.h"

struct opt;

enum out_format { OUT_TABLE, OUT_CSV, OUT_TSV, OUT_JSON, OUT_JSONL };

/* "table", "csv", "tsv", "json", "jsonl" and NULL, in enum order (for OPT_CHOICE). */
extern const char *const out_format_names[];

/* The output options every command that prints records takes: --format
 * into fmt, an int holding an enum out_format (its default is whatever the
 * command put there), and --local-time. Needs parse-options.h. */
int out_local_time_cb(const struct opt *o, const char *arg, void *ctx);
#define OPT_OUTPUT_OPTIONS(fmt)                                                           \
    OPT_GROUP("Output options"),                                                          \
    OPT_CHOICE('f', "format", (fmt), "FORMAT", out_format_names,                          \
               "table (default), csv, tsv, json (one document) or jsonl (JSON lines)"),   \
    OPT_CALLBACK(0, "local-time", NULL, out_local_time_cb, NULL,                          \
                 "times in local time with their UTC offset (default: UTC)")

enum out_align { OUT_LEFT, OUT_RIGHT };

struct out;

/* A writer of fmt on f. Returns NULL only when out of memory. */
struct out *out_new(FILE *f, enum out_format fmt);
/* Ends the stream (JSON's closing bracket, a buffered table), frees the
 * writer. Returns 0, or -1 when any write failed. NULL is accepted. */
int out_close(struct out *o);

/* A column: key is snake_case; title NULL derives "Elapsed Time" from
 * "elapsed_time". Columns are declared before the first row of a section. */
void out_column(struct out *o, const char *key, const char *title, enum out_align align);
/* The table width of the last declared column; when every column has one,
 * table rows stream instead of waiting for out_flush. */
void out_column_width(struct out *o, int width);

/* Starts a named section with new columns: JSON writes {"NAME":[...],...},
 * a table a blank line between. CSV, TSV and JSON lines hold one table: a
 * second section there returns -1 (the command must not ask for it). */
int out_section(struct out *o, const char *name);

/* Cells, left to right; out_row_end ends a row (missing cells are null). */
void out_str(struct out *o, const char *s);
void out_strf(struct out *o, const char *fmt, ...) NTL_PRINTF(2, 3);
void out_u64(struct out *o, uint64_t v);
void out_i64(struct out *o, int64_t v);
/* A float: `decimals` places in table, CSV and TSV (-1: as few as round-trip
 * needs), a number in JSON that reads back exactly. NaN and infinities are null. */
void out_num(struct out *o, double v, int decimals);
/* A number shown as text in table, CSV and TSV ("0:01:02.003") and as the
 * number v in JSON. */
void out_num_text(struct out *o, double v, const char *text);
/* An address: "0x" and at least `digits` hex digits, a string in every format. */
void out_addr(struct out *o, uint64_t v, int digits);
/* A time as ISO 8601: `unix_seconds` plus `fraction` of `digits` decimal digits
 * (7 for FILETIME's 100 ns, 9 for ns), UTC "...Z" or local "+01:00". */
void out_time(struct out *o, int64_t unix_seconds, uint32_t fraction, int digits);
/* A Windows FILETIME (100 ns since 1601); 0 is null. */
void out_filetime(struct out *o, uint64_t filetime);
/* A duration in 100 ns units: PsList's "0:00:01.234" in table, CSV and TSV,
 * seconds in JSON. */
void out_duration(struct out *o, uint64_t hundred_ns);
void out_bool(struct out *o, bool v);
/* A structured cell: json (an object or array, already valid JSON) in JSON
 * and JSON lines, text in the other formats. */
void out_json(struct out *o, const char *text, const char *json);
void out_null(struct out *o);
/* Indents the next row's first cell by depth levels in a table (trees). */
void out_indent(struct out *o, int depth);
/* Returns 0, or -1 after a write error. */
int out_row_end(struct out *o);
/* Renders a buffered table now (one frame of a refreshing view); the other
 * formats just flush. Returns 0 or -1 after a write error. */
int out_flush(struct out *o);
/* For a caller that writes nothing to the FILE itself between rows: rows
 * wait in the writer's 64 KiB buffer until it fills, one write each, not
 * one per row; out_flush and out_close write the rest. */
void out_hold_rows(struct out *o);
/* ferror of the writer's FILE; holding rows, asked of the FILE only when
 * the writer wrote to it since the last time. */
bool out_file_error(struct out *o);
/* Rows a command renders itself, JSON and JSON lines only (etl events'
 * rows from per-layout templates): out_json_row_begin returns where the
 * row's object ("{...}", at most need bytes) goes in the writer's buffer,
 * after the separator JSON puts between rows, or NULL when the writer is
 * not JSON, a row has cells already, or need exceeds the buffer (then use
 * cells). out_json_row_end takes the end of what was written and ends the
 * row as out_row_end does. */
char *out_json_row_begin(struct out *o, size_t need);
int out_json_row_end(struct out *o, char *end);
/* Moves what the writer holds (out_hold_rows) to dst, at most size bytes,
 * and returns its length: a scratch writer renders fragments of rows by the
 * rules above. */
size_t out_take(struct out *o, char *dst, size_t size);
/* What out_json_string writes, to d with room for 6n + 2 bytes; the end. */
char *out_json_string_to(char *d, const char *s, size_t n);
/* Rows written so far (this section). */
uint64_t out_rows(const struct out *o);

/* Local time instead of UTC for every out_time (--local-time). */
void out_set_local_time(bool local);
/* The same text out_time writes, for messages and headings. */
char *out_format_time(char *buf, size_t size, int64_t unix_seconds, uint32_t fraction, int digits);

/* Building blocks, for text formats a command keeps (ptdump's lines). */
void out_json_string(FILE *f, const char *s);
void out_csv_field(FILE *f, const char *s, bool force_quotes);
char *out_format_duration(char *buf, size_t size, uint64_t hundred_ns);
/* The shortest "%.*g" text of v that reads back as v. */
char *out_format_double(char *buf, size_t size, double v);

#endif
