/* StackWalk events into the stacks of their SampledProfile samples. */
#include <stdlib.h>
#include <string.h>

#include "etl-stacks.h"
#include "model.h"
#include "ntlens/reader.h"

#define MAX_ENTRIES ((size_t)1 << 28)

enum ref_kind { REF_FULL, REF_KERNEL_KEY, REF_USER_KEY };

/* A sample or a stack reference, joined by (tid, timestamp). References
 * of one sample follow each other in the order of their events' time and
 * then of their arrival (order): the time order a sorted reader gives,
 * whatever order they came in (ntl_profile_etl_log hands them over in file
 * order). A sample's order is its index in the profile. */
struct ref {
    uint64_t ts;
    uint64_t ev_ts;       /* the event's own timestamp */
    uint64_t key;         /* key refs: the key; full stacks: frames index; samples: index */
    uint32_t tid;
    uint32_t count;       /* full stacks: frames */
    uint32_t order;
    uint8_t kind;         /* enum ref_kind; samples use REF_FULL and own no frames */
};

/* A key's stack as one definition event gave it; order as in struct ref. */
struct def {
    uint64_t key, ts;
    size_t at;
    uint32_t count, order;
};

struct ntl_profile_etl_stacks {
    struct ref *samples, *refs;
    size_t nsamples, cap_samples, nrefs, cap_refs;
    struct def *defs;
    size_t ndefs, cap_defs;
    uint64_t *frames;
    size_t nframes, cap_frames;
    uint32_t events;      /* StackWalk events so far */
};

int ntl_profile_etl_stacks_new(struct ntl_profile_etl_stacks **out, struct ntl_error *err)
{
    if (!(*out = calloc(1, sizeof **out)))
        return ntl_error_set(err, NTL_ERR_NOMEM, "StackWalk", NTL_NO_OFFSET, "out of memory");
    return 0;
}

void ntl_profile_etl_stacks_free(struct ntl_profile_etl_stacks *s)
{
    if (!s)
        return;
    free(s->samples);
    free(s->refs);
    free(s->defs);
    free(s->frames);
    free(s);
}

static int too_many(struct ntl_error *err)
{
    return ntl_error_set(err, NTL_ERR_LIMIT, "StackWalk", NTL_NO_OFFSET,
                         "more than 2^28 stack entries");
}

static int grow(void **v, size_t *cap, size_t n, size_t elem, struct ntl_error *err)
{
    if (n >= MAX_ENTRIES)
        return too_many(err);
    if (model_reserve(v, cap, n, elem) < 0)
        return ntl_error_set(err, NTL_ERR_NOMEM, "StackWalk", NTL_NO_OFFSET, "out of memory");
    return 0;
}

int etl_stacks_sample(struct ntl_profile_etl_stacks *s, uint64_t ts, uint32_t tid, size_t sample,
                      struct ntl_error *err)
{
    int rc = grow((void **)&s->samples, &s->cap_samples, s->nsamples, sizeof *s->samples, err);
    if (rc < 0)
        return rc;
    s->samples[s->nsamples++] =
        (struct ref){.ts = ts, .ev_ts = ts, .tid = tid, .key = sample, .order = (uint32_t)sample};
    return 0;
}

/* Appends n pointers of psz bytes from b to the frame pool. */
static int add_frames(struct ntl_profile_etl_stacks *s, const uint8_t *b, size_t n, unsigned psz,
                      size_t *at, struct ntl_error *err)
{
    if (n && s->nframes + n - 1 >= MAX_ENTRIES)
        return too_many(err);
    while (s->nframes + n > s->cap_frames) {
        int rc = grow((void **)&s->frames, &s->cap_frames, s->cap_frames, 8, err);
        if (rc < 0)
            return rc;
    }
    uint64_t *f = s->frames + s->nframes;
    if (psz == 8)
        for (size_t i = 0; i < n; i++)
            f[i] = ntl_le64(b + 8 * i);
    else
        for (size_t i = 0; i < n; i++)
            f[i] = ntl_le32(b + 4 * i);
    *at = s->nframes;
    s->nframes += n;
    return 0;
}

static uint64_t le(const uint8_t *b, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i--;)
        v = v << 8 | b[i];
    return v;
}

