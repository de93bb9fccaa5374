/* MS-XCA 2.1/2.2: LZ77+Huffman (COMPRESSION_FORMAT_XPRESS_HUFF).
 *
 * Blocks of up to 65536 output bytes, each starting with 256 bytes of 4-bit
 * code lengths for 512 symbols (0-255 literals, 256-511 matches: low nibble
 * length, high nibble offset bit count), then a bit stream read 16 bits at a
 * time, most significant first, with extra length bytes interleaved in the
 * byte stream. Codes are canonical and at most 15 bits long. */
#include <string.h>

#include "lz_copy.h"
#include "ntlens/compress.h"
#include "ntlens/reader.h"

#define SYMBOLS 512
#define MAX_BITS 15
#define ROOT_BITS 11                        /* most codes resolve in one lookup */
#define SUB_BITS (MAX_BITS - ROOT_BITS)     /* each longer code's last bits */
#define ROOT_SIZE (1u << ROOT_BITS)
#define SUB_SIZE (1u << SUB_BITS)
/* A root entry per 11-bit prefix, and at most one subtable per symbol. */
#define TABLE_SIZE (ROOT_SIZE + SYMBOLS * SUB_SIZE)
#define SUBTABLE 0x8000u
#define BLOCK 65536u
#define SYM_SHIFT 6
#define LEN_MASK 63u
#define MATCH_BIT (0x100u << SYM_SHIFT)   /* the symbol is not a literal */
/* Bits no code starts with: symbol 256 (not a literal) of length 0. */
#define NO_CODE MATCH_BIT

static void fill_no_code(uint16_t *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        t[i] = NO_CODE;
}

/* Two levels, so a block's table costs 2,048 entries, not 32,768 (a
 * 64 KiB block decoded at a gigabyte a second cannot afford a 64 KiB
 * table). Entry: code length in bits 0-5 (so the shift of a 64-bit word
 * that consumes it needs no mask on x86), symbol in bits 6-14, NO_CODE
 * where no code starts; a root entry with SUBTABLE set holds the index of
 * the 16 entries that the next 4 bits choose among. */
static void put_long_code(uint16_t *table, size_t *subs, unsigned sym, unsigned len, unsigned code)
{
    uint16_t e = (uint16_t)(len | (sym << SYM_SHIFT));
    unsigned root = code >> (len - ROOT_BITS);
    if (!(table[root] & SUBTABLE)) {
        fill_no_code(table + *subs, SUB_SIZE);
        table[root] = (uint16_t)(SUBTABLE | *subs);
        *subs += SUB_SIZE;
    }
    uint16_t *sub = table + (table[root] & ~SUBTABLE);
    unsigned low = code & ((1u << (len - ROOT_BITS)) - 1);
    unsigned first = low << (MAX_BITS - len), n = 1u << (MAX_BITS - len);
    for (unsigned k = 0; k < n; k++)
        sub[first + k] = e;
}

/* n copies of e; n is a power of two, the same for every code of a length,
 * so the branches here are predicted. */
static inline void fill_run(uint16_t *t, size_t n, uint16_t e)
{
    if (n < 4) {
        t[0] = e;
        t[n - 1] = e;
        return;
    }
    uint64_t four = e * 0x0001000100010001u;
    for (size_t k = 0; k < n; k += 4)
        memcpy(t + k, &four, 8);
}

/* Symbols in canonical order (by code length, then symbol), without a
 * branch per symbol on whether it has a code: those of length 0 go first.
 * Returns where the coded ones start. */
static unsigned canonical_order(const uint8_t *len, const unsigned *count, uint16_t *sorted)
{
    unsigned at[MAX_BITS + 1];
    at[0] = 0;
    for (unsigned l = 1; l <= MAX_BITS; l++)
        at[l] = at[l - 1] + count[l - 1];
    for (unsigned s = 0; s < SYMBOLS; s++)
        sorted[at[len[s]]++] = (uint16_t)s;
    return count[0];
}

