/* Kernrate's tables over the model. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "ntlens/profile_report.h"

static int nomem(struct ntl_error *err)
{
    return ntl_error_set(err, NTL_ERR_NOMEM, "profile report", NTL_NO_OFFSET, "out of memory");
}

/* calloc of n items, never NULL for n == 0 (so NULL means out of memory). */
static void *alloc_rows(size_t n, size_t elem) { return calloc(n ? n : 1, elem); }

static int by_hits_then_index(uint64_t ha, uint64_t hb, uint64_t ia, uint64_t ib)
{
    if (ha != hb)
        return ha > hb ? -1 : 1;
    return ia < ib ? -1 : ia > ib;
}

static int module_cmp(const void *a, const void *b)
{
    const struct ntl_profile_module_row *x = a, *y = b;
    return by_hits_then_index(x->hits, y->hits, x->range, y->range);
}

int ntl_profile_modules(const struct ntl_profile *p, struct ntl_profile_module_row **rows,
                        size_t *n, struct ntl_error *err)
{
    size_t k = 0;
    struct ntl_profile_module_row *v = alloc_rows(p->nranges + 1, sizeof *v);
    if (!v)
        return nomem(err);
    for (size_t i = 0; i < p->nranges; i++)
        if (p->ranges[i].pub.hits)
            v[k++] = (struct ntl_profile_module_row){i, &p->ranges[i].pub, p->ranges[i].pub.hits};
    qsort(v, k, sizeof *v, module_cmp);
    if (p->unknown)
        v[k++] = (struct ntl_profile_module_row){NTL_PROFILE_NO_RANGE, NULL, p->unknown};
    *rows = v;
    *n = k;
    return 0;
}

static int process_cmp(const void *a, const void *b)
{
    const struct ntl_profile_process_row *x = a, *y = b;
    return by_hits_then_index(x->hits, y->hits, x->pid, y->pid);
}

int ntl_profile_processes(const struct ntl_profile *p, struct ntl_profile_process_row **rows,
                          size_t *n, struct ntl_error *err)
{
    size_t k = 0;
    struct ntl_profile_process_row *v = alloc_rows(p->nprocs, sizeof *v);
    if (!v)
        return nomem(err);
    for (size_t i = 0; i < p->nprocs; i++)
        if (p->procs[i].hits)
            v[k++] = (struct ntl_profile_process_row){p->procs[i].pid, p->procs[i].name,
                                                      p->procs[i].hits, p->procs[i].unknown};
    qsort(v, k, sizeof *v, process_cmp);
    *rows = v;
    *n = k;
    return 0;
}

static int thread_cmp(const void *a, const void *b)
{
    const struct ntl_profile_thread_row *x = a, *y = b;
    return by_hits_then_index(x->hits, y->hits, x->tid, y->tid);
}

int ntl_profile_threads(const struct ntl_profile *p, struct ntl_profile_thread_row **rows,
                        size_t *n, struct ntl_error *err)
{
    size_t k = 0;
    struct ntl_profile_thread_row *v = alloc_rows(p->nthreads, sizeof *v);
    if (!v)
        return nomem(err);
    for (size_t i = 0; i < p->nthreads; i++)
        if (p->threads[i].hits)
            v[k++] = (struct ntl_profile_thread_row){p->threads[i].tid, p->threads[i].pid,
                                                     p->threads[i].hits};
    qsort(v, k, sizeof *v, thread_cmp);
    *rows = v;
    *n = k;
    return 0;
}

/* Brings the sorted index of the buckets up to date. 0, or -1 out of
 * memory. */
static int index_buckets(struct ntl_profile *p)
{
    if (p->bucket_index && p->indexed_adds == p->bucket_adds)
        return 0;
    model_flush_hits(p);
    struct u64map_slot *v;
    if (u64map_sorted(&p->buckets, &v) < 0)
        return -1;
    free(p->bucket_index);
    p->bucket_index = v;
    p->nbucket_index = p->buckets.count;
    p->indexed_adds = p->bucket_adds;
    return 0;
}

