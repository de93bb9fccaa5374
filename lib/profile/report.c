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

/* malloc of n items (each call writes the rows it returns), never NULL for
 * n == 0, so NULL means out of memory. */
static void *alloc_rows(size_t n, size_t elem)
{
    return n > SIZE_MAX / elem ? NULL : malloc((n ? n : 1) * elem);
}

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

/* The settled rows of a range's buckets. NULL when out of memory. */
static const struct model_hits *range_hits(struct ntl_profile *p, size_t range,
                                           struct ntl_error *err)
{
    if (range >= p->nranges) {
        ntl_error_set(err, NTL_ERR_ARGUMENT, "profile report", NTL_NO_OFFSET, "no range %zu",
                      range);
        return NULL;
    }
    if (model_hits_settle(p, range) < 0) {
        nomem(err);
        return NULL;
    }
    return &p->ranges[range].hits;
}

/* The symbol index of each of range's rows (settled), or NULL when the
 * range has no table (*t is then NULL too). One walk through the sorted
 * symbols, since the rows are in offset order, done once for a range's
 * function and bucket tables. -1 when out of memory. */
static int name_rows(struct ntl_profile *p, size_t range, const struct ntl_profile_symtab **t,
                     const uint32_t **sym)
{
    struct model_range *r = &p->ranges[range];
    *t = r->syms;
    *sym = NULL;
    if (!r->syms)
        return 0;
    if (r->hits.names && r->hits.names_by == r->syms && r->hits.names_gen == r->syms->gen) {
        *sym = r->hits.names;   /* made by the loader's join */
        return 0;
    }
    if (p->named_range != range || p->named_by != r->syms || p->named_gen != r->syms->gen) {
        if (r->hits.nrows > p->cap_syms) {
            uint32_t *v = realloc(p->syms, r->hits.nrows * sizeof *v);
            if (!v)
                return -1;
            p->syms = v;
            p->cap_syms = r->hits.nrows;
        }
        model_symtab_name(r->syms, r->hits.rows, r->hits.nrows, r->pub.bucket_shift, p->syms);
        p->named_range = range;
        p->named_by = r->syms;
        p->named_gen = r->syms->gen;
    }
    *sym = p->syms;
    return 0;
}

/* A table's symbols and name chunks in locals for the row loops: the
 * rows' stores (of name pointers) may alias the chunks' array, and each
 * row loaded both again through the table. */
struct names {
    const struct model_symbol *v;
    char *const *chunks;
};

static struct names names_of(const struct ntl_profile_symtab *t)
{
    return t ? (struct names){t->v, t->chunks} : (struct names){NULL, NULL};
}

/* Row i's symbol, from name_rows' sym and its table's names, or NULL. */
static const struct model_symbol *row_symbol(struct names t, const uint32_t *sym, size_t i)
{
    return sym && sym[i] != MODEL_NO_SYMBOL ? &t.v[sym[i]] : NULL;
}

static const char *symbol_name(struct names t, const struct model_symbol *s)
{
    return t.chunks[s->name >> 16] + (s->name & 0xffff);
}

int ntl_profile_buckets(struct ntl_profile *p, size_t range, struct ntl_profile_bucket_row **rows,
                        size_t *n, struct ntl_error *err)
{
    const struct model_hits *h = range_hits(p, range, err);
    if (!h)
        return err ? err->status : NTL_ERR_NOMEM;
    struct model_range *r = &p->ranges[range];
    const struct ntl_profile_symtab *t;
    const uint32_t *sym;
    struct ntl_profile_bucket_row *v = alloc_rows(h->nrows, sizeof *v);
    if (!v || name_rows(p, range, &t, &sym) < 0) {
        free(v);
        return nomem(err);
    }
    /* In locals: the rows' stores may alias the profile's fields, so each
     * row loaded them again. */
    const struct model_bucket *b = h->rows;
    const unsigned shift = r->pub.bucket_shift;
    const size_t nrows = h->nrows;
    const struct names tn = names_of(t);
    for (size_t i = 0; i < nrows; i++) {
        uint64_t off = (uint64_t)b[i].bucket << shift;
        const struct model_symbol *s = row_symbol(tn, sym, i);
        v[i] = (struct ntl_profile_bucket_row){off, model_row_hits(h, &b[i]),
                                               s ? symbol_name(tn, s) : NULL,
                                               s ? off - s->offset : 0};
    }
    *rows = v;
    *n = nrows;
    return 0;
}

