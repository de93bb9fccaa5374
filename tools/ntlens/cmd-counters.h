/* ntlens counters, split in two: cmd-counters.c parses the options and reads
 * each source; cmd-counters-list.c turns one source's snapshot into records
 * (objects, counters, instances or counter paths) through out.h. */
#ifndef NTLENS_TOOL_CMD_COUNTERS_H
#define NTLENS_TOOL_CMD_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/perf.h"
#include "out.h"

/* What is listed, one record per row. */
enum counters_view { VIEW_OBJECTS, VIEW_COUNTERS, VIEW_INSTANCES, VIEW_PATHS };

struct counters_opts {
    bool instances, explain, paths, std_titles;
    uint32_t detail;
    unsigned lang;
    const char *query;
    int fmt;                 /* enum out_format */
    char **objects;          /* OBJECT operands */
    int nobjects;
    enum counters_view view; /* from the options and operands */
    bool host_column;        /* several sources: rows start with the host */
};

/* One source's data, as the listing needs it. */
struct counters_source {
    const struct ntl_perf_block *block;
    const struct ntl_perf_titles *titles, *help;
    const char *host;        /* the block's system name, or the source's description */
};

/* Declares the view's columns (before the first source's rows). */
void counters_columns(struct out *t, const struct counters_opts *o);
/* Adds one source's rows; returns how many. Counter paths in the default
 * (table) format are typeperf -q's plain lines on stdout instead (t unused). */
size_t counters_rows(struct out *t, const struct counters_opts *o, const struct counters_source *s);

#endif
