/* A range's bucket hits, as a log sorted once when read. Adding a hit
 * appends its bucket number to the range's log (a sequential write, where
 * a table of every bucket costs a cache miss a sample once it outgrows the
 * cache); reading the buckets sorts the log (radix, in the cache: one
 * range's log is small), collapses it into (bucket, hits) and merges that
 * into the rows sorted before. A profile can be read and added to again. */
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* A log this long is merged without waiting for a read (and twice the
 * rows, so that merging stays linear in the hits): it bounds the memory
 * of a long profile by its distinct buckets. Told when a hit finds the
 * log full (model_hit appends the others inline). */
#define LOG_MERGE_AT ((size_t)1 << 16)

#define DIGIT_MAX_BITS 11u

static unsigned bits_of(uint32_t v) { return v ? 32u - (unsigned)__builtin_clz(v) : 0; }

/* LSD radix sort of n bucket numbers, over as many digits as the largest
 * needs (a range of 2^18 buckets: two passes); returns whichever of v and
 * tmp holds the result. */
static uint32_t *sort_buckets(uint32_t *v, uint32_t *tmp, size_t n)
{
    size_t count[1u << DIGIT_MAX_BITS];
    uint32_t all = 0;
    for (size_t i = 0; i < n; i++)
        all |= v[i];
    unsigned bits = bits_of(all), passes = (bits + DIGIT_MAX_BITS - 1) / DIGIT_MAX_BITS;
    unsigned width = passes ? (bits + passes - 1) / passes : 0;
    for (unsigned pass = 0, shift = 0; pass < passes; pass++, shift += width) {
        uint32_t mask = (1u << width) - 1;
        memset(count, 0, ((size_t)mask + 1) * sizeof *count);
        for (size_t i = 0; i < n; i++)
            count[(v[i] >> shift) & mask]++;
        for (size_t d = 0, sum = 0; d <= mask; d++) {
            size_t k = count[d];
            count[d] = sum;
            sum += k;
        }
        for (size_t i = 0; i < n; i++)
            tmp[count[(v[i] >> shift) & mask]++] = v[i];
        uint32_t *t = v;
        v = tmp;
        tmp = t;
    }
    return v;
}

/* Sorted bucket numbers into (bucket, hits): each run one row, written
 * at every step without a branch on where runs end (most buckets have a
 * hit or two, so that branch was a misprediction in two). out has room
 * for n rows. */
static size_t collapse_log(const uint32_t *v, size_t n, struct model_wide *out)
{
    if (!n)
        return 0;
    size_t k = 0;
    uint64_t hits = 0;
    uint32_t prev = v[0];
    for (size_t i = 0; i < n; i++) {
        uint64_t same = v[i] == prev;
        prev = v[i];
        k += 1 - same;
        hits = (hits & (0 - same)) + 1;  /* arithmetic, not a branch */
        out[k] = (struct model_wide){hits, prev};
    }
    return k + 1;
}

/* collapse_log into settled rows, for a log shorter than MODEL_BIG_HITS
 * hits (every count fits in 32 bits). */
static size_t collapse_rows(const uint32_t *v, size_t n, struct model_bucket *out)
{
    if (!n)
        return 0;
    size_t k = 0;
    uint32_t hits = 0, prev = v[0];
    for (size_t i = 0; i < n; i++) {
        uint32_t same = v[i] == prev;
        prev = v[i];
        k += 1 - same;
        hits = (hits & (0 - same)) + 1;
        out[k] = (struct model_bucket){prev, hits};
    }
    return k + 1;
}

static int by_bucket(const void *a, const void *b)
{
    uint32_t x = ((const struct model_wide *)a)->bucket,
             y = ((const struct model_wide *)b)->bucket;
    return x < y ? -1 : x > y;
}

/* Weighted hits sorted (producers of counts add a range's buckets in
 * order, so usually they are) and collapsed in place. */
static size_t collapse_weighted(struct model_wide *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 1; i < n; i++)
        if (v[i].bucket < v[i - 1].bucket) {
            qsort(v, n, sizeof *v, by_bucket);
            break;
        }
    for (size_t i = 0; i < n; i++) {
        if (k && v[k - 1].bucket == v[i].bucket)
            v[k - 1].hits += v[i].hits;
        else
            v[k++] = v[i];
    }
    return k;
}

/* Two sorted row lists into out, a bucket in both once. */
static size_t merge(const struct model_wide *x, size_t nx, const struct model_wide *y,
                    size_t ny, struct model_wide *out)
{
    size_t i = 0, j = 0, k = 0;
    while (i < nx && j < ny) {
        if (x[i].bucket < y[j].bucket)
            out[k++] = x[i++];
        else if (y[j].bucket < x[i].bucket)
            out[k++] = y[j++];
        else {
            out[k] = x[i++];
            out[k++].hits += y[j++].hits;
        }
    }
    while (i < nx)
        out[k++] = x[i++];
    while (j < ny)
        out[k++] = y[j++];
    return k;
}

/* Grows a scratch array to n items (kept in the profile, so that the
 * ranges read one after another reuse its pages). 0, or -1. */
