/* The .etl reader: buffers from a file (streamed) or memory, decompressed
 * when the trace is compressed, and the events inside them.
 *
 * Layouts (all little-endian):
 *   WMI_BUFFER_HEADER (0x48): BufferSize 0x00, SavedOffset 0x04,
 *     CurrentOffset 0x08, TimeStamp 0x10, SequenceNumber 0x18,
 *     ClockType/Frequency 0x20, ProcessorNumber/Index 0x28, LoggerId 0x2a,
 *     State 0x2c, Offset 0x30, BufferFlag 0x34, BufferType 0x36.
 *   Event markers: byte 2 is the header type, byte 3 carries
 *     TRACE_HEADER_FLAG (0x80) and TRACE_HEADER_EVENT_TRACE (0x40). Kernel
 *     headers (SYSTEM, COMPACT, PERFINFO) keep their size at +4 and hook id at
 *     +6; the others keep their size at +0.
 * A compressed buffer keeps its header as is; BufferSize is its size on disk
 * and SavedOffset the size it decompresses to, header included. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ahead.h"
#include "etl-internal.h"
#include "ntlens/compress.h"
#include "ntlens/reader.h"
#include "ntlens/utf16.h"

#define TYPE_SYSTEM32 0x01
#define TYPE_SYSTEM64 0x02
#define TYPE_COMPACT32 0x03
#define TYPE_COMPACT64 0x04
#define TYPE_FULL32 0x0A
#define TYPE_INSTANCE32 0x0B
#define TYPE_PERFINFO32 0x10
#define TYPE_PERFINFO64 0x11
#define TYPE_EVENT32 0x12
#define TYPE_EVENT64 0x13
#define TYPE_FULL64 0x14
#define TYPE_INSTANCE64 0x15

#define PEBS_INDEX_FLAG 0x8000u
#define PMC_COUNTERS_MASK 0x0700u

#define MSG_SEQUENCE 0x01u
#define MSG_GUID 0x02u
#define MSG_COMPONENTID 0x04u
#define MSG_TIMESTAMP 0x08u
#define MSG_SYSTEMINFO 0x20u

static inline size_t align8(size_t v) { return (v + 7) & ~(size_t)7; }

/* ---- events ---------------------------------------------------------- */

/* An error in a record at pos of the current buffer: the absolute file
 * offset in uncompressed buffers, the buffer's offset and the position
 * after decompression in compressed ones. */
static int ev_error(const struct etl_cur *c, int status, size_t pos, const char *what,
                    const char *fmt, ...) NTL_PRINTF(5, 6);
static int ev_error(const struct etl_cur *c, int status, size_t pos, const char *what,
                    const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->compressed)
        return ntl_error_set(c->err, status, what, c->buf_offset,
                             "buffer %u, offset 0x%zx after decompression: %s", c->index, pos, msg);
    return ntl_error_set(c->err, status, what, c->buf_offset + pos, "buffer %u: %s", c->index, msg);
}

/* An event cleared by copying a zero one: memset of its ~230 bytes became
 * `rep stosq`, half of this function's time in `etl events`. */
static const struct ntl_etl_event zero_event;

