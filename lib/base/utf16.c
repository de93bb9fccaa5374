#include "ntlens/utf16.h"

#include <stdlib.h>

#include "ntlens/reader.h"

#define REPLACEMENT 0xFFFDu

size_t ntl_utf16_unit_len(const uint8_t *src, size_t max_units)
{
    size_t i = 0;
    /* Four units at a time while none is 0 (a zero 16-bit lane makes
     * (w - 1) & ~w set its top bit: names are tens of units long). */
    for (; i + 4 <= max_units; i += 4) {
        uint64_t w = ntl_le64(src + 2 * i);
        if ((w - 0x0001000100010001ull) & ~w & 0x8000800080008000ull)
            break;
    }
    for (; i < max_units; i++)
        if (src[2 * i] == 0 && src[2 * i + 1] == 0)
            break;
    return i;
}

static size_t utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

size_t ntl_utf16_to_utf8(const uint8_t *src, size_t units, char *dst, size_t size)
{
    size_t need = 0, i = 0;

    while (i < units) {
        uint32_t cp = ntl_le16(src + 2 * i++);
        char enc[4];
        size_t n;

        if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo = i < units ? ntl_le16(src + 2 * i) : 0;
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                i++;
            } else {
                cp = REPLACEMENT;
            }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            cp = REPLACEMENT;
        }
        n = utf8_encode(cp, enc);
        for (size_t k = 0; k < n; k++, need++)
            if (size && need < size - 1)
                dst[need] = enc[k];
    }
    if (size)
        dst[need < size - 1 ? need : size - 1] = '\0';
    return need;
}

char *ntl_utf16_to_utf8_dup(const uint8_t *src, size_t units)
{
    size_t need = ntl_utf16_to_utf8(src, units, NULL, 0);
    char *s = malloc(need + 1);
    if (s)
        ntl_utf16_to_utf8(src, units, s, need + 1);
    return s;
}

/* Decodes one UTF-8 sequence; returns bytes consumed (>= 1). */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t n, i;
    uint32_t v, min;

    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if ((c & 0xE0) == 0xC0) { n = 2; v = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { n = 3; v = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { n = 4; v = c & 0x07; min = 0x10000; }
    else { *cp = REPLACEMENT; return 1; }
    for (i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *cp = REPLACEMENT;
            return i;
        }
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        v = REPLACEMENT;
    *cp = v;
    return n;
}

size_t ntl_utf8_to_utf16(const char *src, uint8_t *dst, size_t max_units)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t need = 0;

    while (*s) {
        uint32_t cp;
        s += utf8_decode(s, &cp);
        if (cp >= 0x10000) {
            cp -= 0x10000;
            if (need + 2 <= max_units) {
                ntl_put_le16(dst + 2 * need, (uint16_t)(0xD800 + (cp >> 10)));
                ntl_put_le16(dst + 2 * need + 2, (uint16_t)(0xDC00 + (cp & 0x3FF)));
            }
            need += 2;
        } else {
            if (need + 1 <= max_units)
                ntl_put_le16(dst + 2 * need, (uint16_t)cp);
            need++;
        }
    }
    return need;
}
