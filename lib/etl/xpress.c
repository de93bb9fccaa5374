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

/* Room the fast loop needs: a flag word, a 32-byte literal move, a token
 * and the longest length encoding (half byte, byte, u16, u32) on the input
 * side; the literal move and a match's overshoot on the output side. */
#define FAST_IN (4 + 32 + 2 + 1 + 1 + 2 + 4)
#define FAST_OUT 64
#define FLAGS_EMPTY (1ull << 63)

/* The bulk of a stream, while both ends are far: no bounds check per
 * field. Flags sit MSB first in a 64-bit word above a sentinel bit, so
 * the literal run before the next match is a count of leading zeros and
 * each step is one 32-byte literal move (perhaps of nothing) then a match:
 * no branch on whether a literal or a match comes next. Stops where the
 * careful loop must take over; *flags and *nflags hand it the flag word.
 * Returns 0, or a negative status for a bad match. */
static long fast_loop(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size,
                      size_t *ipp, size_t *opp, size_t *halfp, uint32_t *flagsp, int *nflagsp,
                      uint64_t origin, struct ntl_error *err)
{
    size_t ip = *ipp, op = *opp, half = *halfp;
    uint64_t bits = FLAGS_EMPTY;
    while (in_size - ip >= FAST_IN && out_size - op >= FAST_OUT) {
        if (bits == FLAGS_EMPTY) {
            bits = (uint64_t)ntl_le32(in + ip) << 32 | 1u << 31;
            ip += 4;
        }
        size_t run = (size_t)__builtin_clzll(bits);
        memcpy(out + op, in + ip, 32);
        ip += run;
        op += run;
        bits <<= run;
        if (bits == FLAGS_EMPTY)
            continue;
        bits <<= 1;
        size_t token_pos = ip;
        uint32_t token = ntl_le16(in + ip);
        ip += 2;
        size_t len = token & 7;
        size_t offset = (token >> 3) + 1;
        if (len == 7) {
            if (half == 0) {
                len = in[ip] & 15;
                half = ip++;
            } else {
                len = in[half] >> 4;
                half = 0;
            }
            if (len == 15) {
                len = in[ip++];
                if (len == 255) {
                    len = ntl_le16(in + ip);
                    ip += 2;
                    if (len == 0) {
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
            return ntl_error_set(err, NTL_ERR_FORMAT, "XPRESS stream", origin + token_pos,
                                 "match offset %zu before the start of the output (at %zu)",
                                 offset, op);
        if (len > out_size - op)
            return bad(err, NTL_ERR_LIMIT, origin, token_pos, "match past the end of the output");
        lz_copy(out + op, offset, len, out_size - op);
        op += len;
    }
    /* The flags left: those above the sentinel, the lowest bit set. */
    int n = 63 - __builtin_ctzll(bits);
    *flagsp = n ? (uint32_t)(bits >> (64 - n)) : 0;
    *nflagsp = n;
    *ipp = ip;
    *opp = op;
    *halfp = half;
    return 0;
}

long ntl_xpress_decompress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size,
                           uint64_t origin, struct ntl_error *err)
{
    size_t ip = 0, op = 0, half = 0;
    uint32_t flags = 0;
    int nflags = 0;
    long rc = fast_loop(in, in_size, out, out_size, &ip, &op, &half, &flags, &nflags, origin, err);
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
            if (half == 0) {
                if (ip == in_size)
                    return bad(err, NTL_ERR_TRUNCATED, origin, ip, "length nibble missing");
                len = in[ip] & 15;
                half = ip++;
            } else {
                len = in[half] >> 4;
                half = 0;
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
            return ntl_error_set(err, NTL_ERR_FORMAT, "XPRESS stream", origin + token_pos,
                                 "match offset %zu before the start of the output (at %zu)",
                                 offset, op);
        if (len > out_size - op)
            return bad(err, NTL_ERR_LIMIT, origin, token_pos, "match past the end of the output");
        lz_copy(out + op, offset, len, out_size - op);
        op += len;
    }
}
