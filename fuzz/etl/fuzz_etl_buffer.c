/* The .etl reader behind a builder: the input is a list of events whose
 * markers and sizes the harness writes itself, packed into well-formed WMI
 * buffers after a valid header buffer. Blind mutation of a whole file rarely
 * keeps BufferSize, the marker flags and every event size consistent, so its
 * coverage of the event decoders stops growing within a minute; here every
 * mutation lands in an event's header fields or payload. Flags in the first
 * byte break a buffer field the way real files do (Offset 0xFFFFFFFF,
 * SavedOffset short of the last event, a buffer written twice).
 *
 * Input: a flags byte, then events until the input ends: a selector byte
 * (the header type), a UINT16 payload length, then the header's bytes (the
 * harness overwrites the marker and size) and the payload. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "etl_consume.h"
#include "ntlens/reader.h"

enum {
    F_PTR32 = 1,        /* a 32-bit trace */
    F_SORTED = 2,       /* read in time order */
    F_BIG_BUFFERS = 4,  /* 64 KiB buffers instead of 4 KiB */
    F_OFFSET_FF = 8,    /* every buffer's Offset is 0xFFFFFFFF */
    F_SAVED_SHORT = 16, /* SavedOffset ends before the last event */
    F_DUPLICATE = 32,   /* the first event buffer appears twice */
    F_EXT_INFO = 64,    /* EVENT_HEADER extended items left as the input has them */
};

#define MAX_OUTPUT (8u << 20) /* the built file */

struct kind {
    uint8_t type;   /* header type byte; 0 for a message */
    uint8_t hdr;    /* fixed header size */
    bool kernel;    /* size at +4 (system, compact, perfinfo) rather than +0 */
};

static const struct kind kinds[] = {
    {0x02, 0x20, true},  {0x01, 0x20, true},  {0x04, 0x18, true},  {0x03, 0x18, true},
    {0x11, 0x10, true},  {0x10, 0x10, true},  {0x14, 0x30, false}, {0x0A, 0x30, false},
    {0x15, 0x48, false}, {0x0B, 0x48, false}, {0x13, 0x50, false}, {0x12, 0x50, false},
    {0x00, 0x08, false},
};

struct builder {
    uint8_t *out;
    size_t len, cap;
    uint32_t bsize;
    size_t buf_start, pos; /* the open buffer, and where its next event goes */
    unsigned flags, index;
};

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Room for one more buffer (two: it may be duplicated), growing the output
 * up to MAX_OUTPUT. */
static bool reserve(struct builder *b)
{
    size_t need = b->len + 2 * (size_t)b->bsize;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap ? 2 * b->cap : need;
    cap = cap < need ? need : cap;
    if (cap > MAX_OUTPUT)
        return false;
    uint8_t *grown = realloc(b->out, cap);
    if (!grown)
        return false;
    b->out = grown;
    b->cap = cap;
    return true;
}

static bool open_buffer(struct builder *b)
{
    if (!reserve(b))
        return false;
    b->buf_start = b->len;
    memset(b->out + b->len, 0xFF, b->bsize);
    memset(b->out + b->len, 0, NTL_ETL_BUFFER_HEADER_SIZE);
    b->pos = NTL_ETL_BUFFER_HEADER_SIZE;
    b->len += b->bsize;
    return true;
}

/* Writes the header of the open buffer, holding events up to b->pos. */
static void close_buffer(struct builder *b)
{
    uint8_t *h = b->out + b->buf_start;
    uint32_t used = (uint32_t)b->pos, saved = used;
    if ((b->flags & F_SAVED_SHORT) && b->index > 0 && used > NTL_ETL_BUFFER_HEADER_SIZE + 8)
        saved = used - 8;
    ntl_put_le32(h, b->bsize);
    ntl_put_le32(h + 4, saved);
    ntl_put_le32(h + 8, used);
    ntl_put_le64(h + 0x18, b->index);
    h[0x28] = (uint8_t)(b->index % 4);
    ntl_put_le32(h + 0x30, (b->flags & F_OFFSET_FF) && b->index > 0 ? 0xFFFFFFFFu : used);
    if ((b->flags & F_DUPLICATE) && b->index == 1) { /* open_buffer reserved room */
        memcpy(b->out + b->len, h, b->bsize);
        b->len += b->bsize;
    }
    b->index++;
}