/* Parses the record at data[pos] (pos < end, 8-aligned, not filler). */
int etl_parse_event(const struct etl_cur *c, size_t pos, struct ntl_etl_event *ev)
{
    const uint8_t *data = c->data;
    size_t left = c->end - pos;
    const uint8_t *p = data + pos;
    uint8_t htype, mflags;
    size_t size, hdr;

    if (left < 8)
        return ev_error(c, NTL_ERR_TRUNCATED, pos, "event header",
                        "%zu bytes left, too few for an event header", left);
    *ev = zero_event;
    htype = p[2];
    mflags = p[3];
    ev->header_type = htype;
    ev->pid = ev->tid = UINT32_MAX;
    ev->buffer_index = c->index;
    ev->buffer_pos = (uint32_t)pos;
    ev->offset = c->compressed ? c->buf_offset : c->buf_offset + pos;
    ev->cpu = c->cpu;

    if ((mflags & 0xC0) == 0xC0) {
        switch (htype) {
        case TYPE_SYSTEM32: case TYPE_SYSTEM64:
            ev->kind = NTL_ETL_KIND_SYSTEM; hdr = 0x20; break;
        case TYPE_COMPACT32: case TYPE_COMPACT64:
            ev->kind = NTL_ETL_KIND_COMPACT; hdr = 0x18; break;
        case TYPE_PERFINFO32: case TYPE_PERFINFO64:
            ev->kind = NTL_ETL_KIND_PERFINFO; hdr = 0x10; break;
        case TYPE_FULL32: case TYPE_FULL64:
            ev->kind = NTL_ETL_KIND_CLASSIC; hdr = 0x30; break;
        case TYPE_INSTANCE32: case TYPE_INSTANCE64:
            ev->kind = NTL_ETL_KIND_INSTANCE; hdr = 0x48; break;
        case TYPE_EVENT32: case TYPE_EVENT64:
            ev->kind = NTL_ETL_KIND_EVENT; hdr = 0x50; break;
        default:
            return ev_error(c, NTL_ERR_FORMAT, pos, "event header",
                            "unknown header type %u (marker flags 0x%02x)", htype, mflags);
        }
    } else if ((mflags & 0xC0) == 0x80) {
        ev->kind = NTL_ETL_KIND_MESSAGE;
        hdr = 8;
    } else {
        return ev_error(c, NTL_ERR_FORMAT, pos, "event header",
                        "marker 0x%08x has no TRACE_HEADER_FLAG", (unsigned)ntl_le32(p));
    }

    bool kernel = ev->kind <= NTL_ETL_KIND_PERFINFO;
    size = kernel ? ntl_le16(p + 4) : ntl_le16(p);
    if (size == 0)
        return ev_error(c, NTL_ERR_FORMAT, pos, "event header", "zero-size event");
    if (size < hdr)
        return ev_error(c, NTL_ERR_FORMAT, pos, "event header",
                        "event size %zu smaller than its %zu-byte header", size, hdr);
    if (size > left)
        return ev_error(c, NTL_ERR_FORMAT, pos, "event header",
                        "event of %zu bytes runs past the end of the buffer's data (%zu left)",
                        size, left);
    ev->size = (uint16_t)size;
    size_t body = hdr; /* where extensions or the payload start */

    switch (ev->kind) {
    case NTL_ETL_KIND_SYSTEM:
    case NTL_ETL_KIND_COMPACT:
    case NTL_ETL_KIND_PERFINFO: {
        uint16_t ver = ntl_le16(p);
        ev->is64 = htype == TYPE_SYSTEM64 || htype == TYPE_COMPACT64 || htype == TYPE_PERFINFO64;
        ev->version = ver & 0xFF;
        ev->hook_id = ntl_le16(p + 6);
        ev->group = (uint8_t)(ev->hook_id >> 8);
        ev->opcode = (uint8_t)ev->hook_id;
        if (ev->kind == NTL_ETL_KIND_PERFINFO) {
            ev->timestamp = ntl_le64(p + 8);
        } else {
            ev->tid = ntl_le32(p + 8);
            ev->pid = ntl_le32(p + 12);
            ev->timestamp = ntl_le64(p + 16);
            if (ev->kind == NTL_ETL_KIND_SYSTEM) {
                ev->kernel_time = ntl_le32(p + 24);
                ev->user_time = ntl_le32(p + 28);
            }
        }
        if (ver & PEBS_INDEX_FLAG) {
            if (size - body < 8)
                return ev_error(c, NTL_ERR_FORMAT, pos, "event header",
                                "PEBS index past the event's %zu bytes", size);
            ev->has_pebs = true;
            ev->pebs_index = ntl_le64(p + body);
            body += 8;
        }
        ev->pmc_count = (ver & PMC_COUNTERS_MASK) >> 8;
        if (ev->pmc_count) {
            if (size - body < 8u * ev->pmc_count)
                return ev_error(c, NTL_ERR_FORMAT, pos, "event header",
                                "%u PMC counters past the event's %zu bytes", ev->pmc_count, size);
            ev->pmc = p + body;
            body += 8u * ev->pmc_count;
        }
        break;
    }
    case NTL_ETL_KIND_CLASSIC:
    case NTL_ETL_KIND_INSTANCE:
        ev->is64 = htype == TYPE_FULL64 || htype == TYPE_INSTANCE64;
        ev->opcode = p[4];
        ev->level = p[5];
        ev->version = ntl_le16(p + 6);
        ev->tid = ntl_le32(p + 8);
        ev->pid = ntl_le32(p + 12);
        ev->timestamp = ntl_le64(p + 16);
        ev->has_guid = true;
        memcpy(ev->guid.b, p + 24, 16);
        ev->kernel_time = ntl_le32(p + 40);
        ev->user_time = ntl_le32(p + 44);
        if (ev->kind == NTL_ETL_KIND_INSTANCE) {
            ev->instance_id = ntl_le32(p + 48);
            ev->parent_instance_id = ntl_le32(p + 52);
            memcpy(ev->parent_guid.b, p + 56, 16);
        }
        break;
    case NTL_ETL_KIND_EVENT: {
        ev->eh_flags = ntl_le16(p + 4);
        ev->eh_property = ntl_le16(p + 6);
        ev->is64 = (ev->eh_flags & NTL_ETL_EH_64_BIT_HEADER) ||
                   (!(ev->eh_flags & NTL_ETL_EH_32_BIT_HEADER) && htype == TYPE_EVENT64);
        ev->tid = ntl_le32(p + 8);
        ev->pid = ntl_le32(p + 12);
        ev->timestamp = ntl_le64(p + 16);
        ev->has_guid = true;
        memcpy(ev->guid.b, p + 24, 16);
        ev->event_id = ntl_le16(p + 40);
        ev->version = p[42];
        ev->channel = p[43];
        ev->level = p[44];
        ev->opcode = p[45];
        ev->task = ntl_le16(p + 46);
        ev->keyword = ntl_le64(p + 48);
        ev->kernel_time = ntl_le32(p + 56);
        ev->user_time = ntl_le32(p + 60);
        memcpy(ev->activity_id.b, p + 64, 16);
        if (ev->eh_flags & NTL_ETL_EH_EXTENDED_INFO) {
            /* Items of 8 header bytes (ExtType at +2, Linkage bit at +4,
             * DataSize at +6) and data padded to 8, until one has no Linkage. */
            size_t q = body;
            for (;;) {
                if (size - q < 8)
                    return ev_error(c, NTL_ERR_FORMAT, pos + q, "EVENT_HEADER_EXTENDED_DATA_ITEM",
                                    "item header past the event's %zu bytes", size);
                size_t dsize = ntl_le16(p + q + 6);
                uint16_t link = ntl_le16(p + q + 4);
                if (size - q - 8 < dsize)
                    return ev_error(c, NTL_ERR_FORMAT, pos + q, "EVENT_HEADER_EXTENDED_DATA_ITEM",
                                    "item of %zu bytes past the event's %zu bytes", dsize, size);
                q += 8 + dsize;
                q = align8(q) <= size ? align8(q) : size;
                if (!(link & 1))
                    break;
            }
            ev->ext = p + body;
            ev->ext_size = q - body;
            body = q;
        }
        break;
    }
    case NTL_ETL_KIND_MESSAGE: {
        ev->message_number = ntl_le16(p + 4);
        ev->message_flags = ntl_le16(p + 6);
        uint16_t f = ev->message_flags;
        size_t need = (f & MSG_SEQUENCE ? 4 : 0) + (f & MSG_GUID ? 16 : f & MSG_COMPONENTID ? 4 : 0) +
                      (f & MSG_TIMESTAMP ? 8 : 0) + (f & MSG_SYSTEMINFO ? 8 : 0);
        if (size - body < need)
            return ev_error(c, NTL_ERR_FORMAT, pos, "MESSAGE_TRACE_HEADER",
                            "message fields (%zu bytes) past its %zu bytes", need, size);
        ev->is64 = c->pointer_size == 8;
        if (f & MSG_SEQUENCE)
            body += 4;
        if (f & MSG_GUID) {
            ev->has_guid = true;
            memcpy(ev->guid.b, p + body, 16);
            body += 16;
        } else if (f & MSG_COMPONENTID) {
            body += 4;
        }
        if (f & MSG_TIMESTAMP) {
            ev->timestamp = ntl_le64(p + body);
            body += 8;
        }
        if (f & MSG_SYSTEMINFO) {
            ev->tid = ntl_le32(p + body);
            ev->pid = ntl_le32(p + body + 4);
            body += 8;
        }
        break;
    }
    default:
        break;
    }
    ev->payload = p + body;
    ev->payload_size = size - body;
    return 0;
}

