/* Unit tests for memory images (ntlens/ipt_image.h): sections in order,
 * overlaps refused, reads clipped at a section's end and refused where
 * nothing is mapped; ELF files from hand-made headers, and each way an ELF
 * file can be broken reported with its offset. */
#include <string.h>

#include "check.h"

#include "ntlens/ipt_image.h"
#include "ntlens/reader.h"

static void test_sections(void)
{
    struct ntl_ipt_image *img;
    struct ntl_error err;
    uint8_t a[16], b[8], out[32];
    memset(a, 0xaa, sizeof a);
    memset(b, 0xbb, sizeof b);
    CHECK_EQ_INT(ntl_ipt_image_new(&img, &err), 0);
    CHECK_EQ_INT(ntl_ipt_image_add(img, b, sizeof b, 0x2000, &err), 0);
    CHECK_EQ_INT(ntl_ipt_image_add(img, a, sizeof a, 0x1000, &err), 0);
    /* [0x1ff8, 0x2008) overlaps the section at 0x2000. */
    CHECK_EQ_INT(ntl_ipt_image_add(img, a, sizeof a, 0x1ff8, &err), NTL_ERR_ARGUMENT);
    CHECK_EQ_INT(ntl_ipt_image_add(img, a, 0, 0x3000, &err), NTL_ERR_ARGUMENT);
    CHECK_EQ_INT(ntl_ipt_image_add(img, a, sizeof a, UINT64_MAX - 4, &err), NTL_ERR_ARGUMENT);
    CHECK_EQ_U64(ntl_ipt_image_sections(img), 2);
    /* Clipped at the end of the section holding the address. */
    CHECK_EQ_INT(ntl_ipt_image_read(out, sizeof out, 0x1008, img), 8);
    CHECK(out[0] == 0xaa && out[7] == 0xaa);
    CHECK_EQ_INT(ntl_ipt_image_read(out, sizeof out, 0x2000, img), 8);
    CHECK(out[0] == 0xbb);
    CHECK_EQ_INT(ntl_ipt_image_read(out, sizeof out, 0x1010, img), NTL_ERR_NOT_FOUND);
    CHECK_EQ_INT(ntl_ipt_image_read(out, sizeof out, 0xfff, img), NTL_ERR_NOT_FOUND);
    CHECK_EQ_INT(ntl_ipt_image_read(out, sizeof out, 0x2008, img), NTL_ERR_NOT_FOUND);
    ntl_ipt_image_free(img);
}

/* A minimal ELF64: the header, one PT_LOAD of 4 code bytes at vaddr. */
static size_t make_elf(uint8_t *f, uint64_t vaddr)
{
    memset(f, 0, 128 + 4);
    memcpy(f, "\177ELF", 4);
    f[4] = 2; /* ELFCLASS64 */
    f[5] = 1; /* little-endian */
    ntl_put_le64(f + 32, 64);  /* e_phoff */
    ntl_put_le16(f + 54, 56);  /* e_phentsize */
    ntl_put_le16(f + 56, 1);   /* e_phnum */
    uint8_t *ph = f + 64;
    ntl_put_le32(ph, 1);          /* PT_LOAD */
    ntl_put_le64(ph + 8, 120);    /* p_offset */
    ntl_put_le64(ph + 16, vaddr); /* p_vaddr */
    ntl_put_le64(ph + 32, 4);     /* p_filesz */
    memcpy(f + 120, "\x90\x90\xc3\xcc", 4);
    return 124;
}

