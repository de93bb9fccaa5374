/* From a source's Process/Thread/Processor objects to ps rows. Objects and
 * counters are found by name through the source's title database, with
 * Windows' standard indices where the database lacks a name. */
#include "ps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct named_index {
    const char *name;
    uint32_t std;
};

static const struct named_index proc_names[PF_N] = {
    [PF_PID] = {"ID Process", 784},
    [PF_PPID] = {"Creating Process ID", 1410},
    [PF_PRI] = {"Priority Base", 682},
    [PF_THREADS] = {"Thread Count", 680},
    [PF_HANDLES] = {"Handle Count", 952},
    [PF_CPU] = {"% Processor Time", 6},
    [PF_USER] = {"% User Time", 142},
    [PF_KERNEL] = {"% Privileged Time", 144},
    [PF_VM] = {"Virtual Bytes", 174},
    [PF_WS] = {"Working Set", 180},
    [PF_PRIV] = {"Private Bytes", 186},
    [PF_PRIV_PEAK] = {"Page File Bytes Peak", 182},
    [PF_FAULTS] = {"Page Faults/sec", 28},
    [PF_NONPAGED] = {"Pool Nonpaged Bytes", 58},
    [PF_PAGED] = {"Pool Paged Bytes", 56},
};

static const struct named_index thread_names[TF_N] = {
    [TF_TID] = {"ID Thread", 804},
    [TF_PID] = {"ID Process", 784},
    [TF_PRI] = {"Priority Current", 694},
    [TF_CSWITCH] = {"Context Switches/sec", 146},
    [TF_STATE] = {"Thread State", 46},
    [TF_WAIT] = {"Thread Wait Reason", 336},
    [TF_USER] = {"% User Time", 142},
    [TF_KERNEL] = {"% Privileged Time", 144},
};

static const struct named_index elapsed_name = {"Elapsed Time", 684};

static void resolve(const struct ntl_perf_titles *t, const struct named_index *n,
                    struct ps_index *out)
{
    size_t found = ntl_perf_titles_find_all(t, n->name, out->idx, PS_CANDIDATES - 1);
    out->n = (unsigned)(found < PS_CANDIDATES - 1 ? found : PS_CANDIDATES - 1);
    for (unsigned i = 0; i < out->n; i++)
        if (out->idx[i] == n->std)
            return;
    out->idx[out->n++] = n->std;
}

int ps_titles_load(struct ntl_source *src, struct ntl_perf_titles **titles, struct ps_indices *ix,
                   struct ntl_error *err)
{
    struct ntl_perf_titles *t = ntl_perf_titles_new();
    struct ntl_buf raw;
    struct ntl_error ignored;

    if (!t)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    /* A source without a usable title database still has standard indices. */
    ntl_buf_init(&raw, 0);
    ntl_error_clear(&ignored);
    if (ntl_source_titles(src, NTL_TITLES_COUNTER, NTL_PERF_LANG_ENGLISH, &raw, &ignored) >= 0)
        ntl_perf_titles_add(t, false, raw.data, raw.len, &ignored);
    ntl_buf_free(&raw);
    if (ntl_perf_titles_add_standard(t) < 0) {
        ntl_perf_titles_free(t);
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    }
    resolve(t, &(struct named_index){"Process", NTL_PERF_IDX_PROCESS}, &ix->process);
    resolve(t, &(struct named_index){"Thread", NTL_PERF_IDX_THREAD}, &ix->thread);
    resolve(t, &(struct named_index){"Processor", NTL_PERF_IDX_PROCESSOR}, &ix->processor);
    for (int i = 0; i < PF_N; i++)
        resolve(t, &proc_names[i], &ix->pf[i]);
    for (int i = 0; i < TF_N; i++)
        resolve(t, &thread_names[i], &ix->tf[i]);
    resolve(t, &elapsed_name, &ix->elapsed);
    *titles = t;
    return 0;
}

/* The object's definition for the first candidate it has. */
static int find_counter(const struct ntl_perf_object *o, const struct ps_index *c)
{
    for (unsigned i = 0; i < c->n; i++) {
        int k = ntl_perf_object_find_counter(o, c->idx[i]);
        if (k >= 0)
            return k;
    }
    return -1;
}

static const struct ntl_perf_object *find_object(const struct ntl_perf_block *b,
                                                 const struct ps_index *c)
{
    for (unsigned i = 0; i < c->n; i++) {
        const struct ntl_perf_object *o = ntl_perf_block_find_object(b, c->idx[i]);
        if (o)
            return o;
    }
    return NULL;
}

