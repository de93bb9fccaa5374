/* Capture files (docs/capture-format.md): a 16-byte header, then records
 * of {u32 type, u32 flags, u64 length, payload, zero padding to 8}. */
#include "ntlens/perf_capture.h"

#include <stdlib.h>
#include <string.h>

#include "ntlens/reader.h"

#define MAGIC "NTLCAP\r\n"
#define VERSION 1u
#define HEADER_SIZE 16u
#define RECORD_HEADER 16u

enum record_type {
    REC_SOURCE = 1,   /* UTF-8 description, NUL-terminated */
    REC_TITLES = 2,   /* u32 kind (0 names, 1 help), u32 langid, raw answer */
    REC_SNAPSHOT = 3, /* i64 unix_ns, u32 query bytes (with NUL), u32 0, query, pad 8, block */
};

/* ---- writer ---- */

struct ntl_capture_writer {
    struct ntl_buf out;
    size_t snapshots;
    size_t titles;
};

static int begin_record(struct ntl_buf *b, uint32_t type, uint64_t len)
{
    int rc;
    if ((rc = ntl_buf_put_u32(b, type)) < 0 || (rc = ntl_buf_put_u32(b, 0)) < 0 ||
        (rc = ntl_buf_put_u64(b, len)) < 0)
        return rc;
    return 0;
}

struct ntl_capture_writer *ntl_capture_writer_new(const char *description)
{
    struct ntl_capture_writer *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    ntl_buf_init(&w->out, 0);
    size_t dlen = strlen(description ? description : "") + 1;
    if (ntl_buf_append(&w->out, MAGIC, 8) < 0 || ntl_buf_put_u32(&w->out, VERSION) < 0 ||
        ntl_buf_put_u32(&w->out, HEADER_SIZE) < 0 || begin_record(&w->out, REC_SOURCE, dlen) < 0 ||
        ntl_buf_append(&w->out, description ? description : "", dlen) < 0 ||
        ntl_buf_align(&w->out, 8) < 0) {
        ntl_capture_writer_free(w);
        return NULL;
    }
    return w;
}

void ntl_capture_writer_free(struct ntl_capture_writer *w)
{
    if (!w)
        return;
    ntl_buf_free(&w->out);
    free(w);
}

int ntl_capture_writer_titles(struct ntl_capture_writer *w, bool help, unsigned langid,
                              const void *data, size_t size, struct ntl_error *err)
{
    int rc;
    if (w->titles >= NTL_CAPTURE_MAX_TITLES)
        return ntl_error_set(err, NTL_ERR_LIMIT, "capture", NTL_NO_OFFSET,
                             "more than %u title databases", NTL_CAPTURE_MAX_TITLES);
    if ((rc = begin_record(&w->out, REC_TITLES, 8 + (uint64_t)size)) < 0 ||
        (rc = ntl_buf_put_u32(&w->out, help ? 1 : 0)) < 0 ||
        (rc = ntl_buf_put_u32(&w->out, langid)) < 0 ||
        (rc = ntl_buf_append(&w->out, data, size)) < 0 || (rc = ntl_buf_align(&w->out, 8)) < 0)
        return ntl_error_set(err, rc, "capture", NTL_NO_OFFSET, "adding a title database");
    w->titles++;
    return 0;
}

int ntl_capture_writer_snapshot(struct ntl_capture_writer *w, int64_t unix_ns,
                                const char *query, const void *block, size_t size,
                                struct ntl_error *err)
{
    int rc;
    if (w->snapshots >= NTL_CAPTURE_MAX_SNAPSHOTS)
        return ntl_error_set(err, NTL_ERR_LIMIT, "capture", NTL_NO_OFFSET,
                             "more than %u snapshots", NTL_CAPTURE_MAX_SNAPSHOTS);
    size_t qlen = strlen(query ? query : "") + 1, qpad = (qlen + 7) & ~(size_t)7;
    if ((rc = begin_record(&w->out, REC_SNAPSHOT, 16 + (uint64_t)qpad + size)) < 0 ||
        (rc = ntl_buf_put_u64(&w->out, (uint64_t)unix_ns)) < 0 ||
        (rc = ntl_buf_put_u32(&w->out, (uint32_t)qlen)) < 0 ||
        (rc = ntl_buf_put_u32(&w->out, 0)) < 0 ||
        (rc = ntl_buf_append(&w->out, query ? query : "", qlen)) < 0 ||
        (rc = ntl_buf_align(&w->out, 8)) < 0 || (rc = ntl_buf_append(&w->out, block, size)) < 0 ||
        (rc = ntl_buf_align(&w->out, 8)) < 0)
        return ntl_error_set(err, rc, "capture", NTL_NO_OFFSET, "adding a snapshot");
    w->snapshots++;
    return 0;
}

