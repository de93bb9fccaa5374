/* Symbol tables: functions by offset from a module's base. */
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "ntlens/pe.h"

#define SYMTAB_MAX (1u << 24)
/* Names are copied into chunks of this size (one malloc for thousands of
 * names, not one each); a longer name gets a chunk of its own. */
#define NAME_CHUNK ((size_t)64 << 10)

struct ntl_profile_symtab {
    struct ntl_profile_symbol *v;
    size_t n, cap;
    bool sorted;
    uint64_t gen;             /* symbols added */
    char **chunks;
    size_t nchunks, cap_chunks;
    char *name_at;            /* where the last chunk's free bytes start */
    size_t chunk_left;        /* and how many there are */
};

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

/* A copy of name in t's chunks, or NULL out of memory. */
static char *copy_name(struct ntl_profile_symtab *t, const char *name)
{
    size_t len = strlen(name) + 1;
    if (len > t->chunk_left) {
        size_t size = len > NAME_CHUNK ? len : NAME_CHUNK;
        char *c = malloc(size);
        if (!c || model_reserve((void **)&t->chunks, &t->cap_chunks, t->nchunks,
                                sizeof *t->chunks) < 0) {
            free(c);
            return NULL;
        }
        t->chunks[t->nchunks++] = t->name_at = c;
        t->chunk_left = size;
    }
    char *at = t->name_at;
    memcpy(at, name, len);
    t->name_at += len;
    t->chunk_left -= len;
    return at;
}

int ntl_profile_symtab_add(struct ntl_profile_symtab *t, const char *name, uint64_t offset,
                           uint64_t size, struct ntl_error *err)
{
    if (t->n >= SYMTAB_MAX)
        return ntl_error_set(err, NTL_ERR_LIMIT, "symbol table", NTL_NO_OFFSET,
                             "more than %u symbols", SYMTAB_MAX);
    char *copy;
    if (model_reserve((void **)&t->v, &t->cap, t->n, sizeof *t->v) < 0 ||
        !(copy = copy_name(t, name)))
        return ntl_error_set(err, NTL_ERR_NOMEM, "symbol table", NTL_NO_OFFSET, "out of memory");
    t->v[t->n++] = (struct ntl_profile_symbol){.name = copy, .offset = offset, .size = size};
    t->sorted = false;
    t->gen++;
    return 0;
}

size_t ntl_profile_symtab_count(const struct ntl_profile_symtab *t) { return t->n; }

/* By offset; at one offset the sized symbol first, then by name, so the
 * choice among aliases does not depend on the input's order. */
static int by_offset(const void *a, const void *b)
{
    const struct ntl_profile_symbol *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return strcmp(x->name, y->name);
}

static bool in_order(const struct ntl_profile_symtab *t)
{
    for (size_t i = 1; i < t->n; i++)
        if (t->v[i - 1].offset >= t->v[i].offset && by_offset(&t->v[i - 1], &t->v[i]) > 0)
            return false;
    return true;
}

static void sort(struct ntl_profile_symtab *t)
{
    /* Tables often come sorted (kallsyms, most symtabs): no qsort then. An
     * empty table's array is NULL, which qsort may not take. */
    if (t->n && !in_order(t))
        qsort(t->v, t->n, sizeof *t->v, by_offset);
    /* An unsized symbol ends where the next one at a higher offset starts;
     * the last one stays unsized and covers the rest of the module. */
    for (size_t i = 0, j = 0; i < t->n; i++) {
        while (j < t->n && t->v[j].offset <= t->v[i].offset)
            j++;
        if (!t->v[i].size && j < t->n)
            t->v[i].size = t->v[j].offset - t->v[i].offset;
    }
    t->sorted = true;
}

/* The symbol for offset given lo, the number of symbols starting at or
 * before it: the first alias at the last such offset, if it covers offset. */
static const struct ntl_profile_symbol *holder(const struct ntl_profile_symtab *t, size_t lo,
                                               uint64_t offset, uint64_t *disp)
{
    /* Aliases sort together; take the first of the run at that offset. */
    while (lo > 1 && t->v[lo - 2].offset == t->v[lo - 1].offset)
        lo--;
    if (!lo)
        return NULL;
    const struct ntl_profile_symbol *s = &t->v[lo - 1];
    /* An unsized last symbol covers the rest of the module. */
    if (s->size && offset - s->offset >= s->size)
        return NULL;
    *disp = offset - s->offset;
    return s;
}

const struct ntl_profile_symbol *ntl_profile_symtab_lookup(struct ntl_profile_symtab *t,
                                                           uint64_t offset, uint64_t *disp)
{
    if (!t->sorted)
        sort(t);
    size_t lo = 0, hi = t->n;
    while (lo < hi) {  /* the last symbol starting at or before offset */
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].offset <= offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return holder(t, lo, offset, disp);
}

void model_symtab_name(struct ntl_profile_symtab *t, struct model_bucket *rows, size_t n,
                       unsigned shift)
{
    if (!t->sorted)
        sort(t);
    uint64_t disp;
    for (size_t i = 0, lo = 0; i < n; i++) {
        uint64_t off = (uint64_t)rows[i].bucket << shift;
        while (lo < t->n && t->v[lo].offset <= off)
            lo++;
        const struct ntl_profile_symbol *s = holder(t, lo, off, &disp);
        rows[i].sym = s ? (uint32_t)(s - t->v) : MODEL_NO_SYMBOL;
    }
}

const struct ntl_profile_symbol *model_symtab_sorted(struct ntl_profile_symtab *t)
{
    if (!t->sorted)
        sort(t);
    return t->v;
}

uint64_t model_symtab_gen(const struct ntl_profile_symtab *t) { return t->gen; }

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
    p->symtabs[p->nsymtabs++] = (struct model_symtab){.path = copy, .syms = t};
    for (size_t i = 0; i < p->nranges; i++)
        if (!strcmp(p->ranges[i].path, path))
            p->ranges[i].syms = t;
    return 0;
}
