/* The profile model: ranges in address spaces, bucket hits, processes and
 * threads, stacks. */
#include <stdlib.h>
#include <string.h>

#include "model.h"

int model_reserve(void **v, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 16;
    void *nv = realloc(*v, c * elem);
    if (!nv)
        return -1;
    *v = nv;
    *cap = c;
    return 0;
}

int ntl_profile_new(struct ntl_profile **out, struct ntl_error *err)
{
    struct ntl_profile *p = calloc(1, sizeof *p);
    if (!p)
        return ntl_error_set(err, NTL_ERR_NOMEM, "profile", NTL_NO_OFFSET, "out of memory");
    u64map_init(&p->space_of, MODEL_MAX_IDS);
    u64map_init(&p->proc_of, MODEL_MAX_IDS);
    u64map_init(&p->thread_of, MODEL_MAX_IDS);
    ntl_buf_init(&p->frames, MODEL_MAX_STACK_BYTES);
    *out = p;
    return 0;
}

void ntl_profile_free(struct ntl_profile *p)
{
    if (!p)
        return;
    model_loader_free(p->loader);
    for (size_t i = 0; i < p->nranges; i++) {
        free(p->ranges[i].name);
        free(p->ranges[i].path);
        model_hits_free(&p->ranges[i].hits);
    }
    for (size_t i = 0; i < p->nspaces; i++) {
        free(p->spaces[i].last);
        free(p->spaces[i].act);
        free(p->spaces[i].grid);
        free(p->spaces[i].gone);
    }
    for (size_t i = 0; i < p->nprocs; i++)
        free(p->procs[i].name);
    for (size_t i = 0; i < p->nsymtabs; i++) {
        free(p->symtabs[i].path);
        ntl_profile_symtab_free(p->symtabs[i].syms);
    }
    free(p->ranges);
    free(p->spaces);
    free(p->procs);
    free(p->threads);
    free(p->symtabs);
    u64map_free(&p->space_of);
    model_scratch_free(&p->scratch);
    free(p->syms);
    u64map_free(&p->proc_of);
    u64map_free(&p->thread_of);
    ntl_buf_free(&p->frames);
    free(p->samples);
    free(p);
}

struct ntl_profile_info *ntl_profile_info(struct ntl_profile *p) { return &p->info; }

static int nomem(struct ntl_error *err, const char *what)
{
    return ntl_error_set(err, NTL_ERR_NOMEM, what, NTL_NO_OFFSET, "out of memory");
}

uint64_t ntl_profile_bucket_count(uint64_t size, unsigned bucket_shift)
{
    return (size >> bucket_shift) + ((size & ((1ull << bucket_shift) - 1)) != 0);
}

static struct model_space *space_find(const struct ntl_profile *p, uint32_t pid)
{
    const uint64_t *i = u64map_get(&p->space_of, pid);
    return i ? &p->spaces[*i] : NULL;
}

static struct model_space *space_get(struct ntl_profile *p, uint32_t pid, struct ntl_error *err)
{
    struct model_space *s = space_find(p, pid);
    int limited;
    if (s)
        return s;
    if (model_reserve((void **)&p->spaces, &p->cap_spaces, p->nspaces, sizeof *p->spaces) < 0) {
        nomem(err, "profile space");
        return NULL;
    }
    uint64_t *slot = u64map_slot(&p->space_of, pid, &limited);
    if (!slot) {
        ntl_error_set(err, limited ? NTL_ERR_LIMIT : NTL_ERR_NOMEM, "profile space", NTL_NO_OFFSET,
                      limited ? "more than %u processes" : "out of memory", MODEL_MAX_IDS);
        return NULL;
    }
    *slot = p->nspaces;
    s = &p->spaces[p->nspaces++];
    memset(s, 0, sizeof *s);
    s->pid = pid;
    return s;
}

/* The index in s's active ranges of the first one that ends at or above
 * addr (s->n when none does). */
static size_t space_search(const struct model_space *s, uint64_t addr)
{
    return model_search_last(s->last, 0, s->n, addr);
}

long model_space_range(const struct model_space *s, uint64_t addr)
{
    size_t at = space_search(s, addr);
    return at < s->n && s->act[at].base <= addr ? (long)s->act[at].range : -1;
}

