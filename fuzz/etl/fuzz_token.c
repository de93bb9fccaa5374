/* The TOKEN_ACCESS_INFORMATION walker on arbitrary blobs. Input: one byte
 * (bit 0: 64-bit pointers), then the blob. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/etl_token.h"

static int count(void *ctx, const struct ntl_token_item *it)
{
    (*(size_t *)ctx) += strlen(it->value);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_error err;
    size_t total = 0;
    if (size < 1)
        return 0;
    uint8_t *blob = malloc(size - 1 ? size - 1 : 1); /* its own allocation, for ASan */
    if (!blob)
        return 0;
    memcpy(blob, data + 1, size - 1);
    ntl_token_walk(blob, size - 1, data[0] & 1 ? 8 : 4, count, &total, &err);
    free(blob);
    return 0;
}
