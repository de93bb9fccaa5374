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
#define SYM_SHIFT 5
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
 * table). Entry: code length in bits 0-4 (so the shift that consumes it
 * needs no mask on x86), symbol in bits 5-13, NO_CODE where no code
 * starts; a root entry with SUBTABLE set holds the index of the 16
 * entries that the next 4 bits choose among. */
static void put_code(uint16_t *table, size_t *subs, unsigned sym, unsigned len, unsigned code)
{
    uint16_t e = (uint16_t)(len | (sym << SYM_SHIFT));
    if (len <= ROOT_BITS) {
        unsigned first = code << (ROOT_BITS - len), n = 1u << (ROOT_BITS - len);
        for (unsigned k = 0; k < n; k++)
            table[first + k] = e;
        return;
    }
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

static int build_table(const uint8_t *lens_packed, uint16_t *table, uint64_t origin,
                       struct ntl_error *err)
{
    uint8_t len[SYMBOLS];
    unsigned count[MAX_BITS + 1] = {0}, next[MAX_BITS + 1];
    for (unsigned i = 0; i < SYMBOLS; i++) {
        len[i] = (uint8_t)((lens_packed[i / 2] >> ((i & 1) * 4)) & 15);
        count[len[i]]++;
    }
    if (count[0] == SYMBOLS)
        return ntl_error_set(err, NTL_ERR_FORMAT, "XPRESS Huffman table", origin,
                             "no symbol has a code");
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
    /* An incomplete code leaves entries that no valid stream reaches. */
    fill_no_code(table, ROOT_SIZE);
    size_t subs = ROOT_SIZE;
    for (unsigned s = 0; s < SYMBOLS; s++)
        if (len[s])
            put_code(table, &subs, s, len[s], next[len[s]]++);
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
        while (op < limit) {
            uint16_t e = table[b.next >> (32 - ROOT_BITS)];
            if (e & SUBTABLE)
                e = table[(e & ~SUBTABLE) + ((b.next >> (32 - MAX_BITS)) & (SUB_SIZE - 1))];
            unsigned len = e & 31;
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
