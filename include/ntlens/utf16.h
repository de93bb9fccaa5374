/* UTF-16LE <-> UTF-8 for the strings Windows structures carry. Input is
 * untrusted: lone surrogates become U+FFFD, lengths are always bounded. */
#ifndef NTLENS_UTF16_H
#define NTLENS_UTF16_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Number of UTF-16 code units before the first NUL within max_units units of
 * src (src holds at least 2*max_units bytes); max_units when there is none. */
size_t ntl_utf16_unit_len(const uint8_t *src, size_t max_units);

/* Converts `units` UTF-16LE code units to UTF-8 in dst (always NUL-terminated
 * when size > 0). Returns the length the full conversion needs, excluding the
 * NUL, like snprintf. */
size_t ntl_utf16_to_utf8(const uint8_t *src, size_t units, char *dst, size_t size);

/* Same, into a malloc'd string. NULL when out of memory. */
char *ntl_utf16_to_utf8_dup(const uint8_t *src, size_t units);

/* Converts NUL-terminated UTF-8 to UTF-16LE, writing at most `max_units`
 * units (no terminator is added). Returns the units the full conversion
 * needs. Invalid UTF-8 bytes become U+FFFD. */
size_t ntl_utf8_to_utf16(const char *src, uint8_t *dst, size_t max_units);

#ifdef __cplusplus
}
#endif
#endif
