/* What the reader notes instead of losing silently: irregular fields it
 * read past, and buffers that a writer put in the file twice. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl-internal.h"
#include "ntlens/reader.h"

/* A buffer seen before, by sequence number (unique per session in every
 * trace we have), with what to compare a repeat against cheaply. */
struct etl_seen {
    bool used;
    uint64_t sequence;
    uint64_t offset;
    uint32_t size;
    uint64_t header_hash;
};

void etl_irregular(struct ntl_etl *t, uint64_t offset, const char *structure, const char *fmt, ...)
{
    t->st.irregularities++;
    if (t->irr_n == NTL_ETL_MAX_IRREGULARITIES)
        return;
    struct ntl_etl_irregularity *r = &t->irr[t->irr_n++];
    r->offset = offset;
    snprintf(r->structure, sizeof r->structure, "%s", structure);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
}

size_t ntl_etl_irregularities(const struct ntl_etl *t, const struct ntl_etl_irregularity **list)
{
    *list = t->irr;
    return t->irr_n;
}

/* FNV-1a over the buffer header: two buffers with the same sequence number
 * and header are compared byte for byte. */
static uint64_t header_hash(const uint8_t *raw)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < NTL_ETL_BUFFER_HEADER_SIZE; i++)
        h = (h ^ raw[i]) * 0x100000001b3u;
    return h;
}

/* The earlier buffer's bytes: in place, or read again from the file (the
 * reader seeks back before its next read, since file_pos moves). */
static int earlier_bytes(struct ntl_etl *t, const struct etl_seen *s, const uint8_t **out,
                         struct ntl_error *err)
{
    if (t->mem) {
        *out = t->mem + s->offset;
        return 0;
    }
    if (t->scratch_cap < s->size) {
        uint8_t *p = realloc(t->scratch, s->size);
        if (!p)
            return ntl_error_set(err, NTL_ERR_NOMEM, "etl", NTL_NO_OFFSET, "out of memory");
        t->scratch = p;
        t->scratch_cap = s->size;
    }
    if (fseeko(t->f, (off_t)s->offset, SEEK_SET) != 0 ||
        fread(t->scratch, 1, s->size, t->f) != s->size) {
        t->file_pos = UINT64_MAX;
        return ntl_error_set(err, NTL_ERR_IO, "file", s->offset, "cannot read the buffer again");
    }
    t->file_pos = s->offset + s->size;
    *out = t->scratch;
    return 0;
}

static size_t slot_of(uint64_t seq, size_t cap)
{
    return (size_t)((seq * 0x9e3779b97f4a7c15u) >> 20) & (cap - 1);
}

/* Room for one more in the open-addressing table (kept at most half full). */
static int reserve(struct ntl_etl *t, struct ntl_error *err)
{
    if (2 * (t->seen_n + 1) <= t->seen_cap)
        return 0;
    size_t cap = t->seen_cap ? 2 * t->seen_cap : 256;
    struct etl_seen *p = calloc(cap, sizeof *p);
    if (!p)
        return ntl_error_set(err, NTL_ERR_NOMEM, "etl", NTL_NO_OFFSET, "out of memory");
    for (size_t i = 0; i < t->seen_cap; i++) {
        if (!t->seen[i].used)
            continue;
        size_t j = slot_of(t->seen[i].sequence, cap);
        while (p[j].used)
            j = (j + 1) & (cap - 1);
        p[j] = t->seen[i];
    }
    free(t->seen);
    t->seen = p;
    t->seen_cap = cap;
    return 0;
}

int etl_buffer_repeats(struct ntl_etl *t, const uint8_t *raw, uint32_t bsize, uint64_t off,
                       uint64_t *first, struct ntl_error *err)
{
    uint64_t seq = ntl_le64(raw + 0x18), hash = header_hash(raw);
    int rc = reserve(t, err);
    if (rc < 0)
        return rc;
    size_t j = slot_of(seq, t->seen_cap);
    for (; t->seen[j].used; j = (j + 1) & (t->seen_cap - 1)) {
        const struct etl_seen *s = &t->seen[j];
        if (s->sequence != seq || s->size != bsize || s->header_hash != hash)
            continue;
        const uint8_t *before = NULL;
        if ((rc = etl_raw_body(t, &raw, err)) < 0 || (rc = earlier_bytes(t, s, &before, err)) < 0)
            return rc;
        /* raw may be t->raw, which earlier_bytes does not touch. */
        if (memcmp(before, raw, bsize) == 0) {
            *first = s->offset;
            return 1;
        }
    }
    t->seen[j] = (struct etl_seen){true, seq, off, bsize, hash};
    t->seen_n++;
    return 0;
}

void etl_irregular_reset(struct ntl_etl *t)
{
    t->irr_n = 0;
    t->seen_n = 0;
    if (t->seen)
        memset(t->seen, 0, t->seen_cap * sizeof *t->seen);
}

void etl_irregular_free(struct ntl_etl *t)
{
    free(t->seen);
    free(t->scratch);
}