static bool elapsed_seconds(const struct ntl_perf_block *b, const struct ntl_perf_object *o, int c,
                            size_t inst, double *out)
{
    struct ntl_perf_raw raw;
    struct ntl_error err;
    if (c < 0 || ntl_perf_raw_get(b, o, (size_t)c, inst, &raw, &err) < 0)
        return false;
    return ntl_perf_value_compute(&raw, NULL, out) == NTL_PERF_VALUE_OK;
}

static int fill_processes(struct ps_sample *s, const struct ps_indices *ix,
                          const struct ntl_perf_object *o, size_t *inst_to_proc)
{
    int col[PF_N], el = find_counter(o, &ix->elapsed);
    struct ntl_error err;

    for (int f = 0; f < PF_N; f++)
        col[f] = find_counter(o, &ix->pf[f]);
    s->procs = calloc(o->ninstances ? o->ninstances : 1, sizeof *s->procs);
    if (!s->procs)
        return -1;
    for (size_t i = 0; i < o->ninstances; i++) {
        const struct ntl_perf_instance *in = &o->instances[i];
        struct ps_proc *p;

        inst_to_proc[i] = SIZE_MAX;
        if (!strcmp(in->name, "_Total"))
            continue;
        inst_to_proc[i] = s->nprocs;
        p = &s->procs[s->nprocs++];
        p->name = in->name;
        for (int f = 0; f < PF_N; f++)
            if (col[f] >= 0) {
                p->v[f] = ntl_perf_counter_u64(o, (size_t)col[f], i);
                p->have |= 1u << f;
            }
        p->have_elapsed = elapsed_seconds(s->block, o, el, i, &p->elapsed);
        if (col[PF_CPU] >= 0 &&
            ntl_perf_raw_get(s->block, o, (size_t)col[PF_CPU], i, &p->cpu_raw, &err) >= 0)
            p->have_cpu_raw = true;
    }
    return 0;
}

static int fill_threads(struct ps_sample *s, const struct ps_indices *ix,
                        const struct ntl_perf_object *proc_obj, const struct ntl_perf_object *o,
                        const size_t *inst_to_proc)
{
    int col[TF_N], el = find_counter(o, &ix->elapsed);

    for (int f = 0; f < TF_N; f++)
        col[f] = find_counter(o, &ix->tf[f]);
    s->threads = calloc(o->ninstances ? o->ninstances : 1, sizeof *s->threads);
    if (!s->threads)
        return -1;
    for (size_t i = 0; i < o->ninstances; i++) {
        const struct ntl_perf_instance *in = &o->instances[i];
        struct ps_thread *t;

        if (!strcmp(in->name, "_Total"))
            continue;
        t = &s->threads[s->nthreads++];
        t->proc = SIZE_MAX;
        if (proc_obj && in->parent && in->parent >= proc_obj->instances &&
            in->parent < proc_obj->instances + proc_obj->ninstances)
            t->proc = inst_to_proc[in->parent - proc_obj->instances];
        for (int f = 0; f < TF_N; f++)
            if (col[f] >= 0) {
                t->v[f] = ntl_perf_counter_u64(o, (size_t)col[f], i);
                t->have |= 1u << f;
            }
        t->have_elapsed = elapsed_seconds(s->block, o, el, i, &t->elapsed);
        /* Without a resolved parent, the thread's ID Process finds it. */
        if (t->proc == SIZE_MAX && (t->have & (1u << TF_PID)))
            for (size_t k = 0; k < s->nprocs; k++)
                if ((s->procs[k].have & (1u << PF_PID)) && s->procs[k].v[PF_PID] == t->v[TF_PID]) {
                    t->proc = k;
                    break;
                }
    }
    return 0;
}

int ps_sample_take(struct ntl_source *src, const struct ps_indices *ix, bool threads, bool cpus,
                   struct ps_sample *s, struct ntl_error *err)
{
    const struct ntl_perf_object *po, *to, *co;
    size_t *inst_to_proc;
    char query[64];
    int rc;

