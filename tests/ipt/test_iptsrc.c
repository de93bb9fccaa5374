/* lib/iptsrc's names for addresses (native and under Wine): modules as
 * ranges, the last added winning where they overlap, functions from a
 * lib/profile table, and the four ways a name is written; the processes
 * and CR3s a real kernel trace had at a moment. */
#include <string.h>

#include "check.h"

#include "ntlens/ipt_sources.h"

static void test_names(void)
{
    struct ntl_iptsrc_syms *s;
    struct ntl_profile_symtab *t;
    struct ntl_iptsrc_place p;
    struct ntl_error err;
    char name[64];

    CHECK_EQ_INT(ntl_iptsrc_syms_new(&s, &err), 0);
    CHECK_EQ_INT(ntl_profile_symtab_new(&t, &err), 0);
    CHECK_EQ_INT(ntl_profile_symtab_add(t, "KeBugCheck", 0x1000, 0, &err), 0);
    CHECK_EQ_INT(ntl_profile_symtab_add(t, "ExAllocatePool2", 0x2000, 0x10, &err), 0);
    CHECK_EQ_INT(ntl_iptsrc_syms_add(s, "\\\\SystemRoot\\\\system32\\\\ntoskrnl.exe", 0xfffff80000000000ull,
                                     0x100000, t, &err), 0);
    ntl_iptsrc_syms_name(s, 0xfffff80000001000ull, name, sizeof name);
    CHECK_EQ_STR(name, "ntoskrnl.exe!KeBugCheck");
    ntl_iptsrc_syms_name(s, 0xfffff80000001abcull, name, sizeof name);
    CHECK_EQ_STR(name, "ntoskrnl.exe!KeBugCheck+0xabc");
    /* Past a sized function: the module alone. */
    ntl_iptsrc_syms_name(s, 0xfffff80000002010ull, name, sizeof name);
    CHECK_EQ_STR(name, "ntoskrnl.exe+0x2010");
    ntl_iptsrc_syms_name(s, 0xfffff80000000010ull, name, sizeof name);
    CHECK_EQ_STR(name, "ntoskrnl.exe+0x10");
    ntl_iptsrc_syms_name(s, 0x1234, name, sizeof name);
    CHECK_EQ_STR(name, "0x1234");
    CHECK(!ntl_iptsrc_syms_find(s, 0xfffff80000100000ull, &p) && !p.module);

    /* A module added later over part of it names that part. */
    CHECK_EQ_INT(ntl_iptsrc_syms_add(s, "/lib/patch.bin", 0xfffff80000001800ull, 0x100, NULL, &err), 0);
    CHECK(ntl_iptsrc_syms_find(s, 0xfffff80000001810ull, &p));
    CHECK_EQ_STR(p.module, "patch.bin");
    CHECK(p.function == NULL);
    CHECK(ntl_iptsrc_syms_find(s, 0xfffff80000001000ull, &p));
    CHECK_EQ_STR(p.function, "KeBugCheck");
    CHECK(ntl_iptsrc_syms_find(s, 0xfffff80000001820ull, &p));
    CHECK_EQ_STR(p.module, "patch.bin");

    CHECK_EQ_INT(ntl_iptsrc_syms_add(s, "empty", 0x5000, 0, NULL, &err), NTL_ERR_ARGUMENT);
    CHECK_EQ_INT(ntl_iptsrc_syms_add(s, "wraps", ~0ull - 4, 0x10, NULL, &err), NTL_ERR_ARGUMENT);
    /* Cut to the buffer, always terminated. */
    ntl_iptsrc_syms_name(s, 0xfffff80000001abcull, name, 8);
    CHECK_EQ_STR(name, "ntoskrn");
    ntl_iptsrc_syms_free(s);
}

/* Two processes' modules at one address, named in their own address space
 * only (CR3s compared without the PCID); a kernel module in every one. */
