/* The "local" source on Linux: a built-in provider that answers the queries
 * Windows' HKEY_PERFORMANCE_DATA answers, with this host's state read from
 * /proc, as real PERF_DATA_BLOCK bytes with Windows' standard indices and
 * counter types (docs/linux-provider.md). */
#include "ntlens/source.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ntlens/perf_build.h"
#include "procfs.h"
#include "provider.h"

#define HNS_PER_SEC 10000000ull
#define FILETIME_UNIX_EPOCH 116444736000000000ull /* 1970-01-01 in 100 ns since 1601 */

struct local_linux {
    size_t max_block;
    struct lp_snapshot snap;
};

#define C(index, type, size, scale, detail) {index, index + 1, scale, detail, type, size}
#define TIMER(index, detail) C(index, LP_PERF_100NSEC_TIMER, 8, 0, detail)
#define RAW(index, scale, detail) C(index, LP_PERF_COUNTER_RAWCOUNT, 4, scale, detail)
#define LARGE(index, scale, detail) C(index, LP_PERF_COUNTER_LARGE_RAWCOUNT, 8, scale, detail)
#define RATE(index, scale, detail) C(index, LP_PERF_COUNTER_COUNTER, 4, scale, detail)
#define ELAPSED(index) C(index, LP_PERF_ELAPSED_TIME, 8, -4, 200)

enum { SYS_CSWITCH, SYS_UPTIME, SYS_QUEUE, SYS_PROCESSES, SYS_THREADS, SYS_N };
static const struct ntl_perf_build_counter system_counters[SYS_N] = {
    [SYS_CSWITCH] = RATE(LP_CONTEXT_SWITCHES_SEC, -2, 100),
    [SYS_UPTIME] = ELAPSED(LP_SYSTEM_UP_TIME),
    [SYS_QUEUE] = RAW(LP_PROCESSOR_QUEUE_LENGTH, 1, 100),
    [SYS_PROCESSES] = RAW(LP_PROCESSES, 0, 100),
    [SYS_THREADS] = RAW(LP_THREADS, -1, 100),
};

enum { MEM_FAULTS, MEM_AVAIL, MEM_COMMITTED, MEM_LIMIT, MEM_PAGED, MEM_NONPAGED, MEM_CACHE,
       MEM_AVAIL_KB, MEM_AVAIL_MB, MEM_N };
static const struct ntl_perf_build_counter memory_counters[MEM_N] = {
    [MEM_FAULTS] = RATE(LP_PAGE_FAULTS_SEC, -1, 100),
    [MEM_AVAIL] = LARGE(LP_AVAILABLE_BYTES, -6, 100),
    [MEM_COMMITTED] = LARGE(LP_COMMITTED_BYTES, -6, 100),
    [MEM_LIMIT] = LARGE(LP_COMMIT_LIMIT, -6, 200),
    [MEM_PAGED] = LARGE(LP_POOL_PAGED_BYTES, -6, 100),
    [MEM_NONPAGED] = LARGE(LP_POOL_NONPAGED_BYTES, -6, 100),
    [MEM_CACHE] = LARGE(LP_CACHE_BYTES, -6, 200),
    [MEM_AVAIL_KB] = LARGE(LP_AVAILABLE_KBYTES, -3, 100),
    [MEM_AVAIL_MB] = LARGE(LP_AVAILABLE_MBYTES, 0, 100),
};

enum { CPU_PCT, CPU_USER, CPU_PRIV, CPU_INTR, CPU_DPC, CPU_PCT_INTR, CPU_IDLE, CPU_N };
static const struct ntl_perf_build_counter processor_counters[CPU_N] = {
    [CPU_PCT] = C(LP_PCT_PROCESSOR_TIME, LP_PERF_100NSEC_TIMER_INV, 8, 0, 100),
    [CPU_USER] = TIMER(LP_PCT_USER_TIME, 200),
    [CPU_PRIV] = TIMER(LP_PCT_PRIVILEGED_TIME, 200),
    [CPU_INTR] = RATE(LP_INTERRUPTS_SEC, -2, 100),
    [CPU_DPC] = TIMER(LP_PCT_DPC_TIME, 300),
    [CPU_PCT_INTR] = TIMER(LP_PCT_INTERRUPT_TIME, 300),
    [CPU_IDLE] = TIMER(LP_PCT_IDLE_TIME, 300),
};

