/* From a block's Process/Thread/Processor objects to PsList's rows. Objects
 * and counters are found by name through the title database, with Windows'
 * standard indices where the database lacks a name. */
#include "ntlens/perf_ps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct named_index {
    const char *name;
    uint32_t std;
};

static const struct named_index proc_names[NTL_PERF_PS_NFIELDS] = {
    [NTL_PERF_PS_PID] = {"ID Process", 784},
    [NTL_PERF_PS_PPID] = {"Creating Process ID", 1410},
    [NTL_PERF_PS_PRI] = {"Priority Base", 682},
    [NTL_PERF_PS_THREADS] = {"Thread Count", 680},
    [NTL_PERF_PS_HANDLES] = {"Handle Count", 952},
    [NTL_PERF_PS_CPU] = {"% Processor Time", 6},
    [NTL_PERF_PS_USER] = {"% User Time", 142},
    [NTL_PERF_PS_KERNEL] = {"% Privileged Time", 144},
    [NTL_PERF_PS_VM] = {"Virtual Bytes", 174},
    [NTL_PERF_PS_WS] = {"Working Set", 180},
    [NTL_PERF_PS_PRIV] = {"Private Bytes", 186},
    [NTL_PERF_PS_PRIV_PEAK] = {"Page File Bytes Peak", 182},
    [NTL_PERF_PS_FAULTS] = {"Page Faults/sec", 28},
    [NTL_PERF_PS_NONPAGED] = {"Pool Nonpaged Bytes", 58},
    [NTL_PERF_PS_PAGED] = {"Pool Paged Bytes", 56},
};

static const struct named_index thread_names[NTL_PERF_PS_T_NFIELDS] = {
    [NTL_PERF_PS_T_TID] = {"ID Thread", 804},
    [NTL_PERF_PS_T_PID] = {"ID Process", 784},
    [NTL_PERF_PS_T_PRI] = {"Priority Current", 694},
    [NTL_PERF_PS_T_CSWITCH] = {"Context Switches/sec", 146},
    [NTL_PERF_PS_T_STATE] = {"Thread State", 46},
    [NTL_PERF_PS_T_WAIT] = {"Thread Wait Reason", 336},
    [NTL_PERF_PS_T_USER] = {"% User Time", 142},
    [NTL_PERF_PS_T_KERNEL] = {"% Privileged Time", 144},
};

static const struct named_index elapsed_name = {"Elapsed Time", 684};

static void resolve(const struct ntl_perf_titles *t, const struct named_index *n,
                    struct ntl_perf_ps_index *out)
{
    size_t found = ntl_perf_titles_find_all(t, n->name, out->idx, NTL_PERF_PS_CANDIDATES - 1);
    out->n = (unsigned)(found < NTL_PERF_PS_CANDIDATES - 1 ? found : NTL_PERF_PS_CANDIDATES - 1);
    for (unsigned i = 0; i < out->n; i++)
        if (out->idx[i] == n->std)
            return;
    out->idx[out->n++] = n->std;
}

void ntl_perf_ps_indices_resolve(const struct ntl_perf_titles *t, struct ntl_perf_ps_indices *ix)
{
    resolve(t, &(struct named_index){"Process", NTL_PERF_IDX_PROCESS}, &ix->process);
    resolve(t, &(struct named_index){"Thread", NTL_PERF_IDX_THREAD}, &ix->thread);
    resolve(t, &(struct named_index){"Processor", NTL_PERF_IDX_PROCESSOR}, &ix->processor);
    for (int i = 0; i < NTL_PERF_PS_NFIELDS; i++)
        resolve(t, &proc_names[i], &ix->pf[i]);
    for (int i = 0; i < NTL_PERF_PS_T_NFIELDS; i++)
        resolve(t, &thread_names[i], &ix->tf[i]);
    resolve(t, &elapsed_name, &ix->elapsed);
}

/* The object's definition for the first candidate it has. */
static int find_counter(const struct ntl_perf_object *o, const struct ntl_perf_ps_index *c)
{
    for (unsigned i = 0; i < c->n; i++) {
        int k = ntl_perf_object_find_counter(o, c->idx[i]);
        if (k >= 0)
            return k;
    }
    return -1;
}

