/* `etl events` as records (CSV, TSV, JSON, JSON lines): every header field,
 * null where a header has none, then the names and fields. JSON rows are
 * written from per-layout templates: the cells that depend only on the
 * event's layout (kind, provider, group, opcode and their names, event id,
 * level, task, keywords, event name) are rendered once per layout by the
 * writer's own rules and copied, the rest formatted straight into the
 * writer's buffer. */
#ifndef NTLENS_TOOL_ETL_RECORD_H
#define NTLENS_TOOL_ETL_RECORD_H

#include <stdbool.h>

#include "etl-common.h"
#include "etl-fields.h"
#include "ntlens/etl.h"
#include "out.h"

struct etl_layouts;

struct etl_record {
    bool raw;                     /* headers only: no names or fields */
    bool hex;                     /* a payload column */
    struct etl_layouts *layouts;  /* JSON rows from templates; NULL: cell by cell */
};

/* The columns, in order. */
void etl_record_columns(struct out *o, bool hex, bool raw);
/* Templates for JSON rows when fmt is JSON or JSON lines and no column is
 * added (hex, a file column): r->layouts set, or left NULL when not
 * applicable. Returns 0, or -1 when out of memory. */
int etl_record_templates(struct etl_record *r, enum out_format fmt, bool file_column);
/* Writes ev's row; ft is its time as FILETIME. Returns an exit status. */
int etl_record_row(struct etl_record *r, struct out *o, struct etl_cli *c,
                   const struct ntl_etl_event *ev, const struct etl_fields *f, uint64_t ft);
void etl_record_free(struct etl_record *r);

/* The provider cell: its name when known, else its GUID (table too). */
void etl_cell_provider(struct out *o, const struct ntl_etl_event *ev, const char *name);

static inline bool etl_is_kernel(const struct ntl_etl_event *ev)
{
    return ev->kind <= NTL_ETL_KIND_PERFINFO;
}

#endif
