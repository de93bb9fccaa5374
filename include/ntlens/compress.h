/* MS-XCA decompressors: the formats RtlDecompressBuffer knows, used by
 * compressed ETW buffers. Every input is untrusted: a decompressor never
 * reads past in[in_size] nor writes past out[out_size], and reports the
 * input offset (origin + position) of the first bad byte. */
#ifndef NTLENS_COMPRESS_H
#define NTLENS_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* COMPRESSION_FORMAT_* values. */
enum ntl_compress_format {
    NTL_COMPRESS_LZNT1 = 2,
    NTL_COMPRESS_XPRESS = 3,       /* MS-XCA 2.3/2.4 plain LZ77 */
    NTL_COMPRESS_XPRESS_HUFF = 4,  /* MS-XCA 2.1/2.2 LZ77+Huffman */
};

/* "lznt1", "xpress", "xpress-huff"; NULL for others. */
const char *ntl_compress_format_name(int format);
/* Parses those names or the number; -1 when unknown. */
int ntl_compress_format_parse(const char *s);

/* Each returns the number of bytes written to out (<= out_size), or a
 * negative status: NTL_ERR_FORMAT (bad encoding), NTL_ERR_TRUNCATED (input
 * ends inside a token), NTL_ERR_LIMIT (output would exceed out_size). */
long ntl_xpress_decompress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size,
                           uint64_t origin, struct ntl_error *err);
long ntl_xpress_huff_decompress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size,
                                uint64_t origin, struct ntl_error *err);
long ntl_lznt1_decompress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size,
                          uint64_t origin, struct ntl_error *err);
/* Dispatches on format; NTL_ERR_UNSUPPORTED for unknown formats. */
long ntl_decompress(int format, const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size,
                    uint64_t origin, struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
