#include "etl_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/etl.h"
#include "ntlens/reader.h"
#include "ntlens/utf16.h"

#define HDR 0x48

static void die(const char *what)
{
    fprintf(stderr, "etl_gen: %s\n", what);
    exit(99);
}

static void put(struct ntl_buf *b, const void *p, size_t n)
{
    if (ntl_buf_append(b, p, n) < 0)
        die("out of memory");
}

static void put8(struct ntl_buf *b, uint8_t v) { put(b, &v, 1); }
static void put16(struct ntl_buf *b, uint16_t v) { if (ntl_buf_put_u16(b, v) < 0) die("oom"); }
static void put32(struct ntl_buf *b, uint32_t v) { if (ntl_buf_put_u32(b, v) < 0) die("oom"); }
static void put64(struct ntl_buf *b, uint64_t v) { if (ntl_buf_put_u64(b, v) < 0) die("oom"); }
static void putptr(struct ntl_buf *b, int ps, uint64_t v)
{
    if (ps == 8)
        put64(b, v);
    else
        put32(b, (uint32_t)v);
}

static void putguid(struct ntl_buf *b, const char *text)
{
    struct ntl_guid g;
    if (!ntl_guid_parse(text, &g))
        die("bad GUID");
    put(b, g.b, 16);
}

static void putwstr(struct ntl_buf *b, const char *s)
{
    size_t n = ntl_utf8_to_utf16(s, NULL, 0);
    uint8_t *w = calloc(n + 1, 2);
    if (!w)
        die("oom");
    ntl_utf8_to_utf16(s, w, n);
    put(b, w, 2 * (n + 1));
    free(w);
}

/* Starts the open buffer: a header placeholder filled in when it closes. */
static void open_buffer(struct gen *g, uint16_t cpu)
{
    uint8_t *p;
    g->buf.len = 0;
    g->cpu = cpu;
    if (ntl_buf_grow_zero(&g->buf, HDR, &p) < 0)
        die("oom");
}

static void pad8(struct gen *g)
{
    while (g->buf.len % 8)
        put8(&g->buf, 0);
}

static void check_room(struct gen *g)
{
    if (g->buf.len > g->buffer_size)
        die("event does not fit the buffer");
}

static void close_buffer(struct gen *g)
{
    uint8_t *h = g->buf.data;
    uint32_t used = (uint32_t)g->buf.len;
    bool first = g->file.len == 0;
    int fmt = first ? 0 : g->compress;
    memset(h, 0, HDR);
    ntl_put_le32(h + 0x04, used);
    ntl_put_le32(h + 0x08, used);
    ntl_put_le64(h + 0x10, g->seq * 1000);
    ntl_put_le64(h + 0x18, g->seq++);
    h[0x28] = (uint8_t)g->cpu;
    ntl_put_le32(h + 0x2c, first && g->compress ? (uint32_t)g->compress : 3); /* State */
    ntl_put_le32(h + 0x30, used);
    ntl_put_le16(h + 0x36, first ? 4 : 0);
    if (!fmt) {
        ntl_put_le32(h, g->buffer_size);
        ntl_put_le16(h + 0x34, 0x0001);
        put(&g->file, h, used);
        for (uint32_t i = used; i < g->buffer_size; i++)
            put8(&g->file, 0xFF);
        return;
    }
    struct ntl_buf c;
    ntl_buf_init(&c, 0);
    size_t n = fmt == 2 ? gen_lznt1_stored(h + HDR, used - HDR, &c)
             : fmt == 4 ? gen_xpress_huff_flat(h + HDR, used - HDR, &c)
                        : gen_xpress(h + HDR, used - HDR, &c);
    ntl_put_le32(h, (uint32_t)(HDR + n));
    ntl_put_le16(h + 0x34, 0x0040);
    put(&g->file, h, HDR);
    put(&g->file, c.data, n);
    ntl_buf_free(&c);
}

