/* The base relocation directory, and rebasing a mapped image with it. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/pe.h"
#include "ntlens/reader.h"

int ntl_pe_relocs_parse(const struct ntl_pe *pe, struct ntl_pe_reloc **out, size_t *count,
                        struct ntl_error *err)
{
    const struct ntl_pe_dir *dir = &pe->dirs[NTL_PE_DIR_BASERELOC];
    const uint8_t *p;
    uint64_t off;
    struct ntl_pe_reloc *v = NULL;
    size_t n = 0, pos = 0;
    int rc;

    *out = NULL;
    *count = 0;
    if (pe->dir_count <= NTL_PE_DIR_BASERELOC || !dir->rva || !dir->size)
        return NTL_OK;
    rc = ntl_pe_rva_need(pe, dir->rva, dir->size, "base relocation directory", &p, &off, err);
    if (rc < 0)
        return rc;
    /* At most one entry per two bytes of the directory. */
    v = malloc((dir->size / 2 + 1) * sizeof *v);
    if (!v)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    while (dir->size - pos >= 8) {
        uint32_t page = ntl_le32(p + pos), bsize = ntl_le32(p + pos + 4);
        if (bsize < 8 || bsize > dir->size - pos || bsize % 2) {
            free(v);
            return ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_BASE_RELOCATION", off + pos + 4,
                                 "SizeOfBlock 0x%x is invalid (block at directory offset 0x%zx, "
                                 "0x%zx bytes left)", bsize, pos, dir->size - pos);
        }
        for (uint32_t k = 8; k < bsize; k += 2) {
            uint16_t e = ntl_le16(p + pos + k);
            if ((e >> 12) == NTL_PE_REL_ABSOLUTE)
                continue;
            v[n].rva = page + (e & 0xfff);
            v[n].type = (uint8_t)(e >> 12);
            n++;
        }
        pos += bsize;
    }
    *out = v;
    *count = n;
    return NTL_OK;
}

int ntl_pe_rebase(const struct ntl_pe *pe, uint8_t *image, size_t size, uint64_t new_base,
                  struct ntl_error *err)
{
    struct ntl_pe_reloc *r;
    size_t n;
    uint64_t delta = new_base - pe->image_base;
    int rc = ntl_pe_relocs_parse(pe, &r, &n, err);

    if (rc < 0 || delta == 0) {
        free(r);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        uint8_t *p = image + r[i].rva;
        unsigned width = r[i].type == NTL_PE_REL_DIR64 ? 8 : r[i].type == NTL_PE_REL_HIGHLOW ? 4 : 2;
        if (!ntl_range_ok(size, r[i].rva, width)) {
            rc = ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_BASE_RELOCATION", NTL_NO_OFFSET,
                               "relocation at RVA 0x%x lies outside the image (size 0x%zx)",
                               r[i].rva, size);
            break;
        }
        switch (r[i].type) {
        case NTL_PE_REL_DIR64: ntl_put_le64(p, ntl_le64(p) + delta); break;
        case NTL_PE_REL_HIGHLOW: ntl_put_le32(p, ntl_le32(p) + (uint32_t)delta); break;
        case NTL_PE_REL_LOW: ntl_put_le16(p, (uint16_t)(ntl_le16(p) + (uint16_t)delta)); break;
        case NTL_PE_REL_HIGH:
            ntl_put_le16(p, (uint16_t)((((uint32_t)ntl_le16(p) << 16) + (uint32_t)delta) >> 16));
            break;
        default:
            rc = ntl_error_set(err, NTL_ERR_UNSUPPORTED, "IMAGE_BASE_RELOCATION", NTL_NO_OFFSET,
                               "relocation type %u at RVA 0x%x", r[i].type, r[i].rva);
            break;
        }
        if (rc < 0)
            break;
    }
    free(r);
    return rc;
}
