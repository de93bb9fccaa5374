/* The profile's events of a trace read in file order, applied in time
 * order (ntl_profile_etl_log_*): a compact record for each sample, image,
 * process and thread event (and each error), merged by time as they are
 * fed, without keeping the decompressed trace as a sorted reader must. */
#include <stdlib.h>
#include <string.h>

#include "etl-item.h"
#include "etl-stacks.h"
#include "model.h"

#define MAX_RECORDS ((size_t)1 << 31)
#define MAX_NAME_BYTES ((size_t)1 << 30)

enum { REC_ERROR = ITEM_STACK + 1 };

/* An item as kept: a is the sample's ip, the thread's pid, or an index
 * (images, name bytes, errors); b the tid or pid. */
struct rec {
    uint64_t ts, a;
    uint32_t b;
    uint8_t type;      /* enum etl_item_type, or REC_ERROR */
    bool dcend;
    bool failed;       /* a process DCEnd whose error is errors[a] */
    uint8_t kind;      /* image: enum ntl_etl_image_kind */
};

struct log_image {
    uint64_t base, size;
    size_t name;       /* in names */
    uint32_t pid;
};

struct run;
struct head;

struct ntl_profile_etl_log {
    struct rec *recs;
    size_t n, cap;
    bool sorted;               /* being fed: runs and heap are set */
    struct run *runs;
    struct head *heap;         /* runs come up with records left, by next record */
    size_t nheap;
    struct head *firsts;       /* every run by its first record */
    size_t nruns, up;          /* firsts[up..] have not come up yet */
    struct log_image *images;
    size_t nimages, cap_images;
    struct ntl_error *errors;
    size_t nerrors, cap_errors;
    struct ntl_buf names;
};

int ntl_profile_etl_log_new(struct ntl_profile_etl_log **out, struct ntl_error *err)
{
    if (!(*out = calloc(1, sizeof **out)))
        return ntl_error_set(err, NTL_ERR_NOMEM, "profile log", NTL_NO_OFFSET, "out of memory");
    ntl_buf_init(&(*out)->names, MAX_NAME_BYTES);
    return 0;
}

void ntl_profile_etl_log_free(struct ntl_profile_etl_log *log)
{
    if (!log)
        return;
    free(log->recs);
    free(log->runs);
    free(log->heap);
    free(log->firsts);
    free(log->images);
    free(log->errors);
    ntl_buf_free(&log->names);
    free(log);
}

static int nomem(struct ntl_error *err)
{
    return ntl_error_set(err, NTL_ERR_NOMEM, "profile log", NTL_NO_OFFSET, "out of memory");
}

/* A new record at ts, or NULL (err set). */
static struct rec *rec_new(struct ntl_profile_etl_log *log, uint64_t ts, uint8_t type,
                           struct ntl_error *err)
{
    if (log->n >= MAX_RECORDS) {
        ntl_error_set(err, NTL_ERR_LIMIT, "profile log", NTL_NO_OFFSET,
                      "more than 2^31 profile events");
        return NULL;
    }
    if (model_reserve((void **)&log->recs, &log->cap, log->n, sizeof *log->recs) < 0) {
        nomem(err);
        return NULL;
    }
    struct rec *r = &log->recs[log->n++];
    memset(r, 0, sizeof *r);
    r->ts = ts;
    r->type = type;
    return r;
}

/* Keeps a copy of what err says; its index, or -1 (err set). */
static long keep_error(struct ntl_profile_etl_log *log, struct ntl_error *err)
{
    if (model_reserve((void **)&log->errors, &log->cap_errors, log->nerrors,
                      sizeof *log->errors) < 0)
        return nomem(err), -1;
    log->errors[log->nerrors] = *err;
    return (long)log->nerrors++;
}

/* Keeps a NUL-terminated name; its offset in names, or -1 (err set). */
static long keep_name(struct ntl_profile_etl_log *log, const char *name, struct ntl_error *err)
{
    size_t at = log->names.len;
    int rc = ntl_buf_append(&log->names, name, strlen(name) + 1);
    if (rc < 0)
        return ntl_error_set(err, rc, "profile log", NTL_NO_OFFSET, "%s",
                             rc == NTL_ERR_LIMIT ? "names exceed 1 GiB" : "out of memory"),
               -1;
    return (long)at;
}

