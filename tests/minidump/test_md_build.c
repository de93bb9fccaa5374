/* The dump build pipeline through ntlens/minidump_build.h: a kernel and a
 * driver built byte by byte (tests/pe), load addresses from a trace built
 * byte by byte (tests/etl), the caller's bases, search directories,
 * all_kernel, code-only dumps, notes instead of warnings, and each failure's
 * status. Runs in its build directory, where it writes its files. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "../etl/etl_gen.h"
#include "../pe/pe_gen.h"
#include "ntlens/minidump_build.h"
#include "ntlens/reader.h"

#define KBASE 0xfffff80000000000ull
#define DBASE 0xfffff80010000000ull

/* ntoskrnl.exe and drv.sys in ".", a trace loading both (and missing.sys)
 * at their bases, the driver with SizeOfImage 0x5000 in the trace. */
static void write_inputs(void)
{
    struct img k, d;
    struct gen g;
    struct ntl_error err = {0};
    build_kernel(&k);
    build_driver(&d, 0x140000000ull);
    CHECK_EQ_INT(ntl_file_write("ntoskrnl.exe", k.b, sizeof k.b, &err), 0);
    CHECK_EQ_INT(ntl_file_write("drv.sys", d.b, sizeof d.b, &err), 0);
    gen_init(&g, 0x10000, 8, 0x10001, 0, 10000000, 133000000000000000ull, 1, "NT Kernel Logger",
             "kernel.etl");
    gen_image(&g, false, false, true, 3, 1, KBASE, 0x4000, 0, 0, 0, 0x140000000,
              "\\SystemRoot\\system32\\ntoskrnl.exe");
    gen_image(&g, false, false, true, 3, 2, DBASE, 0x5000, 0, 0, 0, 0x140000000,
              "\\SystemRoot\\system32\\drivers\\drv.sys");
    gen_image(&g, false, false, true, 3, 3, DBASE + 0x100000, 0x1000, 0, 0, 0, 0x140000000,
              "\\SystemRoot\\system32\\drivers\\missing.sys");
    gen_finish(&g);
    CHECK_EQ_INT(ntl_file_write("kernel.etl", g.file.data, g.file.len, &err), 0);
    gen_free(&g);
}

static const struct ntl_md_note *find_note(const struct ntl_md_build *b, enum ntl_md_note_kind k)
{
    for (size_t i = 0; i < b->note_count; i++)
        if (b->notes[i].kind == k)
            return &b->notes[i];
    return NULL;
}

/* Bases from the trace; the dump reads back with both modules patched. */
static void test_from_trace(void)
{
    static const char *const files[] = {"ntoskrnl.exe", "drv.sys"};
    struct ntl_md_build_options o = {.etl_path = "kernel.etl", .modules = files, .module_count = 2,
                                     .import_optimization = true};
    struct ntl_md_build b;
    struct ntl_minidump md;
    struct ntl_error err = {0};
    const struct ntl_md_note *n;
    uint8_t code[12];

    CHECK_EQ_INT(ntl_md_build(&o, &b, &err), 0);
    CHECK_EQ_U64(b.module_count, 2);
    CHECK_EQ_U64(b.modules[1].base, DBASE);
    CHECK_EQ_INT(b.modules[1].origin, NTL_MD_ORIGIN_TRACE);
    CHECK_EQ_STR(b.modules[1].dump_name, "\\SystemRoot\\system32\\drivers\\drv.sys");
    CHECK_EQ_U64(b.report.count, 6);
    CHECK_EQ_U64(b.report.patched, 3);
    n = find_note(&b, NTL_MD_NOTE_SIZE_MISMATCH);
    CHECK(n && !strcmp(n->subject, "drv.sys") && n->value == 0x4000 && n->expected == 0x5000);
    CHECK(!find_note(&b, NTL_MD_NOTE_NOT_IN_SEARCH)); /* not asked for all_kernel */
    CHECK_EQ_INT(ntl_md_parse(b.dump.data, b.dump.len, &md, &err), 0);
    CHECK_EQ_U64(md.module_count, 2);
    CHECK_EQ_U64(ntl_md_read(&md, DBASE + 0x2000, code, sizeof code), sizeof code);
    CHECK(code[0] == 0x4c && code[1] == 0x8b && code[7] == 0xe8); /* mov r10; call */
    CHECK_EQ_U64(md.sys.major, 10);
    ntl_md_free(&md);
    ntl_md_build_free(&b);
}

/* all_kernel finds the trace's modules in a search directory, notes the one
 * it lacks; a base overrides the trace; code_only writes less. */
