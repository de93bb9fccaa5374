/* Samples into the model: the bucket an address falls in, the process and
 * thread it is attributed to, and its stack. */
#include <stdlib.h>
#include <string.h>

#include "model.h"

static int id_error(struct ntl_error *err, int limited, const char *what)
{
    return ntl_error_set(err, limited ? NTL_ERR_LIMIT : NTL_ERR_NOMEM, what, NTL_NO_OFFSET,
                         limited ? "more than %u ids" : "out of memory", MODEL_MAX_IDS);
}

/* proc_get past its first check, out of line: inlined, its registers were
 * saved and restored on every sample (20 instructions of 200). */
static __attribute__((noinline)) struct model_proc *proc_find(struct ntl_profile *p,
                                                              uint32_t pid,
                                                              struct ntl_error *err)
{
    const uint64_t *i = u64map_get(&p->proc_of, pid);
    int limited = 0;
    if (i)
        return &p->procs[p->last_proc = *i];
    if (model_reserve((void **)&p->procs, &p->cap_procs, p->nprocs, sizeof *p->procs) < 0) {
        id_error(err, 0, "profile process");
        return NULL;
    }
    uint64_t *slot = u64map_slot(&p->proc_of, pid, &limited);
    if (!slot) {
        id_error(err, limited, "profile process");
        return NULL;
    }
    *slot = p->nprocs;
    struct model_proc *pr = &p->procs[p->nprocs++];
    memset(pr, 0, sizeof *pr);
    pr->pid = pid;
    return pr;
}

