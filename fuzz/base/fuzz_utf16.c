/* UTF-16 conversion on arbitrary bytes, both directions. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/utf16.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char out[64];
    char *dup, *z;
    uint8_t back[128];
    size_t units = size / 2;

    ntl_utf16_to_utf8(data, ntl_utf16_unit_len(data, units), out, sizeof out);
    dup = ntl_utf16_to_utf8_dup(data, units);
    free(dup);
    z = malloc(size + 1);
    if (!z)
        return 0;
    memcpy(z, data, size);
    z[size] = '\0';
    ntl_utf8_to_utf16(z, back, sizeof back / 2);
    free(z);
    return 0;
}
