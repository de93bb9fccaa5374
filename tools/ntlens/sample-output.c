/* `ntlens sample`'s rows. CSV and TSV are typeperf's layouts, so tools that
 * read typeperf's files (relog, PAL, spreadsheets set up for them) read
 * ours: a "(PDH-CSV 4.0)" header naming each full counter path, then per
 * sample the local time as MM/DD/YYYY HH:MM:SS.mmm and each value with six
 * decimals (" " when it cannot be computed), every field quoted. Table, JSON
 * and JSON lines go through the writer with an ISO 8601 `timestamp` column
 * and one column per counter path, keyed by the path. Each row is flushed
 * whole, so an interrupted run leaves whole lines. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf-cli.h"
#include "sample.h"

struct sample_output {
    FILE *f;
    enum out_format fmt;
    struct out *out; /* NULL for typeperf's layouts */
};

/* The block's own time (its SYSTEMTIME, UTC), or now when it has none. */
static void row_time(const struct ntl_perf_block *b, int64_t *secs, unsigned *ms)
{
    *ms = b->system_time.milliseconds % 1000;
    if (!ntl_perf_systemtime_to_unix(&b->system_time, secs)) {
        int64_t ns = perf_now_unix_ns();
        *secs = ns / 1000000000;
        *ms = (unsigned)(ns / 1000000 % 1000);
    }
}

/* typeperf's time: local, MM/DD/YYYY HH:MM:SS.mmm. */
static void typeperf_time(const struct ntl_perf_block *b, char *buf, size_t size)
{
    int64_t secs;
    unsigned ms;
    row_time(b, &secs, &ms);
    time_t t = (time_t)secs;
    struct tm *tm = localtime(&t);
    if (!tm)
        snprintf(buf, size, "?");
    else
        snprintf(buf, size, "%02d/%02d/%04d %02d:%02d:%02d.%03u", tm->tm_mon + 1, tm->tm_mday,
                 tm->tm_year + 1900, tm->tm_hour, tm->tm_min, tm->tm_sec, ms);
}

static void typeperf_field(struct sample_output *so, const char *s, bool first)
{
    if (!first)
        fputc(so->fmt == OUT_TSV ? '\t' : ',', so->f);
    out_csv_field(so->f, s, true);
}

static void typeperf_header(struct sample_output *so, const struct sample_columns *cols)
{
    typeperf_field(so, so->fmt == OUT_TSV ? "(PDH-TSV 4.0)" : "(PDH-CSV 4.0)", true);
    for (size_t i = 0; i < cols->n; i++)
        typeperf_field(so, cols->v[i].path, false);
    fputc('\n', so->f);
}

static void typeperf_row(struct sample_output *so, const struct ntl_perf_block *b,
                         const double *v, const bool *ok, size_t n)
{
    char buf[64];
    typeperf_time(b, buf, sizeof buf);
    typeperf_field(so, buf, true);
    for (size_t i = 0; i < n; i++) {
        snprintf(buf, sizeof buf, "%f", v[i]);
        typeperf_field(so, ok[i] ? buf : " ", false);
    }
    fputc('\n', so->f);
}

/* Every column has a width, so a table streams row by row. */
static void writer_columns(struct out *o, const struct sample_columns *cols)
{
    char t[64];
    out_column(o, "timestamp", NULL, OUT_LEFT);
    out_column_width(o, (int)strlen(out_format_time(t, sizeof t, 0, 0, 3)));
    for (size_t i = 0; i < cols->n; i++) {
        size_t w = strlen(cols->v[i].path);
        out_column(o, cols->v[i].path, cols->v[i].path, OUT_RIGHT);
        out_column_width(o, w > 15 ? (int)w : 15);
    }
}

static void writer_row(struct out *o, const struct ntl_perf_block *b, const double *v,
                       const bool *ok, size_t n)
{
    int64_t secs;
    unsigned ms;
    row_time(b, &secs, &ms);
    out_time(o, secs, ms, 3);
    for (size_t i = 0; i < n; i++) {
        if (ok[i])
            out_num(o, v[i], 6);
        else
            out_null(o);
    }
    out_row_end(o);
}

struct sample_output *sample_output_new(FILE *f, enum out_format fmt,
                                        const struct sample_columns *cols)
{
    struct sample_output *so = calloc(1, sizeof *so);
    if (!so)
        return NULL;
    so->f = f;
    so->fmt = fmt;
    if (fmt == OUT_CSV || fmt == OUT_TSV) {
        typeperf_header(so, cols);
        fflush(f);
        return so;
    }
    if (!(so->out = out_new(f, fmt))) {
        free(so);
        return NULL;
    }
    writer_columns(so->out, cols);
    return so;
}

int sample_output_row(struct sample_output *so, const struct ntl_perf_block *b, const double *v,
                      const bool *ok, size_t n)
{
    if (so->out)
        writer_row(so->out, b, v, ok, n);
    else
        typeperf_row(so, b, v, ok, n);
    fflush(so->f);
    return ferror(so->f) ? -1 : 0;
}

int sample_output_close(struct sample_output *so)
{
    int rc = 0;
    if (!so)
        return 0;
    if (so->out)
        rc = out_close(so->out);
    fflush(so->f);
    if (ferror(so->f))
        rc = -1;
    free(so);
    return rc;
}