/* Builds s's grid (model.h). 0, or -1 out of memory. */
static int grid_build(struct model_space *s)
{
    if (!s->grid && !(s->grid = malloc((2 * MODEL_GRID_CELLS + 1) * sizeof *s->grid)))
        return -1;
    s->whole = s->grid + MODEL_GRID_CELLS + 1;
    uint64_t lo = s->act[0].base, span = s->last[s->n - 1] - lo;
    unsigned shift = 0;
    while (span >> shift >= MODEL_GRID_CELLS)
        shift++;
    size_t cells = (size_t)(span >> shift) + 1, at = 0;
    uint64_t cell = ((uint64_t)1 << shift) - 1;   /* a cell's last byte past its start */
    for (size_t k = 0; k < cells; k++) {
        uint64_t start = lo + ((uint64_t)k << shift);  /* at most the last address */
        while (s->last[at] < start)
            at++;
        s->grid[k] = (uint32_t)at;
        /* Ranges hold fewer than 2^31 (ntl_profile_add_range). */
        s->whole[k] = s->act[at].base <= start && s->last[at] - start >= cell
                          ? (uint32_t)s->act[at].range + 1
                          : 0;
    }
    s->grid[cells] = (uint32_t)s->n;
    s->grid_lo = lo;
    s->grid_shift = shift;
    s->grid_cells = cells;
    return 0;
}

/* The index in s's active ranges of the first one that ends at or above
 * addr (s->n when none does), through s's grid once it has one. */
static size_t space_index(struct model_space *s, uint64_t addr)
{
    if (!s->grid_cells && (s->n < 2 || ++s->lookups < MODEL_GRID_AFTER || grid_build(s) < 0))
        return space_search(s, addr);
    if (addr < s->grid_lo)
        return 0;
    uint64_t k = (addr - s->grid_lo) >> s->grid_shift;
    return k >= s->grid_cells ? s->n
                              : model_search_last(s->last, s->grid[k],
                                                  s->grid[k + 1] - s->grid[k], addr);
}

long model_space_find_slow(struct model_space *s, uint64_t addr)
{
    size_t at = space_index(s, addr);
    return at < s->n && s->act[at].base <= addr ? (long)s->act[at].range : -1;
}

long model_space_find_hot(struct model_space *s, uint64_t addr)
{
    size_t at = s->hot;
    /* The ranges are disjoint: one holding addr is the one. */
    if (at < s->n && s->act[at].base <= addr && addr <= s->last[at])
        return (long)s->act[at].range;
    at = space_index(s, addr);
    if (at >= s->n || s->act[at].base > addr)
        return -1;
    s->hot = at;
    return (long)s->act[at].range;
}

/* Moves s's active ranges from index from on to index to (both arrays). */
static void space_move(struct model_space *s, size_t to, size_t from)
{
    memmove(s->last + to, s->last + from, (s->n - from) * sizeof *s->last);
    memmove(s->act + to, s->act + from, (s->n - from) * sizeof *s->act);
    s->n = s->n + to - from;
    s->grid_cells = 0;
    s->lookups = 0;
}

/* Range idx leaves s; -1 when out of memory to remember it. */
static int space_retire(struct ntl_profile *p, struct model_space *s, size_t idx)
{
    if (model_reserve((void **)&s->gone, &s->cap_gone, s->ngone, sizeof *s->gone) < 0)
        return -1;
    p->ranges[idx].pub.active = false;
    s->gone[s->ngone++] = idx;
    return 0;
}

/* Takes the ranges overlapping [base, last] out of s (they become
 * inactive) and returns where the new one goes, or -1 out of memory. */
static long space_cut(struct ntl_profile *p, struct model_space *s, uint64_t base, uint64_t last)
{
    size_t at = space_search(s, base), j = at;
    while (j < s->n && s->act[j].base <= last)
        if (space_retire(p, s, s->act[j++].range) < 0)
            return -1;
    space_move(s, at, j);
    return (long)at;
}

