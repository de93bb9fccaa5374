/* Symbol tables loaded on a second thread while samples are added
 * (ntl_profile_symbols_start): making and sorting the bench's 300 tables
 * took 22-25 ms beside 37 ms of adding a million samples, and the two
 * share nothing until the report. Each range's file is queued once as it
 * is added; the join keeps the tables of the modules with hits, in the
 * order the one-thread CLI loaded them, so the report does not depend on
 * which thread loaded what or when. Then both threads settle and name the
 * ranges' hits, the first work of the report, each range on one thread. */
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "ntlens/profile_report.h"
#include "ntlens/thread.h"

enum job_state { JOB_WAITING, JOB_SKIP, JOB_TAKEN, JOB_DONE };

struct load_job {
    char *name, *path;        /* set before the job is queued, never changed */
    size_t next_same;         /* 1 + the next job of the same hash; 0: none */
    bool wanted;              /* the join's: a module with hits needs it */
    /* Under the lock: */
    enum job_state state;
    int rc;
    struct ntl_profile_symtab *t;
    struct ntl_error err;
};

struct model_loader {
    ntl_profile_symtab_loader load;
    void *ctx;
    struct ntl_lock *lock;
    struct ntl_threads *th;   /* NULL: loads at the join, on its thread */
    /* The array moves only under the lock, and only the adding thread
     * grows it; the worker touches it only under the lock. */
    struct load_job *jobs;
    size_t njobs, cap;
    size_t next;              /* the first job no thread has taken */
    bool stop;                /* no more jobs come: drain and return */
    struct u64map by_hash;    /* the adding thread's: hash -> 1 + first job */
    bool loads_done;          /* the worker's queue is empty for good */
    /* The join's: with the samples in and the tables the ranges', both
     * threads settle each range's log and name its rows (what the report
     * would do on one), a range at a time from next_range, below
     * ahead_end, once ahead is set. */
    struct ntl_profile *p;
    bool ahead;
    size_t next_range, ahead_end;
    struct model_scratch scratch;       /* the worker's */
    struct model_settle_count counts;   /* the worker's, applied after its join */
};

static int nomem(struct ntl_error *err)
{
    return ntl_error_set(err, NTL_ERR_NOMEM, "symbol loader", NTL_NO_OFFSET, "out of memory");
}

static uint64_t key_hash(const char *name, const char *path)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *s = path; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    h = (h ^ 0xff) * 0x100000001b3ull;   /* no byte of a name: "ab"+"c" != "a"+"bc" */
    for (const char *s = name; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h == U64MAP_EMPTY ? h - 1 : h;
}

/* 1 + the job of name and path, 0 when none (the adding thread's). */
static size_t job_find(const struct model_loader *l, const char *name, const char *path)
{
    const uint64_t *v = u64map_get(&l->by_hash, key_hash(name, path));
    for (size_t i = v ? (size_t)*v : 0; i; i = l->jobs[i - 1].next_same)
        if (!strcmp(l->jobs[i - 1].path, path) && !strcmp(l->jobs[i - 1].name, name))
            return i;
    return 0;
}

/* Takes jobs until none is left and no more come. */
static void drain(struct model_loader *l)
{
    ntl_lock_take(l->lock);
    for (;;) {
        while (!l->stop && l->next == l->njobs)
            ntl_lock_wait(l->lock);
        if (l->next == l->njobs)
            break;
        size_t i = l->next++;
        if (l->jobs[i].state == JOB_SKIP)
            continue;
        l->jobs[i].state = JOB_TAKEN;
        const char *name = l->jobs[i].name, *path = l->jobs[i].path;
        ntl_lock_drop(l->lock);
        struct ntl_profile_symtab *t = NULL;
        struct ntl_error e = {0};
        int rc = l->load(l->ctx, name, path, &t, &e);
        if (rc >= 0 && t)
            model_symtab_sort(t);   /* here, not in the report */
        ntl_lock_take(l->lock);
        struct load_job *j = &l->jobs[i];
        j->rc = rc < 0 ? rc : 0;
        j->t = rc < 0 ? NULL : t;
        j->err = e;
        j->state = JOB_DONE;
        if (rc < 0)
            ntl_profile_symtab_free(t);
    }
    ntl_lock_drop(l->lock);
}

/* Settles range r's log and names its rows ahead of the report, on this
 * thread (the rows are in its cache then), counting into c. A range left
 * unsettled (out of memory) is settled and named by the report itself.
 * The tables are sorted before this starts, so two threads may read one. */
