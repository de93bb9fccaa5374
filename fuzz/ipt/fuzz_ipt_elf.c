/* libFuzzer: ELF images. Whatever the bytes, loading succeeds with at least
 * one section or fails with the status err holds; never a crash, an
 * out-of-bounds read or a leak. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/ipt_image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_ipt_image *img;
    struct ntl_error err;
    if (ntl_ipt_image_new(&img, &err) < 0)
        return 0;
    bool at_base = size && (data[size - 1] & 1);
    int rc = ntl_ipt_image_add_elf_bytes(img, data, size, at_base, 0x10000, &err);
    if (rc < 0 && err.status != rc)
        abort();
    if (rc == 0 && ntl_ipt_image_sections(img) == 0)
        abort();
    ntl_ipt_image_free(img);
    return 0;
}
