/* Symbol tables: functions by offset from a module's base. */
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "ntlens/pe.h"

#define SYMTAB_MAX (1u << 24)
/* Names are copied into chunks of this size (one malloc for thousands of
 * names, not one each); a longer name gets a chunk of its own. A symbol
 * holds its name's place in 32 bits (model_symbol), hence at most 2^16
 * chunks. */
#define NAME_CHUNK ((size_t)1 << 16)
#define MAX_CHUNKS ((size_t)1 << 16)

int ntl_profile_symtab_new(struct ntl_profile_symtab **out, struct ntl_error *err)
{
    if (!(*out = calloc(1, sizeof **out)))
        return ntl_error_set(err, NTL_ERR_NOMEM, "symbol table", NTL_NO_OFFSET, "out of memory");
    return 0;
}

void ntl_profile_symtab_free(struct ntl_profile_symtab *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nchunks; i++)
        free(t->chunks[i]);
    free(t->chunks);
    free(t->v);
    free(t);
}

static int nomem(struct ntl_error *err)
{
    return ntl_error_set(err, NTL_ERR_NOMEM, "symbol table", NTL_NO_OFFSET, "out of memory");
}

/* A new chunk of size bytes, the last. 0, or NTL_ERR_LIMIT, NTL_ERR_NOMEM. */
static int new_chunk(struct ntl_profile_symtab *t, size_t size, struct ntl_error *err)
{
    if (t->nchunks >= MAX_CHUNKS)
        return ntl_error_set(err, NTL_ERR_LIMIT, "symbol table", NTL_NO_OFFSET,
                             "more than %zu chunks of names", MAX_CHUNKS);
    char *c = malloc(size);
    if (!c ||
        model_reserve((void **)&t->chunks, &t->cap_chunks, t->nchunks, sizeof *t->chunks) < 0) {
        free(c);
        return nomem(err);
    }
    t->chunks[t->nchunks++] = c;
    t->chunk_used = 0;
    t->chunk_size = size;
    return 0;
}

/* Copies name into t's chunks and sets *at to its place. 0, or
 * NTL_ERR_LIMIT, NTL_ERR_NOMEM. */
static int copy_name(struct ntl_profile_symtab *t, const char *name, uint32_t *at,
                     struct ntl_error *err)
{
    size_t len = strlen(name) + 1;
    int rc;
    if (len > t->chunk_size - t->chunk_used &&
        (rc = new_chunk(t, len > NAME_CHUNK ? len : NAME_CHUNK, err)) < 0)
        return rc;
    memcpy(t->chunks[t->nchunks - 1] + t->chunk_used, name, len);
    *at = (uint32_t)((t->nchunks - 1) << 16 | t->chunk_used);
    t->chunk_used += len;
    return 0;
}

int ntl_profile_symtab_add(struct ntl_profile_symtab *t, const char *name, uint64_t offset,
                           uint64_t size, struct ntl_error *err)
{
    if (t->n >= SYMTAB_MAX)
        return ntl_error_set(err, NTL_ERR_LIMIT, "symbol table", NTL_NO_OFFSET,
                             "more than %u symbols", SYMTAB_MAX);
    /* The call only to grow (a loader adds thousands of symbols a table). */
    if (t->n == t->cap && model_reserve((void **)&t->v, &t->cap, t->n, sizeof *t->v) < 0)
        return nomem(err);
    struct model_symbol *s = &t->v[t->n];
    int rc = copy_name(t, name, &s->name, err);
    if (rc < 0)
        return rc;
    s->offset = offset;
    s->size = size <= UINT32_MAX ? (uint32_t)size : 0;
    t->n++;
    t->sorted = false;
    t->gen++;
    return 0;
}

int ntl_profile_symtab_reserve(struct ntl_profile_symtab *t, size_t n, struct ntl_error *err)
{
    if (n > SYMTAB_MAX - t->n)
        n = SYMTAB_MAX - t->n;   /* the adds past it fail, as without the call */
    if (t->n + n <= t->cap)
        return 0;
    /* One allocation, where doubling from 16 was eight reallocs a table of
     * 2,000 (and on a loader thread eight more mprotects of its arena). */
    struct model_symbol *v = realloc(t->v, (t->n + n) * sizeof *v);
    if (!v)
        return nomem(err);
    t->v = v;
    t->cap = t->n + n;
    return 0;
}

