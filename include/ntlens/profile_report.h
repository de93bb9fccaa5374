/* Kernrate's report over a profile (ntlens/profile.h): hits per module, per
 * process and thread, then per function and per bucket inside a module.
 * Each call returns a malloc'd array (free with free()) whose strings point
 * into the profile: they stay valid until it is freed. */
#ifndef NTLENS_PROFILE_REPORT_H
#define NTLENS_PROFILE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"
#include "ntlens/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NTL_PROFILE_NO_RANGE SIZE_MAX

struct ntl_profile_module_row {
    size_t range;             /* NTL_PROFILE_NO_RANGE: the hits in no range */
    const struct ntl_profile_range *r;  /* NULL for that row */
    uint64_t hits;
};

struct ntl_profile_process_row {
    uint32_t pid;             /* NTL_PROFILE_NO_PID: samples of unknown threads */
    const char *name;         /* NULL when never named */
    uint64_t hits;
    uint64_t unknown;         /* of hits, those in no range */
};

struct ntl_profile_thread_row {
    uint32_t tid, pid;
    uint64_t hits;
};

struct ntl_profile_function_row {
    const char *symbol;       /* NULL: no symbol covers it; offset is its bucket's */
    uint64_t offset;          /* the symbol's (or bucket's) offset from the range's base */
    uint64_t hits;
};

struct ntl_profile_bucket_row {
    uint64_t offset;          /* from the range's base: bucket << bucket_shift */
    uint64_t hits;
    const char *symbol;       /* NULL when no symbol covers the bucket's start */
    uint64_t disp;            /* offset - the symbol's offset */
};

/* Ranges with hits, most hits first (ties by range index), then one
 * NTL_PROFILE_NO_RANGE row when some hits fell in no range. 0 with *rows
 * and *n set (NULL and 0 when the profile is empty), or NTL_ERR_NOMEM. */
int ntl_profile_modules(const struct ntl_profile *p, struct ntl_profile_module_row **rows,
                        size_t *n, struct ntl_error *err);

/* Processes and threads with hits, most hits first (ties by id). 0, or
 * NTL_ERR_NOMEM. */
int ntl_profile_processes(const struct ntl_profile *p, struct ntl_profile_process_row **rows,
                          size_t *n, struct ntl_error *err);
int ntl_profile_threads(const struct ntl_profile *p, struct ntl_profile_thread_row **rows,
                        size_t *n, struct ntl_error *err);

/* The hit buckets of a range, by offset, each with the symbol at its start.
 * 0, or NTL_ERR_ARGUMENT (no such range), NTL_ERR_NOMEM. */
int ntl_profile_buckets(struct ntl_profile *p, size_t range, struct ntl_profile_bucket_row **rows,
                        size_t *n, struct ntl_error *err);

/* The hits of a range per function (a bucket counts for the symbol at its
 * start, as Kernrate counts them; buckets no symbol covers are rows of
 * their own), most hits first (ties by offset). 0, or NTL_ERR_ARGUMENT (no
 * such range), NTL_ERR_NOMEM. */
int ntl_profile_functions(struct ntl_profile *p, size_t range,
                          struct ntl_profile_function_row **rows, size_t *n,
                          struct ntl_error *err);

/* Names addr as seen from pid's space (then the kernel's), in the module
 * active there or, failing that, the last one that held it (a stack kept
 * past its module's unload): "function" when a symbol covers it, else
 * "module+0xOFFSET", else "0xADDRESS"; cut to size - 1 bytes. Returns 1
 * when a range holds addr, 0 when none does. */
int ntl_profile_symbolize(struct ntl_profile *p, uint32_t pid, uint64_t addr, char *buf,
                          size_t size);

/* The index of the range ntl_profile_symbolize names addr from, or -1 when
 * none holds it. */
long ntl_profile_range_of(const struct ntl_profile *p, uint32_t pid, uint64_t addr);

#ifdef __cplusplus
}
#endif
#endif
