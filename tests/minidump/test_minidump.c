/* lib/minidump: a written dump read back (streams, modules, CodeView,
 * memory across ranges, relocation), and malformed dumps (errors with
 * offsets, never a crash). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ntlens/minidump.h"
#include "ntlens/reader.h"

static uint8_t mem_a[0x3000], mem_b[0x1000];
static const uint8_t cv[] = "RSDS\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10"
                            "\x02\0\0\0drv.pdb";

static void build(struct ntl_buf *out)
{
    struct ntl_md_module_spec mods[3] = {
        {"\\SystemRoot\\system32\\ntoskrnl.exe", 0xfffff80000000000ull, 0x3000, 0x1234, 0x5678,
         NULL, 0, mem_a, sizeof mem_a, NULL, 0},
        {"\\SystemRoot\\system32\\drivers\\caf\xc3\xa9.sys", 0xfffff80000003000ull, 0x1000, 0, 0x9abc,
         cv, sizeof cv, mem_b, sizeof mem_b, NULL, 0},
        {"nomemory.sys", 0xfffff80001000000ull, 0x2000, 0, 0, NULL, 0, NULL, 0, NULL, 0},
    };
    struct ntl_md_spec spec = {.timestamp = 0x61000000, .arch = NTL_MD_ARCH_AMD64, .major = 10,
                               .build = 22621, .processors = 8, .product_type = 1,
                               .process_id = 4, .thread_id = 8, .thread_ip = 0xfffff80000001000ull,
                               .modules = mods, .module_count = 3};
    struct ntl_error err = {0};
    for (size_t i = 0; i < sizeof mem_a; i++)
        mem_a[i] = (uint8_t)(i * 7);
    memset(mem_b, 0xab, sizeof mem_b);
    CHECK_EQ_INT(ntl_md_write(&spec, out, &err), 0);
}

static void test_roundtrip(void)
{
    struct ntl_buf b;
    struct ntl_minidump md;
    struct ntl_error err = {0};
    uint8_t buf[0x20];

    build(&b);
    CHECK_EQ_INT(ntl_md_parse(b.data, b.len, &md, &err), 0);
    CHECK_EQ_U64(md.stream_count, 5);
    CHECK_EQ_U64(md.version & 0xffff, NTL_MD_VERSION);
    CHECK_EQ_U64(md.timestamp, 0x61000000);
    CHECK(md.sys.present && md.sys.arch == NTL_MD_ARCH_AMD64 && md.sys.build == 22621 &&
          md.sys.processors == 8 && md.sys.platform == 2);
    CHECK(md.has_misc && md.process_id == 4);
    CHECK(md.thread_count == 1 && md.threads[0].id == 8 && md.threads[0].context_size == 1232);
    /* The writer's CONTEXT carries thread_ip at Rip (offset 0xf8). */
    CHECK(md.thread_count == 1 && md.threads[0].context_rva + 1232ull <= b.len &&
          ntl_le64(b.data + md.threads[0].context_rva + 0xf8) == 0xfffff80000001000ull);
    CHECK_EQ_U64(md.module_count, 3);
    if (md.module_count == 3) {
        CHECK_EQ_STR(md.modules[0].name, "\\SystemRoot\\system32\\ntoskrnl.exe");
        CHECK_EQ_U64(md.modules[0].checksum, 0x1234);
        CHECK(!md.modules[0].has_cv);
        CHECK_EQ_STR(md.modules[1].name, "\\SystemRoot\\system32\\drivers\\caf\xc3\xa9.sys");
        CHECK(md.modules[1].has_cv && md.modules[1].age == 2 && md.modules[1].guid[15] == 0x10);
        CHECK_EQ_STR(md.modules[1].pdb, "drv.pdb");
    }
    CHECK(md.memory64 && md.range_count == 2);
    /* a read spanning the two adjacent ranges */
    CHECK_EQ_U64(ntl_md_read(&md, 0xfffff80000002ff0ull, buf, sizeof buf), sizeof buf);
    CHECK(buf[0] == (uint8_t)(0x2ff0 * 7) && buf[0x10] == 0xab);
    /* a read running off the end of the memory */
    CHECK_EQ_U64(ntl_md_read(&md, 0xfffff80000003ff8ull, buf, sizeof buf), 8);
    CHECK_EQ_U64(ntl_md_read(&md, 0xfffff80001000000ull, buf, sizeof buf), 0);
    CHECK(ntl_md_module_at(&md, 0xfffff80000003123ull) == &md.modules[1]);
    CHECK(ntl_md_module_find(&md, "CAF\xc3\xa9.sys") == &md.modules[1]);
    CHECK(ntl_md_module_find(&md, "ntoskrnl.exe") == &md.modules[0]);
    ntl_md_free(&md);

    /* relocate the driver */
    CHECK_EQ_INT(ntl_md_relocate(b.data, b.len, "caf\xc3\xa9.sys", 0xfffff80200000000ull, &err), 1);
    CHECK_EQ_INT(ntl_md_parse(b.data, b.len, &md, &err), 0);
    CHECK_EQ_U64(md.modules[1].base, 0xfffff80200000000ull);
    CHECK_EQ_U64(ntl_md_read(&md, 0xfffff80200000000ull, buf, 4), 4);
    CHECK(buf[0] == 0xab);
    CHECK_EQ_U64(ntl_md_read(&md, 0xfffff80000002ff0ull, buf, sizeof buf), 0x10);
    ntl_md_free(&md);
    CHECK_EQ_INT(ntl_md_relocate(b.data, b.len, "nosuch.sys", 0, &err), NTL_ERR_NOT_FOUND);
    ntl_buf_free(&b);
}

