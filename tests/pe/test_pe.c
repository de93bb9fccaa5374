/* lib/pe on images built here byte by byte: headers, exports, imports, base
 * relocations, load config, DVRT v1/v2, mapping, rebasing, import
 * optimization, resources, and malformed input (errors with offsets, never a crash). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ntlens/importopt.h"
#include "ntlens/pe.h"
#include "ntlens/pe_dvrt.h"
#include "ntlens/reader.h"

#include "pe_gen.h"

static void test_headers_exports(void)
{
    struct img k;
    struct ntl_pe pe;
    struct ntl_pe_exports ex;
    struct ntl_error err = {0};
    const struct ntl_pe_export *e;

    build_kernel(&k);
    CHECK_EQ_INT(ntl_pe_parse(k.b, sizeof k.b, &pe, &err), 0);
    CHECK(pe.pe32plus);
    CHECK_EQ_U64(pe.image_base, 0x140000000ull);
    CHECK_EQ_U64(pe.size_of_image, 0x4000);
    CHECK_EQ_U64(pe.checksum, 0xc0ffee);
    CHECK_EQ_U64(pe.section_count, 1);
    CHECK_EQ_STR(pe.sections[0].name, ".text");
    CHECK_EQ_INT(ntl_pe_exports_parse(&pe, &ex, &err), 0);
    CHECK_EQ_STR(ex.dll_name, "ntoskrnl.exe");
    CHECK_EQ_U64(ex.count, 4);
    e = ntl_pe_export_find(&ex, "KeFoo", 0);
    CHECK(e && e->rva == 0x1800 && e->ordinal == 10);
    e = ntl_pe_export_find(&ex, "HalFwd", 0);
    CHECK(e && e->forwarder && !strcmp(e->forwarder, "NTOSKRNL.KeFoo"));
    e = ntl_pe_export_find(&ex, NULL, 13);
    CHECK(e && e->rva == 0x1820 && !e->name);
    CHECK(!ntl_pe_export_find(&ex, "Nope", 0));
    ntl_pe_exports_free(&ex);

    /* the export name table pointing past its section */
    ntl_put_le32(at(&k, 0x1100) + 32, SEC_RVA + SEC_SIZE - 4);
    CHECK(ntl_pe_exports_parse(&pe, &ex, &err) < 0);
    CHECK(strstr(err.message, "past the end") != NULL);
    ntl_pe_free(&pe);
}

static void test_driver_dirs(void)
{
    struct img d;
    struct ntl_pe pe;
    struct ntl_pe_imports im;
    struct ntl_pe_reloc *r;
    size_t n;
    struct ntl_pe_codeview cv;
    struct ntl_dvrt dv;
    struct ntl_buf map;
    struct ntl_error err = {0};

    build_driver(&d, 0x140000000ull);
    CHECK_EQ_INT(ntl_pe_parse(d.b, sizeof d.b, &pe, &err), 0);
    CHECK_EQ_INT(ntl_pe_imports_parse(&pe, &im, &err), 0);
    CHECK_EQ_U64(im.count, 3);
    CHECK_EQ_U64(im.dll_count, 2);
    CHECK(im.count == 3 && !strcmp(im.entries[2].dll, "HAL.dll") && im.entries[2].iat_rva == 0x1318);
    CHECK(ntl_pe_import_by_iat(&im, 0x1308) && !strcmp(ntl_pe_import_by_iat(&im, 0x1308)->name, "ExBar"));
    ntl_pe_imports_free(&im);

    CHECK_EQ_INT(ntl_pe_relocs_parse(&pe, &r, &n, &err), 0);
    CHECK_EQ_U64(n, 1);
    CHECK(n == 1 && r[0].rva == 0x1700 && r[0].type == NTL_PE_REL_DIR64);
    free(r);

    CHECK_EQ_INT(ntl_pe_codeview(&pe, &cv, &err), 0);
    CHECK(cv.present && cv.age == 7 && !strcmp(cv.pdb, "drv.pdb") && cv.guid[0] == '0');

    CHECK_EQ_INT(ntl_pe_dvrt(&pe, &dv, &err), 0);
    CHECK(dv.present);
    CHECK_EQ_U64(dv.reloc_count, 2);
    CHECK_EQ_U64(dv.fixup_count, 7);
    if (dv.fixup_count == 7) {
        CHECK_EQ_U64(dv.fixups[1].rva, 0x2010);
        CHECK(!dv.fixups[1].indirect_call && dv.fixups[1].iat_index == 1);
        CHECK_EQ_U64(dv.fixups[3].iat_index, NTL_DVRT_IAT_INDEX_NONE);
        CHECK(dv.fixups[6].rva == 0x2070 && dv.fixups[6].indirect_call && dv.fixups[6].rex_w &&
              dv.fixups[6].cfg_check);
    }
    ntl_dvrt_free(&dv);

    CHECK_EQ_INT(ntl_pe_map(&pe, &map, &err), 0);
    CHECK_EQ_U64(map.len, 0x4000);
    CHECK(memcmp(map.data + 0x2000, at(&d, 0x2000), 12) == 0);
    CHECK_EQ_INT(ntl_pe_rebase(&pe, map.data, map.len, 0xfffff80000000000ull, &err), 0);
    CHECK_EQ_U64(ntl_le64(map.data + 0x1700), 0xfffff80000002000ull);
    ntl_buf_free(&map);
    ntl_pe_free(&pe);
}

