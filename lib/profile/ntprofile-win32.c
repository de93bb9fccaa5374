/* NT profile objects: a live run on Windows. */
#include <windows.h>
#include <psapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "ntlens/profile_nt.h"

typedef LONG(NTAPI *create_fn)(HANDLE *, HANDLE, PVOID, SIZE_T, ULONG, ULONG *, ULONG, int,
                               USHORT, GROUP_AFFINITY *);
typedef LONG(NTAPI *handle_fn)(HANDLE);
typedef LONG(NTAPI *set_interval_fn)(ULONG, int);
typedef LONG(NTAPI *query_info_fn)(ULONG, PVOID, ULONG, ULONG *);

#define SYSTEM_MODULE_INFORMATION 11
#define MAX_MODULE_LIST (64u << 20)

struct nt {
    create_fn create;
    handle_fn start, stop, close;
    set_interval_fn set_interval;
    query_info_fn query_info;
};

/* Every function the run needs, naming each one ntdll lacks. */
static int resolve(struct nt *nt, struct ntl_error *err)
{
    HMODULE ntdll = GetModuleHandleA("ntdll.dll");
    static const char *const names[] = {"NtCreateProfileEx", "NtStartProfile", "NtStopProfile",
                                        "NtClose", "NtSetIntervalProfile",
                                        "NtQuerySystemInformation"};
    FARPROC f[6];
    char missing[256] = "";
    for (int i = 0; i < 6; i++)
        if (!(f[i] = ntdll ? GetProcAddress(ntdll, names[i]) : NULL))
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s",
                     missing[0] ? ", " : "", names[i]);
    if (missing[0])
        return ntl_error_set(err, NTL_ERR_UNSUPPORTED, NULL, NTL_NO_OFFSET,
                             "ntdll.dll has no %s: this system cannot run NT profile objects "
                             "(Wine implements none of them)", missing);
    nt->create = (create_fn)(void (*)(void))f[0];
    nt->start = (handle_fn)(void (*)(void))f[1];
    nt->stop = (handle_fn)(void (*)(void))f[2];
    nt->close = (handle_fn)(void (*)(void))f[3];
    nt->set_interval = (set_interval_fn)(void (*)(void))f[4];
    nt->query_info = (query_info_fn)(void (*)(void))f[5];
    return 0;
}

static int nt_fail(struct ntl_error *err, const char *call, LONG status)
{
    const char *text = ntl_profile_nt_status_text((uint32_t)status);
    return ntl_error_set(err, (uint32_t)status == 0xC0000061u ? NTL_ERR_ACCESS : NTL_ERR_SYSTEM,
                         NULL, NTL_NO_OFFSET, "%s: NTSTATUS 0x%08lx%s%s", call,
                         (unsigned long)status, text ? ", " : "", text ? text : "");
}

static int enable_privilege(struct ntl_error *err)
{
    HANDLE token;
    TOKEN_PRIVILEGES tp = {.PrivilegeCount = 1};
    tp.Privileges[0].Attributes = SE_PRIVILEGE_ENABLED;
    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_ADJUST_PRIVILEGES, &token))
        return ntl_error_set(err, NTL_ERR_ACCESS, NULL, NTL_NO_OFFSET,
                             "cannot open our token (error %lu)", GetLastError());
    BOOL ok = LookupPrivilegeValueA(NULL, "SeSystemProfilePrivilege", &tp.Privileges[0].Luid) &&
              AdjustTokenPrivileges(token, FALSE, &tp, 0, NULL, NULL) &&
              GetLastError() != ERROR_NOT_ALL_ASSIGNED;
    CloseHandle(token);
    if (!ok)
        return ntl_error_set(err, NTL_ERR_ACCESS, NULL, NTL_NO_OFFSET,
                             "SeSystemProfilePrivilege is not held: run as an administrator");
    return 0;
}

static int kernel_modules(const struct nt *nt, struct ntl_profile *p, unsigned shift,
                          struct ntl_error *err)
{
    ULONG size = 1u << 16, need = 0;
    for (;;) {
        void *buf = malloc(size);
        if (!buf)
            return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
        LONG st = nt->query_info(SYSTEM_MODULE_INFORMATION, buf, size, &need);
        if (st >= 0) {
            int rc = ntl_profile_nt_modules_parse(p, buf, need ? need : size, sizeof(void *) == 8,
                                                  shift, err);
            free(buf);
            return rc;
        }
        free(buf);
        if ((uint32_t)st != 0xC0000004u || size >= MAX_MODULE_LIST) /* INFO_LENGTH_MISMATCH */
            return nt_fail(err, "NtQuerySystemInformation(SystemModuleInformation)", st);
        size = need > size ? need : size * 2;
    }
}