enum { PR_PCT, PR_USER, PR_PRIV, PR_VPEAK, PR_VIRT, PR_FAULTS, PR_WSPEAK, PR_WS, PR_PAGEFILE,
       PR_PRIVATE, PR_THREADS, PR_PRIBASE, PR_ELAPSED, PR_PID, PR_PPID, PR_NONPAGED, PR_HANDLES,
       PR_N };
static const struct ntl_perf_build_counter process_counters[PR_N] = {
    [PR_PCT] = TIMER(LP_PCT_PROCESSOR_TIME, 100),
    [PR_USER] = TIMER(LP_PCT_USER_TIME, 200),
    [PR_PRIV] = TIMER(LP_PCT_PRIVILEGED_TIME, 200),
    [PR_VPEAK] = LARGE(LP_VIRTUAL_BYTES_PEAK, -6, 200),
    [PR_VIRT] = LARGE(LP_VIRTUAL_BYTES, -6, 200),
    [PR_FAULTS] = RATE(LP_PAGE_FAULTS_SEC, -1, 100),
    [PR_WSPEAK] = LARGE(LP_WORKING_SET_PEAK, -5, 200),
    [PR_WS] = LARGE(LP_WORKING_SET, -5, 100),
    [PR_PAGEFILE] = LARGE(LP_PAGE_FILE_BYTES, -6, 200),
    [PR_PRIVATE] = LARGE(LP_PRIVATE_BYTES, -5, 200),
    [PR_THREADS] = RAW(LP_THREAD_COUNT, 0, 200),
    [PR_PRIBASE] = RAW(LP_PRIORITY_BASE, 0, 200),
    [PR_ELAPSED] = ELAPSED(LP_ELAPSED_TIME),
    [PR_PID] = RAW(LP_ID_PROCESS, -1, 100),
    [PR_PPID] = RAW(LP_CREATING_PROCESS_ID, -1, 100),
    [PR_NONPAGED] = RAW(LP_POOL_NONPAGED_BYTES, -5, 100),
    [PR_HANDLES] = RAW(LP_HANDLE_COUNT, -2, 100),
};

enum { TH_PCT, TH_USER, TH_PRIV, TH_CSWITCH, TH_ELAPSED, TH_PRICUR, TH_PRIBASE, TH_STATE,
       TH_WAIT, TH_PID, TH_TID, TH_N };
static const struct ntl_perf_build_counter thread_counters[TH_N] = {
    [TH_PCT] = TIMER(LP_PCT_PROCESSOR_TIME, 100),
    [TH_USER] = TIMER(LP_PCT_USER_TIME, 200),
    [TH_PRIV] = TIMER(LP_PCT_PRIVILEGED_TIME, 200),
    [TH_CSWITCH] = RATE(LP_CONTEXT_SWITCHES_SEC, -1, 100),
    [TH_ELAPSED] = ELAPSED(LP_ELAPSED_TIME),
    [TH_PRICUR] = RAW(LP_PRIORITY_CURRENT, 0, 200),
    [TH_PRIBASE] = RAW(LP_PRIORITY_BASE, 0, 200),
    [TH_STATE] = RAW(LP_THREAD_STATE, 0, 400),
    [TH_WAIT] = RAW(LP_THREAD_WAIT_REASON, 0, 400),
    [TH_PID] = RAW(LP_ID_PROCESS, 0, 100),
    [TH_TID] = RAW(LP_ID_THREAD, 0, 100),
};

enum { WANT_SYSTEM = 1, WANT_MEMORY = 2, WANT_PROCESSOR = 4, WANT_PROCESS = 8, WANT_THREAD = 16 };

/* "Global", "Costly", or space-separated indices; unknown indices are
 * ignored as Windows ignores them, a Thread request brings its Process. */
