/* A profile from an ETW trace: SampledProfile events (PerfInfo group,
 * opcode 46: InstructionPointer, ThreadId, Count) land in the ranges of the
 * trace's image events (Load and DCStart add a range, Unload ends it),
 * attributed to the process the sampled thread belongs to (Thread
 * Start/DCStart), named by Process Start/DCStart. The end rundown (DCEnd)
 * adds the modules, threads and names the trace had not told before (its
 * start lost): call ntl_profile_place_late after the last event to place
 * the samples they explain. Feed every event of the
 * trace in time order (ntl_etl_options.sorted) so that each sample meets
 * the modules and threads of its time. Call stacks come from StackWalk
 * events (opcode 32: a whole stack; 37 and 38: the kernel and user keys of
 * compressed stack walking, defined by 34-36 events that may come later),
 * matched to their sample by thread and EventTimeStamp; pass a stacks
 * state and finish it after the last event.
 *
 *     ntl_profile_etl_stacks_new(&st, &err);
 *     while ((rc = ntl_etl_next(t, &ev, &err)) > 0)
 *         if (ntl_profile_etl_feed(p, st, t, &ev, &opt, &err) < 0) ...
 *     ntl_profile_place_late(p, &err);
 *     ntl_profile_etl_stacks_finish(p, st, &counts, &err);
 *     ntl_profile_etl_stacks_free(st);
 */
#ifndef NTLENS_PROFILE_ETL_H
#define NTLENS_PROFILE_ETL_H

#include <stdint.h>

#include "ntlens/error.h"
#include "ntlens/etl.h"
#include "ntlens/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What an event was to the profile (ntl_profile_etl_feed's result). */
enum ntl_profile_etl_kind {
    NTL_PROFILE_ETL_OTHER = 0,   /* not one the profile uses */
    NTL_PROFILE_ETL_SAMPLE = 1,  /* a SampledProfile event, counted */
    NTL_PROFILE_ETL_FILTERED,    /* a SampledProfile event the filters left out */
    NTL_PROFILE_ETL_IMAGE,
    NTL_PROFILE_ETL_PROCESS,
    NTL_PROFILE_ETL_THREAD,
    NTL_PROFILE_ETL_STACK,       /* a StackWalk event, kept for its sample */
};

struct ntl_profile_etl_stacks;

/* A stacks state. 0, or NTL_ERR_NOMEM. */
int ntl_profile_etl_stacks_new(struct ntl_profile_etl_stacks **out, struct ntl_error *err);
void ntl_profile_etl_stacks_free(struct ntl_profile_etl_stacks *s);

/* Keeps no frames, only what ntl_profile_etl_stacks_finish counts, and
 * gives the samples no stacks: for a profile that keeps none
 * (ntl_profile_keep_stacks). Call before the first event. */
void ntl_profile_etl_stacks_counts_only(struct ntl_profile_etl_stacks *s);

/* What ntl_profile_etl_stacks_finish found. */
struct ntl_profile_etl_stack_counts {
    uint64_t samples_with_stack;
    uint64_t stacks_unmatched;   /* StackWalk events of no counted sample */
    uint64_t keys_undefined;     /* key references no definition (at or after them) covers */
};

/* Gives every counted sample the stack its StackWalk events make: the
 * kernel key's frames, then the user key's (or a whole stack), innermost
 * first, without a first frame equal to the sample's ip. 0, or
 * NTL_ERR_LIMIT, NTL_ERR_NOMEM. */
int ntl_profile_etl_stacks_finish(struct ntl_profile *p, struct ntl_profile_etl_stacks *s,
                                  struct ntl_profile_etl_stack_counts *counts,
                                  struct ntl_error *err);

struct ntl_profile_etl_options {
    unsigned bucket_shift;       /* buckets of 2^n bytes for every range; 0: 2 (4 bytes) */
    bool pid_set, tid_set;       /* count only the samples of this process / thread */
    uint32_t pid, tid;
    uint64_t start, end;         /* raw timestamps; 0: no bound (end exclusive) */
};

/* Feeds one event to the profile (stacks may be NULL: no stacks). Returns
 * an enum ntl_profile_etl_kind (>= 0), or, with err set at the event's file
 * offset:
 *   NTL_ERR_TRUNCATED   a SampledProfile, Process, Thread or StackWalk
 *                       payload shorter than its fields
 *   NTL_ERR_FORMAT      a malformed image event (ntl_etl_image_decode)
 *   NTL_ERR_ARGUMENT    opt->bucket_shift is outside 2..31
 *   NTL_ERR_LIMIT, NTL_ERR_NOMEM  the model's bounds (ntl_profile_add_sample)
 * A malformed event changes nothing; the caller may go on with the next. */
int ntl_profile_etl_feed(struct ntl_profile *p, struct ntl_profile_etl_stacks *stacks,
                         const struct ntl_etl *t, const struct ntl_etl_event *ev,
                         const struct ntl_profile_etl_options *opt, struct ntl_error *err);

/* A trace read in file order instead, which a sorted reader's copy of the
 * whole decompressed trace and sort of every event would cost: the log
 * keeps what the profile needs of each event (a few words for a sample),
 * hands StackWalk events to the stacks state at once (they are joined to
 * their samples at the end, whatever their order), and feeds the rest to
 * the profile in time order, file order among equal times: each result,
 * errors included, is the one ntl_profile_etl_feed gives that event from a
 * sorted reader, in the same order. err must not be NULL.
 *
 *     while ((rc = ntl_etl_next(t, &ev, &err)) > 0)
 *         if (ntl_profile_etl_log_add(log, st, t, &ev, &opt, &err) < 0) ...
 *     while ((rc = ntl_profile_etl_log_feed(log, p, st, &opt, &fed, &err)) > 0)
 *         ... fed.kind as ntl_profile_etl_feed returns it ...
 *     ntl_profile_place_late(p, &err);
 *     ntl_profile_etl_stacks_finish(p, st, &counts, &err);
 */
struct ntl_profile_etl_log;

int ntl_profile_etl_log_new(struct ntl_profile_etl_log **out, struct ntl_error *err);
void ntl_profile_etl_log_free(struct ntl_profile_etl_log *log);

/* Keeps one event, in file order; a malformed one keeps its error for
 * ntl_profile_etl_log_feed to return. 0, or NTL_ERR_ARGUMENT (a bucket
 * shift outside 2..31, or the log was fed already), NTL_ERR_LIMIT,
 * NTL_ERR_NOMEM: the log is then incomplete. */
int ntl_profile_etl_log_add(struct ntl_profile_etl_log *log, struct ntl_profile_etl_stacks *stacks,
                            const struct ntl_etl *t, const struct ntl_etl_event *ev,
                            const struct ntl_profile_etl_options *opt, struct ntl_error *err);

/* One kept event as it was fed to the profile. */
struct ntl_profile_etl_fed {
    int kind;              /* what ntl_profile_etl_feed returns: an enum
                            * ntl_profile_etl_kind, or an error (err set) */
    uint64_t timestamp;    /* the event's */
};

/* Feeds the next kept event, in time order: 1 with *fed, 0 after the
 * last, NTL_ERR_NOMEM (sorting them; err set). Pass the same stacks state
 * and options as to ntl_profile_etl_log_add; from the first call on, that
 * state takes no more StackWalk events (it keeps only the samples its
 * references need). */
int ntl_profile_etl_log_feed(struct ntl_profile_etl_log *log, struct ntl_profile *p,
                             struct ntl_profile_etl_stacks *stacks,
                             const struct ntl_profile_etl_options *opt,
                             struct ntl_profile_etl_fed *fed, struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
