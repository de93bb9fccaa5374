/* Sampling profiles, Kernrate's model: a set of ranges (modules), each cut
 * into buckets of 2^n bytes with a hit counter per bucket, as an NT profile
 * object counts them (NtCreateProfile: 4 bytes to 2 GiB per bucket). Every
 * producer fills the same model: NT profile objects add bucket counts,
 * perf_event and ETW add samples (an instruction pointer, a thread, a
 * process, optionally a stack), which land in the bucket their address falls
 * in. Per-process and per-thread hits are kept beside the ranges.
 *
 *     struct ntl_profile *p;
 *     ntl_profile_new(&p, &err);
 *     int r = ntl_profile_add_range(p, pid, "libc.so.6", path, base, size, 2, &err);
 *     ntl_profile_add_sample(p, &sample, &err);
 *     ntl_profile_modules(p, &rows, &n, &err);   (the report: ntlens/profile_report.h)
 *     ntl_profile_free(p);
 *
 * Ranges live in address spaces: one per process id, and the kernel's
 * (NTL_PROFILE_KERNEL_PID), which every process sees. A sample's address is
 * looked up in its process's space, then in the kernel's. */
#ifndef NTLENS_PROFILE_H
#define NTLENS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bucket sizes NtCreateProfile accepts: 2^2 to 2^31 bytes. */
#define NTL_PROFILE_MIN_BUCKET_SHIFT 2u
#define NTL_PROFILE_MAX_BUCKET_SHIFT 31u
/* The kernel's address space: its ranges are seen from every process. */
#define NTL_PROFILE_KERNEL_PID UINT32_MAX
/* A sample whose process is not known (the thread was never seen). */
#define NTL_PROFILE_NO_PID (UINT32_MAX - 1)
/* Deepest stack kept per sample (perf's default max_stack is 127). */
#define NTL_PROFILE_MAX_DEPTH 256u

struct ntl_profile;

struct ntl_profile_range {
    const char *name;        /* "ntoskrnl.exe", "libc.so.6" */
    const char *path;        /* the file as the producer knows it; "" when none */
    uint32_t pid;            /* NTL_PROFILE_KERNEL_PID for kernel ranges */
    uint64_t base;           /* address of the module's file offset 0 (PE: ImageBase) */
    uint64_t size;
    unsigned bucket_shift;   /* buckets of 2^bucket_shift bytes */
    uint64_t hits;
    bool active;             /* still receives samples (not unloaded or replaced) */
};

/* Description of the sampling, for the report's rates. */
struct ntl_profile_info {
    char source[32];          /* "cpu-clock", "ProfileTime", "SampledProfile" */
    uint64_t interval_ns;     /* between samples on one CPU; 0 when unknown */
    uint64_t duration_ns;     /* wall time profiled; 0 when unknown */
    uint32_t cpus;            /* 0 when unknown */
    /* Stack entries are named at their own address, as perf names its
     * callchains (set by ntl_profile_perf_feed), not at a return address's
     * call (ntl_profile_frame_address). */
    bool frames_as_is;
};

/* One sample: ip and the stack (stack[0] is the ip's caller chain's first
 * return address; depth 0 when there is none). pid NTL_PROFILE_NO_PID takes
 * the process the thread was last attributed to (ntl_profile_set_thread). */
struct ntl_profile_sample {
    uint64_t ip;
    uint32_t pid, tid;
    uint64_t weight;          /* hits it counts for; 0 counts as 1 */
    const uint64_t *stack;
    size_t depth;
};

/* A new, empty profile. 0, or NTL_ERR_NOMEM. */
int ntl_profile_new(struct ntl_profile **out, struct ntl_error *err);
void ntl_profile_free(struct ntl_profile *p);

struct ntl_profile_info *ntl_profile_info(struct ntl_profile *p);

/* Adds a range to pid's space (NTL_PROFILE_KERNEL_PID: the kernel's). It
 * replaces the active ranges of that space it overlaps (a module loaded
 * where another was unloaded), which keep their hits but receive no more.
 * Returns the range's index (>= 0), or:
 *   NTL_ERR_ARGUMENT  size is 0, base + size wraps, or bucket_shift is
 *                     outside NTL_PROFILE_MIN/MAX_BUCKET_SHIFT
 *   NTL_ERR_LIMIT     more than 2^31 ranges
 *   NTL_ERR_NOMEM */
int ntl_profile_add_range(struct ntl_profile *p, uint32_t pid, const char *name, const char *path,
                          uint64_t base, uint64_t size, unsigned bucket_shift,
                          struct ntl_error *err);

/* Ends the active range at base in pid's space (an unload): it keeps its
 * hits but receives no more. 0, or NTL_ERR_NOT_FOUND (err untouched) when
 * no active range starts there, NTL_ERR_NOMEM. */
int ntl_profile_end_range(struct ntl_profile *p, uint32_t pid, uint64_t base);

