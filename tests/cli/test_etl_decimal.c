/* etl events' integer cells (etl-decimal.h) against printf: every digit
 * count's bounds, both sides of 2^32 (where the 32-bit loop takes over),
 * and a pseudo-random spread of each bit length. */
#include "check.h"

#include <inttypes.h>
#include <stdio.h>

#include "etl-decimal.h"

static int mismatches;

static void check_value(uint64_t v)
{
    char want[32], got[32];
    snprintf(want, sizeof want, "%" PRIu64, v);
    char *end = etl_decimal_to(got, v);
    *end = '\0';
    if (strcmp(want, got) || etl_decimal_len(v) != strlen(want)) {
        if (mismatches++ < 10)
            fprintf(stderr, "%" PRIu64 ": \"%s\"\n", v, got);
    }
}

int main(void)
{
    uint64_t p = 1;
    for (int i = 0; i < 20; i++, p *= 10) {
        for (uint64_t d = 0; d < 3; d++) {
            check_value(p + d);
            check_value(p - d);
            check_value(p * 2 - d);
        }
    }
    for (uint64_t v = 0; v < 100000; v++)
        check_value(v);
    for (uint64_t d = 0; d < 300; d++) {
        check_value(UINT32_MAX - d);
        check_value((uint64_t)UINT32_MAX + d);
        check_value(UINT64_MAX - d);
    }
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 64 * 2000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        check_value(x >> (i % 64));
    }
    CHECK_EQ_INT(mismatches, 0);
    return check_exit();
}