void gen_init(struct gen *g, uint32_t buffer_size, int pointer_size, uint32_t log_file_mode,
              uint64_t header_ts, uint64_t perf_freq, uint64_t start_filetime, uint32_t clock_type,
              const char *logger_name, const char *log_file_name)
{
    memset(g, 0, sizeof *g);
    ntl_buf_init(&g->file, 0);
    ntl_buf_init(&g->buf, 0);
    g->buffer_size = buffer_size;
    g->pointer_size = pointer_size;
    open_buffer(g, 0);

    struct ntl_buf p;
    ntl_buf_init(&p, 0);
    put32(&p, buffer_size);
    put32(&p, 0x4a61000a);               /* 10.0 */
    put32(&p, 19041);
    put32(&p, 4);                        /* processors */
    put64(&p, start_filetime + 600000000u); /* end time */
    put32(&p, 156250);
    put32(&p, 100);
    put32(&p, log_file_mode);
    put32(&p, 0);                        /* buffers written */
    put32(&p, 1);
    put32(&p, (uint32_t)pointer_size);
    put32(&p, 7);                        /* events lost */
    put32(&p, 2400);                     /* CPU MHz */
    putptr(&p, pointer_size, 0x1111);    /* LoggerName pointer */
    putptr(&p, pointer_size, 0x2222);
    put32(&p, (uint32_t)-60);            /* bias */
    uint8_t tzname[64] = {0};
    ntl_utf8_to_utf16("Test Standard Time", tzname, 32);
    put(&p, tzname, 64);
    uint8_t zero16[16] = {0};
    put(&p, zero16, 16);
    put32(&p, 0);
    memset(tzname, 0, sizeof tzname);
    ntl_utf8_to_utf16("Test Daylight Time", tzname, 32);
    put(&p, tzname, 64);
    put(&p, zero16, 16);
    put32(&p, (uint32_t)-60);
    while (p.len % 8)
        put8(&p, 0);
    put64(&p, start_filetime - 36000000000u); /* boot time */
    put64(&p, perf_freq);
    put64(&p, start_filetime);
    put32(&p, clock_type);
    put32(&p, 3);                        /* buffers lost */
    putwstr(&p, logger_name);
    putwstr(&p, log_file_name);
    gen_system(g, false, pointer_size == 8, 2, 0x0000, 0x10, 4, header_ts, NULL, 0, p.data, p.len);
    ntl_buf_free(&p);
}

void gen_free(struct gen *g)
{
    ntl_buf_free(&g->file);
    ntl_buf_free(&g->buf);
}

void gen_next_buffer(struct gen *g, uint16_t cpu)
{
    close_buffer(g);
    open_buffer(g, cpu);
}

void gen_finish(struct gen *g)
{
    close_buffer(g);
    g->buf.len = 0;
}

void gen_raw(struct gen *g, const void *p, size_t n)
{
    put(&g->buf, p, n);
    check_room(g);
}

void gen_system(struct gen *g, bool compact, bool is64, uint16_t version, uint16_t hook,
                uint32_t tid, uint32_t pid, uint64_t ts, const void *ext, size_t ext_len,
                const void *payload, size_t n)
{
    size_t hdr = compact ? 0x18 : 0x20;
    put16(&g->buf, version);
    put8(&g->buf, compact ? (is64 ? 4 : 3) : (is64 ? 2 : 1));
    put8(&g->buf, 0xC0);
    put16(&g->buf, (uint16_t)(hdr + ext_len + n));
    put16(&g->buf, hook);
    put32(&g->buf, tid);
    put32(&g->buf, pid);
    put64(&g->buf, ts);
    if (!compact) {
        put32(&g->buf, 11);
        put32(&g->buf, 22);
    }
    put(&g->buf, ext, ext_len);
    put(&g->buf, payload, n);
    pad8(g);
    check_room(g);
}

void gen_perfinfo(struct gen *g, bool is64, uint16_t version, uint16_t hook, uint64_t ts,
                  const void *ext, size_t ext_len, const void *payload, size_t n)
{
    put16(&g->buf, version);
    put8(&g->buf, is64 ? 0x11 : 0x10);
    put8(&g->buf, 0xC0);
    put16(&g->buf, (uint16_t)(0x10 + ext_len + n));
    put16(&g->buf, hook);
    put64(&g->buf, ts);
    put(&g->buf, ext, ext_len);
    put(&g->buf, payload, n);
    pad8(g);
    check_room(g);
}

