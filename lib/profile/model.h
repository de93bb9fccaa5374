/* The profile's insides, shared by the model (profile.c), the report
 * (report.c) and the producers in this module. */
#ifndef NTLENS_PROFILE_MODEL_H
#define NTLENS_PROFILE_MODEL_H

#include "ntlens/buf.h"
#include "ntlens/profile.h"
#include "ntlens/profile_symbols.h"
#include "u64map.h"

/* Distinct buckets hit, processes and threads kept at most. */
#define MODEL_MAX_BUCKETS (1u << 28)
#define MODEL_MAX_IDS (1u << 24)
#define MODEL_MAX_STACK_BYTES ((size_t)8 << 30)
#define MODEL_MAX_SAMPLES ((size_t)1 << 30)
#define MODEL_THREAD_HINTS 256u
/* A space's grid (struct model_space). */
#define MODEL_GRID_CELLS 4096u
#define MODEL_GRID_AFTER 4096u

/* A settled bucket: its number and its hits (MODEL_BIG_HITS: 2^32 - 1 or
 * more, the count kept in its range's big rows). 8 bytes: a profile's
 * rows are most of its report's fresh pages (16-byte rows with their
 * symbol's index: 5,814 page faults for the bench's 920,000 rows). */
struct model_bucket {
    uint32_t bucket;
    uint32_t hits;
};

#define MODEL_NO_SYMBOL UINT32_MAX
#define MODEL_BIG_HITS UINT32_MAX

/* A bucket with its hits in 64 bits: weighted hits logged, a log sorted
 * and collapsed, and the settled rows too big for 32 bits. */
struct model_wide {
    uint64_t hits;
    uint32_t bucket;
};

/* A range's bucket hits (hits.c): rows sorted by bucket, and the hits
 * added since, logged unsorted (a bucket number per hit of weight 1, a
 * row per other hit) until the rows are read or the log grows long. */
struct model_hits {
    struct model_bucket *rows;
    size_t nrows;
    struct model_wide *big;   /* the rows' MODEL_BIG_HITS counts, by bucket */
    size_t nbig;
    uint32_t *log;
    size_t nlog, cap_log;
    struct model_wide *wlog;
    size_t nwlog, cap_wlog;
    /* The symbol index of each row (model_symtab_name), made ahead on two
     * threads by the loader's join: current while names_by is the range's
     * table at generation names_gen (a settle that changes the rows frees
     * it); NULL when none was made. */
    uint32_t *names;
    const struct ntl_profile_symtab *names_by;
    uint64_t names_gen;
};

/* Sorting a log: room reused from range to range (hits.c), one per
 * thread settling logs. */
struct model_scratch {
    uint32_t *log;
    size_t cap_log;
    struct model_wide *rows;
    size_t cap_rows;
};

/* What settling logs changed in the profile's counts (model_hits_settle_in). */
struct model_settle_count {
    size_t buckets;            /* distinct buckets added to the rows */
    size_t unlogged;           /* entries gone from the logs */
    bool changed;              /* some rows changed */
};

struct model_range {
    struct ntl_profile_range pub;
    struct model_hits hits;
    char *name, *path;
    uint32_t path_hash;        /* model_path_hash(path) */
    struct ntl_profile_symtab *syms;
    bool since_start;          /* there before the first sample (ntl_profile_range_since_start) */
};

/* FNV-1a of a path: the ranges of a file are found by comparing these
 * first (a strcmp with each of 300 ranges for each of 300 tables was an
 * eighth of the loader's join). */
static inline uint32_t model_path_hash(const char *s)
{
    uint32_t h = 0x811c9dc5u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x01000193u;
    return h;
}

/* An active range of a space: its first address and index. */
struct model_slot {
    uint64_t base;
    size_t range;
};

/* A process's (or the kernel's) active ranges, sorted by base, disjoint
 * (their last addresses apart, in one small array that finding a sample's
 * range searches), and those it no longer has, in the order they went
 * (for addresses of a stack symbolized after its module was unloaded). */
struct model_space {
    uint32_t pid;
    uint64_t *last;
    struct model_slot *act;
    size_t n, cap, cap_last;
    /* The span of the active ranges cut into grid_cells (at most
     * MODEL_GRID_CELLS) cells of 2^grid_shift bytes from grid_lo, each with
     * the index of the first range ending at or after its start, so a
     * sample searches only the ranges of its cell (a search over all was
     * most of adding a sample). Built after MODEL_GRID_AFTER lookups with
     * the ranges unchanged (a trace that loads modules between samples
     * would rebuild it for each), 0 cells before. */
    uint32_t *grid;
    /* For each cell, 1 + the index of the range holding all of it, else 0
     * (in grid's allocation): a sample there takes its range in one load,
     * not the search's chain of loads from grid to last to act. */
    uint32_t *whole;
    size_t grid_cells, lookups;
    uint64_t grid_lo;
    unsigned grid_shift;
    /* The index of the range model_space_find_hot found last (checked
     * against s->n before use). */
    size_t hot;
    size_t *gone;
    size_t ngone, cap_gone;
};