static int parse_query(const char *q, unsigned *want, struct ntl_error *err)
{
    *want = 0;
    if (!q || !*q || !strcmp(q, "Global")) {
        *want = WANT_SYSTEM | WANT_MEMORY | WANT_PROCESSOR | WANT_PROCESS | WANT_THREAD;
        return 0;
    }
    if (!strcmp(q, "Costly"))
        return 0;
    for (const char *p = q; *p;) {
        char *end;
        unsigned long idx;
        if (*p == ' ') {
            p++;
            continue;
        }
        if (!isdigit((unsigned char)*p))
            return ntl_error_set(err, NTL_ERR_UNSUPPORTED, NULL, NTL_NO_OFFSET,
                                 "query '%s': only Global, Costly and object indices are served "
                                 "by the local provider", q);
        idx = strtoul(p, &end, 10);
        p = end;
        switch (idx) {
        case LP_OBJ_SYSTEM: *want |= WANT_SYSTEM; break;
        case LP_OBJ_MEMORY: *want |= WANT_MEMORY; break;
        case LP_OBJ_PROCESSOR: *want |= WANT_PROCESSOR; break;
        case LP_OBJ_PROCESS: *want |= WANT_PROCESS; break;
        case LP_OBJ_THREAD: *want |= WANT_THREAD | WANT_PROCESS; break;
        }
    }
    return 0;
}

struct times {
    int64_t now_ft;  /* realtime, 100 ns since 1601 */
    int64_t boot_ft; /* boot time, same scale */
};

#define OBJECT(idx, defs, n, inst, t)                                                     \
    (struct ntl_perf_build_object) {                                                         \
        .name_index = idx, .help_index = idx + 1, .detail_level = 100, .default_counter = 0,  \
        .has_instances = inst, .perf_time = (t)->now_ft, .perf_freq = HNS_PER_SEC,            \
        .counters = defs, .num_counters = n                                                  \
    }

static int put_system(struct ntl_perf_builder *b, const struct lp_snapshot *s, const struct times *t,
                      struct ntl_error *err)
{
    struct ntl_perf_build_object o = OBJECT(LP_OBJ_SYSTEM, system_counters, SYS_N, false, t);
    uint64_t v[SYS_N] = {0}, threads = 0;
    int rc;

    for (size_t i = 0; i < s->nproc; i++)
        threads += s->proc[i].threads;
    v[SYS_CSWITCH] = s->ctxt;
    v[SYS_UPTIME] = (uint64_t)t->boot_ft;
    v[SYS_QUEUE] = s->procs_running > s->nonline ? s->procs_running - s->nonline : 0;
    v[SYS_PROCESSES] = s->nproc;
    v[SYS_THREADS] = threads;
    if ((rc = ntl_perf_build_object(b, &o, err)) < 0 || (rc = ntl_perf_build_counters(b, v, err)) < 0)
        return rc;
    return ntl_perf_build_end_object(b, err);
}

static int put_memory(struct ntl_perf_builder *b, const struct lp_snapshot *s, const struct times *t,
                      struct ntl_error *err)
{
    struct ntl_perf_build_object o = OBJECT(LP_OBJ_MEMORY, memory_counters, MEM_N, false, t);
    uint64_t v[MEM_N];
    int rc;

    v[MEM_FAULTS] = s->page_faults;
    v[MEM_AVAIL] = s->mem_available;
    v[MEM_COMMITTED] = s->committed;
    v[MEM_LIMIT] = s->commit_limit;
    v[MEM_PAGED] = s->slab_reclaimable;
    v[MEM_NONPAGED] = s->slab_unreclaimable;
    v[MEM_CACHE] = s->cached;
    v[MEM_AVAIL_KB] = s->mem_available >> 10;
    v[MEM_AVAIL_MB] = s->mem_available >> 20;
    if ((rc = ntl_perf_build_object(b, &o, err)) < 0 || (rc = ntl_perf_build_counters(b, v, err)) < 0)
        return rc;
    return ntl_perf_build_end_object(b, err);
}

static int put_cpu(struct ntl_perf_builder *b, const char *name, const struct lp_cpu *c, uint64_t div,
                   struct ntl_error *err)
{
    struct ntl_perf_build_instance inst = {name, 0, 0, NTL_PERF_BUILD_NO_UNIQUE_ID};
    uint64_t v[CPU_N];

