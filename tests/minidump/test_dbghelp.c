/* Windows' own minidump reader and writer (Wine's dbghelp under Wine):
 * MiniDumpReadDumpStream must read the module, memory and system streams of
 * a dump lib/minidump writes, and lib/minidump must read the dump
 * MiniDumpWriteDump writes of this very process. */
#include <windows.h>
#include <dbghelp.h>
#include <stdbool.h>
#include <stdio.h>
#include <wchar.h>
#include <string.h>

#include "check.h"
#include "ntlens/buf.h"
#include "ntlens/minidump.h"

static uint8_t image[0x2000];

static void test_dbghelp_reads_ours(void)
{
    struct ntl_md_module_spec mods[2] = {
        {"\\SystemRoot\\system32\\ntoskrnl.exe", 0xfffff80312400000ull, 0x2000, 0x1111, 0x2222,
         NULL, 0, image, sizeof image, NULL, 0},
        {"\\SystemRoot\\system32\\drivers\\testdrv.sys", 0xfffff80356780000ull, 0x1000, 0, 0x3333,
         (const uint8_t *)"RSDS0123456789abcdef\x01\0\0\0t.pdb", 30, image, 0x1000, NULL, 0},
    };
    struct ntl_md_spec spec = {.arch = NTL_MD_ARCH_AMD64, .major = 10, .build = 19041,
                               .processors = 2, .thread_id = 8, .modules = mods, .module_count = 2};
    struct ntl_buf b;
    struct ntl_error err = {0};
    MINIDUMP_DIRECTORY *dir;
    void *p;
    ULONG size;

    for (size_t i = 0; i < sizeof image; i++)
        image[i] = (uint8_t)(i ^ (i >> 8));
    CHECK_EQ_INT(ntl_md_write(&spec, &b, &err), 0);

    CHECK(MiniDumpReadDumpStream(b.data, ModuleListStream, &dir, &p, &size));
    if (p) {
        MINIDUMP_MODULE_LIST *ml = p;
        CHECK_EQ_U64(ml->NumberOfModules, 2);
        CHECK_EQ_U64(ml->Modules[1].BaseOfImage, 0xfffff80356780000ull);
        CHECK_EQ_U64(ml->Modules[1].SizeOfImage, 0x1000);
        CHECK_EQ_U64(ml->Modules[1].TimeDateStamp, 0x3333);
        CHECK_EQ_U64(ml->Modules[0].CheckSum, 0x1111);
        CHECK_EQ_U64(ml->Modules[1].CvRecord.DataSize, 30);
        MINIDUMP_STRING *name = (MINIDUMP_STRING *)(b.data + ml->Modules[1].ModuleNameRva);
        CHECK(name->Length == wcslen(L"\\SystemRoot\\system32\\drivers\\testdrv.sys") * 2 &&
              !wcscmp(name->Buffer, L"\\SystemRoot\\system32\\drivers\\testdrv.sys"));
    }
    CHECK(MiniDumpReadDumpStream(b.data, Memory64ListStream, &dir, &p, &size));
    if (p) {
        MINIDUMP_MEMORY64_LIST *ml = p;
        CHECK_EQ_U64(ml->NumberOfMemoryRanges, 2);
        CHECK_EQ_U64(ml->MemoryRanges[0].StartOfMemoryRange, 0xfffff80312400000ull);
        CHECK_EQ_U64(ml->MemoryRanges[1].DataSize, 0x1000);
        CHECK(memcmp(b.data + ml->BaseRva, image, sizeof image) == 0);
        CHECK(memcmp(b.data + ml->BaseRva + sizeof image, image, 0x1000) == 0);
    }
    CHECK(MiniDumpReadDumpStream(b.data, SystemInfoStream, &dir, &p, &size));
    if (p) {
        MINIDUMP_SYSTEM_INFO *si = p;
        CHECK_EQ_U64(si->ProcessorArchitecture, PROCESSOR_ARCHITECTURE_AMD64);
        CHECK_EQ_U64(si->BuildNumber, 19041);
    }
    CHECK(MiniDumpReadDumpStream(b.data, ThreadListStream, &dir, &p, &size));
    if (p)
        CHECK_EQ_U64(((MINIDUMP_THREAD_LIST *)p)->NumberOfThreads, 1);
    ntl_buf_free(&b);
}

