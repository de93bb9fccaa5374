/* Sampling profiles from Linux's perf_event: the records of a perf ring
 * buffer (the perf_event_open ABI of include/uapi/linux/perf_event.h, as
 * bytes: parsed on any OS), /proc/PID/maps, and, on Linux, the sampler
 * itself (software cpu-clock, PERF_SAMPLE_IP|TID|TIME|CALLCHAIN, one ring
 * buffer per CPU).
 *
 *     ntl_profile_perf_open(&cfg, &h, &err);      (Linux)
 *     ntl_profile_perf_enable(h, &err);
 *     while (...) { ntl_profile_perf_wait(h, 100, &err); ntl_profile_perf_drain(h, p, &st, &err); }
 *     ntl_profile_perf_close(h);
 */
#ifndef NTLENS_PROFILE_PERF_H
#define NTLENS_PROFILE_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"
#include "ntlens/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The sample_type every parser call assumes: IP, TID, TIME, CALLCHAIN. */
#define NTL_PROFILE_PERF_SAMPLE_TYPE 0x27u

enum ntl_profile_perf_type {
    NTL_PROFILE_PERF_MMAP = 1,
    NTL_PROFILE_PERF_LOST = 2,
    NTL_PROFILE_PERF_COMM = 3,
    NTL_PROFILE_PERF_EXIT = 4,
    NTL_PROFILE_PERF_THROTTLE = 5,
    NTL_PROFILE_PERF_UNTHROTTLE = 6,
    NTL_PROFILE_PERF_FORK = 7,
    NTL_PROFILE_PERF_SAMPLE = 9,
    NTL_PROFILE_PERF_MMAP2 = 10,
};

/* One record; pointers point into the parsed bytes. Fields not in a type's
 * record are 0. */
struct ntl_profile_perf_record {
    uint32_t type;
    uint16_t misc;
    uint16_t size;
    uint32_t pid, tid;
    uint64_t time;                 /* SAMPLE */
    uint64_t ip;                   /* SAMPLE */
    uint64_t nr;                   /* SAMPLE: callchain entries */
    const uint8_t *callchain;      /* nr little-endian u64, unaligned */
    uint64_t lost;                 /* LOST */
    uint64_t addr, len, pgoff;     /* MMAP, MMAP2 */
    uint32_t prot;                 /* MMAP2 (MMAP: PROT_EXEC, the only kind asked for) */
    const char *name;              /* MMAP, MMAP2: the file; COMM: the command; NUL-terminated */
};

/* The next record of a run of records (a ring buffer's contents, straight):
 * *pos starts at 0. 1 with *r filled, 0 at the end, or, with err set at
 * base + the record's position:
 *   NTL_ERR_TRUNCATED  the bytes end inside a record (its header or body)
 *   NTL_ERR_FORMAT     a record's size is below its header's, not a multiple
 *                      of 8, or smaller than its type's fields; a name
 *                      without its NUL */
int ntl_profile_perf_next(const void *data, size_t size, size_t *pos, uint64_t base,
                          struct ntl_profile_perf_record *r, struct ntl_error *err);

/* What the sampler reported beside the samples: lost and throttling. */
struct ntl_profile_perf_stats {
    uint64_t samples;
    uint64_t lost;                 /* samples the kernel dropped (LOST records) */
    uint64_t throttled, unthrottled;
    uint64_t first_time, last_time; /* of samples, perf_clock nanoseconds */
};

/* Puts one record into the profile: a sample (its callchain, without the
 * PERF_CONTEXT_* markers and the ip perf repeats first, as its stack), an
 * executable mapping (a range from the address of the file's offset 0 to
 * the mapping's end, in its process's space; pid -1: the kernel's), a
 * command name, lost and throttle counts into *st. Returns 0, or the
 * statuses of ntl_profile_add_sample / ntl_profile_add_range
 * (NTL_ERR_LIMIT, NTL_ERR_NOMEM; NTL_ERR_ARGUMENT for a mapping that wraps
 * or is empty, with err set). */
int ntl_profile_perf_feed(struct ntl_profile *p, const struct ntl_profile_perf_record *r,
                          unsigned bucket_shift, struct ntl_profile_perf_stats *st,
                          struct ntl_error *err);

/* Adds the executable mappings of /proc/PID/maps text to pid's space, as
 * ntl_profile_perf_feed adds an MMAP2 record. Returns the number of ranges
 * added, or NTL_ERR_FORMAT (err at the line's offset), or the statuses of
 * ntl_profile_add_range. */
int ntl_profile_maps_parse(struct ntl_profile *p, uint32_t pid, const char *text, size_t len,
                           unsigned bucket_shift, struct ntl_error *err);

/* Adds the Linux kernel to the kernel's space, with its function names:
 * "[kernel.kallsyms]" from _stext to _etext (else its lowest to highest
 * text symbol) of /proc/kallsyms text, and each module of /proc/modules
 * text (modules may be NULL) as "[NAME]" with its kallsyms symbols.
 * Returns the number of ranges added: 0 when every address is 0 (kallsyms
 * read without the right to see them: kptr_restrict), or NTL_ERR_FORMAT
 * (err at the line's offset in its text), NTL_ERR_LIMIT, NTL_ERR_NOMEM. */
int ntl_profile_kernel_parse(struct ntl_profile *p, const char *kallsyms, size_t klen,
                             const char *modules, size_t mlen, unsigned bucket_shift,
                             struct ntl_error *err);

/* --- the sampler (Linux only: lib/profile/perf-linux.c) --- */
struct ntl_profile_perf;

struct ntl_profile_perf_config {
    int32_t pid;                   /* -1: every process (system-wide) */
    uint32_t freq;                 /* samples per second per CPU */
    bool kernel;                   /* sample kernel mode too */
    bool enable_on_exec;           /* start when pid calls exec (a command we started) */
};

/* Opens a cpu-clock sampling event per online CPU (following pid's
 * threads and children), with a ring buffer each, disabled unless
 * enable_on_exec. Returns 0, or:
 *   NTL_ERR_ACCESS       perf_event_open was refused (perf_event_paranoid,
 *                        or pid belongs to someone we may not trace)
 *   NTL_ERR_NOT_FOUND    no process pid
 *   NTL_ERR_UNSUPPORTED  the kernel has no perf_event or no cpu-clock
 *   NTL_ERR_SYSTEM       another failure of perf_event_open or mmap
 *   NTL_ERR_NOMEM */
int ntl_profile_perf_open(const struct ntl_profile_perf_config *cfg, struct ntl_profile_perf **out,
                          struct ntl_error *err);
/* Starts sampling. 0, or NTL_ERR_SYSTEM. */
int ntl_profile_perf_enable(struct ntl_profile_perf *h, struct ntl_error *err);
/* Waits up to ms for data. 1 when a buffer has data, 0 on timeout or a
 * signal, NTL_ERR_SYSTEM. */
int ntl_profile_perf_wait(struct ntl_profile_perf *h, int ms, struct ntl_error *err);
/* Reads every ring buffer and feeds its records to p. 0, or the statuses
 * of ntl_profile_perf_next and ntl_profile_perf_feed. */
int ntl_profile_perf_drain(struct ntl_profile_perf *h, struct ntl_profile *p,
                           unsigned bucket_shift, struct ntl_profile_perf_stats *st,
                           struct ntl_error *err);
/* The number of CPUs sampled. */
uint32_t ntl_profile_perf_cpus(const struct ntl_profile_perf *h);
void ntl_profile_perf_close(struct ntl_profile_perf *h);

#ifdef __cplusplus
}
#endif
#endif