void gen_classic(struct gen *g, bool instance, bool is64, const char *guid, uint8_t type,
                 uint8_t level, uint16_t version, uint32_t tid, uint32_t pid, uint64_t ts,
                 const void *payload, size_t n)
{
    size_t hdr = instance ? 0x48 : 0x30;
    put16(&g->buf, (uint16_t)(hdr + n));
    put8(&g->buf, instance ? (is64 ? 0x15 : 0x0B) : (is64 ? 0x14 : 0x0A));
    put8(&g->buf, 0xC0);
    put8(&g->buf, type);
    put8(&g->buf, level);
    put16(&g->buf, version);
    put32(&g->buf, tid);
    put32(&g->buf, pid);
    put64(&g->buf, ts);
    putguid(&g->buf, guid);
    put32(&g->buf, 5);
    put32(&g->buf, 6);
    if (instance) {
        put32(&g->buf, 77);
        put32(&g->buf, 66);
        putguid(&g->buf, "01234567-89ab-cdef-0123-456789abcdef");
    }
    put(&g->buf, payload, n);
    pad8(g);
    check_room(g);
}

void gen_event(struct gen *g, bool is64, const char *guid, uint16_t id, uint8_t opcode,
               uint16_t task, uint64_t keyword, uint32_t tid, uint32_t pid, uint64_t ts,
               const void *ext, size_t ext_len, const void *payload, size_t n)
{
    put16(&g->buf, (uint16_t)(0x50 + ext_len + n));
    put8(&g->buf, is64 ? 0x13 : 0x12);
    put8(&g->buf, 0xC0);
    put16(&g->buf, (uint16_t)((ext ? 0x0001 : 0) | (is64 ? 0x0040 : 0x0020)));
    put16(&g->buf, 0);
    put32(&g->buf, tid);
    put32(&g->buf, pid);
    put64(&g->buf, ts);
    putguid(&g->buf, guid);
    put16(&g->buf, id);
    put8(&g->buf, 1);       /* version */
    put8(&g->buf, 0);       /* channel */
    put8(&g->buf, 4);       /* level */
    put8(&g->buf, opcode);
    put16(&g->buf, task);
    put64(&g->buf, keyword);
    put32(&g->buf, 0);
    put32(&g->buf, 0);
    putguid(&g->buf, "00000000-0000-0000-0000-000000000000");
    put(&g->buf, ext, ext_len);
    put(&g->buf, payload, n);
    pad8(g);
    check_room(g);
}

void gen_message(struct gen *g, uint16_t number, uint32_t tid, uint32_t pid, uint64_t ts,
                 const void *payload, size_t n)
{
    put16(&g->buf, (uint16_t)(8 + 4 + 8 + 8 + n));
    put8(&g->buf, 0);
    put8(&g->buf, 0x90);
    put16(&g->buf, number);
    put16(&g->buf, 0x01 | 0x08 | 0x20); /* sequence, timestamp, system info */
    put32(&g->buf, 1234);
    put64(&g->buf, ts);
    put32(&g->buf, tid);
    put32(&g->buf, pid);
    put(&g->buf, payload, n);
    pad8(g);
    check_room(g);
}

void gen_image(struct gen *g, bool perfinfo, bool process_group, bool is64, uint8_t opcode,
               uint64_t ts, uint64_t base, uint64_t size, uint32_t pid, uint32_t checksum,
               uint32_t tds, uint64_t default_base, const char *name)
{
    struct ntl_buf p;
    int ps = is64 ? 8 : 4;
    ntl_buf_init(&p, 0);
    putptr(&p, ps, base);
    putptr(&p, ps, size);
    put32(&p, pid);
    put32(&p, checksum);
    put32(&p, tds);
    put32(&p, 0x0c0c);      /* signature level/type */
    putptr(&p, ps, default_base);
    for (int i = 0; i < 4; i++)
        put32(&p, 0);
    putwstr(&p, name);
    uint16_t hook = (uint16_t)((process_group ? 0x0300 : 0x1400) | opcode);
    if (perfinfo)
        gen_perfinfo(g, is64, 3, hook, ts, NULL, 0, p.data, p.len);
    else
        gen_system(g, false, is64, 3, hook, 0x20, pid, ts, NULL, 0, p.data, p.len);
    ntl_buf_free(&p);
}

