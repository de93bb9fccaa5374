/* Rival decompressors for bench_etl, loaded at run time when present:
 * Samba's lzxpress_decompress (plain LZ77) and wimlib's XPRESS (LZ77+Huffman)
 * decompressor and compressor. Each returns -1 when unavailable. */
#ifndef NTLENS_BENCH_ETL_RIVAL_H
#define NTLENS_BENCH_ETL_RIVAL_H

#include <stddef.h>
#include <stdint.h>

long rival_samba_xpress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size);
long rival_wimlib_huff_compress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size);
long rival_wimlib_huff_decompress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size);

#endif