static void test_elf(void)
{
    struct ntl_ipt_image *img;
    struct ntl_error err;
    uint8_t f[132], out[4];
    size_t n = make_elf(f, 0x400000);
    CHECK_EQ_INT(ntl_ipt_image_new(&img, &err), 0);
    CHECK_EQ_INT(ntl_ipt_image_add_elf_bytes(img, f, n, false, 0, &err), 0);
    CHECK_EQ_INT(ntl_ipt_image_read(out, 4, 0x400000, img), 4);
    CHECK(out[2] == 0xc3);
    /* Moved to a base. */
    CHECK_EQ_INT(ntl_ipt_image_add_elf_bytes(img, f, n, true, 0x10000, &err), 0);
    CHECK_EQ_INT(ntl_ipt_image_read(out, 4, 0x10002, img), 2);
    CHECK(out[0] == 0xc3);
    /* Loaded twice at the same place: the segments overlap. */
    CHECK_EQ_INT(ntl_ipt_image_add_elf_bytes(img, f, n, false, 0, &err), NTL_ERR_ARGUMENT);
    ntl_ipt_image_free(img);

    CHECK_EQ_INT(ntl_ipt_image_new(&img, &err), 0);
    CHECK_EQ_INT(ntl_ipt_image_add_elf_bytes(img, f, 40, false, 0, &err), NTL_ERR_FORMAT);
    CHECK_EQ_INT(ntl_ipt_image_add_elf_bytes(img, f, 60, false, 0, &err), NTL_ERR_TRUNCATED);
    /* The program headers past the end of the file. */
    CHECK_EQ_INT(ntl_ipt_image_add_elf_bytes(img, f, 100, false, 0, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, 64);
    /* The segment past the end. */
    CHECK_EQ_INT(ntl_ipt_image_add_elf_bytes(img, f, 122, false, 0, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, 64);
    f[5] = 2; /* big-endian */
    CHECK_EQ_INT(ntl_ipt_image_add_elf_bytes(img, f, n, false, 0, &err), NTL_ERR_UNSUPPORTED);
    f[5] = 1;
    ntl_put_le32(f + 64, 2); /* PT_DYNAMIC: nothing to load */
    CHECK_EQ_INT(ntl_ipt_image_add_elf_bytes(img, f, n, false, 0, &err), NTL_ERR_NOT_FOUND);
    CHECK_EQ_U64(ntl_ipt_image_sections(img), 0);
    ntl_ipt_image_free(img);
}

/* Where an ELF's file offset 0 lands: its segment's address less its
 * offset, at its own place and moved. */
static void test_elf_extent(void)
{
    struct ntl_error err;
    uint8_t f[132];
    uint64_t file0 = 0, end = 0;
    size_t n = make_elf(f, 0x400078);
    CHECK_EQ_INT(ntl_ipt_elf_extent(f, n, false, 0, &file0, &end, &err), 0);
    CHECK_EQ_U64(file0, 0x400000);
    CHECK_EQ_U64(end, 0x40007c);
    CHECK_EQ_INT(ntl_ipt_elf_extent(f, n, true, 0x10000, &file0, &end, &err), 0);
    CHECK_EQ_U64(file0, 0x10000 - 120);
    CHECK_EQ_U64(end, 0x10004);
    ntl_put_le32(f + 64, 2);
    CHECK_EQ_INT(ntl_ipt_elf_extent(f, n, false, 0, &file0, &end, &err), NTL_ERR_NOT_FOUND);
}

/* Address spaces: each reads its own image, then the default; a CR3 is
 * matched without its PCID bits; switching says when the view changed. */
static void test_spaces(void)
{
    struct ntl_ipt_spaces *s;
    struct ntl_ipt_image *a, *b, *again;
    struct ntl_error err;
    uint8_t out[4];
    CHECK_EQ_INT(ntl_ipt_spaces_new(&s, &err), 0);
    CHECK_EQ_INT(ntl_ipt_image_add(ntl_ipt_spaces_default(s), (const uint8_t *)"\xc3", 1, 0x9000,
                                   &err), 0);
    CHECK_EQ_INT(ntl_ipt_spaces_image(s, 0x2000, &b, &err), 0);
    CHECK_EQ_INT(ntl_ipt_spaces_image(s, 0x1000, &a, &err), 0);
    CHECK_EQ_INT(ntl_ipt_spaces_image(s, 0x1fff, &again, &err), 0);
    CHECK(again == a && a != b);
    CHECK_EQ_U64(ntl_ipt_spaces_count(s), 2);
    CHECK_EQ_INT(ntl_ipt_image_add(a, (const uint8_t *)"\xaa", 1, 0x100, &err), 0);
    CHECK_EQ_INT(ntl_ipt_image_add(b, (const uint8_t *)"\xbb", 1, 0x100, &err), 0);
    /* No space yet: the default alone. */
    CHECK_EQ_INT(ntl_ipt_spaces_read(out, 1, 0x100, s), NTL_ERR_NOT_FOUND);
    CHECK(ntl_ipt_spaces_switch(s, 0x1000));
    CHECK(!ntl_ipt_spaces_switch(s, 0x1abc));
    CHECK_EQ_INT(ntl_ipt_spaces_read(out, 1, 0x100, s), 1);
    CHECK(out[0] == 0xaa);
    CHECK_EQ_INT(ntl_ipt_spaces_read(out, 1, 0x9000, s), 1);
    CHECK(out[0] == 0xc3);
    CHECK(ntl_ipt_spaces_switch(s, 0x2000));
    CHECK_EQ_INT(ntl_ipt_spaces_read(out, 1, 0x100, s), 1);
    CHECK(out[0] == 0xbb);
    /* A CR3 with no image of its own: the default. */
    CHECK(ntl_ipt_spaces_switch(s, 0x5000));
    CHECK(!ntl_ipt_spaces_switch(s, 0x6000));
    CHECK_EQ_INT(ntl_ipt_spaces_read(out, 1, 0x100, s), NTL_ERR_NOT_FOUND);
    ntl_ipt_spaces_free(s);
}

int main(void)
{
    test_sections();
    test_elf();
    test_elf_extent();
    test_spaces();
    return check_exit();
}
