/* StackWalk events into the stacks of their SampledProfile samples. */
#include <stdlib.h>
#include <string.h>

#include "etl-stacks.h"
#include "model.h"
#include "ntlens/reader.h"

#define MAX_ENTRIES ((size_t)1 << 28)

enum ref_kind { REF_FULL, REF_KERNEL_KEY, REF_USER_KEY };

/* A counted sample, joined to its stack references by (tid, timestamp). */
struct smp {
    uint64_t ts;
    uint32_t tid;
    uint32_t sample;      /* the profile's index (at most 2^30) */
};

/* A stack reference. A sample's references follow each other by kind,
 * then by their events' time and arrival (order): the time order a sorted
 * reader gives, whatever order they came in (ntl_profile_etl_log hands
 * them over in file order). */
struct ref {
    uint64_t ts;
    uint64_t ev_ts;       /* the event's own timestamp */
    uint64_t key;         /* key refs: the key; full stacks: frames index */
    uint32_t tid;
    uint32_t count;       /* full stacks: frames */
    uint32_t order;
    uint8_t kind;         /* enum ref_kind */
};

/* A key's stack as one definition event gave it; order as in struct ref. */
struct def {
    uint64_t key, ts;
    size_t at;
    uint32_t count, order;
};

/* A slot of the groups' table: 0 when free, else its group index + 1
 * (at most 2^28, MAX_ENTRIES references) and in the top three bits three
 * of its key's hash, so that another key is told from the slot's mostly
 * by the slot alone, not by loading the group's reference (in 4 bytes:
 * 8-byte slots were 64 page faults more). */
#define SLOT_GROUP(v) (((v) & 0x1fffffffu) - 1)
#define SLOT_CHECK(k) ((uint32_t)((k) >> 61) << 29)
#define FILTER_BIT(g, k) (((k) >> 32) & (4 * (g)->mask + 3))

/* The references grouped by (tid, timestamp), each group with the first
 * counted sample of its pair. The table is built over the references,
 * not the samples: a trace has fewer of them (net.4.5.2: about one for
 * every six samples), and a table over every sample, with the index of
 * each sample's first reference, was a sixth of `ntlens profile --etl`'s
 * page faults. */
struct groups {
    uint32_t *slots;      /* open table, at most half full */
    size_t mask;
    /* A bit per 4 slots, set for the groups' keys by hash (FILTER_BIT):
     * most samples have no reference (72,000 of net.4.5.2's 80,000), and
     * 16 KiB of bits stay in the cache where the 128 KiB of slots did not
     * (the slot's load was 43% of the join's time). */
    uint64_t *filter;
    uint32_t *rep;        /* per group: its first reference */
    uint32_t *of;         /* per reference: its group */
    uint32_t *claim;      /* per group: its sample's index, UINT32_MAX when none */
    uint32_t *first;      /* group g's references: by[first[g]] .. by[first[g + 1]] */
    uint32_t *by;         /* the references, group after group, in arrival order */
    size_t n;
};

struct ntl_profile_etl_stacks {
    struct smp *samples;
    struct ref *refs;
    size_t nsamples, cap_samples, nrefs, cap_refs;
    struct def *defs;
    size_t ndefs, cap_defs;
    uint64_t *frames;
    size_t nframes, cap_frames;
    uint32_t events;      /* StackWalk events so far */
    bool counts_only;     /* ntl_profile_etl_stacks_counts_only */
    /* Set by etl_stacks_freeze: the groups are made, and a sample is kept
     * only when it claims one (the first of its pair): a log feeds its
     * samples after every StackWalk event, so the ~80,000 of net.4.5.2
     * need not all be kept to be joined to ~12,000 references. */
    bool frozen;
    struct groups g;
};

static void groups_free(struct groups *g);

void ntl_profile_etl_stacks_counts_only(struct ntl_profile_etl_stacks *s)
{
    s->counts_only = true;
}

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
    groups_free(&s->g);
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

