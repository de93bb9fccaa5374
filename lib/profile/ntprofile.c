/* NT profile objects: names, buffer arithmetic, the kernel's module list. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model.h"
#include "ntlens/profile_nt.h"

static const char *const sources[NTL_PROFILE_NT_SOURCES] = {
    "Time", "AlignmentFixup", "TotalIssues", "PipelineDry", "LoadInstructions",
    "PipelineFrozen", "BranchInstructions", "TotalNonissues", "DcacheMisses", "IcacheMisses",
    "CacheMisses", "BranchMispredictions", "StoreInstructions", "FpInstructions",
    "IntegerInstructions", "2Issue", "3Issue", "4Issue", "SpecialInstructions", "TotalCycles",
    "IcacheIssues", "DcacheAccesses", "MemoryBarrierCycles", "LoadLinkedIssues",
};

const char *ntl_profile_nt_source_name(int source)
{
    return source >= 0 && source < NTL_PROFILE_NT_SOURCES ? sources[source] : NULL;
}

int ntl_profile_nt_source_parse(const char *s)
{
    char *end;
    long n = strtol(s, &end, 10);
    if (*s && !*end)
        return n >= 0 && n < NTL_PROFILE_NT_SOURCES ? (int)n : -1;
    if (!strncasecmp(s, "Profile", 7))
        s += 7;
    for (int i = 0; i < NTL_PROFILE_NT_SOURCES; i++)
        if (!strcasecmp(s, sources[i]))
            return i;
    return -1;
}

const char *ntl_profile_nt_status_text(uint32_t status)
{
    static const struct {
        uint32_t status;
        const char *text;
    } known[] = {
        {0xC0000002, "STATUS_NOT_IMPLEMENTED: this system does not implement the call"},
        {0xC0000005, "STATUS_ACCESS_VIOLATION: the range or buffer is not accessible"},
        {0xC000000D, "STATUS_INVALID_PARAMETER: a range, bucket size or buffer size is wrong"},
        {0xC0000022, "STATUS_ACCESS_DENIED: the process may not be profiled by us"},
        {0xC0000023, "STATUS_BUFFER_TOO_SMALL: the bucket buffer is too small for the range"},
        {0xC0000061, "STATUS_PRIVILEGE_NOT_HELD: SeSystemProfilePrivilege is needed"},
        {0xC00000B7, "STATUS_PROFILING_NOT_STARTED: the profile object was not started"},
        {0xC00000B8, "STATUS_PROFILING_NOT_STOPPED: the profile object is still running"},
        {0xC00000D3, "STATUS_PROFILING_AT_LIMIT: too many profile objects are running"},
        {0xC0000017, "STATUS_NO_MEMORY: the kernel cannot lock the bucket buffer"},
        {0xC00000BB, "STATUS_NOT_SUPPORTED: this profile source is not supported here"},
    };
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (known[i].status == status)
            return known[i].text;
    return NULL;
}

uint64_t ntl_profile_nt_buffer_bytes(uint64_t range_size, unsigned bucket_shift)
{
    return ntl_profile_bucket_count(range_size, bucket_shift) * 4;
}

static uint64_t le(const uint8_t *b, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i--;)
        v = v << 8 | b[i];
    return v;
}

/* RTL_PROCESS_MODULE_INFORMATION: Section, MappedBase, ImageBase (pointers),
 * ImageSize, Flags, LoadOrderIndex, InitOrderIndex, LoadCount,
 * OffsetToFileName (USHORTs), FullPathName[256]. */
static int module(struct ntl_profile *p, const uint8_t *e, unsigned psz, uint64_t at,
                  unsigned shift, struct ntl_error *err)
{
    const uint8_t *rest = e + 3 * psz;
    uint64_t base = le(e + 2 * psz, psz), size = le(rest, 4);
    unsigned name_at = (unsigned)le(rest + 14, 2);
    char path[257];
    memcpy(path, rest + 16, 256);
    path[256] = 0;
    if (name_at >= 256 || name_at > strlen(path))
        return ntl_error_set(err, NTL_ERR_FORMAT, "RTL_PROCESS_MODULE_INFORMATION", at,
                             "OffsetToFileName %u is past its path", name_at);
    if (!size || base + size - 1 < base)
        return 0;
    int rc = ntl_profile_add_range(p, NTL_PROFILE_KERNEL_PID, path + name_at, path, base, size,
                                   shift, err);
    return rc < 0 ? rc : 1;
}

int ntl_profile_nt_modules_parse(struct ntl_profile *p, const void *data, size_t size, bool is64,
                                 unsigned bucket_shift, struct ntl_error *err)
{
    const uint8_t *b = data;
    unsigned psz = is64 ? 8 : 4;
    size_t first = psz, entry = 3 * psz + 16 + 256;
    if (size < first)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "RTL_PROCESS_MODULES", 0,
                             "%zu bytes, the count needs %zu", size, first);
    uint64_t count = le(b, 4);
    if (count > (size - first) / entry)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "RTL_PROCESS_MODULES", 0,
                             "%llu modules need %llu bytes, %zu given",
                             (unsigned long long)count,
                             (unsigned long long)(first + count * entry), size);
    int added = 0;
    for (uint64_t i = 0; i < count; i++) {
        int rc = module(p, b + first + i * entry, psz, first + i * entry, bucket_shift, err);
        if (rc < 0)
            return rc;
        added += rc;
    }
    return added;
}