    memset(s, 0, sizeof *s);
    ntl_buf_init(&s->raw, 0);
    snprintf(query, sizeof query, "%u", ix->process.idx[0]);
    if (threads)
        snprintf(query + strlen(query), sizeof query - strlen(query), " %u", ix->thread.idx[0]);
    if (cpus)
        snprintf(query + strlen(query), sizeof query - strlen(query), " %u", ix->processor.idx[0]);
    if ((rc = ntl_source_query(src, query, &s->raw, err)) < 0)
        return rc;
    if ((rc = ntl_perf_block_parse(s->raw.data, s->raw.len, &s->block, err)) < 0)
        return rc;
    snprintf(s->host, sizeof s->host, "%s",
             s->block->system_name[0] ? s->block->system_name : ntl_source_describe(src));
    po = find_object(s->block, &ix->process);
    if (!po)
        return ntl_error_set(err, NTL_ERR_NOT_FOUND, NULL, NTL_NO_OFFSET,
                             "the source sent no Process object (index %u)", ix->process.idx[0]);
    if (!(inst_to_proc = calloc(po->ninstances ? po->ninstances : 1, sizeof *inst_to_proc)))
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    rc = fill_processes(s, ix, po, inst_to_proc);
    to = threads ? find_object(s->block, &ix->thread) : NULL;
    if (rc == 0 && to) {
        s->have_threads = true;
        rc = fill_threads(s, ix, po, to, inst_to_proc);
    }
    free(inst_to_proc);
    if (rc < 0)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    co = cpus ? find_object(s->block, &ix->processor) : NULL;
    if (co)
        for (size_t i = 0; i < co->ninstances; i++)
            if (strcmp(co->instances[i].name, "_Total"))
                s->ncpu++;
    return 0;
}

struct pid_index {
    uint64_t pid;
    size_t idx;
};

static int by_pid(const void *a, const void *b)
{
    const struct pid_index *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

void ps_sample_cpu(struct ps_sample *cur, const struct ps_sample *prev)
{
    struct pid_index *order = malloc((prev->nprocs ? prev->nprocs : 1) * sizeof *order);

    if (!order)
        return; /* no CPU % this round rather than a failure */
    for (size_t k = 0; k < prev->nprocs; k++) {
        order[k].pid = prev->procs[k].v[PF_PID];
        order[k].idx = k;
    }
    qsort(order, prev->nprocs, sizeof *order, by_pid);
    for (size_t i = 0; i < cur->nprocs; i++) {
        struct ps_proc *p = &cur->procs[i];
        const struct ps_proc *q = NULL;
        size_t lo = 0, hi = prev->nprocs;
        double v;

        p->have_cpu_pct = false;
        if (!p->have_cpu_raw || !(p->have & (1u << PF_PID)))
            continue;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (order[mid].pid < p->v[PF_PID])
                lo = mid + 1;
            else
                hi = mid;
        }
        /* The same process: same pid and name (pids are reused). */
        for (; lo < prev->nprocs && order[lo].pid == p->v[PF_PID] && !q; lo++)
            if (prev->procs[order[lo].idx].have_cpu_raw && !strcmp(prev->procs[order[lo].idx].name, p->name))
                q = &prev->procs[order[lo].idx];
        if (!q)
            continue;
        if (ntl_perf_value_compute(&p->cpu_raw, &q->cpu_raw, &v) > NTL_PERF_VALUE_ZERO_DELTA || v != v)
            continue;
        p->cpu_pct = cur->ncpu ? v / cur->ncpu : v;
        p->have_cpu_pct = true;
    }
    free(order);
}

void ps_sample_free(struct ps_sample *s)
{
    ntl_perf_block_free(s->block);
    ntl_buf_free(&s->raw);
    free(s->procs);
    free(s->threads);
    memset(s, 0, sizeof *s);
}

const char *ps_thread_state(char *buf, size_t size, const struct ps_thread *t)
{
    static const char *const states[] = {"Initialized", "Ready", "Running", "Standby",
                                         "Terminated", "Wait", "Transition", "Unknown"};
    static const char *const reasons[] = {
        "Executive", "FreePage", "PageIn", "PoolAlloc", "DelayExec", "Suspended", "UserReq",
        "Executive", "FreePage", "PageIn", "PoolAlloc", "DelayExec", "Suspended", "UserReq",
        "EventPair", "Queue", "LpcReceive", "LpcReply", "VirtualMem", "PageOut"};

    if (!(t->have & (1u << TF_STATE))) {
        snprintf(buf, size, "%s", "");
        return buf;
    }
    if (t->v[TF_STATE] >= sizeof states / sizeof states[0]) {
        snprintf(buf, size, "%llu", (unsigned long long)t->v[TF_STATE]);
        return buf;
    }
    if (t->v[TF_STATE] == 5 && (t->have & (1u << TF_WAIT))) {
        if (t->v[TF_WAIT] < sizeof reasons / sizeof reasons[0])
            snprintf(buf, size, "Wait:%s", reasons[t->v[TF_WAIT]]);
        else
            snprintf(buf, size, "Wait:Unknown");
        return buf;
    }
    snprintf(buf, size, "%s", states[t->v[TF_STATE]]);
    return buf;
}
