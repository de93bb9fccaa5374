/* PE headers and the section table, and RVA -> file lookups for the
 * directory parsers. */
#include "ntlens/pe.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/reader.h"

#define DOS_HEADER_SIZE 64
#define FILE_HEADER_SIZE 20
#define SECTION_HEADER_SIZE 40

static int parse_optional(struct ntl_pe *pe, const uint8_t *p, uint16_t opt_size, uint64_t off,
                          struct ntl_error *err)
{
    uint16_t magic = ntl_le16(p);
    size_t dir_at;
    uint32_t n;

    if (magic == 0x20b) {
        pe->pe32plus = true;
        if (opt_size < 112)
            return ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_OPTIONAL_HEADER64", off,
                                 "SizeOfOptionalHeader %u is smaller than 112", opt_size);
        pe->image_base = ntl_le64(p + 24);
        n = ntl_le32(p + 108);
        dir_at = 112;
    } else if (magic == 0x10b) {
        pe->pe32plus = false;
        if (opt_size < 96)
            return ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_OPTIONAL_HEADER32", off,
                                 "SizeOfOptionalHeader %u is smaller than 96", opt_size);
        pe->image_base = ntl_le32(p + 28);
        n = ntl_le32(p + 92);
        dir_at = 96;
    } else {
        return ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_OPTIONAL_HEADER", off,
                             "unknown Magic 0x%x (want 0x10b or 0x20b)", magic);
    }
    pe->entry_rva = ntl_le32(p + 16);
    pe->section_alignment = ntl_le32(p + 32);
    pe->file_alignment = ntl_le32(p + 36);
    pe->size_of_image = ntl_le32(p + 56);
    pe->size_of_headers = ntl_le32(p + 60);
    pe->checksum = ntl_le32(p + 64);
    pe->subsystem = ntl_le16(p + 68);
    pe->dll_characteristics = ntl_le16(p + 70);
    if (n > NTL_PE_DIR_COUNT)
        n = NTL_PE_DIR_COUNT;
    if ((opt_size - dir_at) / 8 < n)
        n = (uint32_t)((opt_size - dir_at) / 8);
    pe->dir_count = n;
    for (uint32_t i = 0; i < n; i++) {
        pe->dirs[i].rva = ntl_le32(p + dir_at + 8 * i);
        pe->dirs[i].size = ntl_le32(p + dir_at + 8 * i + 4);
    }
    if (pe->size_of_image == 0 || pe->size_of_image > NTL_PE_MAX_IMAGE_SIZE)
        return ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_OPTIONAL_HEADER", off + 56,
                             "SizeOfImage 0x%x is out of range", pe->size_of_image);
    if (pe->size_of_headers > pe->size_of_image)
        return ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_OPTIONAL_HEADER", off + 60,
                             "SizeOfHeaders 0x%x exceeds SizeOfImage 0x%x", pe->size_of_headers,
                             pe->size_of_image);
    return NTL_OK;
}

static int parse_sections(struct ntl_pe *pe, uint64_t table, struct ntl_error *err)
{
    if (!ntl_range_ok(pe->size, table, (uint64_t)pe->section_count * SECTION_HEADER_SIZE))
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "IMAGE_SECTION_HEADER", table,
                             "%u section headers end beyond the file (size 0x%zx)",
                             pe->section_count, pe->size);
    pe->sections = calloc(pe->section_count ? pe->section_count : 1, sizeof *pe->sections);
    if (!pe->sections)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    for (uint16_t i = 0; i < pe->section_count; i++) {
        uint64_t off = table + (uint64_t)i * SECTION_HEADER_SIZE;
        const uint8_t *h = pe->data + off;
        struct ntl_pe_section *s = &pe->sections[i];
        uint64_t extent;

        memcpy(s->name, h, 8);
        s->name[8] = 0;
        for (int k = 0; k < 8; k++)
            if (s->name[k] && (s->name[k] < 0x20 || s->name[k] > 0x7e))
                s->name[k] = '?';
        s->virtual_size = ntl_le32(h + 8);
        s->virtual_address = ntl_le32(h + 12);
        s->raw_size = ntl_le32(h + 16);
        s->raw_offset = ntl_le32(h + 20);
        s->characteristics = ntl_le32(h + 36);
        s->header_offset = off;
        if (s->raw_size && !ntl_range_ok(pe->size, s->raw_offset, s->raw_size))
            return ntl_error_set(err, NTL_ERR_TRUNCATED, "IMAGE_SECTION_HEADER", off + 16,
                                 "section %s raw data 0x%x+0x%x lies beyond the end of the file "
                                 "(size 0x%zx)", s->name, s->raw_offset, s->raw_size, pe->size);
        extent = (uint64_t)s->virtual_address + (s->virtual_size ? s->virtual_size : s->raw_size);
        if (extent > pe->size_of_image)
            return ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_SECTION_HEADER", off + 12,
                                 "section %s at RVA 0x%x size 0x%x ends beyond SizeOfImage 0x%x",
                                 s->name, s->virtual_address,
                                 s->virtual_size ? s->virtual_size : s->raw_size, pe->size_of_image);
    }
    return NTL_OK;
}

