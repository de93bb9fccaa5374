/* The parts of `ntlens sample`: cmd-sample.c parses options and opens the
 * sources; sample-run.c takes the snapshots; sample-columns.c turns counter paths into columns and computes
 * one row of values per snapshot; sample-output.c prints the rows (typeperf's
 * PDH-CSV/TSV layout, or the writer's table, JSON and JSON lines);
 * cli-stop.h lets Ctrl-C end a run with its output whole. */
#ifndef NTLENS_TOOL_SAMPLE_H
#define NTLENS_TOOL_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ntlens/buf.h"
#include "ntlens/perf.h"
#include "ntlens/perf_path.h"
#include "ntlens/perf_value.h"
#include "ntlens/source.h"
#include "out.h"

/* What the options asked for. */
struct sample_opts {
    double interval;          /* seconds between snapshots of a live source */
    long count;               /* rows to print; 0: no limit */
    int fmt;                  /* enum out_format */
    bool scale, std_titles;
    unsigned lang;
    const char *query;
    const char *output;       /* -o FILE; NULL: stdout */
    const char *counter_file; /* -cf FILE */
    const char *server;       /* typeperf's -s HOST */
};

/* One source and its current snapshot. */
struct sample_host {
    struct ntl_source *src;
    const char *machine;        /* the \\MACHINE of paths it serves; NULL: paths without one */
    struct ntl_perf_titles *titles;
    bool no_titles;             /* the source gave no title database */
    struct ntl_buf raw;
    struct ntl_perf_block *block;
};

/* One counter of one instance on one host: a column of the output. */
struct sample_column {
    size_t host;             /* index into the hosts */
    char *path;              /* \\MACHINE\Object(instance)\Counter as printed */
    uint32_t object_index;
    uint32_t counter_index;  /* name index of the counter */
    size_t counter_pos;      /* position among the object's definitions */
    char *instance;          /* path name (parent/name#N); NULL: no instances */
    int32_t scale;
    bool have_prev;
    struct ntl_perf_raw prev;
};

struct sample_columns {
    struct sample_column *v;
    size_t n, cap;
};

/* Loads titles, expands the paths against the first snapshots and prints
 * a row per snapshot until the count, the end of a capture, or Ctrl-C.
 * Returns the exit code, after printing any error. */
int sample_run(const char *cmd, const struct sample_opts *o, struct sample_host *hosts,
               size_t nhosts, char **paths, size_t npaths);

/* Adds the columns a parsed path matches in the host's current block.
 * Returns how many, or a negative status with err set. */
long sample_columns_expand(struct sample_columns *cols, const struct ntl_perf_path *p,
                           size_t host, const struct ntl_perf_block *b,
                           const struct ntl_perf_titles *titles, struct ntl_error *err);
void sample_columns_free(struct sample_columns *cols);
/* True when some column is a rate or a timer: its first value needs a second snapshot. */
bool sample_columns_need_priming(const struct sample_columns *cols,
                                 const struct sample_host *hosts);

/* Each column's value in its host's current block, from the previous
 * sample (updated here). ok[i] is false when it cannot be computed: the
 * instance is gone, no time passed, the counter went backwards. */
void sample_values(struct sample_columns *cols, const struct sample_host *hosts, bool scale,
                   double *v, bool *ok);

/* Rows on f. OUT_CSV and OUT_TSV are typeperf's layouts ("(PDH-CSV 4.0)",
 * local MM/DD/YYYY time, every field quoted); the others go through out.h
 * with an ISO 8601 `timestamp` column. NULL when out of memory. */
struct sample_output;
struct sample_output *sample_output_new(FILE *f, enum out_format fmt,
                                        const struct sample_columns *cols);
/* One row at the time of block b. Returns 0, or -1 after a write error. */
int sample_output_row(struct sample_output *so, const struct ntl_perf_block *b, const double *v,
                      const bool *ok, size_t n);
/* Ends the output (JSON's closing bracket) and frees it; -1 after a write error. */
int sample_output_close(struct sample_output *so);

#endif