static void test_ranges(void)
{
    static const uint64_t parts[2][2] = {{0, 0x1000}, {0x2000, 0x800}};
    static const uint64_t outside[1][2] = {{0x2000, 0x1001}};
    struct ntl_md_module_spec m = {"k.sys", 0x10000, 0x3000, 0, 0, NULL, 0, mem_a, sizeof mem_a,
                                   parts, 2};
    struct ntl_md_spec spec = {.arch = NTL_MD_ARCH_AMD64, .modules = &m, .module_count = 1};
    struct ntl_buf b;
    struct ntl_minidump md;
    struct ntl_error err = {0};
    uint8_t x[4];

    CHECK_EQ_INT(ntl_md_write(&spec, &b, &err), 0);
    CHECK_EQ_INT(ntl_md_parse(b.data, b.len, &md, &err), 0);
    CHECK_EQ_U64(md.range_count, 2);
    CHECK(md.range_count == 2 && md.ranges[1].start == 0x12000 && md.ranges[1].size == 0x800);
    CHECK_EQ_U64(ntl_md_read(&md, 0x12004, x, 4), 4);
    CHECK(x[0] == (uint8_t)(0x2004 * 7));
    CHECK_EQ_U64(ntl_md_read(&md, 0x11000, x, 4), 0); /* the gap */
    ntl_md_free(&md);
    CHECK_EQ_INT(ntl_md_relocate(b.data, b.len, "K.SYS", 0x50000, &err), 2);
    ntl_buf_free(&b);
    m.ranges = outside;
    m.range_count = 1;
    CHECK_EQ_INT(ntl_md_write(&spec, &b, &err), NTL_ERR_ARGUMENT);
    ntl_buf_free(&b);
}

