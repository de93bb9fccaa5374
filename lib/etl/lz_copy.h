/* The match copy both XPRESS decoders share. */
#ifndef NTLENS_ETL_LZ_COPY_H
#define NTLENS_ETL_LZ_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