/* Whether the extended items of an EVENT record (size bytes at p, items
 * from q) stay inside it, as etl_parse_event walks them. */
static bool ext_fits(const uint8_t *p, size_t q, size_t size)
{
    for (;;) {
        if (size - q < 8)
            return false;
        size_t dsize = ntl_le16(p + q + 6);
        if (size - q - 8 < dsize)
            return false;
        bool more = ntl_le16(p + q + 4) & 1;
        q = align8(q + 8 + dsize) <= size ? align8(q + 8 + dsize) : size;
        if (!more)
            return true;
    }
}

/* The first reading of sorted mode needs an event's kind, size and time
 * only (and its place): those are read for every header but MESSAGE, after
 * the checks etl_parse_event makes, and nothing else of ev is set. Whatever
 * fails a check, and what this does not know, is parsed in full, which
 * tells the same error. The full parse, a 230-byte event cleared and
 * filled, was a fifth of the main thread's first reading. */
static int parse_time(const struct etl_cur *c, size_t pos, struct ntl_etl_event *ev)
{
    const uint8_t *p = c->data + pos;
    size_t hdr, ts_at = 16;
    enum ntl_etl_kind kind;
    if (c->end - pos < 8 || (p[3] & 0xC0) != 0xC0)
        return etl_parse_event(c, pos, ev);
    switch (p[2]) {
    case TYPE_SYSTEM32: case TYPE_SYSTEM64: kind = NTL_ETL_KIND_SYSTEM; hdr = 0x20; break;
    case TYPE_COMPACT32: case TYPE_COMPACT64: kind = NTL_ETL_KIND_COMPACT; hdr = 0x18; break;
    case TYPE_PERFINFO32: case TYPE_PERFINFO64:
        kind = NTL_ETL_KIND_PERFINFO; hdr = 0x10; ts_at = 8; break;
    case TYPE_FULL32: case TYPE_FULL64: kind = NTL_ETL_KIND_CLASSIC; hdr = 0x30; break;
    case TYPE_INSTANCE32: case TYPE_INSTANCE64: kind = NTL_ETL_KIND_INSTANCE; hdr = 0x48; break;
    case TYPE_EVENT32: case TYPE_EVENT64: kind = NTL_ETL_KIND_EVENT; hdr = 0x50; break;
    default: return etl_parse_event(c, pos, ev);
    }
    bool kernel = kind <= NTL_ETL_KIND_PERFINFO;
    size_t size = kernel ? ntl_le16(p + 4) : ntl_le16(p);
    if (size < hdr || size > c->end - pos ||
        (kernel && (ntl_le16(p) & (PEBS_INDEX_FLAG | PMC_COUNTERS_MASK))) ||
        (kind == NTL_ETL_KIND_EVENT && (ntl_le16(p + 4) & NTL_ETL_EH_EXTENDED_INFO) &&
         !ext_fits(p, hdr, size)))
        return etl_parse_event(c, pos, ev);
    ev->kind = kind;
    ev->size = (uint16_t)size;
    ev->timestamp = ntl_le64(p + ts_at);
    ev->buffer_pos = (uint32_t)pos;
    return 0;
}

int ntl_etl_ext_next(const struct ntl_etl_event *ev, size_t *pos, struct ntl_etl_ext_item *item,
                     struct ntl_error *err)
{
    size_t q = *pos;
    if (!ev->ext || q >= ev->ext_size)
        return 0;
    if (ev->ext_size - q < 8)
        return ntl_error_set(err, NTL_ERR_FORMAT, "EVENT_HEADER_EXTENDED_DATA_ITEM", ev->offset,
                             "item header at +0x%zx past the %zu bytes of extended data", q,
                             ev->ext_size);
    const uint8_t *p = ev->ext + q;
    item->type = ntl_le16(p + 2);
    item->size = ntl_le16(p + 6);
    if (ev->ext_size - q - 8 < item->size)
        return ntl_error_set(err, NTL_ERR_FORMAT, "EVENT_HEADER_EXTENDED_DATA_ITEM", ev->offset,
                             "item of %u bytes at +0x%zx past the %zu bytes of extended data",
                             item->size, q, ev->ext_size);
    item->data = p + 8;
    q = align8(q + 8 + item->size);
    *pos = (ntl_le16(p + 4) & 1) && q < ev->ext_size ? q : ev->ext_size;
    return 1;
}

/* ---- the logfile header ---------------------------------------------- */

static void utf16_field(const uint8_t *p, size_t max_units, char *out, size_t size)
{
    ntl_utf16_to_utf8(p, ntl_utf16_unit_len(p, max_units), out, size);
}