static void test_spaces(void)
{
    struct ntl_iptsrc_syms *s;
    struct ntl_error err;
    char name[64];
    CHECK_EQ_INT(ntl_iptsrc_syms_new(&s, &err), 0);
    CHECK_EQ_INT(ntl_iptsrc_syms_add(s, "ntoskrnl.exe", 0xfffff80000000000ull, 0x1000, NULL, &err),
                 0);
    ntl_iptsrc_syms_add_to(s, true, 0x1aa000);
    CHECK_EQ_INT(ntl_iptsrc_syms_add(s, "one.dll", 0x10000, 0x1000, NULL, &err), 0);
    ntl_iptsrc_syms_add_to(s, true, 0x2bb000);
    CHECK_EQ_INT(ntl_iptsrc_syms_add(s, "two.dll", 0x10000, 0x1000, NULL, &err), 0);
    ntl_iptsrc_syms_add_to(s, false, 0);
    ntl_iptsrc_syms_name(s, 0x10010, name, sizeof name);
    CHECK_EQ_STR(name, "0x10010"); /* no space yet */
    ntl_iptsrc_syms_switch(s, 0x1aa001);
    ntl_iptsrc_syms_name(s, 0x10010, name, sizeof name);
    CHECK_EQ_STR(name, "one.dll+0x10");
    ntl_iptsrc_syms_switch(s, 0x2bb000);
    ntl_iptsrc_syms_name(s, 0x10010, name, sizeof name);
    CHECK_EQ_STR(name, "two.dll+0x10");
    ntl_iptsrc_syms_name(s, 0xfffff80000000010ull, name, sizeof name);
    CHECK_EQ_STR(name, "ntoskrnl.exe+0x10");
    ntl_iptsrc_syms_switch(s, 0x1aa000);
    ntl_iptsrc_syms_name(s, 0x10020, name, sizeof name);
    CHECK_EQ_STR(name, "one.dll+0x20");
    ntl_iptsrc_syms_switch(s, 0x3cc000);
    ntl_iptsrc_syms_name(s, 0x10010, name, sizeof name);
    CHECK_EQ_STR(name, "0x10010");
    ntl_iptsrc_syms_free(s);
}

/* A dump that does not parse: the status, the offset. */
static void test_bad_dump(void)
{
    struct ntl_ipt_image *img;
    struct ntl_error err;
    uint8_t junk[64] = "MDMP";
    CHECK_EQ_INT(ntl_ipt_image_new(&img, &err), 0);
    int rc = ntl_iptsrc_add_dump_bytes(img, NULL, junk, 8, &err);
    CHECK(rc == NTL_ERR_TRUNCATED && err.status == rc);
    CHECK_EQ_U64(ntl_ipt_image_sections(img), 0);
    ntl_ipt_image_free(img);
}

/* net.4.5.2.x64.etl (../shared/data/etl): 32 processes with a CR3 at its
 * end (Process DCStart/DCEnd v4, Idle and System among them), and
 * Test.x64.exe (pid 3676, CR3 0x558fb000) started at clock 1969940633 and
 * ended at 2024631721, as `ntlens etl events --format jsonl` lists them. No
 * folder: no module, so no space. */
static void test_etl_processes(void)
{
    struct ntl_ipt_spaces *sp;
    struct ntl_iptsrc_spaces_info info;
    struct ntl_error err;
    struct ntl_iptsrc_spaces_options o = {
        .etl_path = check_data_path("etl/net.4.5.2.x64.etl"), .at = UINT64_MAX, .process = 3676};
    static const uint64_t at[] = {UINT64_MAX, 2000000000, 1969940632, 2024631721};
    static const size_t processes[] = {32, 33, 32, 32};
    CHECK_EQ_INT(ntl_ipt_spaces_new(&sp, &err), 0);
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        o.at = at[i];
        CHECK_EQ_INT(ntl_iptsrc_add_etl_spaces(sp, NULL, &o, &info, &err), 0);
        CHECK_EQ_U64(info.processes, processes[i]);
        CHECK(info.process_found == (i == 1));
        CHECK_EQ_U64(info.process_cr3, i == 1 ? 0x558fb000 : 0);
        CHECK_EQ_U64(info.spaces + info.modules, 0);
    }
    CHECK_EQ_U64(ntl_ipt_spaces_count(sp), 0);
    o.etl_path = check_data_path("etl/no-such.etl");
    CHECK(ntl_iptsrc_add_etl_spaces(sp, NULL, &o, &info, &err) < 0 &&
          strstr(err.message, "no-such"));
    ntl_ipt_spaces_free(sp);
}

int main(void)
{
    test_names();
    test_spaces();
    test_bad_dump();
    test_etl_processes();
    return check_exit();
}