static void test_all_kernel(void)
{
    static const char *const dirs[] = {"."};
    static const struct ntl_md_build_base bases[] = {{"drv", DBASE + 0x200000}, {"nosuch.sys", 1}};
    struct ntl_md_build_options o = {.etl_path = "kernel.etl", .search_dirs = dirs,
                                     .search_dir_count = 1, .all_kernel = true, .bases = bases,
                                     .base_count = 2, .code_only = true};
    struct ntl_md_build b;
    struct ntl_error err = {0};
    const struct ntl_md_note *n;

    struct img d;
    build_driver(&d, 0x140000000ull);
    ntl_put_le32(d.b + SECHDR + 36, 0x40000040); /* initialized data, readable */
    CHECK_EQ_INT(ntl_file_write("drv.sys", d.b, sizeof d.b, &err), 0);
    CHECK_EQ_INT(ntl_md_build(&o, &b, &err), 0);
    CHECK_EQ_U64(b.module_count, 2);
    CHECK_EQ_U64(b.report.count, 0); /* import optimization off */
    CHECK_EQ_U64(b.modules[1].base, DBASE + 0x200000);
    CHECK_EQ_INT(b.modules[1].origin, NTL_MD_ORIGIN_BASE);
    n = find_note(&b, NTL_MD_NOTE_NOT_IN_SEARCH);
    CHECK(n && strstr(n->subject, "missing.sys") && n->address == DBASE + 0x100000);
    n = find_note(&b, NTL_MD_NOTE_BASE_UNUSED);
    CHECK(n && !strcmp(n->subject, "nosuch.sys"));
    /* The driver's section is now data: only its headers' page is written. */
    struct ntl_minidump md;
    CHECK_EQ_INT(ntl_md_parse(b.dump.data, b.dump.len, &md, &err), 0);
    CHECK_EQ_U64(md.range_count, 2);
    for (size_t i = 0; i < md.range_count; i++)
        if (md.ranges[i].start == DBASE + 0x200000)
            CHECK_EQ_U64(md.ranges[i].size, 0x1000);
        else
            CHECK(md.ranges[i].start == KBASE && md.ranges[i].size == 0x4000);
    ntl_md_free(&md);
    ntl_md_build_free(&b);
}

/* Each failure: its status, err naming the file, nothing returned. */
static void test_failures(void)
{
    static const char *const drv[] = {"drv.sys"}, *const none[] = {"none.sys"};
    static const char *const dirs[] = {"."};
    static const struct ntl_md_build_base overlap[] = {{"drv.sys", KBASE + 0x1000}};
    struct ntl_md_build_options o = {.modules = drv, .module_count = 1};
    struct ntl_md_build b;
    struct ntl_error err = {0};

    CHECK_EQ_INT(ntl_md_build(&o, &b, &err), NTL_MD_NO_BASE);
    CHECK(strstr(err.message, "drv.sys") && strstr(err.message, "no trace"));
    CHECK(b.module_count == 0 && b.dump.len == 0);
    o.modules = none;
    o.search_dirs = dirs;
    o.search_dir_count = 1;
    CHECK_EQ_INT(ntl_md_build(&o, &b, &err), NTL_MD_NO_MODULE_FILE);
    CHECK(strstr(err.message, "none.sys") != NULL);
    o.module_count = 0;
    CHECK_EQ_INT(ntl_md_build(&o, &b, &err), NTL_ERR_ARGUMENT);
    o.all_kernel = true;
    CHECK_EQ_INT(ntl_md_build(&o, &b, &err), NTL_ERR_ARGUMENT); /* no trace */
    o.all_kernel = false;
    o.etl_path = "no-such.etl";
    o.modules = drv;
    o.module_count = 1;
    CHECK_EQ_INT(ntl_md_build(&o, &b, &err), NTL_ERR_IO);
    CHECK(strstr(err.message, "no-such.etl") != NULL);
    /* Two modules over each other: built, with a note. */
    static const char *const both[] = {"ntoskrnl.exe", "drv.sys"};
    o.etl_path = "kernel.etl";
    o.modules = both;
    o.module_count = 2;
    o.bases = overlap;
    o.base_count = 1;
    CHECK_EQ_INT(ntl_md_build(&o, &b, &err), 0);
    const struct ntl_md_note *n = find_note(&b, NTL_MD_NOTE_OVERLAP);
    CHECK(n && !strcmp(n->subject, "ntoskrnl.exe") && !strcmp(n->other, "drv.sys"));
    ntl_md_build_free(&b);
    CHECK_EQ_STR(ntl_md_status_name(NTL_MD_NO_BASE), "no load address");
    CHECK_EQ_STR(ntl_md_status_name(NTL_ERR_IO), ntl_status_name(NTL_ERR_IO));
}

static void test_names(void)
{
    const char *const dirs[] = {"no-such-dir", "."};
    char *p = ntl_md_find_file(dirs, 2, "C:\\Windows\\DRV.SYS");
    CHECK(p && !strcmp(p, "./drv.sys"));
    free(p);
    CHECK(ntl_md_find_file(dirs, 2, "absent.sys") == NULL);
    CHECK(ntl_md_same_module("\\SystemRoot\\system32\\NTOSKRNL.EXE", "x/ntoskrnl"));
    CHECK(!ntl_md_same_module("ntoskrnl.exe", "ntoskrnl.sys"));
    CHECK_EQ_STR(ntl_md_base_name("a\\b/c.sys"), "c.sys");
}

int main(void)
{
    write_inputs();
    test_from_trace();
    test_all_kernel();
    test_failures();
    test_names();
    return check_exit();
}