static int write_self(const char *path, MINIDUMP_TYPE type)
{
    HANDLE f = CreateFileA(path, GENERIC_READ | GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, 0, NULL);
    BOOL ok;
    if (f == INVALID_HANDLE_VALUE)
        return 0;
    ok = MiniDumpWriteDump(GetCurrentProcess(), GetCurrentProcessId(), f, type, NULL, NULL, NULL);
    CloseHandle(f);
    return ok;
}

/* A full-memory dump (Memory64List): our image's headers and code read back
 * through the address-based API equal the live bytes. */
static void test_full_memory(void)
{
    char path[MAX_PATH], tmp[MAX_PATH];
    struct ntl_buf b;
    struct ntl_minidump md;
    struct ntl_error err = {0};
    const uint8_t *self = (const uint8_t *)GetModuleHandleA(NULL);
    static uint8_t got[0x2000];

    GetTempPathA(sizeof tmp, tmp);
    snprintf(path, sizeof path, "%sntlens-dbghelp-full-%lu.dmp", tmp, GetCurrentProcessId());
    CHECK(write_self(path, MiniDumpWithFullMemory));
    CHECK_EQ_INT(ntl_file_read(path, 1u << 31, &b, &err), 0);
    DeleteFileA(path);
    CHECK_EQ_INT(ntl_md_parse(b.data, b.len, &md, &err), 0);
    CHECK(md.memory64);
    CHECK_EQ_U64(ntl_md_read(&md, (uint64_t)(uintptr_t)self, got, sizeof got), sizeof got);
    CHECK(memcmp(got, self, sizeof got) == 0);
    ntl_md_free(&md);
    ntl_buf_free(&b);
}

static void test_ours_reads_dbghelp(void)
{
    char path[MAX_PATH], tmp[MAX_PATH];
    struct ntl_buf b;
    struct ntl_minidump md;
    struct ntl_error err = {0};
    uint64_t self = (uint64_t)(uintptr_t)GetModuleHandleA(NULL);
    uint64_t ntdll = (uint64_t)(uintptr_t)GetModuleHandleA("ntdll.dll");

    GetTempPathA(sizeof tmp, tmp);
    snprintf(path, sizeof path, "%sntlens-dbghelp-%lu.dmp", tmp, GetCurrentProcessId());
    CHECK(write_self(path, MiniDumpNormal));
    CHECK_EQ_INT(ntl_file_read(path, 1u << 30, &b, &err), 0);
    DeleteFileA(path);
    CHECK_EQ_INT(ntl_md_parse(b.data, b.len, &md, &err), 0);
    if (err.status)
        fprintf(stderr, "%s\n", err.message);
    CHECK(md.sys.present && md.sys.arch == NTL_MD_ARCH_AMD64);
    CHECK(ntl_md_module_at(&md, self) != NULL);
    CHECK(ntl_md_module_at(&md, ntdll) != NULL && ntl_md_module_find(&md, "ntdll.dll"));
    bool found = false;
    for (size_t i = 0; i < md.thread_count; i++)
        found |= md.threads[i].id == GetCurrentThreadId();
    CHECK(found);
    /* every memory range reads back whole through the address-based API */
    CHECK(md.range_count > 0);
    for (size_t i = 0; i < md.range_count && i < 64; i++) {
        uint8_t buf[256];
        size_t n = md.ranges[i].size < sizeof buf ? (size_t)md.ranges[i].size : sizeof buf;
        CHECK_EQ_U64(ntl_md_read(&md, md.ranges[i].start, buf, n), n);
        CHECK(memcmp(buf, b.data + md.ranges[i].file_offset, n) == 0);
    }
    ntl_md_free(&md);
    ntl_buf_free(&b);
}

int main(void)
{
    test_dbghelp_reads_ours();
    test_ours_reads_dbghelp();
    test_full_memory();
    return check_exit();
}
