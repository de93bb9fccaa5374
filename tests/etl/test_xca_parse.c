/* The XPRESS and LZ77+Huffman decoders on random parses: literals and
 * matches at every kind of offset (periods under 8, matches overlapping
 * their own output, the farthest offsets) with every length encoding,
 * encoded here from MS-XCA 2.1-2.4 with the expected output built beside
 * the stream. The decoders' fast loops hand over to the careful ones near
 * the ends of input and output; each is reached on every stream. Cut
 * streams and short outputs must fail or give a prefix. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ntlens/buf.h"
#include "ntlens/compress.h"
#include "ntlens/reader.h"

static uint32_t rng = 0x9e3779b9u;

static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

struct item {
    size_t offset; /* 0: a literal */
    size_t len;
    uint8_t lit;
    int wide;      /* a long length as u16 0 then u32 */
};

struct parse {
    struct item *items;
    size_t n;
    uint8_t *out; /* what decoding gives */
    size_t out_len;
};

static size_t pick_len(void)
{
    unsigned r = rnd() % 16;
    if (r < 8)
        return 3 + rnd() % 8;
    if (r < 12)
        return 3 + rnd() % 40;
    if (r < 15)
        return 3 + rnd() % 400;
    return 250 + rnd() % 70000;
}

/* About n bytes of output (at most cap), offsets up to max_offset. */
static void make_parse(struct parse *p, size_t n, size_t cap, size_t max_offset)
{
    p->items = malloc(n * sizeof *p->items);
    p->out = malloc(cap + 1);
    p->n = p->out_len = 0;
    size_t op = 0;
    while (op < n) {
        struct item x = {0, 1, (uint8_t)(rnd() % 5 ? 'a' + rnd() % 4 : rnd()), 0};
        if (op > 0 && rnd() % 8 >= 3) {
            size_t lim = op < max_offset ? op : max_offset;
            unsigned r = rnd() % 4;
            x.offset = r == 0 ? 1 + rnd() % 7 : r == 1 ? 8 + rnd() % 24 : 1 + rnd() % lim;
            if (r == 3 && rnd() % 4 == 0)
                x.offset = lim;
            if (x.offset > lim)
                x.offset = 1 + rnd() % lim;
            x.len = pick_len();
            x.len = x.len < cap - op ? x.len : cap - op;
            if (x.len < 3)
                break;
            x.wide = rnd() % 4 == 0;
        }
        for (size_t i = 0; i < x.len; i++, op++)
            p->out[op] = x.offset ? p->out[op - x.offset] : x.lit;
        p->items[p->n++] = x;
    }
    p->out_len = op;
}

/* ---- MS-XCA 2.3: XPRESS ---- */

struct flags {
    struct ntl_buf *b;
    size_t at;
    int used;
};

static void put_flag(struct flags *f, int bit)
{
    if (f->used == 32) {
        f->at = f->b->len;
        uint8_t zero[4] = {0};
        ntl_buf_append(f->b, zero, 4);
        f->used = 0;
    }
    uint32_t w = ntl_le32(f->b->data + f->at) | (uint32_t)bit << (31 - f->used++);
    ntl_put_le32(f->b->data + f->at, w);
}

static void put_bytes(struct ntl_buf *b, uint64_t v, int n)
{
    uint8_t t[8];
    for (int i = 0; i < n; i++)
        t[i] = (uint8_t)(v >> (8 * i));
    ntl_buf_append(b, t, (size_t)n);
}

static void encode_xpress(const struct parse *p, struct ntl_buf *b)
{
    struct flags f = {b, 0, 32};
    size_t half = 0;
    for (size_t k = 0; k < p->n; k++) {
        const struct item *x = &p->items[k];
        if (!x->offset) {
            put_flag(&f, 0);
            put_bytes(b, x->lit, 1);
            continue;
        }
        put_flag(&f, 1);
        size_t l = x->len - 3;
        put_bytes(b, (x->offset - 1) << 3 | (l < 7 ? l : 7), 2);
        if (l < 7)
            continue;
        size_t nib = l - 7 < 15 ? l - 7 : 15;
        if (!half) {
            half = b->len;
            put_bytes(b, nib, 1);
        } else {
            b->data[half] |= (uint8_t)(nib << 4);
            half = 0;
        }
        if (l < 22)
            continue;
        if (l - 22 < 255 && !x->wide) {
            put_bytes(b, l - 22, 1);
            continue;
        }
        put_bytes(b, 255, 1);
        if (l <= 65535 && !x->wide) {
            put_bytes(b, l, 2);
        } else {
            put_bytes(b, 0, 2);
            put_bytes(b, l, 4);
        }
    }
}

/* ---- MS-XCA 2.1: LZ77+Huffman, one block ---- */

/* Lengths chosen to give 8- to 15-bit codes (subtables included) and an
 * incomplete code. */
static unsigned code_len(unsigned sym)
{
    return sym < 128 ? 8 : sym < 384 ? 10 : sym < 448 ? 12 : 15;
}

struct bits {
    uint16_t *words;
    size_t nwords;
    uint32_t acc;
    int nacc;
    size_t consumed;       /* bits so far, as the reader counts them */
    struct ntl_buf extra;  /* length bytes, each chunk after some word */
    size_t *chunk_after, *chunk_end, nchunks;
};