static int keep_image(struct ntl_profile_etl_log *log, struct rec *r, const struct etl_item *it,
                      struct ntl_error *err)
{
    long name = keep_name(log, it->name, err);
    if (name < 0 || model_reserve((void **)&log->images, &log->cap_images, log->nimages,
                                  sizeof *log->images) < 0)
        return name < 0 ? err->status : nomem(err);
    log->images[log->nimages] = (struct log_image){it->base, it->size, (size_t)name, it->pid};
    r->a = log->nimages++;
    r->kind = (uint8_t)it->kind;
    return 0;
}

/* The record of an item (not a StackWalk event). 0, or NTL_ERR_LIMIT,
 * NTL_ERR_NOMEM. */
static int keep_item(struct ntl_profile_etl_log *log, const struct etl_item *it,
                     struct ntl_error *err)
{
    struct rec *r = rec_new(log, it->ts, (uint8_t)it->type, err);
    long at;
    if (!r)
        return err->status;
    r->dcend = it->dcend;
    switch (it->type) {
    case ITEM_SAMPLE: r->a = it->ip; r->b = it->tid; return 0;
    case ITEM_THREAD: r->a = it->pid; r->b = it->tid; return 0;
    case ITEM_IMAGE: return keep_image(log, r, it, err);
    case ITEM_PROCESS:
        r->b = it->pid;
        r->failed = it->error != NULL;
        at = it->error ? keep_error(log, err) : keep_name(log, it->name, err);
        r->a = (uint64_t)at;
        return at < 0 ? err->status : 0;
    default: return 0;
    }
}

/* The error err holds, ev's own, kept to be told at ev's time. 0, or
 * NTL_ERR_LIMIT, NTL_ERR_NOMEM. */
static int keep_event_error(struct ntl_profile_etl_log *log, const struct ntl_etl_event *ev,
                            struct ntl_error *err)
{
    struct rec *r = rec_new(log, ev->timestamp, REC_ERROR, err);
    long at = r ? keep_error(log, err) : -1;
    if (at < 0)
        return err->status;
    r->a = (uint64_t)at;
    return 0;
}

int ntl_profile_etl_log_add(struct ntl_profile_etl_log *log, struct ntl_profile_etl_stacks *stacks,
                            const struct ntl_etl *t, const struct ntl_etl_event *ev,
                            const struct ntl_profile_etl_options *opt, struct ntl_error *err)
{
    struct etl_item it;
    struct etl_item_names names;
    unsigned shift;
    int rc = etl_bucket_shift(opt, &shift, err);
    if (rc < 0)
        return rc;
    if (log->sorted)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "profile log", NTL_NO_OFFSET,
                             "events added after the log was fed");
    if ((rc = etl_item_decode(t, ev, &it, &names, err)) < 0)
        return keep_event_error(log, ev, err);
    if (it.type == ITEM_OTHER || (it.type == ITEM_STACK && !stacks))
        return 0;
    if (it.type != ITEM_STACK)
        return keep_item(log, &it, err);
    /* Stacks are joined to samples by thread and time at the end: their
     * order does not matter, only their errors' does. */
    rc = etl_stacks_event(stacks, ev, err);
    return rc == NTL_ERR_TRUNCATED ? keep_event_error(log, ev, err) : rc;
}

/* ---- in time order ---------------------------------------------------- */

/* The records are ascending runs in file order (a buffer's events are in
 * time order); they are merged as they are fed, from a heap of the runs
 * by (time of the next record, run): equal times come in file order, the
 * order a sorted reader gives. */
struct run {
    size_t at, end;
};

/* A heap entry: a run and the time of its next record. */
struct head {
    uint64_t ts;
    size_t run;
};

static bool head_before(const struct head *x, const struct head *y)
{
    return x->ts != y->ts ? x->ts < y->ts : x->run < y->run;
}

/* Restores the heap below slot i. */
static void sift(struct head *h, size_t n, size_t i)
{
    struct head top = h[i];
    for (size_t c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n && head_before(&h[c + 1], &h[c]))
            c++;
        if (!head_before(&h[c], &top))
            break;
        h[i] = h[c];
    }
    h[i] = top;
}

static int head_cmp(const void *x, const void *y)
{
    return head_before(x, y) ? -1 : head_before(y, x);
}

/* The runs, and their first records in order. The heap holds only the
 * runs whose first record has come up, about as many as the trace had
 * CPUs writing at once, not all of them: net.4.5.2's 95 runs made the
 * heap's sifts 3-4% of `ntlens profile --etl`. 0, or -1 out of memory. */
