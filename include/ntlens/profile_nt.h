/* NT profile objects, Kernrate's producer: NtCreateProfileEx sets up an
 * array of ULONG hit counters over an address range, one per 2^n-byte
 * bucket; NtStartProfile starts the profile interrupt, which increments the
 * bucket its IP falls in; NtStopProfile ends it. The pieces that need no
 * Windows (names, buffer arithmetic, the module list) work on any OS; the
 * run itself (ntl_profile_nt_run) is in lib/profile/ntprofile-win32.c. */
#ifndef NTLENS_PROFILE_NT_H
#define NTLENS_PROFILE_NT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"
#include "ntlens/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* KPROFILE_SOURCE: 0 ProfileTime ... 23 ProfileLoadLinkedIssues. */
#define NTL_PROFILE_NT_SOURCES 24

/* "Time", "AlignmentFixup", ... (KPROFILE_SOURCE without "Profile"), or
 * NULL past the last. */
const char *ntl_profile_nt_source_name(int source);
/* The source a name (case-insensitive, with or without "Profile") or a
 * number names, or -1. */
int ntl_profile_nt_source_parse(const char *s);

/* What an NTSTATUS of the profile calls means ("STATUS_PROFILING_AT_LIMIT:
 * too many profile objects are running"), or NULL for one it does not know. */
const char *ntl_profile_nt_status_text(uint32_t status);

/* Bytes of the ULONG buffer NtCreateProfileEx needs for a range: one ULONG
 * per bucket, RangeSize >> (BucketSize - 2) rounded up. */
uint64_t ntl_profile_nt_buffer_bytes(uint64_t range_size, unsigned bucket_shift);

/* Adds the modules of a SystemModuleInformation answer (RTL_PROCESS_MODULES:
 * a ULONG count, then RTL_PROCESS_MODULE_INFORMATION entries of 296 bytes
 * for 64-bit Windows, 284 for 32-bit) to the kernel's space. Returns the
 * number of ranges added, or, with err at the byte offset:
 *   NTL_ERR_TRUNCATED  fewer bytes than the count says
 *   NTL_ERR_FORMAT     an entry's OffsetToFileName past its path
 * or the statuses of ntl_profile_add_range. */
int ntl_profile_nt_modules_parse(struct ntl_profile *p, const void *data, size_t size, bool is64,
                                 unsigned bucket_shift, struct ntl_error *err);

/* A live run (Windows only). */
struct ntl_profile_nt_config {
    uint32_t pid;              /* 0: the kernel's modules; else this process's */
    int source;                /* KPROFILE_SOURCE */
    uint32_t interval;         /* 100 ns units (ProfileTime); 0: the system's */
    unsigned bucket_shift;
    bool (*stop)(void *ctx);   /* polled every 100 ms; true ends the run */
    void *ctx;
    uint32_t duration_ms;      /* 0: until stop */
};

/* Creates a profile object per module (per processor group), starts them,
 * runs until the duration passes or stop says so, stops them and adds
 * their buckets to p. Returns 0, or:
 *   NTL_ERR_UNSUPPORTED  ntdll lacks a function it needs (err names every
 *                        missing one: Wine has none of them)
 *   NTL_ERR_ACCESS       SeSystemProfilePrivilege is not held, or the
 *                        process cannot be opened
 *   NTL_ERR_NOT_FOUND    no process pid
 *   NTL_ERR_SYSTEM       a call failed (err: the NTSTATUS and what it means)
 *   NTL_ERR_NOMEM, and the statuses of ntl_profile_nt_modules_parse */
int ntl_profile_nt_run(const struct ntl_profile_nt_config *cfg, struct ntl_profile *p,
                       struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
