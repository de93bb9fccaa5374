/* MS-XCA 2.3/2.4: plain LZ77 ("XPRESS", COMPRESSION_FORMAT_XPRESS).
 *
 * 32-bit flag words, most significant bit first: 0 is a literal byte, 1 a
 * match token (u16: length in the low 3 bits, offset-1 above), with longer
 * lengths in a shared half byte, then a byte, u16 and u32. The stream ends
 * where the input ends. */
#include <string.h>

#include "lz_copy.h"
#include "ntlens/compress.h"
#include "ntlens/reader.h"

static long bad(struct ntl_error *err, int status, uint64_t origin, size_t pos, const char *what)
{
    return ntl_error_set(err, status, "XPRESS stream", origin + pos, "%s", what);
}

/* Apart from bad(): the message names the offset and the position. */
static long offset_error(struct ntl_error *err, uint64_t origin, size_t pos, size_t offset, size_t op)
{
    return ntl_error_set(err, NTL_ERR_FORMAT, "XPRESS stream", origin + pos,
                         "match offset %zu before the start of the output (at %zu)", offset, op);
}

/* Room the fast loop needs: a flag word, a 32-byte literal move, a token
 * and the longest length encoding (half byte, byte, u16, u32) on the input
 * side; the literal move and a match's overshoot on the output side. */
#define FAST_IN (4 + 32 + 2 + 1 + 1 + 2 + 4)
#define FAST_OUT 64
#define FLAGS_EMPTY 1ull
/* The shared half byte of two long lengths is kept as the pending high
 * half with this bit set (0: none pending), so the second length needs no
 * load from where the first one was. */
#define HALF_PENDING 16u

/* A length whose low 3 bits were 7: the rest of it from the half byte,
 * then a byte, u16 and u32 as each one saturates. *ipp has room for all.
 * Returns the length less 3, or 0 for one too small (the caller's error). */
static inline size_t long_length(const uint8_t **ipp, unsigned *pending)
{
    const uint8_t *ip = *ipp;
    size_t len;
    /* Either half, chosen without a branch: the two alternate. */
    unsigned p = *pending, b = *ip;
    len = (p ? p : b) & 15;
    ip += !p;
    *pending = p ? 0 : (b >> 4) | HALF_PENDING;
    if (len == 15) {
        len = *ip++;
        if (len == 255) {
            len = ntl_le16(ip);
            ip += 2;
            if (len == 0) {
                len = ntl_le32(ip);
                ip += 4;
            }
            if (len < 15 + 7) {
                *ipp = ip;
                return 0;
            }
            len -= 15 + 7;
        }
        len += 15;
    }
    *ipp = ip;
    return len + 7;
}

/* A flag word with its bits in the opposite order, so the fast loop finds
 * the next match with a count of trailing zeros (one cheap instruction on
 * every x86-64, where a count of leading zeros is bsr and a fix-up). */
static inline uint32_t reverse32(uint32_t x)
{
    x = (x >> 1 & 0x55555555u) | (x & 0x55555555u) << 1;
    x = (x >> 2 & 0x33333333u) | (x & 0x33333333u) << 2;
    x = (x >> 4 & 0x0f0f0f0fu) | (x & 0x0f0f0f0fu) << 4;
    return __builtin_bswap32(x);
}

/* A match in the fast loop, which leaves 64 bytes of room past d. */
static inline void copy_match(uint8_t *d, size_t offset, size_t len, size_t room)
{
    const uint8_t *s = d - offset;
    if (len <= 32) {
        if (offset >= 8) {
            memcpy(d, s, 8);
            memcpy(d + 8, s + 8, 8);
            memcpy(d + 16, s + 16, 8);
            memcpy(d + 24, s + 24, 8);
        } else {
            lz_copy_short_period(d, s, offset, len);
        }
        return;
    }
    lz_copy(d, offset, len, room);
}

/* The bulk of a stream, while both ends are far: no bounds check per
 * field. Flags sit in stream order from bit 0 up, below a sentinel bit,
 * so the literal run before the next match is a count of trailing zeros and
 * each step is one 32-byte literal move (perhaps of nothing) then a match:
 * no branch on whether a literal or a match comes next. Positions are
 * pointers and the stops precomputed, to keep the loop's state in
 * registers. Starts at the beginning of the stream and stops where the
 * careful loop must take over (leaving the caller's zero positions alone
 * when it does not start); *flags and *nflags hand it the flag word.
 * Returns 0, or a negative status for a bad match. */