/* TRACE_LOGFILE_HEADER from the payload of the first event. */
static int parse_logfile(struct ntl_etl *t, const struct ntl_etl_event *ev, uint64_t off,
                         struct ntl_error *err)
{
    struct ntl_etl_logfile *lf = &t->lf;
    const uint8_t *p = ev->payload;
    size_t n = ev->payload_size;

    if (n < 0x30)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "TRACE_LOGFILE_HEADER", off,
                             "%zu bytes, too few for the fixed fields", n);
    memset(lf, 0, sizeof *lf);
    lf->buffer_size = ntl_le32(p);
    memcpy(lf->version, p + 4, 4);
    lf->provider_version = ntl_le32(p + 8);
    lf->number_of_processors = ntl_le32(p + 12);
    lf->end_time = ntl_le64(p + 16);
    lf->timer_resolution = ntl_le32(p + 24);
    lf->maximum_file_size = ntl_le32(p + 28);
    lf->log_file_mode = ntl_le32(p + 32);
    lf->buffers_written = ntl_le32(p + 36);
    lf->start_buffers = ntl_le32(p + 40);
    lf->pointer_size = ntl_le32(p + 44);
    if (lf->pointer_size != 4 && lf->pointer_size != 8)
        return ntl_error_set(err, NTL_ERR_FORMAT, "TRACE_LOGFILE_HEADER", off + 44,
                             "PointerSize %u, expected 4 or 8", lf->pointer_size);
    size_t ps = lf->pointer_size;
    /* After the two string pointers: TIME_ZONE_INFORMATION (0xac bytes),
     * then 8-aligned BootTime, PerfFreq, StartTime, ReservedFlags,
     * BuffersLost, then the two strings. */
    size_t tz = 0x38 + 2 * ps;
    size_t tail = align8(tz + 0xac);
    size_t strings = tail + 0x20;
    if (n < strings)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "TRACE_LOGFILE_HEADER", off,
                             "%zu bytes, too few for a %zu-bit header (%zu)", n, ps * 8, strings);
    lf->events_lost = ntl_le32(p + 48);
    lf->cpu_speed_mhz = ntl_le32(p + 52);
    lf->tz_bias = (int32_t)ntl_le32(p + tz);
    utf16_field(p + tz + 4, 32, lf->tz_standard_name, sizeof lf->tz_standard_name);
    utf16_field(p + tz + 4 + 64 + 16 + 4, 32, lf->tz_daylight_name, sizeof lf->tz_daylight_name);
    lf->boot_time = ntl_le64(p + tail);
    lf->perf_freq = ntl_le64(p + tail + 8);
    lf->start_time = ntl_le64(p + tail + 16);
    lf->reserved_flags = ntl_le32(p + tail + 24);
    lf->buffers_lost = ntl_le32(p + tail + 28);
    size_t units = (n - strings) / 2;
    size_t l1 = ntl_utf16_unit_len(p + strings, units);
    ntl_utf16_to_utf8(p + strings, l1, lf->logger_name, sizeof lf->logger_name);
    if (l1 < units) {
        size_t rest = units - l1 - 1;
        const uint8_t *q = p + strings + 2 * (l1 + 1);
        ntl_utf16_to_utf8(q, ntl_utf16_unit_len(q, rest), lf->log_file_name, sizeof lf->log_file_name);
    }
    lf->header_timestamp = ev->timestamp;
    switch (lf->reserved_flags) {
    case 2: lf->clock = NTL_ETL_CLOCK_SYSTEM; break;
    case 3: lf->clock = NTL_ETL_CLOCK_CPU_CYCLE; break;
    default: lf->clock = lf->perf_freq ? NTL_ETL_CLOCK_QPC : NTL_ETL_CLOCK_SYSTEM; break;
    }
    t->pointer_size = lf->pointer_size;
    return 0;
}

uint64_t ntl_etl_time_to_filetime(const struct ntl_etl *t, uint64_t ts)
{
    const struct ntl_etl_logfile *lf = &t->lf;
    uint64_t freq;
    switch (lf->clock) {
    case NTL_ETL_CLOCK_SYSTEM:
        return ts;
    case NTL_ETL_CLOCK_CPU_CYCLE:
        freq = (uint64_t)lf->cpu_speed_mhz * 1000000u;
        break;
    default:
        freq = lf->perf_freq;
        break;
    }
    if (!freq)
        return 0;
    bool neg = ts < lf->header_timestamp;
    uint64_t d = neg ? lf->header_timestamp - ts : ts - lf->header_timestamp;
    /* d * 1e7 / freq without overflow; at 10 MHz (the QPC of recent
     * Windows) that is d itself (r * 1e7 / 1e7 is exact in a double), and
     * the two divisions were 3% of `etl events`. */
    uint64_t delta = d;
    if (freq != 10000000u) {
        uint64_t q = d / freq, r = d % freq;
        delta = q * 10000000u + (uint64_t)((double)r * 1e7 / (double)freq);
    }
    if (neg)
        return delta > lf->start_time ? 0 : lf->start_time - delta;
    return lf->start_time + delta;
}

/* ---- buffers --------------------------------------------------------- */

static int grow(uint8_t **p, size_t *cap, size_t need, struct ntl_error *err)
{
    if (*cap >= need)
        return 0;
    uint8_t *n = realloc(*p, need);
    if (!n)
        return ntl_error_set(err, NTL_ERR_NOMEM, "WMI_BUFFER_HEADER", NTL_NO_OFFSET,
                             "out of memory for a %zu-byte buffer", need);
    *p = n;
    *cap = need;
    return 0;
}