size_t ntl_profile_range_count(const struct ntl_profile *p);
/* The range at index (< ntl_profile_range_count), valid until the next add. */
const struct ntl_profile_range *ntl_profile_range(const struct ntl_profile *p, size_t index);

/* Number of buckets of a range: ceil(size / 2^bucket_shift), as many ULONGs
 * as NtCreateProfile's buffer needs for that range. */
uint64_t ntl_profile_bucket_count(uint64_t size, unsigned bucket_shift);

/* Adds count hits to bucket of range (what an NT profile object's buffer
 * holds). 0, or NTL_ERR_ARGUMENT (no such range or bucket), NTL_ERR_LIMIT
 * (more than 2^28 distinct buckets hit), NTL_ERR_NOMEM. */
int ntl_profile_add_hits(struct ntl_profile *p, size_t range, uint64_t bucket, uint64_t count,
                         struct ntl_error *err);

/* Names a process (the last name given wins). 0, or NTL_ERR_NOMEM. */
int ntl_profile_set_process(struct ntl_profile *p, uint32_t pid, const char *name,
                            struct ntl_error *err);
/* Attributes a thread to a process, from now on (a thread id can be
 * reused by another process later). 0, or NTL_ERR_NOMEM. */
int ntl_profile_set_thread(struct ntl_profile *p, uint32_t tid, uint32_t pid,
                           struct ntl_error *err);
/* The process a thread is attributed to, or NTL_PROFILE_NO_PID. */
uint32_t ntl_profile_pid_of(const struct ntl_profile *p, uint32_t tid);

/* Counts a sample: in the bucket of the range its ip falls in (its
 * process's space first, then the kernel's), in its process's and thread's
 * totals, and keeps it with its stack (depth <= NTL_PROFILE_MAX_DEPTH, more
 * is cut) for ntl_profile_stack_next. Returns 1 when the ip fell in a range, 0 when in
 * none (counted as unknown), or NTL_ERR_LIMIT (more than 2^28 distinct
 * buckets, or 2^30 stack entries), NTL_ERR_NOMEM. */
int ntl_profile_add_sample(struct ntl_profile *p, const struct ntl_profile_sample *s,
                           struct ntl_error *err);

/* Whether samples added from now on keep their stacks (the default: yes).
 * A report of modules, functions and buckets does not read them, and for
 * deep stacks they are most of the profile's memory and of the time to add
 * a sample. Without them a sample is kept only while ntl_profile_place_late
 * may still move it (no range held its ip, or its process was not known):
 * ntl_profile_stack_next gives those, with depth 0; ntl_profile_sample_count
 * still counts every sample, and ntl_profile_set_stack keeps nothing (and
 * fails once stacks are kept again, the indices no longer matching). */
void ntl_profile_keep_stacks(struct ntl_profile *p, bool keep);

/* How many samples were added: the next one's index. */
size_t ntl_profile_sample_count(const struct ntl_profile *p);
/* Gives sample index the stack a producer learns after the sample (ETW's
 * StackWalk events follow theirs). 0, or NTL_ERR_ARGUMENT (no such
 * sample), NTL_ERR_LIMIT, NTL_ERR_NOMEM. */
int ntl_profile_set_stack(struct ntl_profile *p, size_t sample, const uint64_t *stack,
                          size_t depth, struct ntl_error *err);

/* Marks a range as there since before the first sample: a module a trace
 * names only at its end (ETW's DCEnd rundown, when the start rundown and
 * its Load event were lost). 0, or NTL_ERR_ARGUMENT (no such range). */
int ntl_profile_range_since_start(struct ntl_profile *p, size_t range);

/* Places again what could not be placed when it was added, now that the
 * end of a trace told more: a sample whose thread had no process then
 * goes to the process the thread has now (ntl_profile_set_thread), and a
 * sample no range held goes to the range marked since the start that
 * holds it (its process's, then the kernel's). Returns the number of
 * samples moved, or NTL_ERR_LIMIT, NTL_ERR_NOMEM (err set). */
int ntl_profile_place_late(struct ntl_profile *p, struct ntl_error *err);

/* Totals: every hit, and those that fell in no range. */
uint64_t ntl_profile_total(const struct ntl_profile *p);
uint64_t ntl_profile_unknown(const struct ntl_profile *p);

/* Every sample added (not the hits of ntl_profile_add_hits), with its
 * stack (depth 0 when it had none), in the order they were added: *pos
 * starts at 0. 1 with *s filled (s->ip, pid, tid, weight, stack and
 * depth; pointers valid until the next add), 0 when there are no more. */
int ntl_profile_stack_next(const struct ntl_profile *p, size_t *pos,
                           struct ntl_profile_sample *s);

/* The address to name a stack entry by: a return address minus one, which
 * lies in the call (a call that ends a function returns to the next one),
 * or the entry itself when info.frames_as_is. */
uint64_t ntl_profile_frame_address(const struct ntl_profile *p, uint64_t entry);

#ifdef __cplusplus
}
#endif
#endif
