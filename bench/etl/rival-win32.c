#include "rival.h"

/* No Samba or wimlib on Windows builds: no rival there. */
long rival_samba_xpress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
    (void)in, (void)in_size, (void)out, (void)out_size;
    return -1;
}

long rival_wimlib_huff_compress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
    (void)in, (void)in_size, (void)out, (void)out_size;
    return -1;
}

long rival_wimlib_huff_decompress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
    (void)in, (void)in_size, (void)out, (void)out_size;
    return -1;
}