int etl_file_read(struct ntl_etl *t, uint64_t pos, size_t n, uint8_t *dst, struct ntl_error *err)
{
    if (t->file_pos != pos) {
        if (fseeko(t->f, (off_t)pos, SEEK_SET) != 0)
            return ntl_error_set(err, NTL_ERR_IO, "file", pos, "cannot seek");
        t->file_pos = pos;
    }
    size_t got = fread(dst, 1, n, t->f);
    t->file_pos += got;
    if (got != n)
        return ntl_error_set(err, NTL_ERR_IO, "file", pos + got, "read failed or file shrank");
    return 0;
}

int etl_raw_body(struct ntl_etl *t, const uint8_t **raw, struct ntl_error *err)
{
    if (!t->raw_body_missing)
        return 0;
    t->raw_body_missing = false;
    *raw = t->raw;
    return etl_file_read(t, t->buf.offset, t->buf.size, t->raw, err);
}

int etl_input_read(struct ntl_etl *t, uint64_t pos, size_t n, const uint8_t **out,
                   struct ntl_error *err)
{
    if (t->mem) {
        *out = t->mem + pos;
        return 0;
    }
    int rc = grow(&t->raw, &t->raw_cap, n, err);
    if (rc < 0 || (rc = etl_file_read(t, pos, n, t->raw, err)) < 0)
        return rc;
    *out = t->raw;
    return 0;
}

/* The file ends inside the buffer at off (bsize: its BufferSize, 0 when even
 * its header is cut): say where, and what was read before it. */
static int file_cut(struct ntl_etl *t, uint64_t off, uint32_t bsize, struct ntl_error *err)
{
    char need[64] = "a 72-byte buffer header";
    if (bsize)
        snprintf(need, sizeof need, "a %u-byte buffer", bsize);
    t->st.truncated = true;
    return ntl_error_set(err, NTL_ETL_TRUNCATED, "WMI_BUFFER_HEADER", off,
                         "the file ends early, at offset 0x%llx, inside %s (buffer %u); "
                         "%llu whole buffers and %llu events before it",
                         (unsigned long long)t->size, need, t->buffer_index,
                         (unsigned long long)t->st.buffers, (unsigned long long)t->st.events);
}

/* Loads the next buffer into t->cur. 1 loaded, 0 end of input, < 0 error
 * (t->can_continue says whether the next buffer can still be found). */
/* The current buffer's events: data[header, end), known to end by soft_end. */
static void set_cursor(struct ntl_etl *t, const uint8_t *data, size_t end, size_t soft_end)
{
    const struct ntl_etl_buffer *b = &t->buf;
    t->cur.data = data;
    t->cur.end = end;
    t->cur.soft_end = soft_end;
    t->cur.pos = NTL_ETL_BUFFER_HEADER_SIZE;
    t->cur.last_timestamp = 0;
    t->cur.index = b->index;
    t->cur.buf_offset = b->offset;
    t->cur.compressed = b->compressed;
    t->cur.cpu = b->processor;
    t->cur.pointer_size = t->pointer_size;
    t->cur_valid = true;
}

/* The buffer's header fields into t->buf, and the trace's counts. */
static void read_header(struct ntl_etl *t, const uint8_t *raw, uint64_t off, uint32_t bsize)
{
    struct ntl_etl_buffer *b = &t->buf;
    memset(b, 0, sizeof *b);
    b->index = t->buffer_index++;
    b->offset = off;
    b->size = bsize;
    b->saved_offset = ntl_le32(raw + 4);
    b->current_offset = ntl_le32(raw + 8);
    b->timestamp = ntl_le64(raw + 0x10);
    b->sequence = ntl_le64(raw + 0x18);
    b->flags = ntl_le16(raw + 0x34);
    b->processor = (b->flags & NTL_ETL_BUFFER_PROC_INDEX) ? (ntl_le16(raw + 0x28) & 0x7FF) : raw[0x28];
    b->logger_id = ntl_le16(raw + 0x2a);
    b->state = ntl_le32(raw + 0x2c);
    b->type = ntl_le16(raw + 0x36);
    b->compressed = (b->flags & NTL_ETL_BUFFER_COMPRESSED) != 0;

    t->st.buffers++;
    if (b->flags & NTL_ETL_BUFFER_EVENTS_LOST)
        t->st.buffers_events_lost++;
    if (b->processor > t->st.max_cpu)
        t->st.max_cpu = b->processor;
    if (b->processor < 64)
        t->st.cpu_mask |= (uint64_t)1 << b->processor;
}

/* The buffer at off (header at raw) as the decompressing thread has it in
 * t->dec: its length after the header, or -1 (no thread, not a compressed
 * buffer, its SavedOffset out of range, or the thread does not have it). */
static long ahead_take(struct ntl_etl *t, const uint8_t *raw, uint64_t off)
{
    uint32_t usize = ntl_le32(raw + 4);
    if (!t->ahead || !(ntl_le16(raw + 0x34) & NTL_ETL_BUFFER_COMPRESSED) ||
        usize < NTL_ETL_BUFFER_HEADER_SIZE || usize > NTL_ETL_MAX_BUFFER_SIZE)
        return -1;
    return etl_ahead_take(t->ahead, off, &t->dec, &t->dec_cap);
}

/* A compressed buffer: its events are what it decompresses to (n >= 0:
 * the thread's, in t->dec). 1, or an error. */