int ntl_pe_parse(const void *data, size_t size, struct ntl_pe *pe, struct ntl_error *err)
{
    const uint8_t *d = data;
    uint64_t nt, opt;
    uint16_t opt_size;
    int rc;

    memset(pe, 0, sizeof *pe);
    pe->data = d;
    pe->size = size;
    if (size < DOS_HEADER_SIZE)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "IMAGE_DOS_HEADER", 0,
                             "file of %zu bytes is shorter than a DOS header", size);
    if (d[0] != 'M' || d[1] != 'Z')
        return ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_DOS_HEADER", 0, "no MZ signature");
    nt = ntl_le32(d + 0x3c);
    if (!ntl_range_ok(size, nt, 4 + FILE_HEADER_SIZE))
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "IMAGE_NT_HEADERS", 0x3c,
                             "e_lfanew 0x%" PRIx64 " points beyond the end of the file (size 0x%zx)",
                             nt, size);
    if (memcmp(d + nt, "PE\0\0", 4) != 0)
        return ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_NT_HEADERS", nt, "no PE signature");
    pe->nt_offset = nt;
    pe->machine = ntl_le16(d + nt + 4);
    pe->section_count = ntl_le16(d + nt + 6);
    pe->timestamp = ntl_le32(d + nt + 8);
    opt_size = ntl_le16(d + nt + 20);
    pe->characteristics = ntl_le16(d + nt + 22);
    opt = nt + 4 + FILE_HEADER_SIZE;
    pe->optional_offset = opt;
    if (opt_size < 2 || !ntl_range_ok(size, opt, opt_size))
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "IMAGE_OPTIONAL_HEADER", opt,
                             "optional header of %u bytes does not fit in the file (size 0x%zx)",
                             opt_size, size);
    rc = parse_optional(pe, d + opt, opt_size, opt, err);
    if (rc < 0)
        return rc;
    rc = parse_sections(pe, opt + opt_size, err);
    if (rc < 0) {
        ntl_pe_free(pe);
        return rc;
    }
    return NTL_OK;
}

void ntl_pe_free(struct ntl_pe *pe)
{
    free(pe->sections);
    pe->sections = NULL;
    pe->section_count = 0;
}

int ntl_pe_section_of(const struct ntl_pe *pe, uint32_t rva)
{
    for (int i = 0; i < pe->section_count; i++) {
        const struct ntl_pe_section *s = &pe->sections[i];
        uint32_t len = s->virtual_size ? s->virtual_size : s->raw_size;
        if (rva >= s->virtual_address && rva - s->virtual_address < len)
            return i;
    }
    return -1;
}

int ntl_pe_rva_span(const struct ntl_pe *pe, uint32_t rva, const uint8_t **ptr, size_t *avail,
                    uint64_t *file_offset, struct ntl_error *err)
{
    int i = ntl_pe_section_of(pe, rva);
    uint64_t off, n;

    if (i < 0) {
        uint64_t hdr = pe->size_of_headers < pe->size ? pe->size_of_headers : pe->size;
        if (rva >= hdr)
            return ntl_error_set(err, NTL_ERR_FORMAT, "RVA", NTL_NO_OFFSET,
                                 "RVA 0x%x lies in no section and outside the headers", rva);
        off = rva;
        n = hdr - rva;
    } else {
        const struct ntl_pe_section *s = &pe->sections[i];
        uint32_t in = rva - s->virtual_address;
        if (in >= s->raw_size)
            return ntl_error_set(err, NTL_ERR_FORMAT, "RVA", NTL_NO_OFFSET,
                                 "RVA 0x%x lies in the zero-filled tail of section %s (raw size 0x%x)",
                                 rva, s->name, s->raw_size);
        off = (uint64_t)s->raw_offset + in;
        n = s->raw_size - in;
        if (s->virtual_size && s->virtual_size - in < n)
            n = s->virtual_size - in;
    }
    *ptr = pe->data + off;
    *avail = (size_t)n;
    if (file_offset)
        *file_offset = off;
    return NTL_OK;
}

int ntl_pe_rva_need(const struct ntl_pe *pe, uint32_t rva, size_t len, const char *what,
                    const uint8_t **ptr, uint64_t *file_offset, struct ntl_error *err)
{
    size_t avail;
    uint64_t off;
    int rc = ntl_pe_rva_span(pe, rva, ptr, &avail, &off, err);
    if (rc < 0) {
        ntl_error_prefix(err, "%s", what);
        return rc;
    }
    if (avail < len)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, what, off,
                             "%zu bytes at RVA 0x%x run past the end of their section (0x%zx left)",
                             len, rva, avail);
    if (file_offset)
        *file_offset = off;
    return NTL_OK;
}

int ntl_pe_rva_string(const struct ntl_pe *pe, uint32_t rva, const char *what, char *out,
                      size_t size, struct ntl_error *err)
{
    const uint8_t *p;
    size_t avail, n = 0;
    uint64_t off;
    int rc = ntl_pe_rva_span(pe, rva, &p, &avail, &off, err);

    if (rc < 0) {
        ntl_error_prefix(err, "%s", what);
        return rc;
    }
    while (n < avail && p[n])
        n++;
    if (n == avail)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, what, off,
                             "string at RVA 0x%x has no terminator before its section ends", rva);
    if (size) {
        size_t k = n < size - 1 ? n : size - 1;
        memcpy(out, p, k);
        out[k] = 0;
    }
    return NTL_OK;
}