static int range_check(uint64_t base, uint64_t size, unsigned shift, struct ntl_error *err)
{
    if (!size || base + size - 1 < base)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "profile range", NTL_NO_OFFSET,
                             "range 0x%llx size 0x%llx is empty or wraps",
                             (unsigned long long)base, (unsigned long long)size);
    if (shift < NTL_PROFILE_MIN_BUCKET_SHIFT || shift > NTL_PROFILE_MAX_BUCKET_SHIFT)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "profile range", NTL_NO_OFFSET,
                             "bucket size 2^%u is outside 2^2..2^31", shift);
    if (ntl_profile_bucket_count(size, shift) > UINT32_MAX)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "profile range", NTL_NO_OFFSET,
                             "range of 0x%llx bytes has more than 2^32 buckets of 2^%u",
                             (unsigned long long)size, shift);
    return 0;
}

int ntl_profile_add_range(struct ntl_profile *p, uint32_t pid, const char *name, const char *path,
                          uint64_t base, uint64_t size, unsigned bucket_shift,
                          struct ntl_error *err)
{
    int rc = range_check(base, size, bucket_shift, err);
    if (rc < 0)
        return rc;
    if (p->nranges >= (size_t)INT32_MAX)
        return ntl_error_set(err, NTL_ERR_LIMIT, "profile range", NTL_NO_OFFSET,
                             "more than 2^31 ranges");
    struct model_space *s = space_get(p, pid, err);
    if (!s)
        return err ? err->status : NTL_ERR_NOMEM;
    if (model_reserve((void **)&p->ranges, &p->cap_ranges, p->nranges, sizeof *p->ranges) < 0 ||
        model_reserve((void **)&s->act, &s->cap, s->n, sizeof *s->act) < 0 ||
        model_reserve((void **)&s->last, &s->cap_last, s->n, sizeof *s->last) < 0)
        return nomem(err, "profile range");
    struct model_range *r = &p->ranges[p->nranges];
    memset(r, 0, sizeof *r);
    r->name = strdup(name ? name : "");
    r->path = strdup(path ? path : "");
    if (!r->name || !r->path) {
        free(r->name);
        free(r->path);
        return nomem(err, "profile range");
    }
    r->pub = (struct ntl_profile_range){.name = r->name, .path = r->path, .pid = pid, .base = base,
                                        .size = size, .bucket_shift = bucket_shift,
                                        .active = true};
    r->path_hash = model_path_hash(r->path);
    for (size_t i = 0; i < p->nsymtabs; i++)
        if (p->symtabs[i].path_hash == r->path_hash && !strcmp(p->symtabs[i].path, r->path))
            r->syms = p->symtabs[i].syms;
    long at = model_loader_note(p, r, err) < 0 ? -1 : space_cut(p, s, base, base + (size - 1));
    if (at < 0) {
        free(r->name);
        free(r->path);
        return nomem(err, "profile range");
    }
    space_move(s, (size_t)at + 1, (size_t)at);
    s->act[at] = (struct model_slot){base, p->nranges};
    s->last[at] = base + (size - 1);
    return (int)p->nranges++;
}

int ntl_profile_end_range(struct ntl_profile *p, uint32_t pid, uint64_t base)
{
    struct model_space *s = space_find(p, pid);
    if (!s)
        return NTL_ERR_NOT_FOUND;
    size_t at = space_search(s, base);
    if (at == s->n || s->act[at].base != base)
        return NTL_ERR_NOT_FOUND;
    if (space_retire(p, s, s->act[at].range) < 0)
        return NTL_ERR_NOMEM;
    space_move(s, at, at + 1);
    return 0;
}

size_t ntl_profile_range_count(const struct ntl_profile *p) { return p->nranges; }

const struct ntl_profile_range *ntl_profile_range(const struct ntl_profile *p, size_t index)
{
    return index < p->nranges ? &p->ranges[index].pub : NULL;
}

int ntl_profile_add_hits(struct ntl_profile *p, size_t range, uint64_t bucket, uint64_t count,
                         struct ntl_error *err)
{
    if (range >= p->nranges ||
        bucket >= ntl_profile_bucket_count(p->ranges[range].pub.size,
                                           p->ranges[range].pub.bucket_shift))
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "profile bucket", NTL_NO_OFFSET,
                             "no bucket %llu in range %zu", (unsigned long long)bucket, range);
    if (!count)
        return 0;
    int rc = model_hits_add(p, range, (uint32_t)bucket, count, err);
    if (rc < 0)
        return rc;
    p->ranges[range].pub.hits += count;
    p->total += count;
    return 0;
}