/* Every bit of tid and ts reaches both halves. The hash before (one
 * multiply, k ^ k >> 29, masked) left most of tid out of the slot's
 * index: samples of one moment on several threads probed long runs of
 * slots, 8% of `ntlens profile --etl net.4.5.2.x64.etl`. */
static uint64_t join_hash(uint32_t tid, uint64_t ts)
{
    uint64_t k = ts * 0x9e3779b97f4a7c15ull ^ tid * 0xc2b2ae3d27d4eb4full;
    k = (k ^ k >> 32) * 0xd6e8feb86659fd93ull;
    return k ^ k >> 32;
}

/* The group of (tid, ts), whose hash is k, or UINT32_MAX with *slot the
 * free slot it would take. */
static uint32_t group_of(const struct ntl_profile_etl_stacks *s, const struct groups *g,
                         uint32_t tid, uint64_t ts, uint64_t k, uint32_t **slot)
{
    uint32_t check = SLOT_CHECK(k);
    for (size_t h = (size_t)k & g->mask;; h = (h + 1) & g->mask) {
        uint32_t v = g->slots[h];
        if (!v) {
            *slot = &g->slots[h];
            return UINT32_MAX;
        }
        if ((v & ~0x1fffffffu) == check && s->refs[g->rep[SLOT_GROUP(v)]].tid == tid &&
            s->refs[g->rep[SLOT_GROUP(v)]].ts == ts)
            return SLOT_GROUP(v);
    }
}

/* The group of a sample's (tid, ts), or UINT32_MAX. */
static uint32_t sample_group(const struct ntl_profile_etl_stacks *s, const struct groups *g,
                             uint32_t tid, uint64_t ts)
{
    uint64_t k = join_hash(tid, ts), bit = FILTER_BIT(g, k);
    uint32_t *slot;
    if (!(g->filter[bit / 64] >> (bit % 64) & 1))
        return UINT32_MAX;
    return group_of(s, g, tid, ts, k, &slot);
}

int etl_stacks_sample(struct ntl_profile_etl_stacks *s, uint64_t ts, uint32_t tid, size_t sample,
                      struct ntl_error *err)
{
    uint32_t *claim = NULL;
    if (s->frozen) {
        uint32_t k = sample_group(s, &s->g, tid, ts);
        if (k == UINT32_MAX || s->g.claim[k] != UINT32_MAX)
            return 0;  /* no reference of its pair, or an earlier sample has them */
        claim = &s->g.claim[k];
    }
    int rc = grow((void **)&s->samples, &s->cap_samples, s->nsamples, sizeof *s->samples, err);
    if (rc < 0)
        return rc;
    if (claim)
        *claim = (uint32_t)s->nsamples;
    s->samples[s->nsamples++] = (struct smp){ts, tid, (uint32_t)sample};
    return 0;
}

/* Appends n pointers of psz bytes from b to the frame pool. */
static int add_frames(struct ntl_profile_etl_stacks *s, const uint8_t *b, size_t n, unsigned psz,
                      size_t *at, struct ntl_error *err)
{
    *at = 0;
    if (s->counts_only)
        return 0;
    /* No frames: nothing to place (and before the first stack the pool is
     * NULL, which even an offset of 0 may not be added to). */
    if (!n) {
        *at = s->nframes;
        return 0;
    }
    if (s->nframes + n - 1 >= MAX_ENTRIES)
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
    if (s->frozen)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "StackWalk", ev->offset,
                             "a StackWalk event after its log was fed");
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

/* Whether x goes before y among one sample's references. */
static bool ref_before(const struct ref *x, const struct ref *y)
{
    if (x->kind != y->kind)
        return x->kind < y->kind;
    if (x->ev_ts != y->ev_ts)
        return x->ev_ts < y->ev_ts;
    return x->order < y->order;
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

/* Appends the frames a ref stands for to stack (counts only: adds their
 * number to depth); false when its key is not defined. */
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
    if (s->counts_only) {
        *depth = count < NTL_PROFILE_MAX_DEPTH - *depth ? *depth + count : NTL_PROFILE_MAX_DEPTH;
        return true;
    }
    for (size_t i = 0; i < count && *depth < NTL_PROFILE_MAX_DEPTH; i++)
        stack[(*depth)++] = s->frames[at + i];
    return true;
}