static int find_runs(struct ntl_profile_etl_log *log)
{
    size_t nruns = 0;
    for (size_t i = 0; i < log->n; i++)
        nruns += !i || log->recs[i].ts < log->recs[i - 1].ts;
    log->runs = malloc((nruns ? nruns : 1) * sizeof *log->runs);
    log->heap = malloc((nruns ? nruns : 1) * sizeof *log->heap);
    log->firsts = malloc((nruns ? nruns : 1) * sizeof *log->firsts);
    if (!log->runs || !log->heap || !log->firsts)
        return -1;
    for (size_t i = 0, r = 0; i < log->n; i++) {
        if (!i || log->recs[i].ts < log->recs[i - 1].ts) {
            log->runs[r] = (struct run){i, i};
            log->firsts[r] = (struct head){log->recs[i].ts, r};
            r++;
        }
        log->runs[r - 1].end = i + 1;
    }
    log->nruns = nruns;
    qsort(log->firsts, nruns, sizeof *log->firsts, head_cmp);
    return 0;
}

/* Puts the runs whose first record comes before the heap's top into the
 * heap (each goes up from the end). */
static void come_up(struct ntl_profile_etl_log *log)
{
    struct head *h = log->heap;
    while (log->up < log->nruns && (!log->nheap || head_before(&log->firsts[log->up], &h[0]))) {
        size_t i = log->nheap++;
        struct head x = log->firsts[log->up++];
        for (; i && head_before(&x, &h[(i - 1) / 2]); i = (i - 1) / 2)
            h[i] = h[(i - 1) / 2];
        h[i] = x;
    }
}

/* The next record in time order, or NULL after the last. */
static const struct rec *next_rec(struct ntl_profile_etl_log *log)
{
    come_up(log);
    if (!log->nheap)
        return NULL;
    struct head *h = log->heap;
    struct run *r = &log->runs[h[0].run];
    const struct rec *rec = &log->recs[r->at++];
    /* The runs are read a record at a time each, in turns: too many
     * streams for the hardware to fetch ahead (the next record's time
     * was a quarter of the feed, waiting for memory). A hint only: past
     * the end it touches nothing. */
    __builtin_prefetch(rec + 16);
    if (r->at < r->end && log->recs[r->at].ts == rec->ts)
        return rec; /* still first: the heap is as it was */
    if (r->at < r->end)
        h[0].ts = log->recs[r->at].ts;
    else
        h[0] = h[--log->nheap];
    if (log->nheap)
        sift(h, log->nheap, 0);
    return rec;
}

/* The item a record other than a sample's or an error's stands for. */
static void item_of(const struct ntl_profile_etl_log *log, const struct rec *r,
                    struct etl_item *it)
{
    memset(it, 0, sizeof *it);
    it->type = (enum etl_item_type)r->type;
    it->ts = r->ts;
    it->dcend = r->dcend;
    switch (r->type) {
    case ITEM_THREAD: it->pid = (uint32_t)r->a; it->tid = r->b; break;
    case ITEM_PROCESS:
        it->pid = r->b;
        if (r->failed)
            it->error = &log->errors[r->a];
        else
            it->name = (const char *)log->names.data + r->a;
        break;
    case ITEM_IMAGE: {
        const struct log_image *g = &log->images[r->a];
        it->kind = (enum ntl_etl_image_kind)r->kind;
        it->pid = g->pid;
        it->base = g->base;
        it->size = g->size;
        it->name = (const char *)log->names.data + g->name;
        break;
    }
    default: break;
    }
}

int ntl_profile_etl_log_feed(struct ntl_profile_etl_log *log, struct ntl_profile *p,
                             struct ntl_profile_etl_stacks *stacks,
                             const struct ntl_profile_etl_options *opt,
                             struct ntl_profile_etl_fed *fed, struct ntl_error *err)
{
    if (!log->sorted) {
        if ((stacks && etl_stacks_freeze(stacks) < 0) || find_runs(log) < 0)
            return nomem(err);
        log->sorted = true;
    }
    const struct rec *r = next_rec(log);
    if (!r)
        return 0;
    fed->timestamp = r->ts;
    if (r->type == REC_ERROR) {
        *err = log->errors[r->a];
        fed->kind = err->status;
        return 1;
    }
    if (r->type == ITEM_SAMPLE) {
        struct etl_sample s = {r->ts, r->a, r->b};
        fed->kind = etl_sample_apply(p, stacks, &s, opt, err);
        return 1;
    }
    struct etl_item it;
    item_of(log, r, &it);
    fed->kind = etl_item_apply(p, stacks, &it, opt, err);
    return 1;
}