static void settle_and_name(struct model_range *r, struct model_scratch *s,
                            struct model_settle_count *c)
{
    struct model_hits *h = &r->hits;
    if (model_hits_settle_in(s, h, c) < 0 || !r->syms || !h->nrows)
        return;
    free(h->names);   /* a former join's, for rows that did not change */
    if (!(h->names = malloc(h->nrows * sizeof *h->names)))
        return;
    model_symtab_name(r->syms, h->rows, h->nrows, r->pub.bucket_shift, h->names);
    h->names_by = r->syms;
    h->names_gen = r->syms->gen;
}

/* Takes ranges below ahead_end until none is left. */
static void ahead_share(struct model_loader *l, struct model_scratch *s,
                        struct model_settle_count *c)
{
    ntl_lock_take(l->lock);
    while (l->next_range < l->ahead_end) {
        size_t i = l->next_range++;
        ntl_lock_drop(l->lock);
        settle_and_name(&l->p->ranges[i], s, c);
        ntl_lock_take(l->lock);
    }
    ntl_lock_drop(l->lock);
}

/* Loads, then (at the join) settles and names beside the joining thread. */
static void worker(void *arg)
{
    struct model_loader *l = arg;
    drain(l);
    ntl_lock_take(l->lock);
    l->loads_done = true;
    ntl_lock_wake(l->lock);
    while (!l->ahead)
        ntl_lock_wait(l->lock);
    ntl_lock_drop(l->lock);
    ahead_share(l, &l->scratch, &l->counts);
}

int model_loader_note(struct ntl_profile *p, const struct model_range *r, struct ntl_error *err)
{
    struct model_loader *l = p->loader;
    if (!l || job_find(l, r->name, r->path))
        return 0;
    char *name = strdup(r->name), *path = strdup(r->path);
    int limited;
    uint64_t *slot = name && path ? u64map_slot(&l->by_hash, key_hash(name, path), &limited)
                                  : NULL;
    ntl_lock_take(l->lock);
    if (!slot || model_reserve((void **)&l->jobs, &l->cap, l->njobs, sizeof *l->jobs) < 0) {
        ntl_lock_drop(l->lock);
        free(name);
        free(path);
        return nomem(err);
    }
    l->jobs[l->njobs] = (struct load_job){.name = name, .path = path, .next_same = *slot};
    *slot = ++l->njobs;
    ntl_lock_wake(l->lock);
    ntl_lock_drop(l->lock);
    return 0;
}

int ntl_profile_symbols_start(struct ntl_profile *p, ntl_profile_symtab_loader load, void *ctx,
                              bool thread, struct ntl_error *err)
{
    if (p->loader)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "symbol loader", NTL_NO_OFFSET,
                             "already started");
    struct model_loader *l = calloc(1, sizeof *l);
    if (!l || !(l->lock = ntl_lock_new())) {
        free(l);
        return nomem(err);
    }
    l->load = load;
    l->ctx = ctx;
    l->p = p;
    u64map_init(&l->by_hash, SIZE_MAX);
    p->loader = l;
    for (size_t i = 0; i < p->nranges; i++)
        if (model_loader_note(p, &p->ranges[i], err) < 0) {
            p->loader = NULL;
            model_loader_free(l);
            return NTL_ERR_NOMEM;
        }
    /* No thread: the join loads on its own (the same jobs, in order). */
    if (thread && ntl_threads_start(&l->th, 1, worker, l) < 0)
        l->th = NULL;
    return 0;
}

bool ntl_profile_symbols_threaded(const struct ntl_profile *p)
{
    return p->loader && p->loader->th;
}

/* Ends the queue; jobs not begun are skipped unless wanted. Then waits
 * for the worker to load what is left (loads never run on two threads at
 * once: a loader need not be thread-safe, libelf's elf_version is not),
 * or, without one, loads it here. */
static void finish_loads(struct model_loader *l)
{
    ntl_lock_take(l->lock);
    for (size_t i = l->next; i < l->njobs; i++)
        if (!l->jobs[i].wanted)
            l->jobs[i].state = JOB_SKIP;
    l->stop = true;
    ntl_lock_wake(l->lock);
    if (l->th)
        while (!l->loads_done)
            ntl_lock_wait(l->lock);
    ntl_lock_drop(l->lock);
    if (!l->th)
        drain(l);
}