static void groups_free(struct groups *g)
{
    free(g->slots);
    free(g->filter);
    free(g->rep);
    free(g->of);
    free(g->claim);
    free(g->first);
    free(g->by);
    memset(g, 0, sizeof *g);
}

/* The groups of s's references (g->of), none claimed yet. 0, or -1 out
 * of memory. */
static int groups_find(const struct ntl_profile_etl_stacks *s, struct groups *g)
{
    size_t cap = 16;
    while (cap < 2 * s->nrefs)
        cap *= 2;
    g->slots = malloc(cap * sizeof *g->slots);
    g->filter = calloc(cap / 16, sizeof *g->filter);
    g->rep = malloc((s->nrefs ? s->nrefs : 1) * sizeof *g->rep);
    g->of = malloc((s->nrefs ? s->nrefs : 1) * sizeof *g->of);
    g->claim = malloc((s->nrefs ? s->nrefs : 1) * sizeof *g->claim);
    if (!g->slots || !g->filter || !g->rep || !g->of || !g->claim)
        return -1;
    memset(g->slots, 0, cap * sizeof *g->slots);
    g->mask = cap - 1;
    for (size_t r = 0; r < s->nrefs; r++) {
        uint32_t *free_slot = NULL;
        uint64_t h = join_hash(s->refs[r].tid, s->refs[r].ts), bit = FILTER_BIT(g, h);
        uint32_t k = group_of(s, g, s->refs[r].tid, s->refs[r].ts, h, &free_slot);
        if (k == UINT32_MAX) {
            g->rep[g->n] = (uint32_t)r;
            k = (uint32_t)g->n++;
            *free_slot = SLOT_CHECK(h) | (k + 1);
            g->filter[bit / 64] |= (uint64_t)1 << (bit % 64);
        }
        g->of[r] = k;
    }
    memset(g->claim, 0xff, g->n * sizeof *g->claim);
    return 0;
}

/* Sample i of s claims the group of its (tid, ts) if it is the first. */
static void groups_claim(const struct ntl_profile_etl_stacks *s, struct groups *g, size_t i)
{
    uint32_t k = sample_group(s, g, s->samples[i].tid, s->samples[i].ts);
    if (k != UINT32_MAX && g->claim[k] == UINT32_MAX)
        g->claim[k] = (uint32_t)i;
}

/* Counts the references of unclaimed groups and puts each group's
 * references together in arrival order (a counting sort). 0, or -1 out of
 * memory. */
static int groups_collect(const struct ntl_profile_etl_stacks *s, struct groups *g,
                          uint64_t *unmatched)
{
    free(g->first);
    free(g->by);
    g->first = calloc(g->n + 1, sizeof *g->first);
    g->by = malloc((s->nrefs ? s->nrefs : 1) * sizeof *g->by);
    if (!g->first || !g->by)
        return -1;
    for (size_t r = 0; r < s->nrefs; r++) {
        *unmatched += g->claim[g->of[r]] == UINT32_MAX;
        g->first[g->of[r] + 1]++;
    }
    for (size_t k = 0; k < g->n; k++)
        g->first[k + 1] += g->first[k];
    /* Each placed at its group's cursor, first[k] then ends at group k + 1's start. */
    for (size_t r = 0; r < s->nrefs; r++)
        g->by[g->first[g->of[r]]++] = (uint32_t)r;
    memmove(g->first + 1, g->first, g->n * sizeof *g->first);
    g->first[0] = 0;
    return 0;
}

int etl_stacks_freeze(struct ntl_profile_etl_stacks *s)
{
    if (s->frozen)
        return 0;
    groups_free(&s->g);
    if (groups_find(s, &s->g) < 0)
        return -1;
    s->frozen = true;
    return 0;
}

