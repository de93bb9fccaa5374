/* NT profile objects: KPROFILE_SOURCE names, NTSTATUS texts, the bucket
 * buffer's size, the SystemModuleInformation list (64- and 32-bit, cut and
 * malformed), and, on Windows, the run: under Wine, whose ntdll has none of
 * the profile calls, it must fail naming them. */
#include "check.h"
#include "ntlens/profile_nt.h"
#include "ntlens/profile_report.h"
#ifdef _WIN32
#include <windows.h>
#endif

static void put(uint8_t *b, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        b[i] = (uint8_t)(v >> 8 * i);
}

/* RTL_PROCESS_MODULES with two modules. */
static size_t module_list(uint8_t *b, bool is64)
{
    unsigned psz = is64 ? 8 : 4, entry = 3 * psz + 16 + 256;
    uint64_t top = is64 ? 0xfffff80000000000ull : 0x80000000u;
    const char *paths[] = {"\\SystemRoot\\system32\\ntoskrnl.exe",
                           "\\SystemRoot\\System32\\drivers\\tcpip.sys"};
    memset(b, 0, psz + 2 * entry);
    put(b, 2, 4);
    for (unsigned i = 0; i < 2; i++) {
        uint8_t *e = b + psz + i * entry;
        put(e + 2 * psz, top + i * 0x1000000, psz);          /* ImageBase */
        put(e + 3 * psz, 0x800000, 4);                       /* ImageSize */
        put(e + 3 * psz + 14, strrchr(paths[i], '\\') - paths[i] + 1, 2);
        memcpy(e + 3 * psz + 16, paths[i], strlen(paths[i]));
    }
    return psz + 2 * entry;
}

static void test_modules(bool is64)
{
    uint8_t b[1024];
    size_t n = module_list(b, is64);
    struct ntl_profile *p;
    struct ntl_error err = {0};
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    CHECK_EQ_INT(ntl_profile_nt_modules_parse(p, b, n, is64, 2, &err), 2);
    CHECK_EQ_STR(ntl_profile_range(p, 0)->name, "ntoskrnl.exe");
    CHECK_EQ_STR(ntl_profile_range(p, 1)->name, "tcpip.sys");
    CHECK_EQ_U64(ntl_profile_range(p, 1)->base,
                 (is64 ? 0xfffff80000000000ull : 0x80000000u) + 0x1000000);
    CHECK_EQ_U64(ntl_profile_range(p, 1)->pid, NTL_PROFILE_KERNEL_PID);
    CHECK_EQ_INT(ntl_profile_nt_modules_parse(p, b, n - 1, is64, 2, &err), NTL_ERR_TRUNCATED);
    b[(is64 ? 8 : 4) + 3 * (is64 ? 8 : 4) + 14] = 250;     /* OffsetToFileName past the path */
    CHECK_EQ_INT(ntl_profile_nt_modules_parse(p, b, n, is64, 2, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, is64 ? 8 : 4);
    ntl_profile_free(p);
}

static void test_names(void)
{
    CHECK_EQ_STR(ntl_profile_nt_source_name(0), "Time");
    CHECK_EQ_STR(ntl_profile_nt_source_name(19), "TotalCycles");
    CHECK(ntl_profile_nt_source_name(NTL_PROFILE_NT_SOURCES) == NULL);
    CHECK_EQ_INT(ntl_profile_nt_source_parse("ProfileTotalCycles"), 19);
    CHECK_EQ_INT(ntl_profile_nt_source_parse("cachemisses"), 10);
    CHECK_EQ_INT(ntl_profile_nt_source_parse("23"), 23);
    CHECK_EQ_INT(ntl_profile_nt_source_parse("24"), -1);
    CHECK_EQ_INT(ntl_profile_nt_source_parse("Cycles"), -1);
    CHECK(strstr(ntl_profile_nt_status_text(0xC00000D3), "STATUS_PROFILING_AT_LIMIT"));
    CHECK(strstr(ntl_profile_nt_status_text(0xC00000B8), "STATUS_PROFILING_NOT_STOPPED"));
    CHECK(ntl_profile_nt_status_text(0xC0001234) == NULL);
    /* RangeSize >> (BucketSize - 2): 64 KiB in 16-byte buckets, 16 KiB of ULONGs. */
    CHECK_EQ_U64(ntl_profile_nt_buffer_bytes(0x10000, 4), 0x4000);
    CHECK_EQ_U64(ntl_profile_nt_buffer_bytes(0x10001, 4), 0x4004);
}

static void test_run(void)
{
#ifdef _WIN32
    struct ntl_profile *p;
    struct ntl_error err = {0};
    struct ntl_profile_nt_config cfg = {.bucket_shift = 12, .duration_ms = 100};
    bool wine = GetProcAddress(GetModuleHandleA("ntdll.dll"), "wine_get_version") != NULL;
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    int rc = ntl_profile_nt_run(&cfg, p, &err);
    if (wine) {
        CHECK_EQ_INT(rc, NTL_ERR_UNSUPPORTED);
        CHECK(strstr(err.message, "NtCreateProfileEx") && strstr(err.message, "NtStartProfile"));
    } else {
        CHECK(rc == 0 || rc == NTL_ERR_ACCESS);
    }
    ntl_profile_free(p);
#endif
}

int main(void)
{
    test_names();
    test_modules(true);
    test_modules(false);
    test_run();
    return check_exit();
}
