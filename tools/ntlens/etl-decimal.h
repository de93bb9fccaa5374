/* Decimal digits for `etl events` rows, two per step from a table of
 * "00".."99" (a digit per division was most of the row's integer cells). */
#ifndef NTLENS_ETL_DECIMAL_H
#define NTLENS_ETL_DECIMAL_H

#include <stdint.h>
#include <string.h>

static const char etl_digit_pairs[201] =
    "0001020304050607080910111213141516171819"
    "2021222324252627282930313233343536373839"
    "4041424344454647484950515253545556575859"
    "6061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* v in decimal at d (at most 20 bytes); the end. */
static inline char *etl_decimal_to(char *d, uint64_t v)
{
    unsigned n = 1;
    for (uint64_t p = 10; n < 20 && v >= p; p *= 10)
        n++;
    char *end = d + n;
    d = end;
    for (; v >= 100; v /= 100) {
        d -= 2;
        memcpy(d, etl_digit_pairs + 2 * (v % 100), 2);
    }
    if (v >= 10)
        memcpy(d - 2, etl_digit_pairs + 2 * v, 2);
    else
        d[-1] = (char)('0' + v);
    return end;
}

#endif