/* The first index of the sorted buckets at or after key. */
static size_t lower_bound(const struct u64map_slot *v, size_t n, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int ntl_profile_buckets(struct ntl_profile *p, size_t range, struct ntl_profile_bucket_row **rows,
                        size_t *n, struct ntl_error *err)
{
    if (range >= p->nranges)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "profile report", NTL_NO_OFFSET,
                             "no range %zu", range);
    if (index_buckets(p) < 0)
        return nomem(err);
    struct model_range *r = &p->ranges[range];
    const struct u64map_slot *ix = p->bucket_index;
    size_t first = lower_bound(ix, p->nbucket_index, (uint64_t)range << 32);
    size_t end = first, at = 0;
    while (end < p->nbucket_index && ix[end].key >> 32 == range)
        end++;
    struct ntl_profile_bucket_row *v = alloc_rows(end - first, sizeof *v);
    if (!v)
        return nomem(err);
    /* In key order: by offset, so the symbols are one walk. */
    for (size_t i = first; i < end; i++) {
        uint64_t off = (ix[i].key & UINT32_MAX) << r->pub.bucket_shift, disp = 0;
        const struct ntl_profile_symbol *s =
            r->syms ? model_symtab_walk(r->syms, off, &disp, &at) : NULL;
        v[i - first] = (struct ntl_profile_bucket_row){off, ix[i].val, s ? s->name : NULL,
                                                       s ? disp : 0};
    }
    *rows = v;
    *n = end - first;
    return 0;
}

static int function_cmp(const void *a, const void *b)
{
    const struct ntl_profile_function_row *x = a, *y = b;
    return by_hits_then_index(x->hits, y->hits, x->offset, y->offset);
}

int ntl_profile_functions(struct ntl_profile *p, size_t range,
                          struct ntl_profile_function_row **rows, size_t *n,
                          struct ntl_error *err)
{
    struct ntl_profile_bucket_row *b;
    size_t nb, k = 0;
    int rc = ntl_profile_buckets(p, range, &b, &nb, err);
    if (rc < 0)
        return rc;
    struct ntl_profile_function_row *v = alloc_rows(nb, sizeof *v);
    if (!v) {
        free(b);
        return nomem(err);
    }
    /* A symbol's buckets are adjacent in offset order: merge each run. */
    for (size_t i = 0; i < nb; i++) {
        if (k && b[i].symbol && v[k - 1].symbol == b[i].symbol &&
            v[k - 1].offset == b[i].offset - b[i].disp) {
            v[k - 1].hits += b[i].hits;
            continue;
        }
        v[k++] = (struct ntl_profile_function_row){b[i].symbol, b[i].offset - b[i].disp,
                                                   b[i].hits};
    }
    free(b);
    qsort(v, k, sizeof *v, function_cmp);
    *rows = v;
    *n = k;
    return 0;
}

long ntl_profile_range_of(const struct ntl_profile *p, uint32_t pid, uint64_t addr)
{
    long r = model_range_any(p, pid, addr);
    return r < 0 ? model_range_any(p, NTL_PROFILE_KERNEL_PID, addr) : r;
}

int ntl_profile_symbolize(struct ntl_profile *p, uint32_t pid, uint64_t addr, char *buf,
                          size_t size)
{
    long r = ntl_profile_range_of(p, pid, addr);
    if (r < 0) {
        snprintf(buf, size, "0x%" PRIx64, addr);
        return 0;
    }
    const struct model_range *g = &p->ranges[r];
    uint64_t off = addr - g->pub.base, disp;
    const struct ntl_profile_symbol *s = g->syms ? ntl_profile_symtab_lookup(g->syms, off, &disp)
                                                 : NULL;
    if (s)
        snprintf(buf, size, "%s", s->name);
    else
        snprintf(buf, size, "%s+0x%" PRIx64, g->pub.name, off);
    return 1;
}