static int build_table(const uint8_t *lens_packed, uint16_t *table, uint64_t origin,
                       struct ntl_error *err)
{
    uint8_t len[SYMBOLS];
    uint16_t sorted[SYMBOLS];
    unsigned count[MAX_BITS + 1] = {0}, next[MAX_BITS + 1];
    for (unsigned i = 0; i < SYMBOLS; i++) {
        len[i] = (uint8_t)((lens_packed[i / 2] >> ((i & 1) * 4)) & 15);
        count[len[i]]++;
    }
    if (count[0] == SYMBOLS)
        return ntl_error_set(err, NTL_ERR_FORMAT, "XPRESS Huffman table", origin,
                             "no symbol has a code");
    unsigned i = canonical_order(len, count, sorted);
    /* Canonical codes: shorter first, then by symbol (Kraft's sum checked). */
    long left = 1;
    unsigned code = 0;
    count[0] = 0;
    for (unsigned l = 1; l <= MAX_BITS; l++) {
        left = 2 * left - count[l];
        if (left < 0)
            return ntl_error_set(err, NTL_ERR_FORMAT, "XPRESS Huffman table", origin,
                                 "code lengths oversubscribe the code space");
        code = (code + count[l - 1]) << 1;
        next[l] = code;
    }
    /* Codes up to ROOT_BITS long fill the root from its start in canonical
     * order; an incomplete code leaves entries that no valid stream reaches. */
    size_t at = 0;
    for (unsigned l = 1; l <= ROOT_BITS; l++) {
        size_t n = (size_t)1 << (ROOT_BITS - l);
        for (unsigned k = 0; k < count[l]; k++, i++, at += n)
            fill_run(table + at, n, (uint16_t)(l | (unsigned)sorted[i] << SYM_SHIFT));
    }
    fill_no_code(table + at, ROOT_SIZE - at);
    size_t subs = ROOT_SIZE;
    for (; i < SYMBOLS; i++)
        put_long_code(table, &subs, sorted[i], len[sorted[i]], next[len[sorted[i]]]++);
    return 0;
}

struct bits {
    const uint8_t *in;
    size_t size;
    size_t pos;       /* next byte of the byte stream */
    uint32_t next;    /* the next 32 bits, MSB first */
    int extra;        /* bits in next beyond the 16 always present */
};

static inline uint32_t read16_or_zero(const struct bits *b)
{
    return b->pos + 2 <= b->size ? ntl_le16(b->in + b->pos) : 0;
}

/* Without a branch on the refill: whether a code ends a 16-bit word
 * depends on the data, so the branch would be mispredicted about as often
 * as taken. */
static inline void consume(struct bits *b, unsigned n)
{
    b->next <<= n;
    b->extra -= (int)n;
    uint32_t need = (uint32_t)-(b->extra < 0);
    b->next |= (read16_or_zero(b) << ((unsigned)-b->extra & 15)) & need;
    b->extra += (int)(16 & need);
    b->pos += 2 & need;
}

/* The fast loop's bit buffer: 64 bits read ahead in 16-bit words, MSB first,
 * avail bits valid from the top; the bits below are zeros or the stream's
 * own next bits (a refill ORs the same bits in again). The format's reader
 * holds 16-31 bits ahead and reads extra length bytes where its words end:
 * that is pos less the whole words held beyond 16 bits. */
struct wide {
    uint64_t buf;
    unsigned avail;
    size_t pos;
};

/* Branchless: two words more when avail <= 32 (to 33-64 bits); needs
 * avail >= 1 and 4 bytes at pos. When they are not taken, the bits ORed in
 * are the stream's next bits at their own place all the same. */
static inline void wide_refill(struct wide *w, const uint8_t *in)
{
    uint32_t two = ntl_le32(in + w->pos);
    two = two >> 16 | two << 16; /* the first word on top */
    w->buf |= (uint64_t)two << 32 >> w->avail;
    unsigned taken = (64 - w->avail) >> 5;
    w->pos += 4 * taken;
    w->avail += 32 * taken;
}

/* Where the format's reader stands (at least one code consumed), and its
 * view: the bits beyond that are dropped. */
static inline void wide_logical(struct wide *w)
{
    unsigned surplus = (w->avail - 16) >> 4;
    w->avail -= 16 * surplus;
    w->buf &= ~0ull << (64 - w->avail);
    w->pos -= 2 * surplus;
}

/* The entry a root entry's subtable gives for the bits on top of buf. */
static inline uint16_t sub_entry(const uint16_t *table, uint16_t e, uint64_t buf)
{
    return table[(e & ~SUBTABLE) + ((buf >> (64 - MAX_BITS)) & (SUB_SIZE - 1))];
}