static long fast_loop(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size,
                      size_t *ipp, size_t *opp, unsigned *pendingp, uint32_t *flagsp,
                      int *nflagsp, uint64_t origin, struct ntl_error *err)
{
    *flagsp = 0;
    *nflagsp = 0;
    if (in_size < FAST_IN || out_size < FAST_OUT)
        return 0;
    const uint8_t *ip = in, *in_stop = in + in_size - FAST_IN;
    uint8_t *op = out, *out_stop = out + out_size - FAST_OUT, *out_end = out + out_size;
    unsigned pending = 0;
    uint64_t bits = FLAGS_EMPTY;
    while (ip <= in_stop && op <= out_stop) {
        if (bits == FLAGS_EMPTY) {
            bits = (uint64_t)reverse32(ntl_le32(ip)) | 1ull << 32;
            ip += 4;
        }
        size_t run = (size_t)__builtin_ctzll(bits);
        memcpy(op, ip, 32);
        ip += run;
        op += run;
        bits >>= run;
        if (bits == FLAGS_EMPTY)
            continue;
        bits >>= 1;
        const uint8_t *token_at = ip;
        uint32_t token = ntl_le16(ip);
        ip += 2;
        size_t len = (token & 7) + 3;
        size_t offset = (token >> 3) + 1;
        /* A bad offset fails at once for a short length (low bits under 7);
         * a long one's own errors come first. */
        if (offset > (size_t)(op - out) && len < 10)
            return offset_error(err, origin, (size_t)(token_at - in), offset, (size_t)(op - out));
        if (len < 10) {
            /* Most matches: at most 9 bytes, with 64 of room, so no room
             * test, and two moves. */
            if (offset >= 8) {
                memcpy(op, op - offset, 8);
                memcpy(op + 8, op - offset + 8, 8);
            } else {
                lz_copy_short_period(op, op - offset, offset, len);
            }
            op += len;
            continue;
        }
        if (!(len = long_length(&ip, &pending)))
            return bad(err, NTL_ERR_FORMAT, origin, (size_t)(token_at - in), "match length too small");
        len += 3;
        if (offset > (size_t)(op - out))
            return offset_error(err, origin, (size_t)(token_at - in), offset, (size_t)(op - out));
        if (len > (size_t)(out_end - op))
            return bad(err, NTL_ERR_LIMIT, origin, (size_t)(token_at - in),
                       "match past the end of the output");
        copy_match(op, offset, len, (size_t)(out_end - op));
        op += len;
    }
    /* The flags left: those below the sentinel, back in stream order. */
    int n = 63 - __builtin_clzll(bits);
    *flagsp = n ? reverse32((uint32_t)bits) >> (32 - n) : 0;
    *nflagsp = n;
    *ipp = (size_t)(ip - in);
    *opp = (size_t)(op - out);
    *pendingp = pending;
    return 0;
}

long ntl_xpress_decompress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size,
                           uint64_t origin, struct ntl_error *err)
{
    size_t ip = 0, op = 0;
    unsigned pending = 0;
    uint32_t flags;
    int nflags;
    long rc = fast_loop(in, in_size, out, out_size, &ip, &op, &pending, &flags, &nflags, origin, err);
    if (rc < 0)
        return rc;

    for (;;) {
        if (nflags == 0) {
            if (in_size - ip < 4) {
                if (ip == in_size)
                    return (long)op;
                return bad(err, NTL_ERR_TRUNCATED, origin, ip, "flag word cut short");
            }
            flags = ntl_le32(in + ip);
            ip += 4;
            nflags = 32;
            /* Fast path: a run of literals with room on both sides. */
            if (flags == 0 && in_size - ip >= 32 && out_size - op >= 32) {
                memcpy(out + op, in + ip, 32);
                ip += 32;
                op += 32;
                nflags = 0;
                continue;
            }
        }
        if (!(flags & (1u << (nflags - 1)))) {
            /* The run of literal flags that starts here, copied whole. */
            uint32_t rem = nflags == 32 ? flags : flags & ((1u << nflags) - 1);
            size_t run = rem ? (size_t)nflags - (32 - (size_t)__builtin_clz(rem)) : (size_t)nflags;
            if (in_size - ip >= 32 && out_size - op >= 32) {
                memcpy(out + op, in + ip, 32); /* fixed size: a move, not a call */
            } else {
                size_t n = run;
                n = n < in_size - ip ? n : in_size - ip;
                n = n < out_size - op ? n : out_size - op;
                memcpy(out + op, in + ip, n);
                if (n < run) {
                    if (ip + n == in_size)
                        return (long)(op + n);
                    return bad(err, NTL_ERR_LIMIT, origin, ip + n,
                               "literal past the end of the output");
                }
            }
            ip += run;
            op += run;
            nflags -= (int)run;
            continue;
        }
        nflags--;
        if (ip == in_size)
            return (long)op;
        if (in_size - ip < 2)
            return bad(err, NTL_ERR_TRUNCATED, origin, ip, "match token cut short");
        uint32_t token = ntl_le16(in + ip);
        size_t token_pos = ip;
        ip += 2;
        size_t len = token & 7;
        size_t offset = (token >> 3) + 1;
        if (len == 7) {
            if (pending == 0) {
                if (ip == in_size)
                    return bad(err, NTL_ERR_TRUNCATED, origin, ip, "length nibble missing");
                len = in[ip] & 15;
                pending = (unsigned)(in[ip++] >> 4) | HALF_PENDING;
            } else {
                len = pending & 15;
                pending = 0;
            }
            if (len == 15) {
                if (ip == in_size)
                    return bad(err, NTL_ERR_TRUNCATED, origin, ip, "length byte missing");
                len = in[ip++];
                if (len == 255) {
                    if (in_size - ip < 2)
                        return bad(err, NTL_ERR_TRUNCATED, origin, ip, "length u16 missing");
                    len = ntl_le16(in + ip);
                    ip += 2;
                    if (len == 0) {
                        if (in_size - ip < 4)
                            return bad(err, NTL_ERR_TRUNCATED, origin, ip, "length u32 missing");
                        len = ntl_le32(in + ip);
                        ip += 4;
                    }
                    if (len < 15 + 7)
                        return bad(err, NTL_ERR_FORMAT, origin, token_pos, "match length too small");
                    len -= 15 + 7;
                }
                len += 15;
            }
            len += 7;
        }
        len += 3;
        if (offset > op)
            return offset_error(err, origin, token_pos, offset, op);
        if (len > out_size - op)
            return bad(err, NTL_ERR_LIMIT, origin, token_pos, "match past the end of the output");
        lz_copy(out + op, offset, len, out_size - op);
        op += len;
    }
}