    v[CPU_PCT] = (c->idle + c->iowait) / div; /* Windows counts I/O wait as idle */
    v[CPU_USER] = c->user / div;
    v[CPU_PRIV] = c->system / div;
    v[CPU_INTR] = c->interrupts;
    v[CPU_DPC] = c->softirq / div;
    v[CPU_PCT_INTR] = c->irq / div;
    v[CPU_IDLE] = (c->idle + c->iowait) / div;
    return ntl_perf_build_instance(b, &inst, v, err);
}

static int put_processor(struct ntl_perf_builder *b, const struct lp_snapshot *s,
                         const struct times *t, struct ntl_error *err)
{
    struct ntl_perf_build_object o = OBJECT(LP_OBJ_PROCESSOR, processor_counters, CPU_N, true, t);
    char name[16];
    int rc;

    if ((rc = ntl_perf_build_object(b, &o, err)) < 0)
        return rc;
    for (size_t i = 0; i < s->ncpu; i++) {
        if (!s->cpu[i].present) /* offline: Windows lists active processors */
            continue;
        snprintf(name, sizeof name, "%zu", i);
        if ((rc = put_cpu(b, name, &s->cpu[i], 1, err)) < 0)
            return rc;
    }
    /* _Total is the average over processors, as Windows reports it. */
    if ((rc = put_cpu(b, "_Total", &s->cpu_total, s->nonline ? s->nonline : 1, err)) < 0)
        return rc;
    return ntl_perf_build_end_object(b, err);
}

static void process_values(uint64_t *v, const struct lp_proc *p, const struct times *t)
{
    v[PR_PCT] = p->user_100ns + p->kernel_100ns;
    v[PR_USER] = p->user_100ns;
    v[PR_PRIV] = p->kernel_100ns;
    v[PR_VPEAK] = p->vpeak > p->vsize ? p->vpeak : p->vsize;
    v[PR_VIRT] = p->vsize;
    v[PR_FAULTS] = p->faults;
    v[PR_WSPEAK] = p->hwm > p->rss ? p->hwm : p->rss;
    v[PR_WS] = p->rss;
    v[PR_PAGEFILE] = p->priv;
    v[PR_PRIVATE] = p->priv;
    v[PR_THREADS] = p->threads;
    v[PR_PRIBASE] = p->pri_base;
    v[PR_ELAPSED] = (uint64_t)t->boot_ft + p->start_100ns;
    v[PR_PID] = p->pid;
    v[PR_PPID] = p->ppid;
    v[PR_NONPAGED] = p->pte;
    v[PR_HANDLES] = p->handles;
}

static int put_process(struct ntl_perf_builder *b, const struct lp_snapshot *s,
                       const struct times *t, struct ntl_error *err)
{
    struct ntl_perf_build_object o = OBJECT(LP_OBJ_PROCESS, process_counters, PR_N, true, t);
    struct ntl_perf_build_instance inst = {NULL, 0, 0, NTL_PERF_BUILD_NO_UNIQUE_ID};
    uint64_t v[PR_N], total[PR_N] = {0};
    struct lp_proc idle = {0};
    int rc;

    if ((rc = ntl_perf_build_object(b, &o, err)) < 0)
        return rc;
    /* Windows' Idle process (pid 0): one thread per processor, idle time. */
    snprintf(idle.name, sizeof idle.name, "Idle");
    idle.threads = (uint32_t)s->nonline;
    idle.kernel_100ns = s->cpu_total.idle + s->cpu_total.iowait;
    for (size_t i = 0; i <= s->nproc; i++) {
        const struct lp_proc *p = i == 0 ? &idle : &s->proc[i - 1];
        process_values(v, p, t);
        inst.name = p->name;
        if ((rc = ntl_perf_build_instance(b, &inst, v, err)) < 0)
            return rc;
        for (int k = 0; k < PR_N; k++)
            total[k] += v[k];
    }
    /* _Total sums everything; its identity and time fields are zero/boot. */
    total[PR_PRIBASE] = total[PR_PID] = total[PR_PPID] = 0;
    total[PR_ELAPSED] = (uint64_t)t->boot_ft;
    inst.name = "_Total";
    if ((rc = ntl_perf_build_instance(b, &inst, total, err)) < 0)
        return rc;
    return ntl_perf_build_end_object(b, err);
}

