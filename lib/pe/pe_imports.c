/* The import directory: each DLL's imported names or ordinals and the IAT
 * slot the loader fills for each. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/pe.h"
#include "ntlens/reader.h"

#define DESCRIPTOR_SIZE 20

static int nomem(struct ntl_error *err)
{
    return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
}

static int add_import(struct ntl_pe_imports *im, size_t *cap, struct ntl_pe_import **out,
                      struct ntl_error *err)
{
    if (im->count == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        struct ntl_pe_import *p = realloc(im->entries, ncap * sizeof *p);
        if (!p)
            return nomem(err);
        im->entries = p;
        *cap = ncap;
    }
    *out = &im->entries[im->count++];
    memset(*out, 0, sizeof **out);
    return NTL_OK;
}

static int parse_thunks(const struct ntl_pe *pe, struct ntl_pe_imports *im, size_t *cap,
                        const char *dll, uint32_t lookup_rva, uint32_t iat_rva,
                        struct ntl_error *err)
{
    unsigned ps = ntl_pe_ptr_size(pe);
    const uint8_t *p;
    size_t avail;
    uint64_t off;
    int rc = ntl_pe_rva_span(pe, lookup_rva, &p, &avail, &off, err);

    if (rc < 0) {
        ntl_error_prefix(err, "import lookup table of %s", dll);
        return rc;
    }
    for (size_t i = 0;; i++) {
        struct ntl_pe_import *e = NULL;
        uint64_t v;
        if ((i + 1) * ps > avail)
            return ntl_error_set(err, NTL_ERR_TRUNCATED, "import lookup table", off + i * ps,
                                 "thunks of %s run past the end of their section", dll);
        v = ps == 8 ? ntl_le64(p + i * ps) : ntl_le32(p + i * ps);
        if (v == 0)
            return NTL_OK;
        rc = add_import(im, cap, &e, err);
        if (rc < 0)
            return rc;
        e->dll = dll;
        e->iat_rva = iat_rva + (uint32_t)(i * ps);
        if (v >> (ps * 8 - 1)) {
            e->ordinal = (uint16_t)v;
        } else {
            char name[512];
            const uint8_t *h;
            uint32_t rva = (uint32_t)v;
            rc = ntl_pe_rva_need(pe, rva, 2, "IMAGE_IMPORT_BY_NAME", &h, NULL, err);
            if (rc >= 0)
                rc = ntl_pe_rva_string(pe, rva + 2, "IMAGE_IMPORT_BY_NAME Name", name, sizeof name,
                                       err);
            if (rc < 0)
                return rc;
            e->hint = ntl_le16(h);
            if (!(e->name = strdup(name)))
                return nomem(err);
        }
    }
}

int ntl_pe_imports_parse(const struct ntl_pe *pe, struct ntl_pe_imports *out, struct ntl_error *err)
{
    const struct ntl_pe_dir *dir = &pe->dirs[NTL_PE_DIR_IMPORT];
    const uint8_t *p;
    size_t avail, cap = 0;
    uint64_t off;
    int rc;

    memset(out, 0, sizeof *out);
    if (pe->dir_count <= NTL_PE_DIR_IMPORT || !dir->rva)
        return NTL_OK;
    rc = ntl_pe_rva_span(pe, dir->rva, &p, &avail, &off, err);
    if (rc < 0) {
        ntl_error_prefix(err, "import directory");
        return rc;
    }
    for (size_t i = 0;; i++) {
        const uint8_t *d = p + i * DESCRIPTOR_SIZE;
        uint32_t lookup, name_rva, iat;
        char name[256], *dll, **dlls;

        if ((i + 1) * DESCRIPTOR_SIZE > avail) {
            rc = ntl_error_set(err, NTL_ERR_TRUNCATED, "IMAGE_IMPORT_DESCRIPTOR",
                               off + i * DESCRIPTOR_SIZE,
                               "descriptor %zu runs past the end of its section", i);
            goto fail;
        }
        lookup = ntl_le32(d);
        name_rva = ntl_le32(d + 12);
        iat = ntl_le32(d + 16);
        if (!lookup && !name_rva && !iat)
            return NTL_OK;
        rc = ntl_pe_rva_string(pe, name_rva, "IMAGE_IMPORT_DESCRIPTOR Name", name, sizeof name, err);
        if (rc < 0)
            goto fail;
        dlls = realloc(out->dlls, (out->dll_count + 1) * sizeof *dlls);
        if (!dlls || !(dll = strdup(name))) {
            if (dlls)
                out->dlls = dlls;
            rc = nomem(err);
            goto fail;
        }
        out->dlls = dlls;
        out->dlls[out->dll_count++] = dll;
        rc = parse_thunks(pe, out, &cap, dll, lookup ? lookup : iat, iat, err);
        if (rc < 0)
            goto fail;
    }
fail:
    ntl_pe_imports_free(out);
    return rc;
}

void ntl_pe_imports_free(struct ntl_pe_imports *im)
{
    for (size_t i = 0; i < im->count; i++)
        free(im->entries[i].name);
    for (size_t i = 0; i < im->dll_count; i++)
        free(im->dlls[i]);
    free(im->entries);
    free(im->dlls);
    memset(im, 0, sizeof *im);
}

const struct ntl_pe_import *ntl_pe_import_by_iat(const struct ntl_pe_imports *im, uint32_t iat_rva)
{
    for (size_t i = 0; i < im->count; i++)
        if (im->entries[i].iat_rva == iat_rva)
            return &im->entries[i];
    return NULL;
}