int etl_stacks_event(struct ntl_profile_etl_stacks *s, const struct ntl_etl_event *ev,
                     struct ntl_error *err)
{
    const uint8_t *b = ev->payload;
    size_t n = ev->payload_size;
    unsigned psz = ev->is64 ? 8 : 4;
    size_t at;
    int rc;
    if (ev->opcode >= 34 && ev->opcode <= 36) {
        /* A key's definition: StackKey, then the frames. */
        if (n < psz)
            return ntl_error_set(err, NTL_ERR_TRUNCATED, "StackWalk key", ev->offset,
                                 "payload of %zu bytes, %u needed", n, psz);
        if ((rc = grow((void **)&s->defs, &s->cap_defs, s->ndefs, sizeof *s->defs, err)) < 0 ||
            (rc = add_frames(s, b + psz, (n - psz) / psz, psz, &at, err)) < 0)
            return rc;
        s->defs[s->ndefs++] = (struct def){le(b, psz), ev->timestamp, at,
                                           (uint32_t)((n - psz) / psz), s->events++};
        return 0;
    }
    /* EventTimeStamp, StackProcess, StackThread, then frames or a key. */
    size_t need = 16 + (ev->opcode == 32 ? 0 : psz);
    if (n < need)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "StackWalk", ev->offset,
                             "payload of %zu bytes, %zu needed", n, need);
    if ((rc = grow((void **)&s->refs, &s->cap_refs, s->nrefs, sizeof *s->refs, err)) < 0)
        return rc;
    struct ref r = {.ts = le(b, 8), .ev_ts = ev->timestamp, .tid = (uint32_t)le(b + 12, 4),
                    .order = s->events++};
    if (ev->opcode == 32) {
        if ((rc = add_frames(s, b + 16, (n - 16) / psz, psz, &at, err)) < 0)
            return rc;
        r.kind = REF_FULL;
        r.key = at;
        r.count = (uint32_t)((n - 16) / psz);
    } else {
        r.kind = ev->opcode == 37 ? REF_KERNEL_KEY : REF_USER_KEY;
        r.key = le(b + 16, psz);
    }
    s->refs[s->nrefs++] = r;
    return 0;
}

/* By the sample they join: thread, then time. */
static int join_cmp(const struct ref *x, const struct ref *y)
{
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

static int ref_cmp(const void *a, const void *b)
{
    const struct ref *x = a, *y = b;
    int c = join_cmp(x, y);
    if (c)
        return c;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->ev_ts != y->ev_ts)
        return x->ev_ts < y->ev_ts ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static int def_cmp(const void *a, const void *b)
{
    const struct def *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/* The definition of key in force at ts: the first one at or after it (a
 * key's stack is logged when it is deleted or at the rundown, after its
 * uses). NULL when none. */
static const struct def *find_def(const struct ntl_profile_etl_stacks *s, uint64_t key,
                                  uint64_t ts)
{
    size_t lo = 0, hi = s->ndefs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct def *d = &s->defs[mid];
        if (d->key < key || (d->key == key && d->ts < ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->ndefs && s->defs[lo].key == key ? &s->defs[lo] : NULL;
}

/* Appends the frames a ref stands for to stack; false when its key is not
 * defined. */
static bool ref_frames(const struct ntl_profile_etl_stacks *s, const struct ref *r,
                       uint64_t *stack, size_t *depth)
{
    size_t at = (size_t)r->key, count = r->count;
    if (r->kind != REF_FULL) {
        const struct def *d = find_def(s, r->key, r->ts);
        if (!d)
            return false;
        at = d->at;
        count = d->count;
    }
    for (size_t i = 0; i < count && *depth < NTL_PROFILE_MAX_DEPTH; i++)
        stack[(*depth)++] = s->frames[at + i];
    return true;
}

int ntl_profile_etl_stacks_finish(struct ntl_profile *p, struct ntl_profile_etl_stacks *s,
                                  struct ntl_profile_etl_stack_counts *counts,
                                  struct ntl_error *err)
{
    uint64_t stack[NTL_PROFILE_MAX_DEPTH];
    struct ntl_profile_sample smp;
    memset(counts, 0, sizeof *counts);
    /* qsort wants an array even for none. */
    if (s->nsamples)
        qsort(s->samples, s->nsamples, sizeof *s->samples, ref_cmp);
    if (s->nrefs)
        qsort(s->refs, s->nrefs, sizeof *s->refs, ref_cmp);
    if (s->ndefs)
        qsort(s->defs, s->ndefs, sizeof *s->defs, def_cmp);
    size_t j = 0;
    for (size_t i = 0; i < s->nsamples; i++) {
        const struct ref *sm = &s->samples[i];
        size_t depth = 0;
        while (j < s->nrefs && join_cmp(&s->refs[j], sm) < 0) {
            counts->stacks_unmatched++;
            j++;
        }
        for (; j < s->nrefs && !join_cmp(&s->refs[j], sm); j++)
            if (!ref_frames(s, &s->refs[j], stack, &depth))
                counts->keys_undefined++;
        if (!depth)
            continue;
        size_t pos = (size_t)sm->key;
        ntl_profile_stack_next(p, &pos, &smp);
        size_t skip = stack[0] == smp.ip;
        int rc = ntl_profile_set_stack(p, (size_t)sm->key, stack + skip, depth - skip, err);
        if (rc < 0)
            return rc;
        counts->samples_with_stack++;
    }
    counts->stacks_unmatched += s->nrefs - j;
    return 0;
}
