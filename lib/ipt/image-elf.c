/* ELF executables and shared objects into a memory image: each PT_LOAD
 * segment's file bytes at its address, as ptxed's --elf loads them. Every
 * header read is bounds-checked; a segment that does not fit the file is an
 * error naming it. */
#include <inttypes.h>
#include <string.h>

#include "ntlens/buf.h"
#include "ntlens/ipt_image.h"
#include "ntlens/reader.h"

#define PT_LOAD 1

/* One program header's fields that matter. */
struct phdr {
    uint32_t type;
    uint64_t offset, vaddr, filesz;
};

static void read_phdr(const uint8_t *p, bool is64, struct phdr *h)
{
    h->type = ntl_le32(p);
    if (is64) {
        h->offset = ntl_le64(p + 8);
        h->vaddr = ntl_le64(p + 16);
        h->filesz = ntl_le64(p + 32);
    } else {
        h->offset = ntl_le32(p + 4);
        h->vaddr = ntl_le32(p + 8);
        h->filesz = ntl_le32(p + 16);
    }
}

/* The program header table of an ELF file in f: where, how many, how big. */
static int headers(const struct ntl_buf *f, bool *is64, uint64_t *off, unsigned *n,
                   unsigned *size, struct ntl_error *err)
{
    const uint8_t *d = f->data;
    if (f->len < 52 || memcmp(d, "\177ELF", 4) != 0)
        return ntl_error_set(err, NTL_ERR_FORMAT, "ELF header", 0, "not an ELF file");
    if ((d[4] != 1 && d[4] != 2) || d[5] != 1)
        return ntl_error_set(err, NTL_ERR_UNSUPPORTED, "ELF header", 4,
                             "class %u, data %u: only little-endian ELF32 and ELF64", d[4], d[5]);
    *is64 = d[4] == 2;
    if (*is64 && f->len < 64)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "ELF header", 0, "the header is cut short");
    *off = *is64 ? ntl_le64(d + 32) : ntl_le32(d + 28);
    *size = ntl_le16(d + (*is64 ? 54 : 42));
    *n = ntl_le16(d + (*is64 ? 56 : 44));
    unsigned need = *is64 ? 56 : 32;
    if (*n && (*size < need || !ntl_range_ok(f->len, *off, (uint64_t)*n * *size)))
        return ntl_error_set(err, NTL_ERR_FORMAT, "ELF program headers", *off,
                             "%u headers of %u bytes do not fit the %zu-byte file", *n, *size,
                             f->len);
    return 0;
}

/* Adds the PT_LOAD segments of f, moved by delta. */
static int add_segments(struct ntl_ipt_image *img, const struct ntl_buf *f, bool is64,
                        uint64_t off, unsigned n, unsigned size, uint64_t delta,
                        struct ntl_error *err)
{
    int added = 0;
    for (unsigned i = 0; i < n; i++) {
        struct phdr h;
        read_phdr(f->data + off + (uint64_t)i * size, is64, &h);
        if (h.type != PT_LOAD || h.filesz == 0)
            continue;
        if (!ntl_range_ok(f->len, h.offset, h.filesz))
            return ntl_error_set(err, NTL_ERR_FORMAT, "ELF program header",
                                 off + (uint64_t)i * size,
                                 "segment %u: 0x%" PRIx64 " bytes at 0x%" PRIx64 " past the end", i,
                                 h.filesz, h.offset);
        int rc = ntl_ipt_image_add(img, f->data + h.offset, (size_t)h.filesz, h.vaddr + delta, err);
        if (rc < 0)
            return rc;
        added++;
    }
    return added;
}

/* The lowest loadable segment of f (its address and file offset) and the
 * end of the highest; false when there is none. */
static bool span(const struct ntl_buf *f, bool is64, uint64_t off, unsigned n, unsigned size,
                 uint64_t *low, uint64_t *low_offset, uint64_t *high)
{
    *low = UINT64_MAX;
    *low_offset = *high = 0;
    for (unsigned i = 0; i < n; i++) {
        struct phdr h;
        read_phdr(f->data + off + (uint64_t)i * size, is64, &h);
        if (h.type != PT_LOAD || !h.filesz)
            continue;
        if (h.vaddr < *low) {
            *low = h.vaddr;
            *low_offset = h.offset;
        }
        if (h.vaddr + h.filesz > *high)
            *high = h.vaddr + h.filesz;
    }
    return *low != UINT64_MAX;
}

int ntl_ipt_elf_extent(const uint8_t *data, size_t len, bool at_base, uint64_t base,
                       uint64_t *file0, uint64_t *end, struct ntl_error *err)
{
    struct ntl_buf f = {.data = (uint8_t *)data, .len = len};
    bool is64 = false;
    uint64_t off = 0, low, low_offset, high;
    unsigned n = 0, size = 0;
    int rc = headers(&f, &is64, &off, &n, &size, err);
    if (rc < 0)
        return rc;
    if (!span(&f, is64, off, n, size, &low, &low_offset, &high))
        return ntl_error_set(err, NTL_ERR_NOT_FOUND, "ELF program headers", off,
                             "no loadable segment");
    uint64_t delta = at_base ? base - low : 0;
    *file0 = low - low_offset + delta;
    *end = high + delta;
    return 0;
}

int ntl_ipt_image_add_elf_bytes(struct ntl_ipt_image *img, const uint8_t *data, size_t len,
                                bool at_base, uint64_t base, struct ntl_error *err)
{
    struct ntl_buf f = {.data = (uint8_t *)data, .len = len};
    bool is64 = false;
    uint64_t off = 0, low, low_offset, high;
    unsigned n = 0, size = 0;
    int rc = headers(&f, &is64, &off, &n, &size, err);
    uint64_t delta = 0;
    /* Moved so that the lowest segment starts at base. */
    if (rc >= 0 && at_base && span(&f, is64, off, n, size, &low, &low_offset, &high))
        delta = base - low;
    if (rc >= 0)
        rc = add_segments(img, &f, is64, off, n, size, delta, err);
    if (rc == 0)
        rc = ntl_error_set(err, NTL_ERR_NOT_FOUND, "ELF program headers", off,
                           "no loadable segment");
    return rc < 0 ? rc : 0;
}

int ntl_ipt_image_add_elf(struct ntl_ipt_image *img, const char *path, bool at_base,
                          uint64_t base, struct ntl_error *err)
{
    struct ntl_buf f;
    ntl_buf_init(&f, NTL_IPT_MAX_IMAGE);
    int rc = ntl_file_read(path, NTL_IPT_MAX_IMAGE, &f, err);
    if (rc >= 0)
        rc = ntl_ipt_image_add_elf_bytes(img, f.data, f.len, at_base, base, err);
    ntl_buf_free(&f);
    if (rc < 0)
        ntl_error_prefix(err, "%s", path);
    return rc < 0 ? rc : 0;
}