static void test_bad(void)
{
    struct ntl_buf b;
    struct ntl_minidump md;
    struct ntl_error err = {0};
    uint32_t dir, mem = 0;

    build(&b);
    /* every truncation fails cleanly or parses a consistent prefix */
    for (size_t len = 0; len < b.len; len += len < 0x1000 ? 1 : 0x100) {
        int rc = ntl_md_parse(b.data, len, &md, &err);
        if (rc >= 0)
            ntl_md_free(&md);
        CHECK(rc < 0);
    }
    CHECK_EQ_INT(ntl_md_parse(b.data, 16, &md, &err), NTL_ERR_TRUNCATED);
    dir = ntl_le32(b.data + 12);
    /* the directory outside the file */
    ntl_put_le32(b.data + 12, 0xfffffff0);
    CHECK_EQ_INT(ntl_md_parse(b.data, b.len, &md, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, 12);
    ntl_put_le32(b.data + 12, dir);
    /* a stream outside the file */
    ntl_put_le32(b.data + dir + 4, 0x7fffffff);
    CHECK_EQ_INT(ntl_md_parse(b.data, b.len, &md, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, dir);
    ntl_put_le32(b.data + dir + 4, 52);
    /* a memory range whose bytes lie outside the file */
    for (int i = 0; i < 5; i++)
        if (ntl_le32(b.data + dir + 12 * i) == NTL_MD_MEMORY64_LIST)
            mem = ntl_le32(b.data + dir + 12 * i + 8);
    CHECK(mem != 0);
    ntl_put_le64(b.data + mem + 16 + 8, 0x100000000ull);
    CHECK_EQ_INT(ntl_md_parse(b.data, b.len, &md, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, mem + 16);
    ntl_put_le64(b.data + mem, 0x1000000000ull); /* descriptor count overrunning the stream */
    CHECK_EQ_INT(ntl_md_parse(b.data, b.len, &md, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, mem);
    /* not a minidump */
    b.data[0] = 'X';
    CHECK_EQ_INT(ntl_md_parse(b.data, b.len, &md, &err), NTL_ERR_FORMAT);
    ntl_buf_free(&b);
}

/* Odd but readable: each is read on and noted with its file offset. */
static void test_irregular(void)
{
    struct ntl_buf b;
    struct ntl_minidump md;
    struct ntl_error err = {0};
    uint32_t dir, mods = 0, mem = 0, thr = 0;
    uint8_t entry[12];

    build(&b);
    CHECK_EQ_INT(ntl_md_parse(b.data, b.len, &md, &err), 0);
    CHECK_EQ_U64(md.irregular_count, 0);
    ntl_md_free(&md);
    dir = ntl_le32(b.data + 12);
    for (uint32_t i = 0; i < 5; i++) {
        uint32_t type = ntl_le32(b.data + dir + 12 * i);
        if (type == NTL_MD_MODULE_LIST)
            mods = ntl_le32(b.data + dir + 12 * i + 8);
        if (type == NTL_MD_MEMORY64_LIST)
            mem = i;
        if (type == NTL_MD_THREAD_LIST)
            thr = i;
    }
    CHECK(mods != 0 && mem != thr);
    /* the Memory64List entry over the ThreadList one: its ranges once */
    memcpy(entry, b.data + dir + 12 * thr, 12);
    memcpy(b.data + dir + 12 * thr, b.data + dir + 12 * mem, 12);
    CHECK_EQ_INT(ntl_md_parse(b.data, b.len, &md, &err), 0);
    CHECK(md.range_count == 2 && md.irregular_count == 1);
    CHECK_EQ_U64(md.irregular[0].offset, dir + 12 * (mem > thr ? mem : thr));
    ntl_md_free(&md);
    memcpy(b.data + dir + 12 * thr, entry, 12);
    /* a module of SizeOfImage 0 */
    ntl_put_le32(b.data + mods + 4 + 8, 0);
    CHECK_EQ_INT(ntl_md_parse(b.data, b.len, &md, &err), 0);
    CHECK(md.module_count == 3 && md.irregular_count == 1);
    CHECK_EQ_U64(md.irregular[0].offset, mods + 4 + 8);
    ntl_md_free(&md);
    /* a ModuleNameRva outside the file: the error is at the field */
    ntl_put_le32(b.data + mods + 4 + 20, 0x80000000u);
    CHECK_EQ_INT(ntl_md_parse(b.data, b.len, &md, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, mods + 4 + 20);
    CHECK(strstr(err.message, "RVA 0x80000000 (outside the file of size") != NULL);
    /* no streams at all */
    ntl_put_le32(b.data + 8, 0);
    CHECK_EQ_INT(ntl_md_parse(b.data, b.len, &md, &err), 0);
    CHECK(md.stream_count == 0 && md.irregular_count == 1 && md.irregular[0].offset == 8);
    ntl_md_free(&md);
    ntl_buf_free(&b);
}

int main(void)
{
    test_roundtrip();
    test_ranges();
    test_bad();
    test_irregular();
    return check_exit();
}
