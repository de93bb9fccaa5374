/* One MS-XCA decompressor (FUZZ_FORMAT, set by the build for each harness) on
 * arbitrary bytes: the first two bytes choose the output size (up to 128 KiB),
 * the rest is the compressed stream. ASan catches any read past the input or
 * write past the output. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/compress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_error err;
    if (size < 2)
        return 0;
    size_t out_size = ((size_t)data[0] | (size_t)data[1] << 8) * 2;
    /* exact-size copies, so ASan sees the first byte past either end */
    uint8_t *in = malloc(size > 2 ? size - 2 : 1), *out = malloc(out_size ? out_size : 1);
    if (!in || !out) {
        free(in);
        free(out);
        return 0;
    }
    memcpy(in, data + 2, size - 2);
    long n = ntl_decompress(FUZZ_FORMAT, in, size - 2, out, out_size, 0, &err);
    if (n > (long)out_size)
        abort();
    free(in);
    free(out);
    return 0;
}