/* Settles and names the ranges below end on both threads (end 0: none),
 * then joins the worker. Only beside a thread: alone, settling ranges the
 * report may never read would be work added, not moved. */
static void finish_ahead(struct model_loader *l, size_t end)
{
    if (!l->th)
        return;
    for (size_t i = 0; i < end; i++)
        if (l->p->ranges[i].syms)
            model_symtab_sort(l->p->ranges[i].syms);
    ntl_lock_take(l->lock);
    l->ahead_end = end;
    l->ahead = true;
    ntl_lock_wake(l->lock);
    ntl_lock_drop(l->lock);
    struct model_settle_count c = {0};
    ahead_share(l, &l->p->scratch, &c);
    ntl_threads_join(l->th);
    l->th = NULL;
    model_hits_count(l->p, &c);
    model_hits_count(l->p, &l->counts);
}

void model_loader_free(struct model_loader *l)
{
    if (!l)
        return;
    finish_loads(l);
    finish_ahead(l, 0);
    for (size_t i = 0; i < l->njobs; i++) {
        free(l->jobs[i].name);
        free(l->jobs[i].path);
        ntl_profile_symtab_free(l->jobs[i].t);
    }
    free(l->jobs);
    u64map_free(&l->by_hash);
    model_scratch_free(&l->scratch);
    ntl_lock_free(l->lock);
    free(l);
}

struct path_row {
    const char *path;
    size_t row;
};

static int by_path_then_row(const void *a, const void *b)
{
    const struct path_row *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    return c ? c : (x->row > y->row) - (x->row < y->row);
}

/* For each row, its range when it is the first row for its file (a module
 * seen in several processes is loaded once), else NULL: by a sort of the
 * rows by path (comparing each row with all before it was 45,000 strcmp
 * for 300 modules). NULL when out of memory. */
static const struct ntl_profile_range **first_of_paths(const struct ntl_profile_module_row *rows,
                                                       size_t n)
{
    const struct ntl_profile_range **first = calloc(n ? n : 1, sizeof *first);
    struct path_row *v = malloc((n ? n : 1) * sizeof *v);
    size_t k = 0;
    if (!first || !v) {
        free(v);
        free(first);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (rows[i].r)
            v[k++] = (struct path_row){rows[i].r->path, i};
    qsort(v, k, sizeof *v, by_path_then_row);
    for (size_t i = 0; i < k; i++)
        if (!i || strcmp(v[i - 1].path, v[i].path))
            first[v[i].row] = rows[v[i].row].r;
    free(v);
    return first;
}

/* Hands the tables of rows' modules to p, in row order. */
static int use_tables(struct ntl_profile *p, struct model_loader *l,
                      const struct ntl_profile_range **first, size_t n,
                      ntl_profile_symtab_failed failed, void *ctx, struct ntl_error *err)
{
    for (size_t i = 0; i < n; i++) {
        const struct ntl_profile_range *g = first[i];
        size_t k = g ? job_find(l, g->name, g->path) : 0;
        struct load_job *j = k ? &l->jobs[k - 1] : NULL;
        if (j && j->rc < 0 && failed)
            failed(ctx, g, &j->err);
        if (!j || !j->t)
            continue;
        struct ntl_profile_symtab *t = j->t;
        j->t = NULL;
        if (ntl_profile_use_symbols(p, g->path, t, err) < 0)
            return err ? err->status : NTL_ERR_NOMEM;
    }
    return 0;
}

int ntl_profile_symbols_join(struct ntl_profile *p, ntl_profile_symtab_failed failed, void *ctx,
                             struct ntl_error *err)
{
    struct model_loader *l = p->loader;
    struct ntl_profile_module_row *rows = NULL;
    const struct ntl_profile_range **first = NULL;
    size_t n = 0;
    if (!l)
        return 0;
    p->loader = NULL;
    int rc = ntl_profile_modules(p, &rows, &n, err);
    if (rc >= 0 && !(first = first_of_paths(rows, n)))
        rc = nomem(err);
    for (size_t i = 0; rc >= 0 && i < n; i++) {
        const struct ntl_profile_range *g = first[i];
        size_t k = g ? job_find(l, g->name, g->path) : 0;
        if (k)
            l->jobs[k - 1].wanted = true;
    }
    finish_loads(l);
    if (rc >= 0)
        rc = use_tables(p, l, first, n, failed, ctx, err);
    finish_ahead(l, rc >= 0 ? p->nranges : 0);
    free(first);
    free(rows);
    model_loader_free(l);
    return rc;
}
