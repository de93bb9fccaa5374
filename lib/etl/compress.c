/* Format names and dispatch for the MS-XCA decompressors. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/compress.h"

const char *ntl_compress_format_name(int format)
{
    switch (format) {
    case NTL_COMPRESS_LZNT1: return "lznt1";
    case NTL_COMPRESS_XPRESS: return "xpress";
    case NTL_COMPRESS_XPRESS_HUFF: return "xpress-huff";
    default: return NULL;
    }
}

int ntl_compress_format_parse(const char *s)
{
    for (int f = NTL_COMPRESS_LZNT1; f <= NTL_COMPRESS_XPRESS_HUFF; f++)
        if (!strcmp(s, ntl_compress_format_name(f)))
            return f;
    if (s[0] >= '2' && s[0] <= '4' && s[1] == '\0')
        return s[0] - '0';
    return -1;
}

long ntl_decompress(int format, const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size,
                    uint64_t origin, struct ntl_error *err)
{
    switch (format) {
    case NTL_COMPRESS_LZNT1: return ntl_lznt1_decompress(in, in_size, out, out_size, origin, err);
    case NTL_COMPRESS_XPRESS: return ntl_xpress_decompress(in, in_size, out, out_size, origin, err);
    case NTL_COMPRESS_XPRESS_HUFF:
        return ntl_xpress_huff_decompress(in, in_size, out, out_size, origin, err);
    default:
        return ntl_error_set(err, NTL_ERR_UNSUPPORTED, "compression", NTL_NO_OFFSET,
                             "unknown compression format %d", format);
    }
}