static void test_dvrt_v2_and_bad(void)
{
    uint8_t t[128] = {0};
    struct ntl_dvrt d;
    struct ntl_error err = {0};

    /* v2: a prologue entry with 3 header bytes, then a SWITCHTABLE entry */
    ntl_put_le32(t, 2);
    ntl_put_le32(t + 4, 28 + 0 + 24 + 12);
    ntl_put_le32(t + 8, 28);       /* HeaderSize: 24 fixed + count byte + 3 bytes */
    ntl_put_le32(t + 12, 0);       /* FixupInfoSize */
    ntl_put_le64(t + 16, 1);       /* RF prologue */
    t[8 + 24] = 3;
    ntl_put_le32(t + 36, 24);
    ntl_put_le32(t + 40, 12);
    ntl_put_le64(t + 44, 5);
    ntl_put_le32(t + 60, 0x3000);
    ntl_put_le32(t + 64, 12);
    ntl_put_le16(t + 68, 0x123 | 7u << 12);
    CHECK_EQ_INT(ntl_dvrt_parse(t, sizeof t, 0x100, 0x5000, true, &d, &err), 0);
    CHECK_EQ_U64(d.reloc_count, 2);
    if (d.reloc_count == 2) {
        CHECK_EQ_U64(d.relocs[0].prologue_size, 3);
        CHECK_EQ_U64(d.relocs[1].symbol, 5);
        CHECK(d.fixup_count == 1 && d.fixups[0].rva == 0x3123 && d.fixups[0].reg_or_type == 7);
    }
    ntl_dvrt_free(&d);

    /* v2 RF epilogue: 2 epilogues of 5 bytes, 3 branch descriptors of 2 bytes */
    memset(t, 0, sizeof t);
    ntl_put_le32(t, 2);
    ntl_put_le32(t + 4, 40);
    ntl_put_le32(t + 8, 40);
    ntl_put_le64(t + 16, 2);
    ntl_put_le32(t + 32, 2);
    t[36] = 5;
    t[37] = 2;
    ntl_put_le16(t + 38, 3);
    CHECK_EQ_INT(ntl_dvrt_parse(t, 48, 0x100, 0x5000, true, &d, &err), 0);
    CHECK(d.reloc_count == 1 && d.relocs[0].epilogue_count == 2 && d.relocs[0].epilogue_size == 5 &&
          d.relocs[0].branch_descriptor_size == 2 && d.relocs[0].branch_descriptor_count == 3);
    ntl_dvrt_free(&d);
    ntl_put_le16(t + 38, 9); /* descriptors overrunning the header */
    CHECK_EQ_INT(ntl_dvrt_parse(t, 48, 0x100, 0x5000, true, &d, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, 0x100 + 8 + 24);
    memset(t, 0, sizeof t);
    ntl_put_le32(t, 2);
    ntl_put_le32(t + 4, 28 + 0 + 24 + 12);
    ntl_put_le32(t + 8, 28);
    ntl_put_le64(t + 16, 1);
    t[8 + 24] = 3;
    ntl_put_le32(t + 36, 24);
    ntl_put_le32(t + 40, 12);
    ntl_put_le64(t + 44, 5);
    ntl_put_le32(t + 60, 0x3000);
    ntl_put_le32(t + 64, 12);
    ntl_put_le16(t + 68, 0x123 | 7u << 12);
    /* Size overrunning the data */
    ntl_put_le32(t + 4, 200);
    CHECK_EQ_INT(ntl_dvrt_parse(t, sizeof t, 0x100, 0x5000, true, &d, &err), NTL_ERR_TRUNCATED);
    CHECK_EQ_U64(err.offset, 0x104);
    /* v1 entry whose BaseRelocSize overruns the table */
    memset(t, 0, sizeof t);
    ntl_put_le32(t, 1);
    ntl_put_le32(t + 4, 40);
    ntl_put_le64(t + 8, 3);
    ntl_put_le32(t + 16, 100);
    CHECK_EQ_INT(ntl_dvrt_parse(t, sizeof t, 0x100, 0x5000, true, &d, &err), NTL_ERR_TRUNCATED);
    CHECK_EQ_U64(err.offset, 0x108);
    /* a block whose SizeOfBlock is not header + whole entries */
    ntl_put_le32(t + 16, 28);
    ntl_put_le32(t + 24, 10);
    CHECK_EQ_INT(ntl_dvrt_parse(t, sizeof t, 0x100, 0x5000, true, &d, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, 0x100 + 8 + 12 + 4);
    /* unknown version */
    ntl_put_le32(t, 9);
    CHECK_EQ_INT(ntl_dvrt_parse(t, sizeof t, 0x100, 0x5000, true, &d, &err), NTL_ERR_UNSUPPORTED);
}

static void test_importopt(void)
{
    struct img k, d;
    struct ntl_pe kpe, dpe;
    struct ntl_buf kmap, dmap;
    struct ntl_iopt_report rep;
    struct ntl_error err = {0};
    const uint64_t kbase = 0xfffff80000000000ull, dbase = 0xfffff80010000000ull;

    build_kernel(&k);
    build_driver(&d, 0x140000000ull);
    CHECK_EQ_INT(ntl_pe_parse(k.b, sizeof k.b, &kpe, &err), 0);
    CHECK_EQ_INT(ntl_pe_parse(d.b, sizeof d.b, &dpe, &err), 0);
    CHECK_EQ_INT(ntl_pe_map(&kpe, &kmap, &err), 0);
    CHECK_EQ_INT(ntl_pe_map(&dpe, &dmap, &err), 0);
    struct ntl_iopt_module mods[2] = {
        {"\\SystemRoot\\system32\\ntoskrnl.exe", &kpe, kmap.data, kmap.len, kbase},
        {"C:/x/drv.sys", &dpe, dmap.data, dmap.len, dbase},
    };
    CHECK_EQ_INT(ntl_importopt_bind(mods, 2, &err), 3);
    CHECK_EQ_U64(ntl_le64(dmap.data + 0x1300), kbase + 0x1800);
    CHECK_EQ_U64(ntl_le64(dmap.data + 0x1318), kbase + 0x1800); /* HalFwd -> ntoskrnl KeFoo */
    CHECK_EQ_INT(ntl_importopt_apply(mods, 2, &rep, &err), 0);
    CHECK_EQ_U64(rep.count, 6);
    CHECK_EQ_U64(rep.patched, 3);
    if (rep.count == 6) {
        const uint8_t *p = dmap.data + 0x2000;
        CHECK_EQ_INT(rep.sites[0].status, NTL_IOPT_PATCHED);
        CHECK(p[0] == 0x4c && p[1] == 0x8b && p[2] == 0x15 && p[7] == 0xe8);
        CHECK_EQ_U64(dbase + 0x200c + (int32_t)ntl_le32(p + 8), kbase + 0x1800);
        p = dmap.data + 0x2010;
        CHECK_EQ_INT(rep.sites[1].status, NTL_IOPT_PATCHED);
        CHECK(p[7] == 0xe9 && dbase + 0x201c + (int32_t)ntl_le32(p + 8) == kbase + 0x1810);
        CHECK_EQ_INT(rep.sites[2].status, NTL_IOPT_PATCHED); /* HAL import via ntoskrnl */
        CHECK_EQ_STR(rep.sites[2].import_dll, "HAL.dll");
        CHECK_EQ_U64(rep.sites[2].target, kbase + 0x1800);
        CHECK_EQ_INT(rep.sites[3].status, NTL_IOPT_SKIP_NO_OPTIMIZE);
        CHECK(dmap.data[0x2030] == 0x48);
        CHECK_EQ_INT(rep.sites[4].status, NTL_IOPT_SKIP_BAD_CODE);
        CHECK(dmap.data[0x2040] == 0x48);
        CHECK_EQ_INT(rep.sites[5].status, NTL_IOPT_SKIP_BAD_IAT_INDEX);
    }
    ntl_iopt_report_free(&rep);

    /* The kernel 3 GB away: beyond rel32 reach. Fresh driver bytes. */
    ntl_buf_free(&dmap);
    CHECK_EQ_INT(ntl_pe_map(&dpe, &dmap, &err), 0);
    mods[1].image = dmap.data;
    mods[1].base = kbase + 0xc0000000ull;
    CHECK_EQ_INT(ntl_importopt_apply(mods, 2, &rep, &err), 0);
    CHECK(rep.count == 6 && rep.sites[0].status == NTL_IOPT_SKIP_OUT_OF_RANGE && rep.patched == 0);
    CHECK(dmap.data[0x2000] == 0x48);
    ntl_iopt_report_free(&rep);

    /* Without the kernel among the modules nothing resolves. */
    CHECK_EQ_INT(ntl_importopt_apply(&mods[1], 1, &rep, &err), 0);
    CHECK(rep.count == 6 && rep.sites[0].status == NTL_IOPT_SKIP_NOT_LOADED);
    ntl_iopt_report_free(&rep);

    /* A site whose instruction reads another slot than its IATIndex says. */
    ntl_put_le32(dmap.data + 0x2003, ntl_le32(dmap.data + 0x2003) + 8);
    mods[1].base = dbase;
    CHECK_EQ_INT(ntl_importopt_apply(mods, 2, &rep, &err), 0);
    CHECK(rep.count == 6 && rep.sites[0].status == NTL_IOPT_SKIP_IAT_MISMATCH);
    ntl_iopt_report_free(&rep);

    /* An import by ordinal (13: the kernel's ordinal-only export) binds. */
    ntl_put_le64(at(&d, 0x1348), 0x8000000000000000ull | 13);
    ntl_buf_free(&dmap);
    CHECK_EQ_INT(ntl_pe_map(&dpe, &dmap, &err), 0);
    mods[1].image = dmap.data;
    CHECK_EQ_INT(ntl_importopt_bind(mods, 2, &err), 3);
    CHECK_EQ_U64(ntl_le64(dmap.data + 0x1308), kbase + 0x1820);

    ntl_buf_free(&kmap);
    ntl_buf_free(&dmap);
    ntl_pe_free(&kpe);
    ntl_pe_free(&dpe);
}

static void test_bad_input(void)
{
    struct img d;
    struct ntl_pe pe;
    struct ntl_pe_reloc *r;
    size_t n;
    struct ntl_error err = {0};

    build_driver(&d, 0x140000000ull);
    /* every truncation: headers fail cleanly, later ones fail on the section */
    for (size_t len = 0; len < sizeof d.b; len += len < 0x200 ? 1 : 0x40) {
        int rc = ntl_pe_parse(d.b, len, &pe, &err);
        CHECK(rc < 0);
        if (rc >= 0)
            ntl_pe_free(&pe);
    }
    CHECK_EQ_INT(ntl_pe_parse(d.b, 0x300, &pe, &err), NTL_ERR_TRUNCATED);
    CHECK_EQ_U64(err.offset, SECHDR + 16);
    CHECK(strstr(err.message, "beyond the end of the file") != NULL);
    CHECK_EQ_INT(ntl_pe_parse(d.b, 10, &pe, &err), NTL_ERR_TRUNCATED);

    /* e_lfanew past the end */
    ntl_put_le32(d.b + 0x3c, 0x7ffffff0);
    CHECK_EQ_INT(ntl_pe_parse(d.b, sizeof d.b, &pe, &err), NTL_ERR_TRUNCATED);
    CHECK_EQ_U64(err.offset, 0x3c);
    ntl_put_le32(d.b + 0x3c, 0x40);

    /* a section beyond SizeOfImage */
    ntl_put_le32(d.b + SECHDR + 12, 0x3000);
    CHECK_EQ_INT(ntl_pe_parse(d.b, sizeof d.b, &pe, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, SECHDR + 12);
    ntl_put_le32(d.b + SECHDR + 12, SEC_RVA);

    /* a relocation block with a bad size */
    CHECK_EQ_INT(ntl_pe_parse(d.b, sizeof d.b, &pe, &err), 0);
    ntl_put_le32(at(&d, 0x1784), 7);
    CHECK_EQ_INT(ntl_pe_relocs_parse(&pe, &r, &n, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, SEC_RAW + 0x784);
    /* a directory outside every section */
    set_dir(&d, NTL_PE_DIR_BASERELOC, 0x9000, 12);
    pe.dirs[NTL_PE_DIR_BASERELOC].rva = 0x9000;
    CHECK(ntl_pe_relocs_parse(&pe, &r, &n, &err) < 0);
    CHECK(strstr(err.message, "0x9000") != NULL);
    /* the DVRT section index past the section table */
    ntl_put_le16(at(&d, 0x1500) + 228, 5);
    struct ntl_dvrt dv;
    CHECK_EQ_INT(ntl_pe_dvrt(&pe, &dv, &err), NTL_ERR_FORMAT);
    /* the DVRT Size overrunning its section */
    ntl_put_le16(at(&d, 0x1500) + 228, 1);
    ntl_put_le32(at(&d, 0x1604), 0x10000);
    CHECK_EQ_INT(ntl_pe_dvrt(&pe, &dv, &err), NTL_ERR_TRUNCATED);
    CHECK_EQ_U64(err.offset, SEC_RAW + 0x604);
    ntl_pe_free(&pe);
}

/* A resource directory at 0x2000: types 11 (numbered) and "WEVT" (named),
 * each with one name and one language; the named type's data is "CRIM". */
static void put_res_dir(struct img *m, uint32_t off, uint32_t name, uint32_t to)
{
    uint8_t *p = at(m, 0x2000 + off);
    ntl_put_le16(p + (name & 0x80000000u ? 12 : 14), 1);
    ntl_put_le32(p + 16, name);
    ntl_put_le32(p + 20, to);
}

static void test_resources(void)
{
    struct img m;
    struct ntl_pe pe;
    struct ntl_error err;
    const uint8_t *d;
    size_t n;

    img_init(&m, 0x140000000ull);
    uint8_t *root = at(&m, 0x2000);
    ntl_put_le16(root + 12, 1);           /* one named, one numbered type */
    ntl_put_le16(root + 14, 1);
    ntl_put_le32(root + 16, 0x80000000u | 0x200);
    ntl_put_le32(root + 20, 0x80000000u | 0x40);
    ntl_put_le32(root + 24, 11);
    ntl_put_le32(root + 28, 0x80000000u | 0x80);
    put_res_dir(&m, 0x40, 1, 0x80000000u | 0x60);
    put_res_dir(&m, 0x60, 0x409, 0x100);
    put_res_dir(&m, 0x80, 1, 0x80000000u | 0xa0);
    put_res_dir(&m, 0xa0, 0x409, 0x110);
    ntl_put_le32(at(&m, 0x2100), 0x2300);
    ntl_put_le32(at(&m, 0x2104), 4);
    ntl_put_le32(at(&m, 0x2110), 0x2308);
    ntl_put_le32(at(&m, 0x2114), 2);
    ntl_put_le16(at(&m, 0x2200), 4);
    memcpy(at(&m, 0x2202), "W\0E\0V\0T\0", 8);
    memcpy(at(&m, 0x2300), "CRIM", 4);
    memcpy(at(&m, 0x2308), "MT", 2);
    set_dir(&m, NTL_PE_DIR_RESOURCE, 0x2000, 0x400);
    CHECK_EQ_INT(ntl_pe_parse(m.b, sizeof m.b, &pe, &err), 0);
    CHECK_EQ_INT(ntl_pe_resource_find(&pe, "WEVT", 0, &d, &n, &err), 1);
    CHECK(n == 4 && !memcmp(d, "CRIM", 4));
    CHECK_EQ_INT(ntl_pe_resource_find(&pe, NULL, NTL_PE_RT_MESSAGETABLE, &d, &n, &err), 1);
    CHECK(n == 2 && !memcmp(d, "MT", 2));
    CHECK_EQ_INT(ntl_pe_resource_find(&pe, "WEVT_TEMPLATE", 0, &d, &n, &err), 0);
    CHECK_EQ_INT(ntl_pe_resource_find(&pe, NULL, 3, &d, &n, &err), 0);
    /* A language entry pointing past the directory, data past the file, a
     * loop back to the root where data belongs. */
    ntl_put_le32(at(&m, 0x2000 + 0x60 + 20), 0x3f8);
    CHECK_EQ_INT(ntl_pe_resource_find(&pe, "WEVT", 0, &d, &n, &err), NTL_ERR_FORMAT);
    ntl_put_le32(at(&m, 0x2000 + 0x60 + 20), 0x100);
    ntl_put_le32(at(&m, 0x2104), 0x10000);
    CHECK(ntl_pe_resource_find(&pe, "WEVT", 0, &d, &n, &err) < 0);
    ntl_put_le32(at(&m, 0x2000 + 0x60 + 20), 0x80000000u);
    CHECK_EQ_INT(ntl_pe_resource_find(&pe, "WEVT", 0, &d, &n, &err), NTL_ERR_FORMAT);
    ntl_pe_free(&pe);
}

int main(void)
{
    test_headers_exports();
    test_driver_dirs();
    test_dvrt_v2_and_bad();
    test_importopt();
    test_bad_input();
    test_resources();
    return check_exit();
}
