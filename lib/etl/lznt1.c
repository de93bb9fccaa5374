/* MS-XCA 2.5: LZNT1 (COMPRESSION_FORMAT_LZNT1).
 *
 * A run of chunks, each for up to 4096 output bytes: a u16 header (size of
 * the chunk minus 3 in bits 0-11, signature 3 in bits 12-14, "compressed" in
 * bit 15), then either the bytes as they are or groups of a flag byte (LSB
 * first) and eight literals or u16 copy tokens whose offset/length split
 * moves with the position inside the chunk. A zero header ends the stream. */
#include <string.h>

#include "ntlens/compress.h"
#include "ntlens/reader.h"

#define CHUNK 4096u

static long chunk_decompress(const uint8_t *in, size_t size, uint8_t *out, size_t room,
                             uint64_t origin, struct ntl_error *err)
{
    size_t ip = 0, op = 0;
    if (room > CHUNK)
        room = CHUNK;
    while (ip < size) {
        uint8_t flags = in[ip++];
        for (int bit = 0; bit < 8 && ip < size; bit++) {
            if (!(flags & (1u << bit))) {
                if (op == room)
                    return ntl_error_set(err, NTL_ERR_LIMIT, "LZNT1 chunk", origin + ip,
                                         "literal past the end of the chunk or output");
                out[op++] = in[ip++];
                continue;
            }
            if (size - ip < 2)
                return ntl_error_set(err, NTL_ERR_TRUNCATED, "LZNT1 chunk", origin + ip,
                                     "copy token cut short");
            if (op == 0)
                return ntl_error_set(err, NTL_ERR_FORMAT, "LZNT1 chunk", origin + ip,
                                     "copy token before any output");
            uint16_t token = ntl_le16(in + ip);
            unsigned length_bits = 12;
            for (size_t p = op - 1; p >= 0x10; p >>= 1)
                length_bits--;
            size_t offset = ((size_t)token >> length_bits) + 1;
            size_t len = (token & ((1u << length_bits) - 1)) + 3;
            if (offset > op)
                return ntl_error_set(err, NTL_ERR_FORMAT, "LZNT1 chunk", origin + ip,
                                     "copy offset %zu before the start of the chunk (at %zu)",
                                     offset, op);
            if (len > room - op)
                return ntl_error_set(err, NTL_ERR_LIMIT, "LZNT1 chunk", origin + ip,
                                     "copy past the end of the chunk or output");
            ip += 2;
            for (size_t i = 0; i < len; i++, op++)
                out[op] = out[op - offset];
        }
    }
    return (long)op;
}

long ntl_lznt1_decompress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size,
                          uint64_t origin, struct ntl_error *err)
{
    size_t ip = 0, op = 0;
    while (in_size - ip >= 2) {
        uint16_t hdr = ntl_le16(in + ip);
        if (hdr == 0)
            break;
        size_t data = (size_t)(hdr & 0x0FFF) + 1;
        if (((hdr >> 12) & 7) != 3)
            return ntl_error_set(err, NTL_ERR_FORMAT, "LZNT1 chunk header", origin + ip,
                                 "signature %u, expected 3", (hdr >> 12) & 7);
        if (data > in_size - ip - 2)
            return ntl_error_set(err, NTL_ERR_TRUNCATED, "LZNT1 chunk header", origin + ip,
                                 "chunk of %zu bytes past the end of the input", data);
        /* A chunk that follows a short one starts on the next 4 KiB boundary:
         * the gap is zeros. */
        if (op % CHUNK) {
            size_t pad = CHUNK - op % CHUNK;
            if (pad > out_size - op)
                return ntl_error_set(err, NTL_ERR_LIMIT, "LZNT1 chunk header", origin + ip,
                                     "chunk past the end of the output");
            memset(out + op, 0, pad);
            op += pad;
        }
        const uint8_t *src = in + ip + 2;
        if (hdr & 0x8000) {
            long n = chunk_decompress(src, data, out + op, out_size - op, origin + ip + 2, err);
            if (n < 0)
                return n;
            op += (size_t)n;
        } else {
            if (data > out_size - op)
                return ntl_error_set(err, NTL_ERR_LIMIT, "LZNT1 chunk", origin + ip,
                                     "stored chunk past the end of the output");
            memcpy(out + op, src, data);
            op += data;
        }
        ip += 2 + data;
    }
    return (long)op;
}
