/* What an ETW event gives the profile, decoded (etl.c), so that it can be
 * applied at once (ntl_profile_etl_feed) or kept and applied in time order
 * (etl-log.c). */
#ifndef NTLENS_PROFILE_ETL_ITEM_H
#define NTLENS_PROFILE_ETL_ITEM_H

#include "ntlens/etl_images.h"
#include "ntlens/profile_etl.h"

enum etl_item_type { ITEM_OTHER, ITEM_SAMPLE, ITEM_IMAGE, ITEM_PROCESS, ITEM_THREAD, ITEM_STACK };

struct etl_item {
    enum etl_item_type type;
    bool dcend;                   /* process, thread: the end rundown's */
    enum ntl_etl_image_kind kind; /* image */
    uint32_t tid, pid;            /* sample, thread: tid; process, thread, image: pid */
    uint64_t ts;                  /* the event's timestamp */
    uint64_t ip;                  /* sample */
    uint64_t base, size;          /* image */
    const char *name;             /* image path, process image name */
    /* process: a DCEnd event's error, told only when the process has no
     * name by the event's time (a named one is passed over unread) */
    const struct ntl_error *error;
};

/* A sample as etl_sample_apply takes it: the fields of its item. */
struct etl_sample {
    uint64_t ts, ip;
    uint32_t tid;
};

/* Room for the names an item points to. */
struct etl_item_names {
    struct ntl_etl_image img;
    char process[256];
};

/* ev as an item (names in *names). 0, or NTL_ERR_TRUNCATED,
 * NTL_ERR_FORMAT with err set at the event's offset. */
int etl_item_decode(const struct ntl_etl *t, const struct ntl_etl_event *ev,
                    struct etl_item *it, struct etl_item_names *names, struct ntl_error *err);

/* Applies an item other than a StackWalk event to the profile, as
 * ntl_profile_etl_feed describes: an enum ntl_profile_etl_kind, or
 * NTL_ERR_LIMIT, NTL_ERR_NOMEM. */
int etl_item_apply(struct ntl_profile *p, struct ntl_profile_etl_stacks *stacks,
                   const struct etl_item *it, const struct ntl_profile_etl_options *opt,
                   struct ntl_error *err);

/* NTL_ERR_ARGUMENT for a bucket shift out of range, err set. */
int etl_bucket_shift_bad(unsigned shift, struct ntl_error *err);

/* etl_item_apply of a sample: the log's feed calls it without making
 * the item (most of its records are samples). */
int etl_sample_apply(struct ntl_profile *p, struct ntl_profile_etl_stacks *stacks,
                     const struct etl_sample *s, const struct ntl_profile_etl_options *opt,
                     struct ntl_error *err);

/* opt's bucket shift, checked: 0, or NTL_ERR_ARGUMENT. Inline: it is
 * checked for every event (a call each was 1% of the reading thread). */
static inline int etl_bucket_shift(const struct ntl_profile_etl_options *opt, unsigned *shift,
                                   struct ntl_error *err)
{
    *shift = opt->bucket_shift ? opt->bucket_shift : NTL_PROFILE_MIN_BUCKET_SHIFT;
    if (*shift < NTL_PROFILE_MIN_BUCKET_SHIFT || *shift > NTL_PROFILE_MAX_BUCKET_SHIFT)
        return etl_bucket_shift_bad(*shift, err);
    return 0;
}

#endif