/* thread_get past its hint, out of line (as proc_find). */
static __attribute__((noinline)) struct model_thread *thread_find(struct ntl_profile *p,
                                                                  uint32_t tid,
                                                                  struct ntl_error *err)
{
    uint32_t *hint = &p->thread_hint[tid % MODEL_THREAD_HINTS];
    const uint64_t *i = u64map_get(&p->thread_of, tid);
    int limited = 0;
    if (i && *i < UINT32_MAX)
        *hint = (uint32_t)*i + 1;
    if (i)
        return &p->threads[p->last_thread = *i];
    if (model_reserve((void **)&p->threads, &p->cap_threads, p->nthreads, sizeof *p->threads) <
        0) {
        id_error(err, 0, "profile thread");
        return NULL;
    }
    uint64_t *slot = u64map_slot(&p->thread_of, tid, &limited);
    if (!slot) {
        id_error(err, limited, "profile thread");
        return NULL;
    }
    *slot = p->nthreads;
    struct model_thread *t = &p->threads[p->nthreads++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->pid = NTL_PROFILE_NO_PID;
    return t;
}

static inline struct model_proc *proc_get(struct ntl_profile *p, uint32_t pid,
                                          struct ntl_error *err)
{
    /* Samples come in runs of one process: the last one asked first. */
    if (p->last_proc < p->nprocs && p->procs[p->last_proc].pid == pid)
        return &p->procs[p->last_proc];
    return proc_find(p, pid, err);
}

static inline struct model_thread *thread_get(struct ntl_profile *p, uint32_t tid,
                                              struct ntl_error *err)
{
    /* A trace's samples often come in runs of one thread (an idle CPU's). */
    if (p->last_thread < p->nthreads && p->threads[p->last_thread].tid == tid)
        return &p->threads[p->last_thread];
    uint32_t hint = p->thread_hint[tid % MODEL_THREAD_HINTS];
    if (hint && p->threads[hint - 1].tid == tid)
        return &p->threads[p->last_thread = hint - 1];
    return thread_find(p, tid, err);
}

int ntl_profile_set_process(struct ntl_profile *p, uint32_t pid, const char *name,
                            struct ntl_error *err)
{
    struct model_proc *pr = proc_get(p, pid, err);
    if (!pr)
        return err ? err->status : NTL_ERR_NOMEM;
    char *n = strdup(name);
    if (!n)
        return id_error(err, 0, "profile process");
    free(pr->name);
    pr->name = n;
    return 0;
}

int ntl_profile_set_thread(struct ntl_profile *p, uint32_t tid, uint32_t pid,
                           struct ntl_error *err)
{
    struct model_thread *t = thread_get(p, tid, err);
    if (!t)
        return err ? err->status : NTL_ERR_NOMEM;
    t->pid = pid;
    return 0;
}

uint32_t ntl_profile_pid_of(const struct ntl_profile *p, uint32_t tid)
{
    if (p->last_thread < p->nthreads && p->threads[p->last_thread].tid == tid)
        return p->threads[p->last_thread].pid;
    /* The hint thread_get keeps, before the map (12,600 of net.4.5.2's
     * samples came here). */
    uint32_t hint = p->thread_hint[tid % MODEL_THREAD_HINTS];
    if (hint && p->threads[hint - 1].tid == tid)
        return p->threads[hint - 1].pid;
    const uint64_t *i = u64map_get(&p->thread_of, tid);
    return i ? p->threads[*i].pid : NTL_PROFILE_NO_PID;
}

long model_range_at(const struct ntl_profile *p, uint32_t pid, uint64_t addr)
{
    const uint64_t *si = u64map_get(&p->space_of, pid);
    return si ? model_space_range(&p->spaces[*si], addr) : -1;
}

/* The range holding ip in pr's space (found once per process and kept),
 * else in the kernel's; -1 when none does. */
static long sample_range(struct ntl_profile *p, struct model_proc *pr, uint64_t ip)
{
    /* Asked again only when a space was added since: most of a trace's
     * samples come from processes with none (the idle and system ones),
     * and asking the map for each was 1.9 M of 141 M instructions. */
    if (!pr->space && pr->spaces_seen != p->nspaces) {
        const uint64_t *si = u64map_get(&p->space_of, pr->pid);
        pr->space = si ? *si + 1 : 0;
        pr->spaces_seen = p->nspaces;
    }
    long r = pr->space ? model_space_find(&p->spaces[pr->space - 1], ip) : -1;
    if (r >= 0)
        return r;
    /* Most samples of a trace are kernel ips: a search over all the
     * kernel's drivers was 6% of `ntlens profile --etl`. */
    if (!p->kernel_space) {
        const uint64_t *si = u64map_get(&p->space_of, NTL_PROFILE_KERNEL_PID);
        p->kernel_space = si ? *si + 1 : 0;
    }
    return p->kernel_space ? model_space_find_hot(&p->spaces[p->kernel_space - 1], ip) : -1;
}

long model_range_any(const struct ntl_profile *p, uint32_t pid, uint64_t addr)
{
    long r = model_range_at(p, pid, addr);
    const uint64_t *si = r < 0 ? u64map_get(&p->space_of, pid) : NULL;
    if (!si)
        return r;
    const struct model_space *s = &p->spaces[*si];
    for (size_t i = s->ngone; i-- > 0;) {
        const struct ntl_profile_range *g = &p->ranges[s->gone[i]].pub;
        if (addr >= g->base && addr - g->base < g->size)
            return (long)s->gone[i];
    }
    return -1;
}

int ntl_profile_add_sample(struct ntl_profile *p, const struct ntl_profile_sample *s,
                           struct ntl_error *err)
{
    uint64_t weight = s->weight ? s->weight : 1;
    uint32_t pid = s->pid == NTL_PROFILE_NO_PID ? ntl_profile_pid_of(p, s->tid) : s->pid;
    struct model_proc *pr = proc_get(p, pid, err);
    struct model_thread *t = pr ? thread_get(p, s->tid, err) : NULL;
    int rc;
    if (!t)
        return err ? err->status : NTL_ERR_NOMEM;
    if (t->pid == NTL_PROFILE_NO_PID)
        t->pid = pid;
    long r = sample_range(p, pr, s->ip);
    if ((rc = model_note_sample(p, s, pid, weight, r >= 0, err)) < 0)
        return rc;
    if (r >= 0) {
        struct ntl_profile_range *rg = &p->ranges[r].pub;
        /* The ip is in the range: its bucket exists. */
        if ((rc = model_hit(p, (size_t)r, (uint32_t)((s->ip - rg->base) >> rg->bucket_shift),
                                 weight, err)) < 0)
            return rc;
        rg->hits += weight;
        p->total += weight;
    } else {
        p->total += weight;
        p->unknown += weight;
        pr->unknown += weight;
    }
    pr->hits += weight;
    t->hits += weight;
    return r >= 0;
}

int ntl_profile_range_since_start(struct ntl_profile *p, size_t range)
{
    if (range >= p->nranges)
        return NTL_ERR_ARGUMENT;
    p->ranges[range].since_start = true;
    return 0;
}

/* The range marked since the start that holds ip in pid's space, else in
 * the kernel's; -1 when none does (an active range there that came later
 * holds what was not there at the sample's time). */
static long late_range(const struct ntl_profile *p, uint32_t pid, uint64_t ip)
{
    long r = model_range_at(p, pid, ip);
    if (r < 0)
        r = model_range_at(p, NTL_PROFILE_KERNEL_PID, ip);
    return r >= 0 && p->ranges[r].since_start ? r : -1;
}

/* Moves sample ms to the process its thread has now and to the range it
 * now falls in, as it would have counted had both been known at its time.
 * 1 when it moved, 0 when not, or NTL_ERR_LIMIT, NTL_ERR_NOMEM. */
static int place_late(struct ntl_profile *p, struct model_sample *ms, struct ntl_error *err)
{
    uint32_t pid = ms->pid == NTL_PROFILE_NO_PID ? ntl_profile_pid_of(p, ms->tid) : ms->pid;
    long r = ms->placed ? -1 : late_range(p, pid, ms->ip);
    if (pid == ms->pid && r < 0)
        return 0;
    /* The new process first: making it may move the array; ms->pid's exists. */
    struct model_proc *to = proc_get(p, pid, err);
    if (!to)
        return err ? err->status : NTL_ERR_NOMEM;
    struct model_proc *from = proc_get(p, ms->pid, err);
    uint64_t w = ms->weight;
    if (r >= 0) {
        const struct ntl_profile_range *rg = &p->ranges[r].pub;
        int rc = ntl_profile_add_hits(p, (size_t)r, (ms->ip - rg->base) >> rg->bucket_shift, w,
                                      err);
        if (rc < 0)
            return rc;
        p->total -= w;       /* counted already, as unknown */
        p->unknown -= w;
        from->unknown -= w;
        ms->placed = true;
    } else if (!ms->placed) {
        from->unknown -= w;
        to->unknown += w;
    }
    from->hits -= w;
    to->hits += w;
    ms->pid = pid;
    return 1;
}

int ntl_profile_place_late(struct ntl_profile *p, struct ntl_error *err)
{
    int moved = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        int rc = place_late(p, &p->samples[i], err);
        if (rc < 0)
            return rc;
        moved += rc;
    }
    return moved;
}

uint64_t ntl_profile_total(const struct ntl_profile *p) { return p->total; }
uint64_t ntl_profile_unknown(const struct ntl_profile *p) { return p->unknown; }