/* Function rows come in offset order (a row's offset is unique: the
 * symbol holding an offset only moves up the table as the offset grows),
 * so a stable sort by hits alone gives the report's order, ties by
 * offset: an LSD radix sort, most hits first, over the digits the most
 * hits need, each as narrow as they allow (a range's rows are a few
 * thousand: clearing and summing 2,048 counts a pass cost more than the
 * rows did). */
static void sort_functions(struct ntl_profile_function_row *v,
                           struct ntl_profile_function_row *tmp, size_t n)
{
    size_t count[1u << 11];
    uint64_t all = 0;
    for (size_t i = 0; i < n; i++)
        all |= v[i].hits;
    unsigned bits = all ? 64u - (unsigned)__builtin_clzll(all) : 0, passes = (bits + 10) / 11;
    unsigned width = passes ? (bits + passes - 1) / passes : 0;
    size_t digits = (size_t)1 << width;
    for (unsigned pass = 0, shift = 0; pass < passes; pass++, shift += width) {
        uint64_t mask = digits - 1;
        memset(count, 0, digits * sizeof *count);
        for (size_t i = 0; i < n; i++)
            count[(v[i].hits >> shift) & mask]++;
        for (size_t d = digits, sum = 0; d-- > 0;) {
            size_t k = count[d];
            count[d] = sum;
            sum += k;
        }
        for (size_t i = 0; i < n; i++)
            tmp[count[(v[i].hits >> shift) & mask]++] = v[i];
        memcpy(v, tmp, n * sizeof *v);
    }
}

/* A range's buckets per function, in offset order (its rows named by t
 * and sym): a symbol's buckets are adjacent, one row for each run.
 * Returns the number of rows. */
static size_t function_rows(const struct model_range *r, const struct ntl_profile_symtab *t,
                            const uint32_t *sym, struct ntl_profile_function_row *v)
{
    const struct model_hits *h = &r->hits;
    const struct model_bucket *b = h->rows;   /* locals, as in ntl_profile_buckets */
    const unsigned shift = r->pub.bucket_shift;
    const size_t nrows = h->nrows;
    const struct names tn = names_of(t);
    size_t k = 0;
    uint64_t hits = 0;
    uint32_t prev = MODEL_NO_SYMBOL;
    /* Every row written, without a branch on where a function's run ends
     * (a function has two rows or so: that branch was a coin toss), as
     * hits.c's collapse_log: a row of the same symbol as the one before
     * rewrites that one's row with the hits summed. */
    for (size_t i = 0; i < nrows; i++) {
        const struct model_symbol *s = row_symbol(tn, sym, i);
        uint32_t cur = s ? sym[i] : MODEL_NO_SYMBOL;
        uint64_t same = s && cur == prev;
        prev = cur;
        k += 1 - same;
        hits = (hits & (0 - same)) + model_row_hits(h, &b[i]);
        uint64_t off = (uint64_t)b[i].bucket << shift;
        v[k - 1] = (struct ntl_profile_function_row){s ? symbol_name(tn, s) : NULL,
                                                     s ? s->offset : off, hits};
    }
    return k;
}

int ntl_profile_functions(struct ntl_profile *p, size_t range,
                          struct ntl_profile_function_row **rows, size_t *n,
                          struct ntl_error *err)
{
    const struct model_hits *h = range_hits(p, range, err);
    if (!h)
        return err ? err->status : NTL_ERR_NOMEM;
    const struct ntl_profile_symtab *t;
    const uint32_t *sym;
    struct ntl_profile_function_row *v = alloc_rows(h->nrows, sizeof *v),
                                    *tmp = alloc_rows(h->nrows, sizeof *tmp);
    if (!v || !tmp || name_rows(p, range, &t, &sym) < 0) {
        free(v);
        free(tmp);
        return nomem(err);
    }
    size_t k = function_rows(&p->ranges[range], t, sym, v);
    sort_functions(v, tmp, k);
    free(tmp);
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
    struct ntl_profile_symbol s;
    if (g->syms && ntl_profile_symtab_lookup(g->syms, off, &s, &disp))
        snprintf(buf, size, "%s", s.name);
    else
        snprintf(buf, size, "%s+0x%" PRIx64, g->pub.name, off);
    return 1;
}
