/* The match copy both XPRESS decoders share. */
#ifndef NTLENS_ETL_LZ_COPY_H
#define NTLENS_ETL_LZ_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ntlens/reader.h"

/* ntl_put_le64 is byte stores to gcc; this is one. */
static inline void lz_put_le64(uint8_t *d, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(d, &v, 8);
}

/* A period under 8 (runs of zeros in event payloads are common), with 16
 * bytes to spare: its first offset bytes repeated into 16 by multiplying
 * (one copy per 8k bits of a word), then stored 16 at a time every
 * multiple of the period that fits in 16. Nothing is read back from the
 * bytes being written, so no store waits on another. */
static inline void lz_copy_short_period(uint8_t *d, const uint8_t *s, size_t k, size_t len)
{
    static const uint64_t repeat[8] = {0, 0x0101010101010101u, 0x0001000100010001u,
                                       0x0001000001000001u, 0x0000000100000001u,
                                       0x0000010000000001u, 0x0001000000000001u,
                                       0x0100000000000001u};
    static const uint8_t step[8] = {0, 16, 16, 15, 16, 15, 12, 14};
    static const uint8_t phase8[8] = {0, 0, 0, 2, 0, 3, 2, 1}; /* 8 mod k, without a divide */
    uint64_t low = ~0ull >> (64 - 8 * k);
    uint64_t m = ntl_le64(s) & low; /* bytes past the period are not used */
    size_t r = phase8[k];
    uint64_t m8 = ((m >> (8 * r)) | (m << (8 * (k - r)))) & low; /* the period from byte 8 */
    uint64_t p0 = m * repeat[k], p8 = m8 * repeat[k];
    for (size_t i = 0; i < len; i += step[k]) {
        lz_put_le64(d + i, p0);
        lz_put_le64(d + i + 8, p8);
    }
}

/* Copies a match of len bytes from offset bytes back (offset >= 1, checked
 * by the caller) to d, which has room writable bytes. With 8 bytes to
 * spare it moves 8 at a time and overshoots into room the next symbols
 * overwrite. A short period (runs of zeros in event payloads are common)
 * is laid down once byte by byte, then copied 8 at a time from a distance
 * that is a multiple of it. */
static inline void lz_copy(uint8_t *d, size_t offset, size_t len, size_t room)
{
    const uint8_t *s = d - offset;
    if (offset >= 8 && room >= len + 32) {
        /* Most matches are at most 32 bytes: no loop branch to mispredict. */
        memcpy(d, s, 8);
        memcpy(d + 8, s + 8, 8);
        memcpy(d + 16, s + 16, 8);
        memcpy(d + 24, s + 24, 8);
        for (size_t i = 32; i < len; i += 8)
            memcpy(d + i, s + i, 8);
        return;
    }
    if (room >= len + 32) {
        lz_copy_short_period(d, s, offset, len);
        return;
    }
    if (room < len + 8) {
        for (size_t i = 0; i < len; i++)
            d[i] = s[i];
        return;
    }
    if (offset == 1) {
        memset(d, *s, len);
        return;
    }
    if (offset < 8) {
        size_t dist = offset * ((7 + offset) / offset);
        size_t n = dist < len ? dist : len;
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
        d += n;
        len -= n;
        s = d - dist;
    }
    for (size_t i = 0; i < len; i += 8)
        memcpy(d + i, s + i, 8);
}

#endif
