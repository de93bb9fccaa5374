/* The export directory: functions, names, ordinals and forwarders. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/pe.h"
#include "ntlens/reader.h"

#define EXPORT_DIR_SIZE 40
#define NAME_MAX_LEN 512

static char *dup_string(const struct ntl_pe *pe, uint32_t rva, const char *what, int *rc,
                        struct ntl_error *err)
{
    char tmp[NAME_MAX_LEN];
    char *s;
    *rc = ntl_pe_rva_string(pe, rva, what, tmp, sizeof tmp, err);
    if (*rc < 0)
        return NULL;
    s = strdup(tmp);
    if (!s)
        *rc = ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    return s;
}

int ntl_pe_exports_parse(const struct ntl_pe *pe, struct ntl_pe_exports *out, struct ntl_error *err)
{
    const struct ntl_pe_dir *dir = &pe->dirs[NTL_PE_DIR_EXPORT];
    const uint8_t *d, *funcs, *names = NULL, *ords = NULL;
    uint64_t ooff = 0;
    uint32_t nfuncs, nnames;
    int rc;

    memset(out, 0, sizeof *out);
    if (pe->dir_count <= NTL_PE_DIR_EXPORT || !dir->rva)
        return NTL_OK;
    rc = ntl_pe_rva_need(pe, dir->rva, EXPORT_DIR_SIZE, "IMAGE_EXPORT_DIRECTORY", &d, NULL, err);
    if (rc < 0)
        return rc;
    out->ordinal_base = ntl_le32(d + 16);
    nfuncs = ntl_le32(d + 20);
    nnames = ntl_le32(d + 24);
    if (ntl_le32(d + 12)) {
        out->dll_name = dup_string(pe, ntl_le32(d + 12), "IMAGE_EXPORT_DIRECTORY Name", &rc, err);
        if (rc < 0)
            return rc;
    }
    if (nfuncs == 0)
        return NTL_OK;
    /* Each table must lie in the file, which bounds every count by the file size. */
    rc = ntl_pe_rva_need(pe, ntl_le32(d + 28), (size_t)nfuncs * 4, "export AddressOfFunctions",
                         &funcs, NULL, err);
    if (rc >= 0 && nnames) {
        rc = ntl_pe_rva_need(pe, ntl_le32(d + 32), (size_t)nnames * 4, "export AddressOfNames",
                             &names, NULL, err);
        if (rc >= 0)
            rc = ntl_pe_rva_need(pe, ntl_le32(d + 36), (size_t)nnames * 2,
                                 "export AddressOfNameOrdinals", &ords, &ooff, err);
    }
    if (rc < 0)
        goto fail;
    /* Room for one extra entry per name, for functions exported under several names. */
    out->entries = calloc((size_t)nfuncs + nnames, sizeof *out->entries);
    if (!out->entries) {
        rc = ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
        goto fail;
    }
    out->count = nfuncs;
    for (uint32_t i = 0; i < nfuncs; i++) {
        struct ntl_pe_export *e = &out->entries[i];
        e->ordinal = out->ordinal_base + i;
        e->rva = ntl_le32(funcs + 4 * i);
        if (e->rva && e->rva >= dir->rva && e->rva - dir->rva < dir->size) {
            e->forwarder = dup_string(pe, e->rva, "export forwarder", &rc, err);
            if (rc < 0)
                goto fail;
        }
    }
    for (uint32_t i = 0; i < nnames; i++) {
        uint16_t idx = ntl_le16(ords + 2 * i);
        if (idx >= nfuncs) {
            rc = ntl_error_set(err, NTL_ERR_FORMAT, "export AddressOfNameOrdinals", ooff + 2 * i,
                               "name %u refers to function %u of %u", i, idx, nfuncs);
            goto fail;
        }
        struct ntl_pe_export *e = &out->entries[idx];
        if (e->name) { /* an alias: a copy of the function under its second name */
            struct ntl_pe_export *alias = &out->entries[out->count++];
            alias->ordinal = e->ordinal;
            alias->rva = e->rva;
            if (e->forwarder && !(alias->forwarder = strdup(e->forwarder))) {
                rc = ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
                goto fail;
            }
            e = alias;
        }
        e->name = dup_string(pe, ntl_le32(names + 4 * i), "export name", &rc, err);
        if (rc < 0)
            goto fail;
    }
    return NTL_OK;
fail:
    ntl_pe_exports_free(out);
    return rc;
}

void ntl_pe_exports_free(struct ntl_pe_exports *ex)
{
    for (size_t i = 0; i < ex->count; i++) {
        free(ex->entries[i].name);
        free(ex->entries[i].forwarder);
    }
    free(ex->entries);
    free(ex->dll_name);
    memset(ex, 0, sizeof *ex);
}

const struct ntl_pe_export *ntl_pe_export_find(const struct ntl_pe_exports *ex, const char *name,
                                               uint32_t ordinal)
{
    for (size_t i = 0; i < ex->count; i++) {
        const struct ntl_pe_export *e = &ex->entries[i];
        if (!e->rva)
            continue;
        if (name ? (e->name && strcmp(e->name, name) == 0) : e->ordinal == ordinal)
            return e;
    }
    return NULL;
}