static int scratch(void **v, size_t *cap, size_t n, size_t elem)
{
    if (n <= *cap)
        return 0;
    void *nv = realloc(*v, n * elem);
    if (!nv)
        return -1;
    *v = nv;
    *cap = n;
    return 0;
}

/* The log's hits (both kinds, the weighted ones collapsed already)
 * sorted and collapsed, in the scratch rows: sets *out to them and returns
 * how many. The log keeps the same hits, in another order. */
static size_t sorted_log(struct model_scratch *s, struct model_hits *h, struct model_wide **out)
{
    uint32_t *v = sort_buckets(h->log, s->log, h->nlog);
    size_t n = collapse_log(v, h->nlog, s->rows);
    *out = s->rows;
    if (!h->nwlog)
        return n;
    *out = s->rows + n;
    return merge(s->rows, n, h->wlog, h->nwlog, *out);
}

void model_scratch_free(struct model_scratch *s)
{
    free(s->log);
    free(s->rows);
}

/* Settled rows being written, and their big counts. */
struct settled {
    struct model_bucket *rows;
    size_t n;
    struct model_wide *big;
    size_t nbig, cap_big;
};

/* Appends bucket's row, its count among the big ones when 32 bits cannot
 * hold it. 0, or -1 out of memory. */
static int put(struct settled *o, uint32_t bucket, uint64_t hits)
{
    uint32_t small = hits < MODEL_BIG_HITS ? (uint32_t)hits : MODEL_BIG_HITS;
    if (small == MODEL_BIG_HITS) {
        if (model_reserve((void **)&o->big, &o->cap_big, o->nbig, sizeof *o->big) < 0)
            return -1;
        o->big[o->nbig++] = (struct model_wide){hits, bucket};
    }
    o->rows[o->n++] = (struct model_bucket){bucket, small};
    return 0;
}

/* h's settled rows and the sorted rows y merged into o (room for both),
 * a bucket in both once. 0, or -1 out of memory. */
static int merge_settled(const struct model_hits *h, const struct model_wide *y, size_t ny,
                         struct settled *o)
{
    size_t i = 0, j = 0, b = 0;  /* b: the next of h's big counts */
    while (i < h->nrows || j < ny) {
        uint32_t bucket;
        uint64_t hits = 0;
        if (i < h->nrows && (j == ny || h->rows[i].bucket <= y[j].bucket)) {
            bucket = h->rows[i].bucket;
            hits = h->rows[i].hits != MODEL_BIG_HITS ? h->rows[i].hits : h->big[b++].hits;
            i++;
        } else {
            bucket = y[j].bucket;
        }
        if (j < ny && y[j].bucket == bucket)
            hits += y[j++].hits;
        if (put(o, bucket, hits) < 0)
            return -1;
    }
    return 0;
}

/* settle_log for a range with no rows yet and only hits of weight 1 (a
 * report's rule: its first read): the sorted log collapses straight into
 * the rows, without the wide rows and the merge between them (a third of
 * settling the bench's logs). 0, or -1 out of memory (h's hits unchanged). */
static int settle_first(struct model_scratch *s, struct model_hits *h,
                        struct model_settle_count *c)
{
    if (scratch((void **)&s->log, &s->cap_log, h->nlog, sizeof *s->log) < 0)
        return -1;
    struct model_bucket *rows = malloc(h->nlog * sizeof *rows);
    if (!rows)
        return -1;
    size_t n = collapse_rows(sort_buckets(h->log, s->log, h->nlog), h->nlog, rows);
    struct model_bucket *fit = realloc(rows, n * sizeof *rows);
    free(h->rows);   /* none: an empty array at most */
    free(h->big);
    free(h->names);
    h->big = NULL;
    h->nbig = 0;
    h->names = NULL;
    h->rows = fit ? fit : rows;
    h->nrows = n;
    c->changed = true;
    c->buckets += n;
    c->unlogged += h->nlog;
    h->nlog = 0;
    return 0;
}

/* Merges h's log into its rows, with scratch s, counting into c. 0, or -1
 * out of memory (h's hits unchanged). */
static int settle_log(struct model_scratch *s, struct model_hits *h,
                      struct model_settle_count *c)
{
    size_t nw = collapse_weighted(h->wlog, h->nwlog);
    c->unlogged += h->nwlog - nw;
    h->nwlog = nw;
    size_t logged = h->nlog + nw;
    if (!logged)
        return 0;
    if (!h->nrows && !nw && h->nlog < MODEL_BIG_HITS)
        return settle_first(s, h, c);
    struct model_wide *add;
    if (scratch((void **)&s->log, &s->cap_log, h->nlog, sizeof *s->log) < 0 ||
        scratch((void **)&s->rows, &s->cap_rows, 2 * logged, sizeof *s->rows) < 0)
        return -1;
    size_t nadd = sorted_log(s, h, &add);
    struct settled o = {malloc((h->nrows + nadd) * sizeof *o.rows), 0, NULL, 0, 0};
    if (!o.rows || merge_settled(h, add, nadd, &o) < 0) {
        free(o.rows);
        free(o.big);
        return -1;
    }
    free(h->rows);
    free(h->big);
    free(h->names);
    h->names = NULL;
    h->rows = o.rows;
    h->big = o.big;
    h->nbig = o.nbig;
    c->changed = true;
    c->buckets += o.n - h->nrows;
    h->nrows = o.n;
    c->unlogged += logged;
    h->nlog = h->nwlog = 0;
    return 0;
}