/* Sorts a sample's few references (insertion). */
static void order_refs(const struct ntl_profile_etl_stacks *s, uint32_t *g, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint32_t r = g[i];
        size_t k = i;
        for (; k && ref_before(&s->refs[r], &s->refs[g[k - 1]]); k--)
            g[k] = g[k - 1];
        g[k] = r;
    }
}

/* Sample i's stack from its references: 0, or NTL_ERR_LIMIT, NTL_ERR_NOMEM. */
static int sample_stack(struct ntl_profile *p, const struct ntl_profile_etl_stacks *s,
                        const struct smp *sm, const uint32_t *g, size_t n,
                        struct ntl_profile_etl_stack_counts *counts, struct ntl_error *err)
{
    uint64_t stack[NTL_PROFILE_MAX_DEPTH];
    struct ntl_profile_sample smp = {0};
    size_t depth = 0;
    for (size_t k = 0; k < n; k++)
        if (!ref_frames(s, &s->refs[g[k]], stack, &depth))
            counts->keys_undefined++;
    if (!depth)
        return 0;
    if (s->counts_only) {
        counts->samples_with_stack++;
        return 0;
    }
    size_t pos = sm->sample;
    ntl_profile_stack_next(p, &pos, &smp);
    size_t skip = stack[0] == smp.ip;
    int rc = ntl_profile_set_stack(p, sm->sample, stack + skip, depth - skip, err);
    if (rc < 0)
        return rc;
    counts->samples_with_stack++;
    return 0;
}

/* The claimed groups in the order of their samples (the order in which
 * their stacks were set when the table was over the samples): *out[k] is
 * a group index, *n their number. A group's claim is its sample's index,
 * below s->nsamples and its own, so they are placed by it, not sorted
 * (a qsort of the claims was 0.8% of `ntlens profile --etl`). 0, or -1
 * out of memory. */
static int claimed_order(const struct ntl_profile_etl_stacks *s, const struct groups *g,
                         uint32_t **out, size_t *n)
{
    uint32_t *at = malloc((s->nsamples ? s->nsamples : 1) * sizeof *at);
    *out = malloc((g->n ? g->n : 1) * sizeof **out);
    if (!at || !*out) {
        free(at);
        return -1;
    }
    memset(at, 0xff, s->nsamples * sizeof *at);
    for (size_t k = 0; k < g->n; k++)
        if (g->claim[k] != UINT32_MAX)
            at[g->claim[k]] = (uint32_t)k;
    *n = 0;
    for (size_t i = 0; i < s->nsamples; i++)
        if (at[i] != UINT32_MAX)
            (*out)[(*n)++] = at[i];
    free(at);
    return 0;
}

int ntl_profile_etl_stacks_finish(struct ntl_profile *p, struct ntl_profile_etl_stacks *s,
                                  struct ntl_profile_etl_stack_counts *counts,
                                  struct ntl_error *err)
{
    struct groups *g = &s->g;
    uint32_t *order = NULL;
    size_t n = 0;
    int rc = 0;
    memset(counts, 0, sizeof *counts);
    if (!s->frozen) {
        groups_free(g);
        if (groups_find(s, g) < 0)
            goto nomem;
        for (size_t i = 0; i < s->nsamples && g->n; i++)
            groups_claim(s, g, i);
    }
    if (groups_collect(s, g, &counts->stacks_unmatched) < 0 || claimed_order(s, g, &order, &n) < 0)
        goto nomem;
    /* qsort wants an array even for none. */
    if (s->ndefs)
        qsort(s->defs, s->ndefs, sizeof *s->defs, def_cmp);
    for (size_t i = 0; i < n && rc >= 0; i++) {
        uint32_t k = order[i], *refs = g->by + g->first[k];
        size_t nk = g->first[k + 1] - g->first[k];
        order_refs(s, refs, nk);
        rc = sample_stack(p, s, &s->samples[g->claim[k]], refs, nk, counts, err);
    }
    free(order);
    return rc;
nomem:
    free(order);
    return ntl_error_set(err, NTL_ERR_NOMEM, "StackWalk", NTL_NO_OFFSET, "out of memory");
}