static int compressed_events(struct ntl_etl *t, const uint8_t *raw, long n, struct ntl_error *err)
{
    struct ntl_etl_buffer *b = &t->buf;
    uint32_t usize = b->saved_offset;
    if (usize < NTL_ETL_BUFFER_HEADER_SIZE || usize > NTL_ETL_MAX_BUFFER_SIZE)
        return ntl_error_set(err, NTL_ERR_FORMAT, "WMI_BUFFER_HEADER", b->offset + 4,
                             "compressed buffer %u: SavedOffset %u out of range", b->index, usize);
    if (n < 0) {
        if (!etl_block_reserve(&t->dec, &t->dec_cap, usize))
            return ntl_error_set(err, NTL_ERR_NOMEM, "WMI_BUFFER_HEADER", NTL_NO_OFFSET,
                                 "out of memory for a %u-byte buffer", usize);
        memcpy(t->dec, raw, NTL_ETL_BUFFER_HEADER_SIZE);
        n = ntl_decompress(t->format, raw + NTL_ETL_BUFFER_HEADER_SIZE,
                           b->size - NTL_ETL_BUFFER_HEADER_SIZE, t->dec + NTL_ETL_BUFFER_HEADER_SIZE,
                           usize - NTL_ETL_BUFFER_HEADER_SIZE, b->offset + NTL_ETL_BUFFER_HEADER_SIZE,
                           err);
    }
    if (n < 0) {
        ntl_error_prefix(err, "compressed buffer %u", b->index);
        return (int)n;
    }
    t->st.buffers_compressed++;
    t->st.bytes_compressed += b->size;
    t->st.bytes_decompressed += (uint64_t)n + NTL_ETL_BUFFER_HEADER_SIZE;
    b->data_size = (uint32_t)n + NTL_ETL_BUFFER_HEADER_SIZE;
    set_cursor(t, t->dec, b->data_size, b->data_size);
    return 1;
}

/* An uncompressed buffer: events end at SavedOffset; some writers leave a
 * last record between SavedOffset and Offset, so the larger one counts.
 * 1, or an error. */
static int plain_events(struct ntl_etl *t, const uint8_t *raw, struct ntl_error *err)
{
    struct ntl_etl_buffer *b = &t->buf;
    uint32_t offset_field = ntl_le32(raw + 0x30), e = b->saved_offset, soft_end;
    if (e > b->size)
        return ntl_error_set(err, NTL_ERR_FORMAT, "WMI_BUFFER_HEADER", b->offset + 4,
                             "buffer %u: SavedOffset %u beyond the buffer's %u bytes", b->index, e,
                             b->size);
    if (e < NTL_ETL_BUFFER_HEADER_SIZE)
        e = NTL_ETL_BUFFER_HEADER_SIZE; /* an empty buffer */
    soft_end = e;
    if (offset_field > b->size) {
        /* Offset out of range (0xFFFFFFFF is seen): SavedOffset alone has
         * been seen to end before the last event, so events are read on to
         * the end-of-events marker. */
        etl_irregular(t, b->offset + 0x30, "WMI_BUFFER_HEADER",
                      "buffer %u: Offset 0x%x beyond the buffer's %u bytes; events read past "
                      "SavedOffset %u up to the end-of-events marker", b->index, offset_field,
                      b->size, b->saved_offset);
        e = b->size;
    } else if (offset_field > e) {
        e = soft_end = offset_field;
    }
    b->data_size = soft_end;
    set_cursor(t, raw, e, soft_end);
    return 1;
}

static int load_buffer(struct ntl_etl *t, struct ntl_error *err)
{
    uint64_t off = t->next_buffer;
    uint64_t left = t->size - off;
    const uint8_t *raw = NULL;
    int rc;

    t->cur_valid = false;
    t->can_continue = false;
    memset(&t->buf, 0, sizeof t->buf);
    if (left == 0)
        return 0;
    if (left < NTL_ETL_BUFFER_HEADER_SIZE)
        return file_cut(t, off, 0, err);
    /* From a file, the thread's copy first: it starts with the header as
     * the file has it, checked as below, so that with it nothing of the
     * buffer is read here (all of it only to compare a repeat). */
    long taken = t->f && t->ahead ? etl_ahead_take(t->ahead, off, &t->dec, &t->dec_cap) : -1;
    if (taken >= 0)
        raw = t->dec;
    else if ((rc = etl_input_read(t, off, NTL_ETL_BUFFER_HEADER_SIZE, &raw, err)) < 0)
        return rc;
    uint32_t bsize = ntl_le32(raw);
    if (bsize < NTL_ETL_BUFFER_HEADER_SIZE || bsize > NTL_ETL_MAX_BUFFER_SIZE)
        return ntl_error_set(err, NTL_ERR_FORMAT, "WMI_BUFFER_HEADER", off,
                             "BufferSize %u out of range (0x48..%u)", bsize, NTL_ETL_MAX_BUFFER_SIZE);
    if (bsize > left)
        return file_cut(t, off, bsize, err);
    if (t->mem)
        taken = ahead_take(t, raw, off);
    if (t->f) {
        /* Without the thread's copy, the header is in t->raw already. */
        if ((rc = grow(&t->raw, &t->raw_cap, bsize, err)) < 0)
            return rc;
        t->raw_body_missing = taken >= 0;
        if (taken < 0 && (rc = etl_file_read(t, off + NTL_ETL_BUFFER_HEADER_SIZE,
                                             bsize - NTL_ETL_BUFFER_HEADER_SIZE,
                                             t->raw + NTL_ETL_BUFFER_HEADER_SIZE, err)) < 0)
            return rc;
    }
    raw = t->mem ? t->mem + off : taken >= 0 ? t->dec : t->raw;
    /* From here on the next buffer's place is known. */
    t->next_buffer = off + bsize;
    t->can_continue = true;
    if (t->progress)
        t->progress(t->progress_ctx, t->next_buffer, t->size);

    read_header(t, raw, off, bsize);
    uint64_t first;
    if ((rc = etl_buffer_repeats(t, raw, bsize, off, &first, err)) < 0)
        return rc;
    if (rc == 1) {
        t->st.buffers_duplicate++;
        etl_irregular(t, off, "WMI_BUFFER_HEADER",
                      "buffer %u repeats the buffer at 0x%llx (sequence %llu, the same %u bytes); "
                      "its events are read once", t->buf.index, (unsigned long long)first,
                      (unsigned long long)t->buf.sequence, bsize);
        set_cursor(t, raw, NTL_ETL_BUFFER_HEADER_SIZE, NTL_ETL_BUFFER_HEADER_SIZE);
        return 1;
    }
    return t->buf.compressed ? compressed_events(t, raw, taken, err) : plain_events(t, raw, err);
}