static const struct ntl_perf_object *find_object(const struct ntl_perf_block *b,
                                                 const struct ntl_perf_ps_index *c)
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

static int fill_processes(struct ntl_perf_ps_sample *s, const struct ntl_perf_ps_indices *ix,
                          const struct ntl_perf_object *o, size_t *inst_to_proc)
{
    int col[NTL_PERF_PS_NFIELDS], el = find_counter(o, &ix->elapsed);
    struct ntl_error err;

    for (int f = 0; f < NTL_PERF_PS_NFIELDS; f++)
        col[f] = find_counter(o, &ix->pf[f]);
    s->procs = calloc(o->ninstances ? o->ninstances : 1, sizeof *s->procs);
    if (!s->procs)
        return -1;
    for (size_t i = 0; i < o->ninstances; i++) {
        const struct ntl_perf_instance *in = &o->instances[i];
        struct ntl_perf_ps_proc *p;

        inst_to_proc[i] = SIZE_MAX;
        if (!strcmp(in->name, "_Total"))
            continue;
        inst_to_proc[i] = s->nprocs;
        p = &s->procs[s->nprocs++];
        p->name = in->name;
        for (int f = 0; f < NTL_PERF_PS_NFIELDS; f++)
            if (col[f] >= 0) {
                p->v[f] = ntl_perf_counter_u64(o, (size_t)col[f], i);
                p->have |= 1u << f;
            }
        p->have_elapsed = elapsed_seconds(s->block, o, el, i, &p->elapsed);
        if (col[NTL_PERF_PS_CPU] >= 0 &&
            ntl_perf_raw_get(s->block, o, (size_t)col[NTL_PERF_PS_CPU], i, &p->cpu_raw, &err) >= 0)
            p->have_cpu_raw = true;
    }
    return 0;
}

static int fill_threads(struct ntl_perf_ps_sample *s, const struct ntl_perf_ps_indices *ix,
                        const struct ntl_perf_object *proc_obj, const struct ntl_perf_object *o,
                        const size_t *inst_to_proc)
{
    int col[NTL_PERF_PS_T_NFIELDS], el = find_counter(o, &ix->elapsed);

    for (int f = 0; f < NTL_PERF_PS_T_NFIELDS; f++)
        col[f] = find_counter(o, &ix->tf[f]);
    s->threads = calloc(o->ninstances ? o->ninstances : 1, sizeof *s->threads);
    if (!s->threads)
        return -1;
    for (size_t i = 0; i < o->ninstances; i++) {
        const struct ntl_perf_instance *in = &o->instances[i];
        struct ntl_perf_ps_thread *t;

        if (!strcmp(in->name, "_Total"))
            continue;
        t = &s->threads[s->nthreads++];
        t->proc = SIZE_MAX;
        if (proc_obj && in->parent && in->parent >= proc_obj->instances &&
            in->parent < proc_obj->instances + proc_obj->ninstances)
            t->proc = inst_to_proc[in->parent - proc_obj->instances];
        for (int f = 0; f < NTL_PERF_PS_T_NFIELDS; f++)
            if (col[f] >= 0) {
                t->v[f] = ntl_perf_counter_u64(o, (size_t)col[f], i);
                t->have |= 1u << f;
            }
        t->have_elapsed = elapsed_seconds(s->block, o, el, i, &t->elapsed);
        /* Without a resolved parent, the thread's ID Process finds it. */
        if (t->proc == SIZE_MAX && (t->have & (1u << NTL_PERF_PS_T_PID)))
            for (size_t k = 0; k < s->nprocs; k++)
                if ((s->procs[k].have & (1u << NTL_PERF_PS_PID)) && s->procs[k].v[NTL_PERF_PS_PID] == t->v[NTL_PERF_PS_T_PID]) {
                    t->proc = k;
                    break;
                }
    }
    return 0;
}

const char *ntl_perf_ps_query(const struct ntl_perf_ps_indices *ix, bool threads, bool cpus,
                              char *buf, size_t size)
{
    int n = snprintf(buf, size, "%u", ix->process.idx[0]);
    if (threads && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " %u", ix->thread.idx[0]);
    if (cpus && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " %u", ix->processor.idx[0]);
    return buf;
}