void gen_ipt(struct gen *g, bool event_header, uint64_t ts, uint64_t event_ts, uint32_t process,
             uint32_t thread, uint64_t option, uint32_t trace_position, const uint8_t *trace,
             uint32_t trace_size)
{
    static const char *ipt = "ff1fd2fd-6008-42bb-9e75-00a20051f3be";
    struct ntl_buf p;
    ntl_buf_init(&p, 0);
    put64(&p, event_ts);
    put32(&p, process);
    put32(&p, thread);
    put64(&p, option);
    put32(&p, trace_size);
    put32(&p, trace_position);
    put(&p, trace, trace_size);
    if (event_header)
        gen_event(g, true, ipt, 0, 32, 0, 0, thread, process, ts, NULL, 0, p.data, p.len);
    else
        gen_classic(g, false, true, ipt, 32, 0, 2, thread, process, ts, p.data, p.len);
    ntl_buf_free(&p);
}

/* ---- compressors ---- */

struct xw {
    struct ntl_buf *out;
    size_t flag_pos;
    int nflags;
    uint32_t flags;
    size_t half;      /* position of a half-used length byte, 0 if none */
};

static void xw_flag(struct xw *w, int bit)
{
    if (w->nflags == 32) {
        ntl_put_le32(w->out->data + w->flag_pos, w->flags);
        w->flag_pos = w->out->len;
        put32(w->out, 0);
        w->nflags = 0;
        w->flags = 0;
    }
    w->flags |= (uint32_t)bit << (31 - w->nflags);
    w->nflags++;
}

size_t gen_xpress(const uint8_t *in, size_t n, struct ntl_buf *out)
{
    struct xw w = {out, 0, 0, 0, 0};
    size_t start = out->len, i = 0;
    w.flag_pos = out->len;
    put32(out, 0);
    while (i < n) {
        /* A run of the previous byte becomes a match at offset 1. */
        size_t run = 0;
        if (i > 0)
            while (i + run < n && in[i + run] == in[i - 1] && run < 70000)
                run++;
        if (run >= 3) {
            size_t len = run - 3;
            xw_flag(&w, 1);
            put16(out, (uint16_t)((0u << 3) | (len < 7 ? len : 7)));
            if (len >= 7) {
                size_t nib = len - 7 < 15 ? len - 7 : 15;
                if (!w.half) {
                    w.half = out->len;
                    put8(out, (uint8_t)nib);
                } else {
                    out->data[w.half] |= (uint8_t)(nib << 4);
                    w.half = 0;
                }
                if (len >= 22) {
                    if (len - 22 < 255) {
                        put8(out, (uint8_t)(len - 22));
                    } else {
                        put8(out, 255);
                        if (len + 3 < 65536) {
                            put16(out, (uint16_t)(len));
                        } else {
                            put16(out, 0);
                            put32(out, (uint32_t)len);
                        }
                    }
                }
            }
            i += run;
        } else {
            xw_flag(&w, 0);
            put8(out, in[i++]);
        }
    }
    ntl_put_le32(out->data + w.flag_pos, w.flags);
    return out->len - start;
}

size_t gen_lznt1_stored(const uint8_t *in, size_t n, struct ntl_buf *out)
{
    size_t start = out->len;
    for (size_t i = 0; i < n; i += 4096) {
        size_t len = n - i < 4096 ? n - i : 4096;
        put16(out, (uint16_t)(0x3000 | (len - 1)));
        put(out, in + i, len);
    }
    put16(out, 0);
    return out->len - start;
}

struct bw {
    struct ntl_buf *out;
    uint32_t acc;
    int nbits;
};

static void bw_put(struct bw *b, uint32_t code, int len)
{
    for (int i = len - 1; i >= 0; i--) {
        b->acc = (b->acc << 1) | ((code >> i) & 1);
        if (++b->nbits == 16) {
            put16(b->out, (uint16_t)b->acc);
            b->acc = 0;
            b->nbits = 0;
        }
    }
}

/* One block per 64 KiB; the tests keep buffers below that. */
size_t gen_xpress_huff_flat(const uint8_t *in, size_t n, struct ntl_buf *out)
{
    size_t start = out->len;
    for (size_t blk = 0; blk < n || blk == 0; blk += 65536) {
        size_t end = n - blk < 65536 ? n : blk + 65536;
        for (int i = 0; i < 256; i++)
            put8(out, 0x99); /* every symbol 9 bits: code == symbol */
        struct bw b = {out, 0, 0};
        for (size_t i = blk; i < end; i++)
            bw_put(&b, in[i], 9);
        if (end == n)
            bw_put(&b, 256, 9); /* end of stream */
        if (b.nbits)
            bw_put(&b, 0, 16 - b.nbits);
        if (end == n)
            break;
    }
    return out->len - start;
}
