/* The resource directory: a three-level tree (type, name, language) of
 * IMAGE_RESOURCE_DIRECTORY tables whose offsets are relative to the
 * directory's start; the leaves give the data's RVA and size. */
#include <string.h>

#include "ntlens/pe.h"
#include "ntlens/reader.h"

#define DIR_HEADER 16
#define DIR_ENTRY 8
#define DATA_ENTRY 16
#define HIGH_BIT 0x80000000u

static int need(const struct ntl_pe *pe, uint32_t off, uint32_t len, const char *what,
                const uint8_t **p, uint64_t *fo, struct ntl_error *err)
{
    const struct ntl_pe_dir *dir = &pe->dirs[NTL_PE_DIR_RESOURCE];
    if (off > dir->size || len > dir->size - off)
        return ntl_error_set(err, NTL_ERR_FORMAT, what, NTL_NO_OFFSET,
                             "offset 0x%x+0x%x lies beyond the resource directory (size 0x%x)",
                             off, len, dir->size);
    return ntl_pe_rva_need(pe, dir->rva + off, len, what, p, fo, err);
}

/* Whether the entry's name (a counted UTF-16 string) is the ASCII name. */
static int name_is(const struct ntl_pe *pe, uint32_t off, const char *name, struct ntl_error *err)
{
    const uint8_t *p;
    uint64_t fo;
    size_t n = strlen(name);
    int rc = need(pe, off, 2, "IMAGE_RESOURCE_DIR_STRING_U", &p, &fo, err);
    if (rc < 0)
        return rc;
    if (ntl_le16(p) != n)
        return 0;
    if ((rc = need(pe, off + 2, (uint32_t)(2 * n), "IMAGE_RESOURCE_DIR_STRING_U", &p, &fo, err)) < 0)
        return rc;
    for (size_t i = 0; i < n; i++)
        if (ntl_le16(p + 2 * i) != (uint8_t)name[i])
            return 0;
    return 1;
}

/* The first entry of the directory at off that matches (any entry when
 * match is 0): its OffsetToData in *to; 1, 0 when none, or an error. */
static int entry(const struct ntl_pe *pe, uint32_t off, const char *name, uint32_t id, bool match,
                 uint32_t *to, struct ntl_error *err)
{
    const uint8_t *p;
    uint64_t fo;
    int rc = need(pe, off, DIR_HEADER, "IMAGE_RESOURCE_DIRECTORY", &p, &fo, err);
    if (rc < 0)
        return rc;
    uint32_t n = (uint32_t)ntl_le16(p + 12) + ntl_le16(p + 14);
    if ((rc = need(pe, off + DIR_HEADER, n * DIR_ENTRY, "IMAGE_RESOURCE_DIRECTORY_ENTRY", &p, &fo,
                   err)) < 0)
        return rc;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t nm = ntl_le32(p + i * DIR_ENTRY);
        bool named = nm & HIGH_BIT;
        if (match && name && named && (rc = name_is(pe, nm & ~HIGH_BIT, name, err)) != 0) {
            if (rc < 0)
                return rc;
        } else if (match && (name || named || nm != id))
            continue;
        *to = ntl_le32(p + i * DIR_ENTRY + 4);
        return 1;
    }
    return 0;
}

int ntl_pe_resource_find(const struct ntl_pe *pe, const char *type_name, uint32_t type_id,
                         const uint8_t **data, size_t *size, struct ntl_error *err)
{
    const struct ntl_pe_dir *dir = &pe->dirs[NTL_PE_DIR_RESOURCE];
    const uint8_t *p;
    uint64_t fo;
    uint32_t off = 0;
    int rc;
    if (pe->dir_count <= NTL_PE_DIR_RESOURCE || !dir->rva || !dir->size)
        return 0;
    /* Type, then any name, then any language: each a subdirectory. Offsets
     * only name directories below the root, so three steps end any loop. */
    for (int level = 0; level < 3; level++) {
        if ((rc = entry(pe, off, type_name, type_id, level == 0, &off, err)) <= 0)
            return rc;
        if (!(off & HIGH_BIT) != (level == 2))
            return ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_RESOURCE_DIRECTORY_ENTRY",
                                 NTL_NO_OFFSET, "level %d of the resource tree is %s", level + 1,
                                 level == 2 ? "a directory" : "data");
        off &= ~HIGH_BIT;
    }
    if ((rc = need(pe, off, DATA_ENTRY, "IMAGE_RESOURCE_DATA_ENTRY", &p, &fo, err)) < 0)
        return rc;
    uint32_t rva = ntl_le32(p), len = ntl_le32(p + 4);
    if ((rc = ntl_pe_rva_need(pe, rva, len, "resource data", data, &fo, err)) < 0)
        return rc;
    *size = len;
    return 1;
}