int model_hits_settle_in(struct model_scratch *s, struct model_hits *h,
                         struct model_settle_count *c)
{
    if (settle_log(s, h, c) < 0)
        return -1;
    /* A range is read when its hits are in, as a rule: its log's memory
     * goes back for the next ranges' rows (fresh pages otherwise: 1,200
     * page faults of the bench's report), and grows again if need be. */
    free(h->log);
    h->log = NULL;
    h->cap_log = 0;
    return 0;
}

void model_hits_count(struct ntl_profile *p, const struct model_settle_count *c)
{
    p->nbuckets += c->buckets;
    p->nlogged -= c->unlogged;
    if (c->changed)
        p->named_by = NULL;
}

/* Merges h's log into its rows. 0, or -1 out of memory (h's hits
 * unchanged). */
static int settle(struct ntl_profile *p, struct model_hits *h)
{
    struct model_settle_count c = {0};
    int rc = settle_log(&p->scratch, h, &c);
    model_hits_count(p, &c);
    return rc;
}

int model_hits_settle(struct ntl_profile *p, size_t range)
{
    struct model_settle_count c = {0};
    int rc = model_hits_settle_in(&p->scratch, &p->ranges[range].hits, &c);
    model_hits_count(p, &c);
    return rc;
}

/* Every range's log merged, so p->nbuckets is exact. 0, or -1. */
static int settle_all(struct ntl_profile *p)
{
    for (size_t i = 0; i < p->nranges; i++)
        if (settle(p, &p->ranges[i].hits) < 0)
            return -1;
    return 0;
}

/* The row of bucket in h's (settled) rows, or NULL. */
static struct model_bucket *find(struct model_hits *h, uint32_t bucket)
{
    size_t lo = 0, hi = h->nrows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->rows[mid].bucket < bucket)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < h->nrows && h->rows[lo].bucket == bucket ? &h->rows[lo] : NULL;
}

static int nomem(struct ntl_error *err)
{
    return ntl_error_set(err, NTL_ERR_NOMEM, "profile bucket", NTL_NO_OFFSET, "out of memory");
}

/* Near the limit of distinct buckets, whether this hit makes one more is
 * told exactly: the logs are merged and the rows searched. 1 when counted
 * already, 0 when it may be logged, or NTL_ERR_LIMIT, NTL_ERR_NOMEM. */
static int near_limit(struct ntl_profile *p, struct model_hits *h, uint32_t bucket,
                      uint64_t count, struct ntl_error *err)
{
    if (settle_all(p) < 0)
        return nomem(err);
    struct model_bucket *b = find(h, bucket);
    if (b && b->hits < MODEL_BIG_HITS && count < MODEL_BIG_HITS - b->hits) {
        b->hits += (uint32_t)count;
        return 1;
    }
    /* A bucket there already (its count too big for the row) is logged,
     * and added to its row when the logs are next merged. */
    if (!b && p->nbuckets >= MODEL_MAX_BUCKETS)
        return ntl_error_set(err, NTL_ERR_LIMIT, "profile bucket", NTL_NO_OFFSET,
                             "more than %u buckets hit", MODEL_MAX_BUCKETS);
    return 0;
}

int model_hits_add(struct ntl_profile *p, size_t range, uint32_t bucket, uint64_t count,
                   struct ntl_error *err)
{
    struct model_hits *h = &p->ranges[range].hits;
    int rc;
    if (p->nbuckets + p->nlogged >= MODEL_MAX_BUCKETS &&
        (rc = near_limit(p, h, bucket, count, err)) != 0)
        return rc < 0 ? rc : 0;
    if (h->nlog + h->nwlog >= LOG_MERGE_AT && h->nlog + h->nwlog >= 2 * h->nrows &&
        settle(p, h) < 0)
        return nomem(err);
    if (count == 1) {
        if (h->nlog == h->cap_log &&
            model_reserve((void **)&h->log, &h->cap_log, h->nlog, sizeof *h->log) < 0)
            return nomem(err);
        h->log[h->nlog++] = bucket;
    } else {
        if (model_reserve((void **)&h->wlog, &h->cap_wlog, h->nwlog, sizeof *h->wlog) < 0)
            return nomem(err);
        h->wlog[h->nwlog++] = (struct model_wide){count, bucket};
    }
    p->nlogged++;
    return 0;
}

uint64_t model_big_hits(const struct model_hits *h, uint32_t bucket)
{
    size_t lo = 0, hi = h->nbig;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->big[mid].bucket < bucket)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < h->nbig ? h->big[lo].hits : 0;
}

void model_hits_free(struct model_hits *h)
{
    free(h->rows);
    free(h->big);
    free(h->log);
    free(h->wlog);
    free(h->names);
}
