/* The loader's view of an image: headers and sections at their RVAs. */
#include <string.h>

#include "ntlens/pe.h"

int ntl_pe_map(const struct ntl_pe *pe, struct ntl_buf *image, struct ntl_error *err)
{
    uint8_t *img;
    size_t hdr;
    int rc;

    ntl_buf_init(image, (size_t)NTL_PE_MAX_IMAGE_SIZE);
    rc = ntl_buf_grow_zero(image, pe->size_of_image, &img);
    if (rc < 0)
        return ntl_error_set(err, rc, "IMAGE_OPTIONAL_HEADER", pe->optional_offset + 56,
                             "cannot allocate SizeOfImage 0x%x", pe->size_of_image);
    hdr = pe->size_of_headers ? pe->size_of_headers : pe->size_of_image;
    if (hdr > pe->size)
        hdr = pe->size;
    memcpy(img, pe->data, hdr);
    for (uint16_t i = 0; i < pe->section_count; i++) {
        const struct ntl_pe_section *s = &pe->sections[i];
        uint64_t n = s->raw_size;
        if (s->virtual_size && s->virtual_size < n) {
            /* The loader copies whole file-aligned pages; the excess beyond
             * VirtualSize up to the next SectionAlignment boundary is mapped too. */
            uint64_t a = pe->section_alignment ? pe->section_alignment : 1;
            uint64_t vs = (s->virtual_size + a - 1) / a * a;
            if (vs < n)
                n = vs;
        }
        if (n > pe->size_of_image - s->virtual_address)
            n = pe->size_of_image - s->virtual_address;
        memcpy(img + s->virtual_address, pe->data + s->raw_offset, (size_t)n);
    }
    return NTL_OK;
}
