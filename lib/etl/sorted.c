/* Sorted mode (ntl_etl_options.sorted): the trace read once in file order
 * for its events' times and places, then its events returned in time
 * order from the buffers kept.
 *
 * With sorted_reload a buffer's bytes are not kept from the first reading:
 * the buffer is read (and decompressed) again when its first event comes,
 * into a block a dropped buffer left, and dropped after its last event. A
 * trace's events interleave the buffers of its CPUs, so a few are held at
 * a time (8 for a trace of 8 CPUs) and their blocks are reused: holding all
 * of net.4.5.2.x64.etl's 23 MB decompressed cost more in page faults on
 * fresh memory and their copy than its second decompression does. */
#include <stdlib.h>
#include <string.h>

#include "ahead.h"
#include "etl-internal.h"
#include "ntlens/compress.h"

static int nomem(struct ntl_error *err)
{
    return ntl_error_set(err, NTL_ERR_NOMEM, "sorted events", NTL_NO_OFFSET, "out of memory");
}

/* The current buffer appended to t->kept: its bytes copied, unless they
 * are read again later (sorted_reload). */
static int keep_buffer(struct ntl_etl *t, struct ntl_error *err)
{
    if (t->kept_bytes + t->cur.end > t->sorted_limit)
        return ntl_error_set(err, NTL_ERR_LIMIT, "sorted events", t->buf.offset,
                             "the trace needs more than %llu bytes in memory to sort",
                             (unsigned long long)t->sorted_limit);
    if (t->kept_n == t->kept_cap) {
        size_t nc = t->kept_cap ? t->kept_cap * 2 : 64;
        struct etl_kept *k = realloc(t->kept, nc * sizeof *k);
        if (!k)
            return nomem(err);
        t->kept = k;
        t->kept_cap = nc;
    }
    struct etl_kept *k = &t->kept[t->kept_n];
    memset(k, 0, sizeof *k);
    k->buf = t->buf;
    k->cur = t->cur;
    k->cur.data = NULL;
    if (!t->sorted_reload) {
        if (!(k->data = malloc(t->cur.end)))
            return nomem(err);
        memcpy(k->data, t->cur.data, t->cur.end);
        k->cur.data = k->data;
        k->loaded = true;
    }
    t->kept_n++;
    t->kept_bytes += t->cur.end;
    return 0;
}

/* The decompressing thread (decompress_ahead) sent over the compressed
 * buffers again in the order their first events come, which is the order
 * they are read again. Without sorted_reload, or when it cannot, it stops:
 * the reader decompresses alone. */
static void follow(struct ntl_etl *t)
{
    uint64_t *list = t->sorted_reload ? malloc(t->kept_n * sizeof *list + 1) : NULL;
    size_t n = 0;
    for (size_t i = 0; list && i < t->sorted_n; i++) {
        struct etl_kept *k = &t->kept[t->sorted[i].buffer];
        if (k->buf.compressed && !k->ahead_key) {
            list[n] = k->buf.offset;
            k->ahead_key = ++n;
        }
    }
    if (!n || etl_ahead_follow(t->ahead, list, n) < 0) {
        if (n)
            list = NULL; /* the thread's */
        free(list);
        for (size_t i = 0; i < t->kept_n; i++)
            t->kept[i].ahead_key = 0;
        etl_ahead_stop(t->ahead);
        t->ahead = NULL;
    }
}

/* Reads everything, keeping each buffer (or its place), and sorts. */
static int sorted_load(struct ntl_etl *t, struct ntl_error *err)
{
    struct ntl_etl_event ev;
    int rc;
    while ((rc = etl_stream_next(t, &ev, err)) != 0) {
        if (rc < 0)
            return rc; /* the caller may call again to skip the bad buffer */
        if ((!t->kept_n || t->kept[t->kept_n - 1].buf.index != t->buf.index) &&
            (rc = keep_buffer(t, err)) < 0)
            return rc;
        if (t->sorted_n == t->sorted_cap) {
            /* 1 MiB at first: glibc maps it apart, so growing it moves
             * no bytes, and pages never written cost nothing. */
            size_t nc = t->sorted_cap ? t->sorted_cap * 2 : 65536;
            struct sorted_ev *s = realloc(t->sorted, nc * sizeof *s);
            if (!s)
                return nomem(err);
            t->sorted = s;
            t->sorted_cap = nc;
        }
        struct sorted_ev *s = &t->sorted[t->sorted_n];
        s->timestamp = ev.timestamp;
        s->buffer = (uint32_t)(t->kept_n - 1);
        s->pos = ev.buffer_pos;
        t->kept[t->kept_n - 1].left++;
        t->sorted_n++;
    }
    if (etl_sort_events(&t->sorted, t->sorted_n, &t->sorted_cap) < 0)
        return nomem(err);
    t->sorted_ready = true;
    if (t->ahead)
        follow(t);
    return 0;
}