size_t ntl_profile_symtab_count(const struct ntl_profile_symtab *t) { return t->n; }

/* By offset; at one offset the sized symbol first, then by name, so the
 * choice among aliases does not depend on the input's order. */
static int by_offset(const struct ntl_profile_symtab *t, const struct model_symbol *x,
                     const struct model_symbol *y)
{
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return strcmp(model_symbol_name(t, x), model_symbol_name(t, y));
}

static bool in_order(const struct ntl_profile_symtab *t)
{
    for (size_t i = 1; i < t->n; i++)
        if (t->v[i - 1].offset >= t->v[i].offset && by_offset(t, &t->v[i - 1], &t->v[i]) > 0)
            return false;
    return true;
}

/* Moves v[i] down the heap of n until both children are smaller. */
static void sift(const struct ntl_profile_symtab *t, struct model_symbol *v, size_t i, size_t n)
{
    struct model_symbol s = v[i];
    for (size_t c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n && by_offset(t, &v[c], &v[c + 1]) < 0)
            c++;
        if (by_offset(t, &s, &v[c]) >= 0)
            break;
        v[i] = v[c];
    }
    v[i] = s;
}

/* Heapsort: in place (a lookup that sorts cannot fail for memory), and the
 * comparison needs the table for names, which qsort's cannot have. Equal
 * symbols (offset, size and name) are interchangeable, so stability does
 * not matter. */
static void heap_sort(struct ntl_profile_symtab *t)
{
    struct model_symbol *v = t->v;
    for (size_t i = t->n / 2; i-- > 0;)
        sift(t, v, i, t->n);
    for (size_t n = t->n; n > 1; n--) {
        struct model_symbol top = v[0];
        v[0] = v[n - 1];
        v[n - 1] = top;
        sift(t, v, 0, n - 1);
    }
}

/* Offsets strictly ascending (no aliases): a branch-free scan. */
static bool ascending(const struct model_symbol *v, size_t n)
{
    bool up = true;
    for (size_t i = 1; i < n; i++)
        up &= v[i - 1].offset < v[i].offset;
    return up;
}

void model_symtab_sort(struct ntl_profile_symtab *t)
{
    if (t->sorted)
        return;
    /* Most tables come sorted without aliases (the bench's 600,000
     * symbols): each unknown size is the gap to the next, in one pass
     * (the general one below was 39 instructions a symbol with the check). */
    if (ascending(t->v, t->n)) {
        struct model_symbol *v = t->v;
        for (size_t i = 0; i + 1 < t->n; i++) {
            uint64_t gap = v[i + 1].offset - v[i].offset;
            if (!v[i].size && gap <= UINT32_MAX)
                v[i].size = (uint32_t)gap;
        }
        t->sorted = true;
        return;
    }
    /* Tables often come sorted (kallsyms, most symtabs): no sort then. */
    if (!in_order(t))
        heap_sort(t);
    /* An unsized symbol ends where the next one at a higher offset starts;
     * the last one stays unsized and covers the rest of the module (as
     * does one whose next is 4 GiB or more away). */
    for (size_t i = 0, j = 0; i < t->n; i++) {
        while (j < t->n && t->v[j].offset <= t->v[i].offset)
            j++;
        uint64_t gap = j < t->n ? t->v[j].offset - t->v[i].offset : 0;
        if (!t->v[i].size && gap <= UINT32_MAX)
            t->v[i].size = (uint32_t)gap;
    }
    t->sorted = true;
}

/* The index of the symbol for offset given lo, the number of symbols
 * starting at or before it: the first alias at the last such offset, if
 * it covers offset; MODEL_NO_SYMBOL if none does. */