static void thread_values(uint64_t *v, const struct lp_thread *th, const struct times *t)
{
    v[TH_PCT] = th->user_100ns + th->kernel_100ns;
    v[TH_USER] = th->user_100ns;
    v[TH_PRIV] = th->kernel_100ns;
    v[TH_CSWITCH] = th->cswitch;
    v[TH_ELAPSED] = (uint64_t)t->boot_ft + th->start_100ns;
    v[TH_PRICUR] = th->pri_current;
    v[TH_PRIBASE] = th->pri_base;
    v[TH_STATE] = th->state;
    v[TH_WAIT] = th->wait_reason;
    v[TH_PID] = th->pid;
    v[TH_TID] = th->tid;
}

/* Thread instances are named by their number within their process, and
 * point at their process's instance in the Process object (Idle is 0). */
static void add_times(uint64_t *total, const uint64_t *v)
{
    total[TH_PCT] += v[TH_PCT];
    total[TH_USER] += v[TH_USER];
    total[TH_PRIV] += v[TH_PRIV];
    total[TH_CSWITCH] += v[TH_CSWITCH];
}

static int put_thread(struct ntl_perf_builder *b, const struct lp_snapshot *s,
                      const struct times *t, struct ntl_error *err)
{
    struct ntl_perf_build_object o = OBJECT(LP_OBJ_THREAD, thread_counters, TH_N, true, t);
    struct ntl_perf_build_instance inst = {NULL, LP_OBJ_PROCESS, 0, NTL_PERF_BUILD_NO_UNIQUE_ID};
    uint64_t v[TH_N], total[TH_N] = {0};
    char name[24];
    int rc;

    if ((rc = ntl_perf_build_object(b, &o, err)) < 0)
        return rc;
    inst.name = name;
    for (size_t i = 0, k = 0; i < s->ncpu; i++) {
        struct lp_thread idle = {0};
        if (!s->cpu[i].present)
            continue;
        idle.kernel_100ns = s->cpu[i].idle + s->cpu[i].iowait;
        idle.state = 2;
        thread_values(v, &idle, t);
        v[TH_ELAPSED] = (uint64_t)t->boot_ft;
        snprintf(name, sizeof name, "%zu", k++);
        if ((rc = ntl_perf_build_instance(b, &inst, v, err)) < 0)
            return rc;
        add_times(total, v);
    }
    for (size_t i = 0; i < s->nproc; i++) {
        const struct lp_proc *p = &s->proc[i];
        inst.parent_instance = (uint32_t)(i + 1);
        for (size_t k = 0; k < p->nthread; k++) {
            thread_values(v, &s->thread[p->first_thread + k], t);
            snprintf(name, sizeof name, "%zu", k);
            if ((rc = ntl_perf_build_instance(b, &inst, v, err)) < 0)
                return rc;
            add_times(total, v);
        }
    }
    /* Windows' "_Total/_Total": the sums, under the Process object's _Total. */
    inst.name = "_Total";
    inst.parent_instance = (uint32_t)(s->nproc + 1);
    total[TH_ELAPSED] = (uint64_t)t->boot_ft;
    if ((rc = ntl_perf_build_instance(b, &inst, total, err)) < 0)
        return rc;
    return ntl_perf_build_end_object(b, err);
}

static int build_block(struct local_linux *l, unsigned want, struct ntl_buf *block,
                       struct ntl_error *err)
{
    struct lp_snapshot *s = &l->snap;
    struct ntl_perf_build_header h = {0};
    struct ntl_perf_builder b;
    struct timespec real, mono;
    struct times t;
    char host[256] = "";
    int rc;