void ntl_perf_ps_sample_init(struct ntl_perf_ps_sample *s)
{
    memset(s, 0, sizeof *s);
    ntl_buf_init(&s->raw, 0);
}

int ntl_perf_ps_sample_parse(struct ntl_perf_ps_sample *s, const struct ntl_perf_ps_indices *ix,
                             bool threads, bool cpus, struct ntl_error *err)
{
    const struct ntl_perf_object *po, *to, *co;
    size_t *inst_to_proc;
    int rc;

    if ((rc = ntl_perf_block_parse(s->raw.data, s->raw.len, &s->block, err)) < 0)
        return rc;
    snprintf(s->host, sizeof s->host, "%s", s->block->system_name);
    po = find_object(s->block, &ix->process);
    if (!po)
        return ntl_error_set(err, NTL_ERR_NOT_FOUND, NULL, NTL_NO_OFFSET,
                             "the block holds no Process object (index %u)", ix->process.idx[0]);
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

void ntl_perf_ps_sample_cpu(struct ntl_perf_ps_sample *cur, const struct ntl_perf_ps_sample *prev)
{
    struct pid_index *order = malloc((prev->nprocs ? prev->nprocs : 1) * sizeof *order);

    if (!order)
        return; /* no CPU % this round rather than a failure */
    for (size_t k = 0; k < prev->nprocs; k++) {
        order[k].pid = prev->procs[k].v[NTL_PERF_PS_PID];
        order[k].idx = k;
    }
    qsort(order, prev->nprocs, sizeof *order, by_pid);
    for (size_t i = 0; i < cur->nprocs; i++) {
        struct ntl_perf_ps_proc *p = &cur->procs[i];
        const struct ntl_perf_ps_proc *q = NULL;
        size_t lo = 0, hi = prev->nprocs;
        double v;

        p->have_cpu_pct = false;
        if (!p->have_cpu_raw || !(p->have & (1u << NTL_PERF_PS_PID)))
            continue;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (order[mid].pid < p->v[NTL_PERF_PS_PID])
                lo = mid + 1;
            else
                hi = mid;
        }
        /* The same process: same pid and name (pids are reused). */
        for (; lo < prev->nprocs && order[lo].pid == p->v[NTL_PERF_PS_PID] && !q; lo++)
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

void ntl_perf_ps_sample_free(struct ntl_perf_ps_sample *s)
{
    ntl_perf_block_free(s->block);
    ntl_buf_free(&s->raw);
    free(s->procs);
    free(s->threads);
    memset(s, 0, sizeof *s);
}

const char *ntl_perf_ps_thread_state(char *buf, size_t size, const struct ntl_perf_ps_thread *t)
{
    static const char *const states[] = {"Initialized", "Ready", "Running", "Standby",
                                         "Terminated", "Wait", "Transition", "Unknown"};
    static const char *const reasons[] = {
        "Executive", "FreePage", "PageIn", "PoolAlloc", "DelayExec", "Suspended", "UserReq",
        "Executive", "FreePage", "PageIn", "PoolAlloc", "DelayExec", "Suspended", "UserReq",
        "EventPair", "Queue", "LpcReceive", "LpcReply", "VirtualMem", "PageOut"};

    if (!(t->have & (1u << NTL_PERF_PS_T_STATE))) {
        snprintf(buf, size, "%s", "");
        return buf;
    }
    if (t->v[NTL_PERF_PS_T_STATE] >= sizeof states / sizeof states[0]) {
        snprintf(buf, size, "%llu", (unsigned long long)t->v[NTL_PERF_PS_T_STATE]);
        return buf;
    }
    if (t->v[NTL_PERF_PS_T_STATE] == 5 && (t->have & (1u << NTL_PERF_PS_T_WAIT))) {
        if (t->v[NTL_PERF_PS_T_WAIT] < sizeof reasons / sizeof reasons[0])
            snprintf(buf, size, "Wait:%s", reasons[t->v[NTL_PERF_PS_T_WAIT]]);
        else
            snprintf(buf, size, "Wait:Unknown");
        return buf;
    }
    snprintf(buf, size, "%s", states[t->v[NTL_PERF_PS_T_STATE]]);
    return buf;
}