size_t ntl_capture_writer_count(const struct ntl_capture_writer *w)
{
    return w->snapshots;
}

const struct ntl_buf *ntl_capture_writer_bytes(const struct ntl_capture_writer *w)
{
    return &w->out;
}

int ntl_capture_writer_save(struct ntl_capture_writer *w, const char *path,
                            struct ntl_error *err)
{
    return ntl_file_write(path, w->out.data, w->out.len, err);
}

/* ---- reader ---- */

struct ntl_capture {
    const char *description;
    struct ntl_capture_snapshot *snapshots;
    size_t nsnapshots;
    struct ntl_capture_titles *titles;
    size_t ntitles;
    struct ntl_buf owned; /* the file's bytes, for ntl_capture_load */
};

/* A NUL-terminated UTF-8 string of exactly len bytes (NUL included). */
static bool terminated(const uint8_t *p, uint64_t len)
{
    return len > 0 && p[len - 1] == 0 && memchr(p, 0, (size_t)len) == p + len - 1;
}

static int walk(const uint8_t *p, size_t size, struct ntl_capture *c, bool fill,
                struct ntl_error *err)
{
    size_t pos = HEADER_SIZE, ns = 0, nt = 0;
    bool have_source = false;
    while (pos < size) {
        if (size - pos < RECORD_HEADER)
            return ntl_error_set(err, NTL_ERR_TRUNCATED, "capture record", pos,
                                 "%zu bytes left, a record header needs %u", size - pos,
                                 RECORD_HEADER);
        uint32_t type = ntl_le32(p + pos);
        uint64_t len = ntl_le64(p + pos + 8);
        size_t body = pos + RECORD_HEADER;
        if (len > size - body)
            return ntl_error_set(err, NTL_ERR_TRUNCATED, "capture record", pos + 8,
                                 "length %llu runs past the end of the file (%zu bytes left)",
                                 (unsigned long long)len, size - body);
        const uint8_t *b = p + body;
        switch (type) {
        case REC_SOURCE:
            if (!terminated(b, len))
                return ntl_error_set(err, NTL_ERR_FORMAT, "capture source record", body,
                                     "description is not one NUL-terminated string");
            if (have_source)
                return ntl_error_set(err, NTL_ERR_FORMAT, "capture source record", pos,
                                     "a second source record");
            have_source = true;
            if (fill)
                c->description = (const char *)b;
            break;
        case REC_TITLES: {
            if (len < 8)
                return ntl_error_set(err, NTL_ERR_FORMAT, "capture titles record", pos + 8,
                                     "length %llu, needs at least 8", (unsigned long long)len);
            uint32_t kind = ntl_le32(b);
            if (kind > 1)
                return ntl_error_set(err, NTL_ERR_FORMAT, "capture titles record", body,
                                     "kind %u (0: names, 1: help)", kind);
            if (++nt > NTL_CAPTURE_MAX_TITLES)
                return ntl_error_set(err, NTL_ERR_LIMIT, "capture titles record", pos,
                                     "more than %u title databases", NTL_CAPTURE_MAX_TITLES);
            if (fill) {
                struct ntl_capture_titles *t = &c->titles[nt - 1];
                t->help = kind == 1;
                t->langid = ntl_le32(b + 4);
                t->data = b + 8;
                t->size = (size_t)len - 8;
            }
            break;
        }
        case REC_SNAPSHOT: {
            if (len < 16)
                return ntl_error_set(err, NTL_ERR_FORMAT, "capture snapshot record", pos + 8,
                                     "length %llu, needs at least 16", (unsigned long long)len);
            uint32_t qlen = ntl_le32(b + 8);
            uint64_t qpad = ((uint64_t)qlen + 7) & ~(uint64_t)7;
            if (qpad > len - 16 || !terminated(b + 16, qlen))
                return ntl_error_set(err, NTL_ERR_FORMAT, "capture snapshot record", body + 8,
                                     "query (%u bytes) is not a NUL-terminated string within "
                                     "the record", qlen);
            if (++ns > NTL_CAPTURE_MAX_SNAPSHOTS)
                return ntl_error_set(err, NTL_ERR_LIMIT, "capture snapshot record", pos,
                                     "more than %u snapshots", NTL_CAPTURE_MAX_SNAPSHOTS);
            if (fill) {
                struct ntl_capture_snapshot *s = &c->snapshots[ns - 1];
                s->unix_ns = (int64_t)ntl_le64(b);
                s->query = (const char *)(b + 16);
                s->block = b + 16 + qpad;
                s->size = (size_t)(len - 16 - qpad);
            }
            break;
        }
        default:
            break; /* records of later versions are skipped */
        }
        uint64_t next = body + len;
        next = (next + 7) & ~(uint64_t)7;
        pos = next > size ? size : (size_t)next;
    }
    if (!have_source)
        return ntl_error_set(err, NTL_ERR_FORMAT, "capture", HEADER_SIZE, "no source record");
    c->nsnapshots = ns;
    c->ntitles = nt;
    return 0;
}

