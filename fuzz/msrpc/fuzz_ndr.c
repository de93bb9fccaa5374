/* NDR primitives on hostile bytes: a stream of pointers, 32-bit values and
 * conformant varying arrays of 1- and 2-byte elements, as the first byte of
 * each step chooses. Seeds: winreg reply stubs captured from smbd. */
#include <stddef.h>
#include <stdint.h>

#include "ntlens/ndr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_reader r;
    struct ntl_error err;

    ntl_reader_init(&r, data, size, 0);
    for (int step = 0; step < 64; step++) {
        struct ntl_ndr_cv_array a;
        uint32_t v;
        uint8_t op;
        bool present;
        int rc;
        if (!ntl_reader_u8(&r, &op))
            break;
        switch (op & 3) {
        case 0: rc = ntl_ndr_get_u32(&r, &v, "value", &err); break;
        case 1: rc = ntl_ndr_get_ptr(&r, &present, "pointer", &err); break;
        case 2: rc = ntl_ndr_get_cv_array(&r, 1, &a, "bytes", &err); break;
        default: rc = ntl_ndr_get_cv_array(&r, 2, &a, "string", &err); break;
        }
        if (rc < 0)
            break;
    }
    return 0;
}