/* A match's length past 15+3: a byte, a u16 or a u32 at pos (8 bytes are
 * there). 0 when it is too small to be valid. */
static inline size_t long_length(const uint8_t *in, size_t *pos)
{
    size_t mlen = in[(*pos)++];
    if (mlen != 255)
        return mlen + 15;
    mlen = ntl_le16(in + *pos);
    *pos += 2;
    if (mlen == 0) {
        mlen = ntl_le32(in + *pos);
        *pos += 4;
    }
    return mlen < 15 ? 0 : mlen;
}

/* The bulk of a block while 16 bytes of input remain: a literal costs a
 * table load, a shift and a refill that the next load does not wait for
 * (its index is taken before the refill's OR, which cannot reach the top
 * bits). Hands b back in the format reader's terms. Returns 0 or a
 * negative status; stops at a missing code for the careful loop to report. */
__attribute__((noinline)) /* its own registers: inlined, its loop spilled */
static long fast_block(const uint16_t *table, const uint8_t *in, size_t in_size, struct bits *b,
                       uint8_t *out, size_t *opp, size_t limit, size_t out_size, uint64_t origin,
                       struct ntl_error *err)
{
    struct wide w = {(uint64_t)b->next << 32, 32, b->pos};
    size_t op = *opp;
    uint16_t e = table[w.buf >> (64 - ROOT_BITS)];
    uint16_t first = e & SUBTABLE ? sub_entry(table, e, w.buf) : e;
    /* Until a code is consumed the reader holds 32 bits, which wide_logical
     * cannot tell from 16 and a word more: leave a block that starts with
     * a missing code to the careful loop. */
    if (in_size - w.pos < 16 || first == NO_CODE)
        return 0;
    while (op < limit && in_size - w.pos >= 16) {
        if (e & SUBTABLE)
            e = sub_entry(table, e, w.buf);
        unsigned len = e & LEN_MASK;
        if (!(e & MATCH_BIT)) {
            out[op++] = (uint8_t)(e >> SYM_SHIFT);
            w.buf <<= len;
            w.avail -= len;
            e = table[w.buf >> (64 - ROOT_BITS)];
            wide_refill(&w, in);
            continue;
        }
        if (len == 0)
            break; /* the careful loop says where */
        w.buf <<= len;
        w.avail -= len;
        unsigned sym = (e >> SYM_SHIFT) - 256;
        size_t mlen = sym & 15;
        unsigned obits = sym >> 4;
        size_t tok_pos = w.pos - 2 * ((w.avail - 16) >> 4);
        if (mlen == 15) {
            wide_logical(&w);
            if ((mlen = long_length(in, &w.pos)) == 0)
                return ntl_error_set(err, NTL_ERR_FORMAT, "XPRESS Huffman stream", origin + tok_pos,
                                     "match length too small");
        }
        mlen += 3;
        size_t offset = (size_t)(w.buf >> 1 >> (63 - obits)) + ((size_t)1 << obits);
        if (offset > op)
            return ntl_error_set(err, NTL_ERR_FORMAT, "XPRESS Huffman stream", origin + tok_pos,
                                 "match offset %zu before the start of the output (at %zu)",
                                 offset, op);
        if (mlen > out_size - op)
            return ntl_error_set(err, NTL_ERR_LIMIT, "XPRESS Huffman stream", origin + tok_pos,
                                 "match past the end of the output");
        w.buf <<= obits;
        w.avail -= obits;
        lz_copy(out + op, offset, mlen, out_size - op);
        op += mlen;
        wide_refill(&w, in);
        e = table[w.buf >> (64 - ROOT_BITS)];
    }
    wide_logical(&w);
    b->next = (uint32_t)(w.buf >> 32);
    b->extra = (int)w.avail - 16;
    b->pos = w.pos;
    *opp = op;
    return 0;
}

