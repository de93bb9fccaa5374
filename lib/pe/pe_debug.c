/* The debug directory's CodeView (RSDS) record and the load config directory. */
#include <string.h>

#include "ntlens/pe.h"
#include "ntlens/reader.h"

#define DEBUG_ENTRY_SIZE 28
#define DEBUG_TYPE_CODEVIEW 2
#define RSDS_MIN 24

int ntl_pe_codeview(const struct ntl_pe *pe, struct ntl_pe_codeview *cv, struct ntl_error *err)
{
    const struct ntl_pe_dir *dir = &pe->dirs[NTL_PE_DIR_DEBUG];
    const uint8_t *p;
    uint64_t off;
    int rc;

    memset(cv, 0, sizeof *cv);
    if (pe->dir_count <= NTL_PE_DIR_DEBUG || !dir->rva || !dir->size)
        return NTL_OK;
    rc = ntl_pe_rva_need(pe, dir->rva, dir->size, "IMAGE_DEBUG_DIRECTORY", &p, &off, err);
    if (rc < 0)
        return rc;
    for (uint32_t i = 0; i + DEBUG_ENTRY_SIZE <= dir->size; i += DEBUG_ENTRY_SIZE) {
        const uint8_t *e = p + i;
        uint32_t size = ntl_le32(e + 16), raw = ntl_le32(e + 24);
        const uint8_t *r;
        size_t n;

        if (ntl_le32(e + 12) != DEBUG_TYPE_CODEVIEW)
            continue;
        if (!ntl_range_ok(pe->size, raw, size))
            return ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_DEBUG_DIRECTORY", off + i + 24,
                                 "CodeView data 0x%x+0x%x lies beyond the end of the file (size 0x%zx)",
                                 raw, size, pe->size);
        r = pe->data + raw;
        if (size < RSDS_MIN || memcmp(r, "RSDS", 4) != 0)
            continue; /* NB10 and others carry no GUID */
        memcpy(cv->guid, r + 4, 16);
        cv->age = ntl_le32(r + 20);
        n = strnlen((const char *)r + RSDS_MIN, size - RSDS_MIN);
        if (n >= sizeof cv->pdb)
            n = sizeof cv->pdb - 1;
        memcpy(cv->pdb, r + RSDS_MIN, n);
        cv->pdb[n] = 0;
        cv->record = r;
        cv->record_size = size;
        cv->present = true;
        return NTL_OK;
    }
    return NTL_OK;
}

/* Field offsets of IMAGE_LOAD_CONFIG_DIRECTORY64 / 32. */
struct lc_layout {
    uint32_t cookie, guard_flags, dvrt, dvrt_offset, dvrt_section;
    unsigned ptr;
};
static const struct lc_layout lc64 = {88, 144, 192, 224, 228, 8};
static const struct lc_layout lc32 = {60, 88, 120, 136, 140, 4};

int ntl_pe_load_config(const struct ntl_pe *pe, struct ntl_pe_load_config *lc, struct ntl_error *err)
{
    const struct ntl_pe_dir *dir = &pe->dirs[NTL_PE_DIR_LOAD_CONFIG];
    const struct lc_layout *l = pe->pe32plus ? &lc64 : &lc32;
    const uint8_t *p;
    size_t avail;
    uint64_t off;
    uint32_t size;
    int rc;

    memset(lc, 0, sizeof *lc);
    if (pe->dir_count <= NTL_PE_DIR_LOAD_CONFIG || !dir->rva)
        return NTL_OK;
    rc = ntl_pe_rva_span(pe, dir->rva, &p, &avail, &off, err);
    if (rc < 0) {
        ntl_error_prefix(err, "IMAGE_LOAD_CONFIG_DIRECTORY");
        return rc;
    }
    if (avail < 4)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "IMAGE_LOAD_CONFIG_DIRECTORY", off,
                             "Size field runs past the end of its section");
    size = ntl_le32(p);
    if (size > avail)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "IMAGE_LOAD_CONFIG_DIRECTORY", off,
                             "Size 0x%x runs past the end of its section (0x%zx left)", size, avail);
    lc->present = true;
    lc->rva = dir->rva;
    lc->size = size;
#define FIELD_FITS(o, w) ((uint64_t)(o) + (w) <= size)
    if (FIELD_FITS(l->cookie, l->ptr))
        lc->security_cookie = l->ptr == 8 ? ntl_le64(p + l->cookie) : ntl_le32(p + l->cookie);
    if (FIELD_FITS(l->guard_flags, 4))
        lc->guard_flags = ntl_le32(p + l->guard_flags);
    if (FIELD_FITS(l->dvrt, l->ptr))
        lc->dvrt_va = l->ptr == 8 ? ntl_le64(p + l->dvrt) : ntl_le32(p + l->dvrt);
    if (FIELD_FITS(l->dvrt_section, 2)) {
        lc->dvrt_offset = ntl_le32(p + l->dvrt_offset);
        lc->dvrt_section = ntl_le16(p + l->dvrt_section);
    }
#undef FIELD_FITS
    return NTL_OK;
}