/* A block of at least need bytes for k: a spare one, replaced if short. */
static int take_block(struct ntl_etl *t, struct etl_kept *k, size_t need, struct ntl_error *err)
{
    if (!k->data && t->spare_n) {
        t->spare_n--;
        k->data = t->spare[t->spare_n].p;
        k->cap = t->spare[t->spare_n].cap;
    }
    return etl_block_reserve(&k->data, &k->cap, need) ? 0 : nomem(err);
}

/* k's events are all returned: its block goes back to the spares. */
static void drop(struct ntl_etl *t, struct etl_kept *k)
{
    k->loaded = false;
    k->cur.data = NULL;
    if (!k->data)
        return;
    if (t->spare_n == t->spare_cap) {
        size_t nc = t->spare_cap ? 2 * t->spare_cap : 16;
        struct etl_block *s = realloc(t->spare, nc * sizeof *s);
        if (!s) {
            free(k->data); /* the next buffer allocates its own */
            k->data = NULL;
            k->cap = 0;
            return;
        }
        t->spare = s;
        t->spare_cap = nc;
    }
    t->spare[t->spare_n++] = (struct etl_block){k->data, k->cap};
    k->data = NULL;
    k->cap = 0;
}

/* A compressed buffer's bytes again, into k's block. */
static int decompress_again(struct ntl_etl *t, struct etl_kept *k, struct ntl_error *err)
{
    const struct ntl_etl_buffer *b = &k->buf;
    const size_t hdr = NTL_ETL_BUFFER_HEADER_SIZE;
    const uint8_t *raw;
    long n = -1;
    int rc;
    if (t->ahead && k->ahead_key && take_block(t, k, 0, err) >= 0)
        n = etl_ahead_take(t->ahead, k->ahead_key, &k->data, &k->cap);
    if (n < 0) {
        if ((rc = take_block(t, k, b->saved_offset, err)) < 0 ||
            (rc = etl_input_read(t, b->offset, b->size, &raw, err)) < 0)
            return rc;
        memcpy(k->data, raw, hdr);
        n = ntl_decompress(t->format, raw + hdr, b->size - hdr, k->data + hdr,
                           b->saved_offset - hdr, b->offset + hdr, err);
    }
    if (n < 0) {
        ntl_error_prefix(err, "compressed buffer %u", b->index);
        return (int)n;
    }
    if ((size_t)n + hdr != k->cur.end)
        return ntl_error_set(err, NTL_ERR_IO, "file", b->offset,
                             "buffer %u changed since it was first read", b->index);
    return 0;
}

/* k's bytes again, as the first reading saw them (sorted_reload): an
 * uncompressed buffer where it is in a memory image, else read into a
 * block (straight from the file, or decompressed). */
static int reload(struct ntl_etl *t, struct etl_kept *k, struct ntl_error *err)
{
    int rc;
    if (!k->buf.compressed && t->mem) {
        k->cur.data = t->mem + k->buf.offset;
    } else {
        if (k->buf.compressed)
            rc = decompress_again(t, k, err);
        else if ((rc = take_block(t, k, k->cur.end, err)) >= 0)
            rc = etl_file_read(t, k->buf.offset, k->cur.end, k->data, err);
        if (rc < 0)
            return rc;
        k->cur.data = k->data;
    }
    k->loaded = true;
    return 0;
}

int etl_sorted_next(struct ntl_etl *t, struct ntl_etl_event *ev, struct ntl_error *err)
{
    int rc;
    if (t->drop) {
        drop(t, &t->kept[t->drop - 1]);
        t->drop = 0;
    }
    if (!t->sorted_ready && (rc = sorted_load(t, err)) < 0)
        return rc;
    if (t->sorted_next >= t->sorted_n)
        return 0;
    const struct sorted_ev *s = &t->sorted[t->sorted_next];
    struct etl_kept *k = &t->kept[s->buffer];
    if (!k->loaded && (rc = reload(t, k, err)) < 0)
        return rc; /* the file changed under us: called again, the same error */
    t->sorted_next++;
    k->cur.err = err;
    t->sorted_buf = &k->buf;
    if (t->sorted_reload && --k->left == 0)
        t->drop = s->buffer + 1;
    return etl_parse_event(&k->cur, s->pos, ev) < 0 ? NTL_ERR_FORMAT : 1;
}

void etl_sorted_free(struct ntl_etl *t)
{
    for (size_t i = 0; i < t->kept_n; i++)
        free(t->kept[i].data);
    free(t->kept);
    free(t->sorted);
    for (size_t i = 0; i < t->spare_n; i++)
        free(t->spare[i].p);
    free(t->spare);
}