static uint32_t holder(const struct model_symbol *v, size_t lo, uint64_t offset)
{
    /* Aliases sort together; take the first of the run at that offset. */
    while (lo > 1 && v[lo - 2].offset == v[lo - 1].offset)
        lo--;
    if (!lo)
        return MODEL_NO_SYMBOL;
    const struct model_symbol *s = &v[lo - 1];
    /* An unsized last symbol covers the rest of the module. */
    if (s->size && offset - s->offset >= s->size)
        return MODEL_NO_SYMBOL;
    return (uint32_t)(lo - 1);
}

int ntl_profile_symtab_lookup(struct ntl_profile_symtab *t, uint64_t offset,
                              struct ntl_profile_symbol *sym, uint64_t *disp)
{
    model_symtab_sort(t);
    size_t lo = 0, hi = t->n;
    while (lo < hi) {  /* the last symbol starting at or before offset */
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].offset <= offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t i = holder(t->v, lo, offset);
    if (i == MODEL_NO_SYMBOL)
        return 0;
    const struct model_symbol *s = &t->v[i];
    *sym = (struct ntl_profile_symbol){model_symbol_name(t, s), s->offset, s->size};
    *disp = offset - s->offset;
    return 1;
}

void model_symtab_name(struct ntl_profile_symtab *t, const struct model_bucket *rows, size_t n,
                       unsigned shift, uint32_t *sym)
{
    model_symtab_sort(t);
    /* A merge of the rows and the symbols, a step a row or a symbol
     * without a branch on which (a loop per row, ending after 0, 1 or 2
     * symbols, mispredicted its end about once a row): sym[i] is first the
     * count of symbols starting at or before row i's offset. */
    /* The table in locals: the stores to sym may alias it, and each step
     * loaded it again. */
    const struct model_symbol *v = t->v;
    const size_t nsym = t->n;
    size_t i = 0, lo = 0;
    while (i < n && lo < nsym) {
        bool past = v[lo].offset <= (uint64_t)rows[i].bucket << shift;
        sym[i] = (uint32_t)lo;
        lo += past;
        i += !past;
    }
    for (; i < n; i++)
        sym[i] = (uint32_t)nsym;
    for (i = 0; i < n; i++)
        sym[i] = holder(v, sym[i], (uint64_t)rows[i].bucket << shift);
}

int ntl_profile_symtab_from_pe(const void *data, size_t size, struct ntl_profile_symtab **out,
                               struct ntl_error *err)
{
    struct ntl_pe pe;
    struct ntl_pe_exports ex = {0};
    int rc = ntl_pe_parse(data, size, &pe, err);
    if (rc < 0)
        return rc;
    if ((rc = ntl_pe_exports_parse(&pe, &ex, err)) >= 0 &&
        (rc = ntl_profile_symtab_new(out, err)) >= 0) {
        rc = ntl_profile_symtab_reserve(*out, ex.count, err);
        for (size_t i = 0; i < ex.count && rc >= 0; i++)
            if (ex.entries[i].name && ex.entries[i].rva && !ex.entries[i].forwarder)
                rc = ntl_profile_symtab_add(*out, ex.entries[i].name, ex.entries[i].rva, 0, err);
        if (rc < 0) {
            ntl_profile_symtab_free(*out);
            *out = NULL;
        }
    }
    ntl_pe_exports_free(&ex);
    ntl_pe_free(&pe);
    return rc < 0 ? rc : 0;
}

int ntl_profile_use_symbols(struct ntl_profile *p, const char *path,
                            struct ntl_profile_symtab *t, struct ntl_error *err)
{
    char *copy = strdup(path);
    if (!copy ||
        model_reserve((void **)&p->symtabs, &p->cap_symtabs, p->nsymtabs, sizeof *p->symtabs) < 0) {
        free(copy);
        ntl_profile_symtab_free(t);
        return ntl_error_set(err, NTL_ERR_NOMEM, "symbol table", NTL_NO_OFFSET, "out of memory");
    }
    uint32_t h = model_path_hash(copy);
    p->symtabs[p->nsymtabs++] = (struct model_symtab){.path = copy, .path_hash = h, .syms = t};
    for (size_t i = 0; i < p->nranges; i++)
        if (p->ranges[i].path_hash == h && !strcmp(p->ranges[i].path, path))
            p->ranges[i].syms = t;
    return 0;
}