struct model_proc {
    uint32_t pid;
    size_t space;              /* 1 + its space's index, once known; 0 before */
    size_t spaces_seen;        /* nspaces when it had none (spaces are only added) */
    char *name;
    uint64_t hits, unknown;
};

struct model_thread {
    uint32_t tid, pid;
    uint64_t hits;
};

/* A sample as kept: its stack is depth addresses at frames[off]; placed
 * when a range held its ip (else it counts as unknown). */
struct model_sample {
    uint32_t pid, tid;
    uint64_t weight, ip;
    size_t off;
    uint32_t depth;
    bool placed;
};

struct model_symtab {
    char *path;
    uint32_t path_hash;        /* model_path_hash(path) */
    struct ntl_profile_symtab *syms;
};

struct ntl_profile {
    struct ntl_profile_info info;
    struct model_range *ranges;
    size_t nranges, cap_ranges;
    struct model_space *spaces;
    size_t nspaces, cap_spaces;
    struct u64map space_of;    /* pid -> index in spaces */
    size_t kernel_space;       /* 1 + the kernel's index in spaces, once known; 0 before */
    size_t nbuckets;           /* distinct buckets in the ranges' rows */
    size_t nlogged;            /* hits in the ranges' logs */
    struct model_scratch scratch;
    /* The symbol index of each row of range named_range (report.c), in
     * room reused from range to range: current while that range's table
     * is named_by at generation named_gen and its rows unchanged (a
     * settle that changes rows sets named_by to NULL). */
    uint32_t *syms;
    size_t cap_syms;
    size_t named_range;
    const struct ntl_profile_symtab *named_by;
    uint64_t named_gen;
    struct model_proc *procs;
    size_t nprocs, cap_procs;
    struct u64map proc_of;     /* pid -> index in procs */
    size_t last_proc;          /* the index proc_of gave last */
    struct model_thread *threads;
    size_t nthreads, cap_threads;
    struct u64map thread_of;   /* tid -> index in threads */
    size_t last_thread;        /* the index thread_of gave last */
    /* 1 + the index of a thread by the low bits of its id, in front of
     * thread_of (samples of many threads interleave: a live profile's, the
     * bench's 64; the map's probe was 5% of adding a sample); 0: none. */
    uint32_t thread_hint[MODEL_THREAD_HINTS];
    struct model_symtab *symtabs;
    size_t nsymtabs, cap_symtabs;
    uint64_t total, unknown;
    struct model_sample *samples;
    size_t nsamples, cap_samples;
    size_t ndropped;           /* samples added and not kept (model_keep_sample) */
    struct ntl_buf frames;     /* the samples' stacks, u64 addresses */
    bool no_stacks;            /* ntl_profile_keep_stacks(p, false) */
    struct model_loader *loader;  /* ntl_profile_symbols_start (symload.c); NULL */
};

/* The index of the active range of s holding addr, or -1. */
long model_space_range(const struct model_space *s, uint64_t addr);
/* The same through s's grid (building it when due): for samples. */
long model_space_find_slow(struct model_space *s, uint64_t addr);

/* The first index in [lo, lo + n) whose range ends at or above addr
 * (last[i] its last address), or lo + n. Branch-free (whether a sample's
 * range lies left or right is a coin toss at every step), over the last
 * addresses alone, where a load waits on the one before. */
static inline size_t model_search_last(const uint64_t *last, size_t lo, size_t n,
                                       uint64_t addr)
{
    if (!n)
        return lo;
    while (n > 1) {
        size_t half = n / 2;
        lo = last[lo + half - 1] < addr ? lo + half : lo;
        n -= half;
    }
    return lo + (last[lo] < addr);
}

/* model_space_find_slow with s's grid built and addr in its span, inline
 * (the calls were a quarter of adding a sample's instructions). */
static inline long model_space_find(struct model_space *s, uint64_t addr)
{
    uint64_t k = (addr - s->grid_lo) >> s->grid_shift;
    if (!s->grid_cells || addr < s->grid_lo || k >= s->grid_cells)
        return model_space_find_slow(s, addr);
    if (s->whole[k])
        return (long)s->whole[k] - 1;
    size_t at = model_search_last(s->last, s->grid[k], s->grid[k + 1] - s->grid[k], addr);
    return at < s->n && s->act[at].base <= addr ? (long)s->act[at].range : -1;
}
/* The same, trying first the range this found last: for the kernel's
 * space, where most of a trace's samples land in one module (ntoskrnl.exe
 * held 92% of net.4.5.2's) and the grid's cells, over a span from the
 * kernel's base to win32k's, hold most of its ranges. */
long model_space_find_hot(struct model_space *s, uint64_t addr);

/* The index of the active range of pid's space holding addr, or -1. */
long model_range_at(const struct ntl_profile *p, uint32_t pid, uint64_t addr);

/* The range of pid's space holding addr: an active one, else the last
 * that went; -1 when none. */
long model_range_any(const struct ntl_profile *p, uint32_t pid, uint64_t addr);

/* Keeps a sample (and its stack, and whether a range held it) for ntl_profile_stack_next. 0, or
 * NTL_ERR_LIMIT, NTL_ERR_NOMEM with err set. */