/* The EventTrace header event with a TRACE_LOGFILE_HEADER the reader accepts. */
static void header_event(struct builder *b, unsigned ptr)
{
    size_t tz = 0x38 + 2 * ptr, tail = align8(tz + 0xac), strings = tail + 0x20;
    size_t payload = strings + 12, size = 0x20 + payload; /* "fuzz", "" in UTF-16 */
    uint8_t *e = b->out + b->buf_start + b->pos, *p = e + 0x20;
    memset(e, 0, size);
    e[2] = ptr == 8 ? 0x02 : 0x01;
    e[3] = 0xC0;
    ntl_put_le16(e + 4, (uint16_t)size);
    ntl_put_le32(p, b->bsize);
    ntl_put_le32(p + 12, 4);
    ntl_put_le32(p + 44, ptr);
    ntl_put_le64(p + tail + 8, 10000000u);
    ntl_put_le64(p + tail + 16, 133000000000000000u);
    for (int i = 0; i < 4; i++)
        p[strings + 2 * i] = (uint8_t)"fuzz"[i];
    b->pos += align8(size);
}

/* One event from the input at *in; false when the input has none left. */
static bool add_event(struct builder *b, const uint8_t **in, const uint8_t *end)
{
    if (end - *in < 3)
        return false;
    const struct kind *k = &kinds[(*in)[0] % (sizeof kinds / sizeof kinds[0])];
    size_t size = k->hdr + ntl_le16(*in + 1) % 2048;
    size_t room = b->bsize - NTL_ETL_BUFFER_HEADER_SIZE;
    *in += 3;
    if (size > room)
        size = room;
    if (b->bsize - b->pos < align8(size)) {
        close_buffer(b);
        if (!open_buffer(b))
            return false;
    }
    uint8_t *e = b->out + b->buf_start + b->pos;
    size_t take = (size_t)(end - *in) < size ? (size_t)(end - *in) : size;
    memset(e, 0, size);
    memcpy(e, *in, take);
    *in += take;
    if (k->kernel) {
        ntl_put_le16(e + 4, (uint16_t)size);
        e[2] = k->type;
        e[3] = 0xC0;
    } else {
        ntl_put_le16(e, (uint16_t)size);
        if (k->type) {
            e[2] = k->type;
            e[3] = 0xC0;
        } else {
            e[3] = (uint8_t)(0x80 | (e[3] & 0x3F));
        }
        if (k->type == 0x13 || k->type == 0x12)
            if (!(b->flags & F_EXT_INFO))
                ntl_put_le16(e + 4, ntl_le16(e + 4) & ~NTL_ETL_EH_EXTENDED_INFO);
    }
    b->pos += align8(size);
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct builder b = {.flags = data[0], .bsize = (data[0] & F_BIG_BUFFERS) ? 65536u : 4096u};
    const uint8_t *in = data + 1, *end = data + size;
    if (!open_buffer(&b))
        return 0;
    header_event(&b, (b.flags & F_PTR32) ? 4 : 8);
    close_buffer(&b);
    if (open_buffer(&b)) {
        while (add_event(&b, &in, end))
            ;
        close_buffer(&b);
    }

    struct ntl_etl_options opt = {.sorted = b.flags & F_SORTED, .sorted_limit = 16u << 20};
    struct ntl_etl *t;
    struct ntl_error err;
    if (ntl_etl_open_mem(b.out, b.len, &opt, &t, &err) == 0) {
        fuzz_etl_consume(t);
        ntl_etl_close(t);
    }
    free(b.out);
    return 0;
}
