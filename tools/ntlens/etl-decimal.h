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

/* How many decimal digits v has: from its bit length, then one compare
 * (counting by powers of ten took a step a digit, half of the function). */
static inline unsigned etl_decimal_len(uint64_t v)
{
    static const uint64_t pow10[20] = {
        1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
        100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
        10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
        100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
    };
    /* 1233 / 4096 ~ log10(2): t is the digit count less one, or one less still. */
    unsigned t = (unsigned)(64 - __builtin_clzll(v | 1)) * 1233 >> 12;
    return t + ((v | 1) >= pow10[t]);
}

/* v in decimal at d (at most 20 bytes); the end. Values below 2^32 (nearly
 * every cell) take 32-bit divisions. */
static inline char *etl_decimal_to(char *d, uint64_t v)
{
    char *end = d + etl_decimal_len(v);
    d = end;
    for (; v > UINT32_MAX; v /= 100) {
        d -= 2;
        memcpy(d, etl_digit_pairs + 2 * (v % 100), 2);
    }
    uint32_t u = (uint32_t)v;
    for (; u >= 100; u /= 100) {
        d -= 2;
        memcpy(d, etl_digit_pairs + 2 * (u % 100), 2);
    }
    if (u >= 10)
        memcpy(d - 2, etl_digit_pairs + 2 * u, 2);
    else
        d[-1] = (char)('0' + u);
    return end;
}

#endif