static void count_event(struct ntl_etl *t, const struct ntl_etl_event *ev)
{
    t->st.events++;
    t->st.events_by_kind[ev->kind]++;
    if (ev->timestamp) {
        if (!t->st.first_timestamp || ev->timestamp < t->st.first_timestamp)
            t->st.first_timestamp = ev->timestamp;
        if (ev->timestamp > t->st.last_timestamp)
            t->st.last_timestamp = ev->timestamp;
    }
}

/* The current buffer's next event: 1, 0 at the end of its events, or the
 * error that makes the rest of the buffer unreadable. Past soft_end (a
 * buffer whose Offset was out of range) the end is where no event parses,
 * or where time goes back: a reused buffer's older events stay behind the
 * new ones. */
static int buffer_event(struct ntl_etl *t, struct ntl_etl_event *ev, struct ntl_error *err)
{
    struct etl_cur *c = &t->cur;
    c->err = err;
    if (c->end - c->pos < 4 || ntl_le32(c->data + c->pos) == 0xFFFFFFFFu)
        return 0;
    bool beyond = c->pos >= c->soft_end;
    /* In sorted mode events come here only in its first reading. */
    int rc = t->sorted_mode ? parse_time(c, c->pos, ev) : etl_parse_event(c, c->pos, ev);
    if (beyond && (rc < 0 || ev->timestamp < c->last_timestamp)) {
        ntl_error_clear(err);
        return 0;
    }
    if (rc < 0)
        return rc;
    c->pos = align8(c->pos + ev->size);
    if (c->pos > c->end)
        c->pos = c->end;
    if (ev->timestamp > c->last_timestamp)
        c->last_timestamp = ev->timestamp;
    count_event(t, ev);
    return 1;
}

/* Streaming: the next event of the file, in file order. */
int etl_stream_next(struct ntl_etl *t, struct ntl_etl_event *ev, struct ntl_error *err)
{
    for (;;) {
        if (!t->cur_valid) {
            if (t->fatal)
                return 0;
            int rc = load_buffer(t, err);
            if (rc < 0) {
                t->st.buffers_bad += t->can_continue;
                if (!t->can_continue)
                    t->fatal = true;
                return rc;
            }
            if (rc == 0)
                return 0;
        }
        int rc = buffer_event(t, ev, err);
        if (rc == 0) {
            t->cur_valid = false;
            continue;
        }
        if (rc < 0) {
            /* The rest of this buffer is unreadable; the next one is not. */
            t->cur_valid = false;
            t->can_continue = true;
            t->st.buffers_bad++;
        }
        return rc;
    }
}

int ntl_etl_next_buffer(struct ntl_etl *t, struct ntl_etl_buffer *b, struct ntl_error *err)
{
    struct ntl_etl_event ev;
    uint32_t count = 0;
    int rc;

    memset(b, 0, sizeof *b);
    if (t->sorted_mode)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "etl", NTL_NO_OFFSET,
                             "buffer iteration needs streaming mode");
    if (t->pending_first) {
        /* The first buffer is loaded and its header event read. */
        t->pending_first = false;
        count = 1;
    } else {
        if (t->fatal)
            return 0;
        rc = load_buffer(t, err);
        if (rc <= 0) {
            if (rc < 0) {
                t->st.buffers_bad += t->can_continue;
                t->fatal = !t->can_continue;
                *b = t->buf; /* zeros unless the header was read */
            }
            return rc;
        }
    }
    while ((rc = buffer_event(t, &ev, err)) != 0) {
        if (rc < 0) {
            t->cur_valid = false;
            t->can_continue = true;
            t->st.buffers_bad++;
            *b = t->buf;
            b->events = count;
            return rc;
        }
        count++;
    }
    t->cur_valid = false;
    *b = t->buf;
    b->events = count;
    return 1;
}

int ntl_etl_next(struct ntl_etl *t, struct ntl_etl_event *ev, struct ntl_error *err)
{
    if (t->pending_first) {
        /* The logfile header event, read at open. */
        t->pending_first = false;
        if (!t->sorted_mode) {
            *ev = t->first;
            return 1;
        }
    }
    return t->sorted_mode ? etl_sorted_next(t, ev, err) : etl_stream_next(t, ev, err);
}

bool ntl_etl_can_continue(const struct ntl_etl *t) { return t->can_continue && !t->fatal; }

const struct ntl_etl_buffer *ntl_etl_current_buffer(const struct ntl_etl *t)
{
    return t->sorted_mode && t->sorted_buf ? t->sorted_buf : &t->buf;
}

void ntl_etl_get_stats(const struct ntl_etl *t, struct ntl_etl_stats *st) { *st = t->st; }

const struct ntl_etl_logfile *ntl_etl_logfile(const struct ntl_etl *t) { return &t->lf; }

uint64_t ntl_etl_input_size(const struct ntl_etl *t) { return t->size; }

int ntl_etl_compression_format(const struct ntl_etl *t) { return t->format; }

uint64_t ntl_etl_input_done(const struct ntl_etl *t) { return t->next_buffer; }

/* ---- open/close ------------------------------------------------------ */

/* The first buffer is never compressed; in a compressed trace its State holds
 * the COMPRESSION_FORMAT_* the other buffers use. */
