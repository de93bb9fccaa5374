/* libFuzzer harness: the dynamic value relocation table parser on raw bytes
 * (the first byte chooses 64- or 32-bit entry headers). */
#include <stdint.h>

#include "ntlens/pe_dvrt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_dvrt d;
    struct ntl_error err;
    if (size < 1)
        return 0;
    if (ntl_dvrt_parse(data + 1, size - 1, 0x400, 0x1000, !(data[0] & 1), &d, &err) >= 0)
        ntl_dvrt_free(&d);
    return 0;
}
