/* Parsed performance data from a source; see ntlens/source_perf.h. */
#include "ntlens/source_perf.h"

#include <stdio.h>

#define TITLES_LIMIT (64u << 20)

int ntl_source_load_titles(struct ntl_source *src, enum ntl_title_kind kind, unsigned lang,
                           enum ntl_source_titles_fill fill, struct ntl_perf_titles *t,
                           bool *missing, struct ntl_error *err)
{
    bool help = kind == NTL_TITLES_HELP;
    struct ntl_buf raw;
    int rc;

    if (missing)
        *missing = false;
    ntl_buf_init(&raw, TITLES_LIMIT);
    /* Any failure to get the database is "missing": sources say so in
     * different ways (a capture: NTL_ERR_NOT_FOUND; Samba over winreg: a
     * remote error), and the data query that follows reports a dead peer. */
    rc = ntl_source_titles(src, kind, lang, &raw, err);
    if (rc < 0) {
        ntl_error_clear(err);
        if (missing)
            *missing = true;
        rc = 0;
    } else if (rc >= 0 && (rc = ntl_perf_titles_add(t, help, raw.data, raw.len, err)) < 0) {
        ntl_error_prefix(err, "%s %03x", help ? "Help" : "Counter", lang);
    }
    ntl_buf_free(&raw);
    if (rc < 0)
        return rc;
    if (fill == NTL_SOURCE_TITLES_STANDARD && ntl_perf_titles_add_standard(t) < 0)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    return 0;
}

int ntl_source_snapshot(struct ntl_source *src, const char *query, struct ntl_buf *raw,
                        struct ntl_perf_block **block, struct ntl_error *err)
{
    *block = NULL;
    raw->len = 0;
    int rc = ntl_source_query(src, query, raw, err);
    if (rc < 0)
        return rc;
    return ntl_perf_block_parse(raw->data, raw->len, block, err);
}

int ntl_source_ps_titles(struct ntl_source *src, struct ntl_perf_titles **titles,
                         struct ntl_perf_ps_indices *ix, struct ntl_error *err)
{
    struct ntl_perf_titles *t = ntl_perf_titles_new();
    struct ntl_buf raw;
    struct ntl_error ignored;

    *titles = NULL;
    if (!t)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    /* A source without a usable title database still has standard indices. */
    ntl_buf_init(&raw, TITLES_LIMIT);
    ntl_error_clear(&ignored);
    if (ntl_source_titles(src, NTL_TITLES_COUNTER, NTL_PERF_LANG_ENGLISH, &raw, &ignored) >= 0)
        ntl_perf_titles_add(t, false, raw.data, raw.len, &ignored);
    ntl_buf_free(&raw);
    if (ntl_perf_titles_add_standard(t) < 0) {
        ntl_perf_titles_free(t);
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    }
    ntl_perf_ps_indices_resolve(t, ix);
    *titles = t;
    return 0;
}

int ntl_source_ps_take(struct ntl_source *src, const struct ntl_perf_ps_indices *ix,
                       bool threads, bool cpus, struct ntl_perf_ps_sample *out,
                       struct ntl_error *err)
{
    char query[64];
    int rc;

    ntl_perf_ps_sample_init(out);
    ntl_perf_ps_query(ix, threads, cpus, query, sizeof query);
    if ((rc = ntl_source_query(src, query, &out->raw, err)) < 0)
        return rc;
    if ((rc = ntl_perf_ps_sample_parse(out, ix, threads, cpus, err)) < 0)
        return rc;
    if (!out->host[0])
        snprintf(out->host, sizeof out->host, "%s", ntl_source_describe(src));
    return 0;
}