int model_keep_sample(struct ntl_profile *p, const struct ntl_profile_sample *s, uint32_t pid,
                      uint64_t weight, bool placed, struct ntl_error *err);

/* model_keep_sample, with a report's common case here (no stacks, the
 * sample placed in a known process: counted, not kept), a call less per
 * sample. */
static inline int model_note_sample(struct ntl_profile *p, const struct ntl_profile_sample *s,
                                    uint32_t pid, uint64_t weight, bool placed,
                                    struct ntl_error *err)
{
    if (p->no_stacks && placed && pid != NTL_PROFILE_NO_PID &&
        p->nsamples + p->ndropped < MODEL_MAX_SAMPLES) {
        p->ndropped++;
        return 0;
    }
    return model_keep_sample(p, s, pid, weight, placed, err);
}

/* Sets sym[i] to the index (in the sorted table) of the symbol holding
 * row i's bucket start, bucket << shift, as ntl_profile_symtab_lookup
 * finds it (MODEL_NO_SYMBOL for none). The rows are in bucket order, so
 * that is one walk through the table, in one call for all of them. */
void model_symtab_name(struct ntl_profile_symtab *t, const struct model_bucket *rows, size_t n,
                       unsigned shift, uint32_t *sym);

/* Counts count hits in bucket of range (both valid). 0, or NTL_ERR_LIMIT
 * (more than MODEL_MAX_BUCKETS distinct buckets), NTL_ERR_NOMEM. */
int model_hits_add(struct ntl_profile *p, size_t range, uint32_t bucket, uint64_t count,
                   struct ntl_error *err);

/* model_hits_add, with a sample's common case here: one hit, room in the
 * log, far from every limit (a call less per sample). */
static inline int model_hit(struct ntl_profile *p, size_t range, uint32_t bucket, uint64_t count,
                            struct ntl_error *err)
{
    struct model_hits *h = &p->ranges[range].hits;
    if (count != 1 || h->nlog == h->cap_log ||
        p->nbuckets + p->nlogged >= MODEL_MAX_BUCKETS)
        return model_hits_add(p, range, bucket, count, err);
    h->log[h->nlog++] = bucket;
    p->nlogged++;
    return 0;
}

/* Merges the hits logged for range into its rows (before reading them). 0,
 * or -1 out of memory. */
int model_hits_settle(struct ntl_profile *p, size_t range);
/* The same with the caller's scratch, adding to *c what the profile's
 * counts must take (for another thread: it touches nothing else of the
 * profile). 0, or -1 out of memory (h unchanged). */
int model_hits_settle_in(struct model_scratch *s, struct model_hits *h,
                         struct model_settle_count *c);
/* Applies c to p's counts. */
void model_hits_count(struct ntl_profile *p, const struct model_settle_count *c);
void model_scratch_free(struct model_scratch *s);

/* The hits of bucket, a row of h whose hits are MODEL_BIG_HITS. */
uint64_t model_big_hits(const struct model_hits *h, uint32_t bucket);

/* The hits of h's row b. */
static inline uint64_t model_row_hits(const struct model_hits *h, const struct model_bucket *b)
{
    return b->hits != MODEL_BIG_HITS ? b->hits : model_big_hits(h, b->bucket);
}

void model_hits_free(struct model_hits *h);

/* A symbol as a table keeps it: 16 bytes, not the public struct's 24 (600,000
 * symbols were 14 MB, much of it first-touch page faults). name is where
 * its name is in the table's chunks (chunk << 16 | offset: a chunk is
 * 64 KiB, a longer name has one of its own). size is 0 when unknown (or
 * past 4 GiB: no module is that large); sorting sets it for all but the
 * last symbol, which then covers the rest of the module. */
struct model_symbol {
    uint64_t offset;
    uint32_t size;
    uint32_t name;
};

struct ntl_profile_symtab {
    struct model_symbol *v;
    size_t n, cap;
    bool sorted;
    uint64_t gen;             /* symbols added */
    char **chunks;
    size_t nchunks, cap_chunks;
    size_t chunk_used;        /* bytes of the last chunk in use */
    size_t chunk_size;        /* and its size */
};

static inline const char *model_symbol_name(const struct ntl_profile_symtab *t,
                                            const struct model_symbol *s)
{
    return t->chunks[s->name >> 16] + (s->name & 0xffff);
}

/* Sorts the table by offset (once after symbols were added) and sets the
 * unknown sizes; the rows' and lookups' indices are into t->v then. */
void model_symtab_sort(struct ntl_profile_symtab *t);

/* Queues the file of range r (just added) for the loader, when one runs
 * and it is new. 0, or NTL_ERR_NOMEM. */
int model_loader_note(struct ntl_profile *p, const struct model_range *r, struct ntl_error *err);
/* Stops the loader (skipping what it has not begun) and frees it. */
void model_loader_free(struct model_loader *l);
/* Grows an array of elem-sized items to hold n + 1. 0, or -1 out of memory. */
int model_reserve(void **v, size_t *cap, size_t n, size_t elem);

#endif
