/* What the ETW producer (etl.c) hands its stacks state (etl-stacks.c). */
#ifndef NTLENS_PROFILE_ETL_STACKS_H
#define NTLENS_PROFILE_ETL_STACKS_H

#include "ntlens/profile_etl.h"

/* A counted sample: its thread, timestamp and index in the profile. 0, or
 * NTL_ERR_LIMIT, NTL_ERR_NOMEM. */
int etl_stacks_sample(struct ntl_profile_etl_stacks *s, uint64_t ts, uint32_t tid, size_t sample,
                      struct ntl_error *err);
/* A StackWalk event (opcodes 32, 34-38). 0, or NTL_ERR_TRUNCATED (at the
 * event's offset), NTL_ERR_LIMIT, NTL_ERR_NOMEM, NTL_ERR_ARGUMENT (after
 * etl_stacks_freeze). */
int etl_stacks_event(struct ntl_profile_etl_stacks *s, const struct ntl_etl_event *ev,
                     struct ntl_error *err);
/* Every StackWalk event is in (a log is about to feed its samples): groups
 * the references now, so that etl_stacks_sample keeps only the samples
 * that claim some. 0, or -1 out of memory. */
int etl_stacks_freeze(struct ntl_profile_etl_stacks *s);

#endif