static void put_bits(struct bits *s, uint32_t v, unsigned n)
{
    for (unsigned i = n; i-- > 0;) {
        s->acc = s->acc << 1 | ((v >> i) & 1);
        if (++s->nacc == 16) {
            s->words[s->nwords++] = (uint16_t)s->acc;
            s->acc = 0;
            s->nacc = 0;
        }
    }
    s->consumed += n;
}

/* A match's length past 15+3: a byte, or 255 then a u16 (or a u16 0 and
 * a u32). The reader holds 16-31 bits ahead once it has consumed any, and
 * reads these bytes where its words end. */
static void put_long_length(struct bits *s, size_t l, int wide)
{
    size_t words = (s->consumed + 31) / 16;
    s->chunk_after[s->nchunks] = words < 2 ? 2 : words;
    if (l - 15 < 255 && !wide) {
        put_bytes(&s->extra, l - 15, 1);
    } else {
        put_bytes(&s->extra, 255, 1);
        put_bytes(&s->extra, wide ? 0 : l, 2);
        if (wide)
            put_bytes(&s->extra, l, 4);
    }
    s->chunk_end[s->nchunks++] = s->extra.len;
}

static void encode_huff(const struct parse *p, struct ntl_buf *b)
{
    unsigned code[512];
    uint8_t lens[256];
    for (unsigned l = 1, c = 0; l <= 15; l++, c <<= 1)
        for (unsigned s = 0; s < 512; s++)
            if (code_len(s) == l)
                code[s] = c++;
    for (unsigned s = 0; s < 512; s += 2)
        lens[s / 2] = (uint8_t)(code_len(s) | code_len(s + 1) << 4);
    ntl_buf_append(b, lens, sizeof lens);
    struct bits s = {0};
    s.words = calloc(p->n * 4 + 16, sizeof *s.words);
    s.chunk_after = malloc((p->n + 1) * sizeof(size_t));
    s.chunk_end = malloc((p->n + 1) * sizeof(size_t));
    ntl_buf_init(&s.extra, 0);
    for (size_t k = 0; k < p->n; k++) {
        const struct item *x = &p->items[k];
        if (!x->offset) {
            put_bits(&s, code[x->lit], code_len(x->lit));
            continue;
        }
        unsigned obits = 0;
        while ((x->offset >> (obits + 1)) != 0)
            obits++;
        size_t l = x->len - 3;
        unsigned sym = 256 + (obits << 4) + (unsigned)(l < 15 ? l : 15);
        put_bits(&s, code[sym], code_len(sym));
        if (l >= 15)
            put_long_length(&s, l, x->wide);
        put_bits(&s, (uint32_t)(x->offset - ((size_t)1 << obits)), obits);
    }
    put_bits(&s, 0, (16 - s.nacc) % 16 + 32); /* whole words, two to spare */
    size_t c = 0, from = 0;
    for (size_t w = 0; w < s.nwords; w++) {
        put_bytes(b, s.words[w], 2);
        for (; c < s.nchunks && s.chunk_after[c] == w + 1; c++) {
            ntl_buf_append(b, s.extra.data + from, s.chunk_end[c] - from);
            from = s.chunk_end[c];
        }
    }
    CHECK_EQ_INT((long)c, (long)s.nchunks);
    free(s.words);
    free(s.chunk_after);
    free(s.chunk_end);
    ntl_buf_free(&s.extra);
}

static void check_stream(int format, const struct parse *p, const struct ntl_buf *c)
{
    size_t n = p->out_len;
    uint8_t *out = malloc(n + 1);
    struct ntl_error err = {0};
    long r = ntl_decompress(format, c->data, c->len, out, n, 0, &err);
    CHECK_EQ_INT(r, (long)n);
    CHECK(r == (long)n && !memcmp(out, p->out, n));
    for (int i = 0; i < 8; i++) {
        /* LZ77+Huffman reads zeros past a cut, which decode as something:
         * only XPRESS promises a prefix. */
        size_t cut = rnd() % (c->len + 1);
        r = ntl_decompress(format, c->data, cut, out, n, 0, &err);
        CHECK(r <= (long)n);
        if (format == NTL_COMPRESS_XPRESS)
            CHECK(r < 0 || !memcmp(out, p->out, (size_t)r));
        size_t short_out = rnd() % (n + 1);
        r = ntl_decompress(format, c->data, c->len, out, short_out, 0, &err);
        CHECK(r < 0 || (r <= (long)short_out && !memcmp(out, p->out, (size_t)r)));
    }
    free(out);
}

static void run(int format, size_t n, size_t cap, size_t max_offset)
{
    struct parse p;
    struct ntl_buf c;
    ntl_buf_init(&c, 0);
    make_parse(&p, n, cap, max_offset);
    if (format == NTL_COMPRESS_XPRESS)
        encode_xpress(&p, &c);
    else
        encode_huff(&p, &c);
    check_stream(format, &p, &c);
    ntl_buf_free(&c);
    free(p.items);
    free(p.out);
}

int main(void)
{
    for (int i = 0; i < 40; i++) {
        size_t n = i % 4 == 0 ? 20 + rnd() % 100 : i % 4 == 1 ? 1000 + rnd() % 4000 : 50000;
        run(NTL_COMPRESS_XPRESS, n, n + 80000, 8192);
        run(NTL_COMPRESS_XPRESS_HUFF, n, 65536, 65535);
    }
    return check_exit();
}
