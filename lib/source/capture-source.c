/* A capture file served as a performance-data source: each query returns
 * the next snapshot (whatever the query asks; the snapshot answers what was
 * asked when it was taken), NTL_ERR_EOF after the last. */
#include "ntlens/perf_capture.h"
#include "ntlens/source.h"

#include <stdio.h>
#include <stdlib.h>

/* A capture is bounded by its snapshots, each by max_block. */
#define CAPTURE_FILE_LIMIT ((size_t)1 << 31)

struct capture_source {
    struct ntl_capture *cap;
    size_t next;
};

static int cs_query(struct ntl_source *s, const char *query, struct ntl_buf *block,
                    struct ntl_error *err)
{
    struct capture_source *cs = ntl_source_impl(s);
    (void)query;
    const struct ntl_capture_snapshot *snap = ntl_capture_snapshot(cs->cap, cs->next);
    if (!snap)
        return ntl_error_set(err, NTL_ERR_EOF, "capture", NTL_NO_OFFSET,
                             "no more snapshots (the capture holds %zu)",
                             ntl_capture_snapshot_count(cs->cap));
    block->len = 0;
    int rc = ntl_buf_append(block, snap->block, snap->size);
    if (rc < 0)
        return ntl_error_set(err, rc, "capture", NTL_NO_OFFSET,
                             "snapshot %zu (%zu bytes) does not fit the block limit", cs->next,
                             snap->size);
    cs->next++;
    return 0;
}

static int cs_titles(struct ntl_source *s, enum ntl_title_kind kind, unsigned langid,
                     struct ntl_buf *out, struct ntl_error *err)
{
    struct capture_source *cs = ntl_source_impl(s);
    const struct ntl_capture_titles *t =
        ntl_capture_find_titles(cs->cap, kind == NTL_TITLES_HELP, langid);
    if (!t)
        return ntl_error_set(err, NTL_ERR_NOT_FOUND, "capture", NTL_NO_OFFSET,
                             "no %s titles for language %03x in the capture",
                             kind == NTL_TITLES_HELP ? "help" : "counter", langid);
    out->len = 0;
    int rc = ntl_buf_append(out, t->data, t->size);
    return rc < 0 ? ntl_error_set(err, rc, "capture", NTL_NO_OFFSET, NULL) : 0;
}

static size_t cs_count(const struct ntl_source *s)
{
    const struct capture_source *cs = ntl_source_impl(s);
    return ntl_capture_snapshot_count(cs->cap);
}

static void cs_close(struct ntl_source *s)
{
    struct capture_source *cs = ntl_source_impl(s);
    ntl_capture_free(cs->cap);
    free(cs);
}

static const struct ntl_source_ops capture_ops = {
    .query = cs_query,
    .titles = cs_titles,
    .snapshot_count = cs_count,
    .close = cs_close,
};

int ntl_source_capture_open(const char *path, const struct ntl_source_options *opt,
                            struct ntl_source **out, struct ntl_error *err)
{
    (void)opt;
    *out = NULL;
    struct capture_source *cs = calloc(1, sizeof *cs);
    if (!cs)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, NULL);
    int rc = ntl_capture_load(path, CAPTURE_FILE_LIMIT, &cs->cap, err);
    if (rc < 0) {
        free(cs);
        if (rc != NTL_ERR_IO)
            ntl_error_prefix(err, "%s", path);
        return rc;
    }
    char desc[256];
    snprintf(desc, sizeof desc, "capture %s (%s)", path, ntl_capture_description(cs->cap));
    *out = ntl_source_new(&capture_ops, cs, desc);
    if (!*out) {
        ntl_capture_free(cs->cap);
        free(cs);
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, NULL);
    }
    return 0;
}