static int choose_compression_format(struct ntl_etl *t, struct ntl_error *err)
{
    if (t->format)
        return 0;
    if (ntl_compress_format_name((int)t->buf.state)) {
        t->format = (int)t->buf.state;
        return 0;
    }
    if (t->lf.log_file_mode & NTL_ETL_MODE_COMPRESSED)
        return ntl_error_set(err, NTL_ERR_UNSUPPORTED, "WMI_BUFFER_HEADER", 0x2c,
                             "the trace is compressed with unknown format %u "
                             "(the first buffer's State); --compression chooses one",
                             t->buf.state);
    t->format = NTL_COMPRESS_XPRESS; /* no buffer should need it */
    return 0;
}

static int open_common(struct ntl_etl *t, const struct ntl_etl_options *opt, struct ntl_error *err)
{
    t->format = opt ? opt->compression_format : 0;
    if (t->format && !ntl_compress_format_name(t->format))
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "options", NTL_NO_OFFSET,
                             "unknown compression format %d", t->format);
    t->sorted_mode = opt && opt->sorted;
    t->sorted_reload = opt && opt->sorted_reload;
    if (opt) {
        t->progress = opt->progress;
        t->progress_ctx = opt->progress_ctx;
    }
    t->sorted_limit = opt && opt->sorted_limit ? opt->sorted_limit : ((uint64_t)4 << 30);
    t->pointer_size = 8;

    int rc = load_buffer(t, err);
    if (rc == 0)
        return ntl_error_set(err, NTL_ETL_TRUNCATED, "WMI_BUFFER_HEADER", 0, "empty file");
    if (rc < 0)
        return rc;
    struct etl_cur *c = &t->cur;
    c->err = err;
    if (c->end - c->pos < 8 || ntl_le32(c->data + c->pos) == 0xFFFFFFFFu)
        return ntl_error_set(err, NTL_ERR_FORMAT, "TRACE_LOGFILE_HEADER", NTL_ETL_BUFFER_HEADER_SIZE,
                             "the first buffer holds no event");
    if ((rc = etl_parse_event(c, c->pos, &t->first)) < 0)
        return rc;
    if ((t->first.kind != NTL_ETL_KIND_SYSTEM && t->first.kind != NTL_ETL_KIND_COMPACT) ||
        t->first.hook_id != 0)
        return ntl_error_set(err, NTL_ERR_FORMAT, "TRACE_LOGFILE_HEADER",
                             t->first.offset, "the first event is a %s event with hook 0x%04x, "
                             "not the EventTrace header (0x0000)",
                             ntl_etl_kind_name(t->first.kind), t->first.hook_id);
    if ((rc = parse_logfile(t, &t->first, t->first.offset + (size_t)(t->first.payload - c->data - c->pos),
                            err)) < 0)
        return rc;
    if ((rc = choose_compression_format(t, err)) < 0)
        return rc;
    c->pointer_size = t->pointer_size;
    c->pos = align8(c->pos + t->first.size);
    if (c->pos > c->end)
        c->pos = c->end;
    count_event(t, &t->first);
    t->pending_first = true;
    if (t->sorted_mode) {
        /* Sorted mode re-reads from the start so the header event is kept too. */
        t->next_buffer = 0;
        t->buffer_index = 0;
        t->cur_valid = false;
        memset(&t->st, 0, sizeof t->st);
        etl_irregular_reset(t);
    }
    return 0;
}

/* The decompressing thread, when asked for and the trace is compressed;
 * without it (it could not start) the reader decompresses alone. */
static void start_ahead(struct ntl_etl *t, const struct ntl_etl_options *opt, const char *path)
{
    if (opt && opt->decompress_ahead && (t->lf.log_file_mode & NTL_ETL_MODE_COMPRESSED))
        t->ahead = etl_ahead_start(t->mem, path, t->size, t->format, t->next_buffer);
}

static struct ntl_etl *etl_alloc(struct ntl_error *err)
{
    struct ntl_etl *t = calloc(1, sizeof *t);
    if (!t)
        ntl_error_set(err, NTL_ERR_NOMEM, "etl", NTL_NO_OFFSET, "out of memory");
    return t;
}

int ntl_etl_open_mem(const void *data, size_t size, const struct ntl_etl_options *opt,
                     struct ntl_etl **out, struct ntl_error *err)
{
    struct ntl_etl *t = etl_alloc(err);
    if (!t)
        return NTL_ERR_NOMEM;
    t->mem = data;
    t->size = size;
    int rc = open_common(t, opt, err);
    if (rc < 0) {
        ntl_etl_close(t);
        return rc;
    }
    start_ahead(t, opt, NULL);
    *out = t;
    return 0;
}

int ntl_etl_open_file(const char *path, const struct ntl_etl_options *opt, struct ntl_etl **out,
                      struct ntl_error *err)
{
    struct ntl_etl *t = etl_alloc(err);
    if (!t)
        return NTL_ERR_NOMEM;
    t->f = fopen(path, "rb");
    if (!t->f) {
        int e = errno;
        free(t);
        return ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET, "cannot open: %s", strerror(e));
    }
    if (fseeko(t->f, 0, SEEK_END) != 0 || (t->size = (uint64_t)ftello(t->f)) == (uint64_t)-1 ||
        fseeko(t->f, 0, SEEK_SET) != 0) {
        int e = errno;
        ntl_etl_close(t);
        return ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET, "cannot find its size: %s",
                             strerror(e));
    }
    int rc = open_common(t, opt, err);
    if (rc < 0) {
        ntl_etl_close(t);
        return rc;
    }
    start_ahead(t, opt, path);
    *out = t;
    return 0;
}

void ntl_etl_close(struct ntl_etl *t)
{
    if (!t)
        return;
    etl_ahead_stop(t->ahead);
    if (t->f)
        fclose(t->f);
    etl_sorted_free(t);
    free(t->raw);
    free(t->dec);
    etl_irregular_free(t);
    free(t);
}