static int process_modules(HANDLE proc, uint32_t pid, struct ntl_profile *p, unsigned shift,
                            struct ntl_error *err)
{
    HMODULE mods[1024];
    DWORD need;
    if (!K32EnumProcessModules(proc, mods, sizeof mods, &need))
        return ntl_error_set(err, NTL_ERR_ACCESS, NULL, NTL_NO_OFFSET,
                             "cannot list the modules of process %u (error %lu)", pid,
                             GetLastError());
    for (DWORD i = 0; i < need / sizeof *mods && i < 1024; i++) {
        MODULEINFO mi;
        char path[MAX_PATH] = "";
        if (!K32GetModuleInformation(proc, mods[i], &mi, sizeof mi))
            continue;
        K32GetModuleFileNameExA(proc, mods[i], path, sizeof path);
        const char *name = strrchr(path, '\\') ? strrchr(path, '\\') + 1 : path;
        int rc = ntl_profile_add_range(p, pid, name, path, (uint64_t)(uintptr_t)mi.lpBaseOfDll,
                                       mi.SizeOfImage, shift, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

struct object {
    HANDLE h;
    ULONG *buckets;
    size_t range;
};

/* A profile object over range r, on every processor group. */
static int create_object(const struct nt *nt, HANDLE proc, const struct ntl_profile_range *r,
                         int source, struct object *o, struct ntl_error *err)
{
    GROUP_AFFINITY groups[64];
    WORD ngroups = GetActiveProcessorGroupCount();
    uint64_t bytes = ntl_profile_nt_buffer_bytes(r->size, r->bucket_shift);
    if (ngroups > 64)
        ngroups = 64;
    for (WORD g = 0; g < ngroups; g++) {
        DWORD n = GetActiveProcessorCount(g);
        groups[g] = (GROUP_AFFINITY){.Group = g,
                                     .Mask = n >= 64 ? ~(KAFFINITY)0 : ((KAFFINITY)1 << n) - 1};
    }
    if (bytes > UINT32_MAX)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                             "%s needs a buffer over 4 GiB: use a larger --bucket-size", r->name);
    if (!(o->buckets = calloc(1, (size_t)bytes)))
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    LONG st = nt->create(&o->h, proc, (PVOID)(uintptr_t)r->base, (SIZE_T)r->size, r->bucket_shift,
                         o->buckets, (ULONG)bytes, source, ngroups, groups);
    if (st < 0) {
        char call[300];
        snprintf(call, sizeof call, "NtCreateProfileEx for %s", r->name);
        return nt_fail(err, call, st);
    }
    return 0;
}

static void wait_run(const struct ntl_profile_nt_config *cfg)
{
    ULONGLONG end = GetTickCount64() + cfg->duration_ms;
    while (!(cfg->stop && cfg->stop(cfg->ctx)) && (!cfg->duration_ms || GetTickCount64() < end))
        Sleep(100);
}

/* Starts every object, waits, stops them and adds their buckets. */
static int run_objects(const struct nt *nt, const struct ntl_profile_nt_config *cfg,
                       struct object *objs, size_t n, struct ntl_profile *p,
                       struct ntl_error *err)
{
    size_t started = 0;
    int rc = 0;
    for (; started < n && rc == 0; started++) {
        LONG st = nt->start(objs[started].h);
        if (st < 0)
            rc = nt_fail(err, "NtStartProfile", st);
    }
    if (rc == 0)
        wait_run(cfg);
    for (size_t i = 0; i < started; i++)
        nt->stop(objs[i].h);
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct ntl_profile_range *r = ntl_profile_range(p, objs[i].range);
        uint64_t count = ntl_profile_bucket_count(r->size, r->bucket_shift);
        for (uint64_t b = 0; b < count && rc == 0; b++)
            rc = ntl_profile_add_hits(p, objs[i].range, b, objs[i].buckets[b], err);
    }
    return rc;
}

int ntl_profile_nt_run(const struct ntl_profile_nt_config *cfg, struct ntl_profile *p,
                       struct ntl_error *err)
{
    struct nt nt;
    HANDLE proc = NULL;
    int rc;
    if ((rc = resolve(&nt, err)) < 0 || (rc = enable_privilege(err)) < 0)
        return rc;
    if (cfg->pid) {
        proc = OpenProcess(PROCESS_QUERY_INFORMATION | PROCESS_VM_READ, FALSE, cfg->pid);
        if (!proc)
            return ntl_error_set(err, GetLastError() == ERROR_INVALID_PARAMETER ? NTL_ERR_NOT_FOUND
                                                                                : NTL_ERR_ACCESS,
                                 NULL, NTL_NO_OFFSET, "cannot open process %u (error %lu)",
                                 cfg->pid, GetLastError());
        rc = process_modules(proc, cfg->pid, p, cfg->bucket_shift, err);
    } else {
        rc = kernel_modules(&nt, p, cfg->bucket_shift, err);
    }
    LONG st = rc >= 0 && cfg->interval ? nt.set_interval(cfg->interval, cfg->source) : 0;
    if (st < 0)
        rc = nt_fail(err, "NtSetIntervalProfile", st);
    size_t n = rc >= 0 ? ntl_profile_range_count(p) : 0;
    struct object *objs = calloc(n ? n : 1, sizeof *objs);
    if (!objs && rc >= 0)
        rc = ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    size_t made = 0;
    for (; rc >= 0 && made < n; made++) {
        objs[made].range = made;
        rc = create_object(&nt, proc, ntl_profile_range(p, made), cfg->source, &objs[made], err);
    }
    if (rc >= 0)
        rc = run_objects(&nt, cfg, objs, n, p, err);
    for (size_t i = 0; objs && i < made; i++) {
        if (objs[i].h)
            nt.close(objs[i].h);
        free(objs[i].buckets);
    }
    free(objs);
    if (proc)
        CloseHandle(proc);
    return rc < 0 ? rc : 0;
}