int ntl_capture_parse(const void *data, size_t size, struct ntl_capture **out,
                      struct ntl_error *err)
{
    const uint8_t *p = data;
    *out = NULL;
    if (size < HEADER_SIZE)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "capture header", 0,
                             "%zu bytes, the header needs %u", size, HEADER_SIZE);
    if (memcmp(p, MAGIC, 8))
        return ntl_error_set(err, NTL_ERR_FORMAT, "capture header", 0,
                             "not an ntlens capture (magic \"NTLCAP\\r\\n\" missing)");
    uint32_t version = ntl_le32(p + 8), hdr = ntl_le32(p + 12);
    if (version != VERSION)
        return ntl_error_set(err, NTL_ERR_UNSUPPORTED, "capture header", 8,
                             "version %u (this ntlens reads version %u)", version, VERSION);
    if (hdr != HEADER_SIZE)
        return ntl_error_set(err, NTL_ERR_FORMAT, "capture header", 12, "header size %u", hdr);

    struct ntl_capture *c = calloc(1, sizeof *c);
    if (!c)
        return ntl_error_set(err, NTL_ERR_NOMEM, "capture", NTL_NO_OFFSET, NULL);
    int rc = walk(p, size, c, false, err);
    if (rc < 0) {
        free(c);
        return rc;
    }
    c->snapshots = calloc(c->nsnapshots ? c->nsnapshots : 1, sizeof *c->snapshots);
    c->titles = calloc(c->ntitles ? c->ntitles : 1, sizeof *c->titles);
    if (!c->snapshots || !c->titles) {
        ntl_capture_free(c);
        return ntl_error_set(err, NTL_ERR_NOMEM, "capture", NTL_NO_OFFSET, NULL);
    }
    walk(p, size, c, true, err);
    *out = c;
    return 0;
}

int ntl_capture_load(const char *path, size_t max_size, struct ntl_capture **out,
                     struct ntl_error *err)
{
    struct ntl_buf b;
    ntl_buf_init(&b, 0);
    *out = NULL;
    int rc = ntl_file_read(path, max_size, &b, err);
    if (rc < 0)
        return rc;
    if ((rc = ntl_capture_parse(b.data, b.len, out, err)) < 0) {
        ntl_buf_free(&b);
        return rc;
    }
    (*out)->owned = b;
    return 0;
}

void ntl_capture_free(struct ntl_capture *c)
{
    if (!c)
        return;
    free(c->snapshots);
    free(c->titles);
    ntl_buf_free(&c->owned);
    free(c);
}

const char *ntl_capture_description(const struct ntl_capture *c)
{
    return c->description;
}

size_t ntl_capture_snapshot_count(const struct ntl_capture *c)
{
    return c->nsnapshots;
}

const struct ntl_capture_snapshot *ntl_capture_snapshot(const struct ntl_capture *c, size_t i)
{
    return i < c->nsnapshots ? &c->snapshots[i] : NULL;
}

size_t ntl_capture_titles_count(const struct ntl_capture *c)
{
    return c->ntitles;
}

const struct ntl_capture_titles *ntl_capture_titles_at(const struct ntl_capture *c, size_t i)
{
    return i < c->ntitles ? &c->titles[i] : NULL;
}

const struct ntl_capture_titles *ntl_capture_find_titles(const struct ntl_capture *c, bool help,
                                                         unsigned langid)
{
    for (size_t i = 0; i < c->ntitles; i++)
        if (c->titles[i].help == help && c->titles[i].langid == langid)
            return &c->titles[i];
    return NULL;
}