    s->want_system = want & WANT_SYSTEM;
    s->want_memory = want & WANT_MEMORY;
    s->want_cpus = want & (WANT_PROCESSOR | WANT_PROCESS | WANT_THREAD);
    s->want_procs = want & (WANT_PROCESS | WANT_THREAD | WANT_SYSTEM);
    s->want_details = want & WANT_PROCESS;
    s->want_threads = want & WANT_THREAD;
    if ((rc = lp_snapshot_read(s, err)) < 0)
        return rc;

    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    t.now_ft = (int64_t)FILETIME_UNIX_EPOCH + (int64_t)real.tv_sec * (int64_t)HNS_PER_SEC +
               real.tv_nsec / 100;
    t.boot_ft = t.now_ft - (int64_t)s->uptime_100ns;
    ntl_source_local_hostname(host, sizeof host, NULL); /* a block without a name otherwise */
    ntl_perf_build_systemtime(h.system_time, (int64_t)real.tv_sec, (unsigned)(real.tv_nsec / 1000000));
    h.perf_time = (int64_t)mono.tv_sec * (int64_t)HNS_PER_SEC + mono.tv_nsec / 100;
    h.perf_freq = HNS_PER_SEC;
    h.perf_time_100ns = t.now_ft;
    h.system_name = host;
    h.default_object = LP_OBJ_PROCESSOR;

    if ((rc = ntl_perf_build_begin(&b, block, &h, err)) < 0)
        return rc;
    if ((want & WANT_SYSTEM) && (rc = put_system(&b, s, &t, err)) < 0)
        return rc;
    if ((want & WANT_MEMORY) && (rc = put_memory(&b, s, &t, err)) < 0)
        return rc;
    if ((want & WANT_PROCESSOR) && (rc = put_processor(&b, s, &t, err)) < 0)
        return rc;
    if ((want & WANT_PROCESS) && (rc = put_process(&b, s, &t, err)) < 0)
        return rc;
    if ((want & WANT_THREAD) && (rc = put_thread(&b, s, &t, err)) < 0)
        return rc;
    return ntl_perf_build_finish(&b, err);
}

static int local_query(struct ntl_source *src, const char *query, struct ntl_buf *block,
                       struct ntl_error *err)
{
    struct local_linux *l = ntl_source_impl(src);
    size_t saved = block->limit;
    unsigned want;
    int rc;

    if ((rc = parse_query(query, &want, err)) < 0)
        return rc;
    block->len = 0;
    if (l->max_block < block->limit)
        block->limit = l->max_block;
    rc = build_block(l, want, block, err);
    block->limit = saved;
    if (rc == NTL_ERR_LIMIT)
        ntl_error_prefix(err, "answer to '%s' is larger than the %zu-byte limit", query, l->max_block);
    return rc < 0 ? rc : 0;
}

static int local_titles(struct ntl_source *src, enum ntl_title_kind kind, unsigned langid,
                        struct ntl_buf *out, struct ntl_error *err)
{
    (void)src;
    if (langid != 9)
        return ntl_error_set(err, NTL_ERR_NOT_FOUND, NULL, NTL_NO_OFFSET,
                             "the local provider has titles in English (009) only, not %03x", langid);
    out->len = 0;
    return lp_titles(kind == NTL_TITLES_HELP, out, err);
}

static void local_close(struct ntl_source *src)
{
    struct local_linux *l = ntl_source_impl(src);
    lp_snapshot_free(&l->snap);
    free(l);
}

static const struct ntl_source_ops local_ops = {
    .query = local_query,
    .titles = local_titles,
    .snapshot_count = NULL,
    .close = local_close,
};

int ntl_source_local_hostname(char *buf, size_t size, struct ntl_error *err)
{
    if (size == 0 || gethostname(buf, size - 1) < 0) {
        if (size)
            buf[0] = '\0';
        return ntl_error_set(err, NTL_ERR_SYSTEM, NULL, NTL_NO_OFFSET, "gethostname failed");
    }
    buf[size - 1] = '\0';
    return 0;
}

int ntl_source_local_open(const struct ntl_source_options *opt, struct ntl_source **out,
                          struct ntl_error *err)
{
    struct local_linux *l = calloc(1, sizeof *l);

    *out = NULL;
    if (!l)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    l->max_block = opt && opt->max_block ? opt->max_block : NTL_SOURCE_DEFAULT_MAX_BLOCK;
    if (!(*out = ntl_source_new(&local_ops, l, "local (Linux /proc)"))) {
        free(l);
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    }
    return 0;
}