long ntl_xpress_huff_decompress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size,
                                uint64_t origin, struct ntl_error *err)
{
    uint16_t table[TABLE_SIZE];
    size_t ip = 0, op = 0;
    long rc;

    while (op < out_size && ip < in_size) {
        if (in_size - ip < 256 + 4) {
            rc = ntl_error_set(err, NTL_ERR_TRUNCATED, "XPRESS Huffman table", origin + ip,
                               "block header cut short");
            return rc;
        }
        if ((rc = build_table(in + ip, table, origin + ip, err)) < 0)
            return rc;
        struct bits b = {in, in_size, ip + 256, 0, 16};
        b.next = (uint32_t)ntl_le16(in + b.pos) << 16 | ntl_le16(in + b.pos + 2);
        b.pos += 4;
        size_t limit = out_size - op > BLOCK ? op + BLOCK : out_size;
        if ((rc = fast_block(table, in, in_size, &b, out, &op, limit, out_size, origin, err)) < 0)
            return rc;
        while (op < limit) {
            uint16_t e = table[b.next >> (32 - ROOT_BITS)];
            if (e & SUBTABLE)
                e = table[(e & ~SUBTABLE) + ((b.next >> (32 - MAX_BITS)) & (SUB_SIZE - 1))];
            unsigned len = e & LEN_MASK;
            unsigned sym = e >> SYM_SHIFT;
            if (!(e & MATCH_BIT)) { /* NO_CODE is not a literal: one test on this path */
                consume(&b, len);
                out[op++] = (uint8_t)sym;
                continue;
            }
            if (len == 0) {
                rc = ntl_error_set(err, NTL_ERR_FORMAT, "XPRESS Huffman stream", origin + b.pos,
                                   "bits match no code");
                return rc;
            }
            consume(&b, len);
            /* Past the input only zeros are read in; a stream that needs them
             * beyond its two lookahead words is cut short (checked here and
             * when the block ends, to keep it off the literal path). */
            if (b.pos > in_size + 4) {
                rc = ntl_error_set(err, NTL_ERR_TRUNCATED, "XPRESS Huffman stream",
                                   origin + in_size, "bit stream runs past the input");
                return rc;
            }
            if (sym == 256 && b.pos >= in_size) {
                rc = (long)op; /* end of stream */
                return rc;
            }
            sym -= 256;
            size_t mlen = sym & 15;
            unsigned obits = sym >> 4;
            size_t tok_pos = b.pos;
            if (mlen == 15) {
                if (b.pos >= in_size) {
                    rc = ntl_error_set(err, NTL_ERR_TRUNCATED, "XPRESS Huffman stream",
                                       origin + b.pos, "length byte missing");
                    return rc;
                }
                mlen = in[b.pos++];
                if (mlen == 255) {
                    if (in_size - b.pos < 2) {
                        rc = ntl_error_set(err, NTL_ERR_TRUNCATED, "XPRESS Huffman stream",
                                           origin + b.pos, "length u16 missing");
                        return rc;
                    }
                    mlen = ntl_le16(in + b.pos);
                    b.pos += 2;
                    if (mlen == 0) {
                        /* A u32 length follows (newer MS-XCA revisions). */
                        if (in_size - b.pos < 4) {
                            rc = ntl_error_set(err, NTL_ERR_TRUNCATED, "XPRESS Huffman stream",
                                               origin + b.pos, "length u32 missing");
                            return rc;
                        }
                        mlen = ntl_le32(in + b.pos);
                        b.pos += 4;
                    }
                    if (mlen < 15) {
                        rc = ntl_error_set(err, NTL_ERR_FORMAT, "XPRESS Huffman stream",
                                           origin + tok_pos, "match length too small");
                        return rc;
                    }
                    mlen -= 15;
                }
                mlen += 15;
            }
            mlen += 3;
            size_t offset = obits ? (b.next >> (32 - obits)) : 0;
            offset += (size_t)1 << obits;
            if (obits)
                consume(&b, obits);
            if (offset > op) {
                rc = ntl_error_set(err, NTL_ERR_FORMAT, "XPRESS Huffman stream", origin + tok_pos,
                                   "match offset %zu before the start of the output (at %zu)",
                                   offset, op);
                return rc;
            }
            if (mlen > out_size - op) {
                rc = ntl_error_set(err, NTL_ERR_LIMIT, "XPRESS Huffman stream", origin + tok_pos,
                                   "match past the end of the output");
                return rc;
            }
            lz_copy(out + op, offset, mlen, out_size - op);
            op += mlen;
        }
        if (b.pos > in_size + 4) {
            rc = ntl_error_set(err, NTL_ERR_TRUNCATED, "XPRESS Huffman stream", origin + in_size,
                               "bit stream runs past the input");
            return rc;
        }
        ip = b.pos;
    }
    return (long)op;
}
