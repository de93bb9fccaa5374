/* ntlens ps: PsList v1.41 rebuilt on performance data. Processes come from
 * the Process object (230), threads from the Thread object (232), CPU % in
 * task-manager mode from two samples with PDH's PERF_100NSEC_TIMER formula. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli-source.h"
#include "cli-stop.h"
#include "cli.h"
#include "commands.h"
#include "out.h"
#include "parse-options.h"
#include "ps.h"

enum view { VIEW_DEFAULT, VIEW_MEMORY, VIEW_THREADS, VIEW_ALL, VIEW_TREE, VIEW_TASK };

struct ps_opts {
    int view;                /* enum view */
    bool exact;
    long task_seconds;       /* -s N; 0: until interrupted */
    long interval;           /* seconds between refreshes of -s */
    int fmt;                 /* enum out_format */
    const char *filter;      /* name prefix or pid */
    bool filter_is_pid;
    uint64_t filter_pid;
    bool host_column;
    bool stacks;             /* --stacks: a Stack column in the thread views */
    struct ps_stacks *walked;
};

static const struct opt_command ps_command = {
    .name = "ps",
    .synopsis = "[\\\\COMPUTER] [NAME | PID]",
    .summary = "list processes and threads (PsList)",
    .description =
        "List processes and threads from performance data, like Sysinternals PsList.\n"
        "Default columns: Name, Pid, Pri, Thd, Hnd, Priv (KB), CPU Time, Elapsed Time.\n"
        "NAME or PID selects processes (a name matches case-insensitively, as a prefix\n"
        "unless -e); \\\\COMPUTER is the same as -S \\\\COMPUTER. With several sources,\n"
        "rows carry a Host column.",
};

static bool proc_matches(const struct ps_opts *o, const struct ntl_perf_ps_proc *p)
{
    size_t n;
    if (!o->filter)
        return true;
    if (o->filter_is_pid)
        return (p->have & (1u << NTL_PERF_PS_PID)) && p->v[NTL_PERF_PS_PID] == o->filter_pid;
    if (o->exact)
        return !strcasecmp(p->name, o->filter);
    n = strlen(o->filter);
    return !strncasecmp(p->name, o->filter, n);
}

/* ---- cells ---- */

static void cell_field(struct out *t, const struct ntl_perf_ps_proc *p, enum ntl_perf_ps_field f)
{
    if (p->have & (1u << f))
        out_u64(t, p->v[f]);
    else
        out_null(t);
}

static void cell_kb(struct out *t, bool have, uint64_t bytes)
{
    if (have)
        out_u64(t, bytes / 1024);
    else
        out_null(t);
}

static void cell_duration(struct out *t, bool have, uint64_t hundred_ns)
{
    char buf[48];
    if (!have) {
        out_null(t);
        return;
    }
    out_num_text(t, (double)hundred_ns / 1e7, out_format_duration(buf, sizeof buf, hundred_ns));
}

static void cell_elapsed(struct out *t, bool have, double seconds)
{
    if (have && seconds >= 1.8e12) /* beyond 100 ns units in 64 bits: a source's nonsense */
        out_num(t, seconds, 3);
    else
        cell_duration(t, have && seconds >= 0, have && seconds >= 0 ? (uint64_t)(seconds * 1e7 + 0.5) : 0);
}

static void proc_cell_kb(struct out *t, const struct ntl_perf_ps_proc *p, enum ntl_perf_ps_field f)
{
    cell_kb(t, p->have & (1u << f), p->v[f]);
}

/* ---- process tables ---- */

static void proc_columns(struct out *t, const struct ps_opts *o, enum view v)
{
    if (o->host_column)
        out_column(t, "host", "Host", OUT_LEFT);
    out_column(t, "name", "Name", OUT_LEFT);
    out_column(t, "pid", "Pid", OUT_RIGHT);
    if (v == VIEW_TREE)
        out_column(t, "ppid", "Ppid", OUT_RIGHT);
    if (v == VIEW_TASK)
        out_column(t, "cpu", "CPU", OUT_RIGHT);
    if (v != VIEW_MEMORY) {
        out_column(t, "pri", "Pri", OUT_RIGHT);
        out_column(t, "thd", "Thd", OUT_RIGHT);
        out_column(t, "hnd", "Hnd", OUT_RIGHT);
    }
    if (v == VIEW_DEFAULT || v == VIEW_TASK || v == VIEW_ALL) {
        out_column(t, "priv_kb", "Priv", OUT_RIGHT);
        out_column(t, "cpu_time", "CPU Time", OUT_RIGHT);
        out_column(t, "elapsed_time", "Elapsed Time", OUT_RIGHT);
    }
    if (v == VIEW_TREE) {
        out_column(t, "vm_kb", "VM", OUT_RIGHT);
        out_column(t, "ws_kb", "WS", OUT_RIGHT);
        out_column(t, "priv_kb", "Priv", OUT_RIGHT);
        out_column(t, "depth", "Depth", OUT_RIGHT);
    }
    if (v == VIEW_MEMORY || v == VIEW_ALL) {
        out_column(t, "vm_kb", "VM", OUT_RIGHT);
        out_column(t, "ws_kb", "WS", OUT_RIGHT);
        if (v == VIEW_MEMORY)
            out_column(t, "priv_kb", "Priv", OUT_RIGHT);
        out_column(t, "priv_peak_kb", "Priv Pk", OUT_RIGHT);
        out_column(t, "faults", "Faults", OUT_RIGHT);
        out_column(t, "nonp_kb", "NonP", OUT_RIGHT);
        out_column(t, "page_kb", "Page", OUT_RIGHT);
    }
}

static void proc_row(struct out *t, const struct ps_opts *o, enum view v, const char *host,
                     const struct ntl_perf_ps_proc *p, int depth)
{
    if (o->host_column)
        out_str(t, host);
    if (v == VIEW_TREE)
        out_indent(t, o->host_column ? 0 : depth);
    out_str(t, p->name);
    cell_field(t, p, NTL_PERF_PS_PID);
    if (v == VIEW_TREE)
        cell_field(t, p, NTL_PERF_PS_PPID);
    if (v == VIEW_TASK) {
        if (p->have_cpu_pct)
            out_num(t, p->cpu_pct, 0);
        else
            out_null(t);
    }
    if (v != VIEW_MEMORY) {
        cell_field(t, p, NTL_PERF_PS_PRI);
        cell_field(t, p, NTL_PERF_PS_THREADS);
        cell_field(t, p, NTL_PERF_PS_HANDLES);
    }
    if (v == VIEW_DEFAULT || v == VIEW_TASK || v == VIEW_ALL) {
        proc_cell_kb(t, p, NTL_PERF_PS_PRIV);
        cell_duration(t, p->have & (1u << NTL_PERF_PS_CPU), p->v[NTL_PERF_PS_CPU]);
        cell_elapsed(t, p->have_elapsed, p->elapsed);
    }
    if (v == VIEW_TREE) {
        proc_cell_kb(t, p, NTL_PERF_PS_VM);
        proc_cell_kb(t, p, NTL_PERF_PS_WS);
        proc_cell_kb(t, p, NTL_PERF_PS_PRIV);
        out_i64(t, depth);
    }
    if (v == VIEW_MEMORY || v == VIEW_ALL) {
        proc_cell_kb(t, p, NTL_PERF_PS_VM);
        proc_cell_kb(t, p, NTL_PERF_PS_WS);
        if (v == VIEW_MEMORY)
            proc_cell_kb(t, p, NTL_PERF_PS_PRIV);
        proc_cell_kb(t, p, NTL_PERF_PS_PRIV_PEAK);
        cell_field(t, p, NTL_PERF_PS_FAULTS);
        proc_cell_kb(t, p, NTL_PERF_PS_NONPAGED);
        proc_cell_kb(t, p, NTL_PERF_PS_PAGED);
    }
    out_row_end(t);
}

static size_t add_proc_rows(struct out *t, const struct ps_opts *o, enum view v,
                            const struct ntl_perf_ps_sample *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nprocs; i++)
        if (proc_matches(o, &s->procs[i])) {
            proc_row(t, o, v, s->host, &s->procs[i], 0);
            n++;
        }
    return n;
}

/* Task-manager order: busiest first, then by pid. */
static int by_cpu(const void *a, const void *b)
{
    const struct ntl_perf_ps_proc *x = a, *y = b;
    double cx = x->have_cpu_pct ? x->cpu_pct : -1, cy = y->have_cpu_pct ? y->cpu_pct : -1;
    if (cx != cy)
        return cx > cy ? -1 : 1;
    return x->v[NTL_PERF_PS_PID] < y->v[NTL_PERF_PS_PID] ? -1 : x->v[NTL_PERF_PS_PID] > y->v[NTL_PERF_PS_PID];
}

/* ---- tree ---- */

struct pid_slot {
    uint64_t pid;
    size_t idx;
};

static int by_pid(const void *a, const void *b)
{
    const struct pid_slot *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static size_t find_pid(const struct pid_slot *slots, size_t n, uint64_t pid)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (slots[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && slots[lo].pid == pid ? slots[lo].idx : SIZE_MAX;
}

/* Each process's creator and children, as indices into the sample. */
struct proc_tree {
    size_t n;
    size_t *parent, *first, *next; /* SIZE_MAX: none */
    bool *seen;
    size_t *kids;
    /* shown: display depth of the parent's row, -1 when the parent is hidden
     * (a NAME or PID filter shows each match's subtree from depth 0). */
    struct tree_frame { size_t idx; int shown; } *stack;
};

static void tree_free(struct proc_tree *tr)
{
    free(tr->parent);
    free(tr->first);
    free(tr->next);
    free(tr->seen);
    free(tr->kids);
    free(tr->stack);
}

/* Links each process to its creator found by pid. False when out of memory. */
static bool tree_link(struct proc_tree *tr, const struct ntl_perf_ps_sample *s)
{
    size_t n = s->nprocs, m = n ? n : 1;
    struct pid_slot *slots = calloc(m, sizeof *slots);
    size_t *last = calloc(m, sizeof *last);

    *tr = (struct proc_tree){n, calloc(m, sizeof(size_t)), calloc(m, sizeof(size_t)),
                             calloc(m, sizeof(size_t)), calloc(m, sizeof(bool)),
                             calloc(m, sizeof(size_t)), calloc(m, sizeof(struct tree_frame))};
    if (!slots || !last || !tr->parent || !tr->first || !tr->next || !tr->seen || !tr->kids ||
        !tr->stack) {
        free(slots);
        free(last);
        tree_free(tr);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        slots[i] = (struct pid_slot){s->procs[i].v[NTL_PERF_PS_PID], i};
        tr->first[i] = tr->next[i] = last[i] = SIZE_MAX;
    }
    qsort(slots, n, sizeof *slots, by_pid);
    for (size_t i = 0; i < n; i++) {
        const struct ntl_perf_ps_proc *p = &s->procs[i];
        size_t par = SIZE_MAX;
        if ((p->have & (1u << NTL_PERF_PS_PPID)) && p->v[NTL_PERF_PS_PPID] != p->v[NTL_PERF_PS_PID])
            par = find_pid(slots, n, p->v[NTL_PERF_PS_PPID]);
        tr->parent[i] = par;
        if (par != SIZE_MAX) {
            *(last[par] == SIZE_MAX ? &tr->first[par] : &tr->next[last[par]]) = i;
            last[par] = i;
        }
    }
    free(slots);
    free(last);
    return true;
}

/* Depth-first from root r, children in the source's order; returns the rows shown. */
static size_t tree_walk(struct out *t, const struct ps_opts *o, const struct ntl_perf_ps_sample *s,
                        struct proc_tree *tr, size_t r)
{
    size_t sp = 0, rows = 0;
    tr->stack[sp++] = (struct tree_frame){r, -1};
    tr->seen[r] = true;
    while (sp) {
        size_t i = tr->stack[--sp].idx, nk = 0;
        int depth = tr->stack[sp].shown >= 0 ? tr->stack[sp].shown + 1
                    : proc_matches(o, &s->procs[i]) ? 0 : -1;
        if (depth >= 0) {
            proc_row(t, o, VIEW_TREE, s->host, &s->procs[i], depth);
            rows++;
        }
        /* Push children in reverse so they pop in source order. */
        for (size_t c = tr->first[i]; c != SIZE_MAX; c = tr->next[c])
            if (!tr->seen[c])
                tr->kids[nk++] = c;
        while (nk) {
            size_t c = tr->kids[--nk];
            tr->seen[c] = true;
            tr->stack[sp++] = (struct tree_frame){c, depth < 1000 ? depth : 999};
        }
    }
    return rows;
}

/* A process is a root when its creator is absent or itself; cycles
 * (possible in hostile data) are broken by visiting each process once:
 * roots first, then anything a cycle kept unreachable. Out of memory shows
 * no rows, and the caller finds no match. */
static size_t add_tree_rows(struct out *t, const struct ps_opts *o, const struct ntl_perf_ps_sample *s)
{
    struct proc_tree tr;
    size_t rows = 0;

    if (!tree_link(&tr, s))
        return 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t r = 0; r < tr.n; r++)
            if (!tr.seen[r] && (pass == 1 || tr.parent[r] == SIZE_MAX))
                rows += tree_walk(t, o, s, &tr, r);
    tree_free(&tr);
    return rows;
}

/* ---- threads ---- */

/* Tid to Elapsed Time: a thread's own columns, after Host, Process and Pid
 * in the flat table and alone in PsList's per-process blocks. */
static void thread_own_columns(struct out *t, const struct ps_opts *o)
{
    out_column(t, "tid", "Tid", OUT_RIGHT);
    out_column(t, "pri", "Pri", OUT_RIGHT);
    out_column(t, "cswtch", "Cswtch", OUT_RIGHT);
    out_column(t, "state", "State", OUT_LEFT);
    out_column(t, "user_time", "User Time", OUT_RIGHT);
    out_column(t, "kernel_time", "Kernel Time", OUT_RIGHT);
    out_column(t, "elapsed_time", "Elapsed Time", OUT_RIGHT);
    if (o->stacks)
        out_column(t, "stack", "Stack", OUT_LEFT);
}

static void thread_columns(struct out *t, const struct ps_opts *o)
{
    if (o->host_column)
        out_column(t, "host", "Host", OUT_LEFT);
    out_column(t, "process", "Process", OUT_LEFT);
    out_column(t, "pid", "Pid", OUT_RIGHT);
    thread_own_columns(t, o);
}

/* pid: the thread's process, 0 when unknown. */
static void thread_own_cells(struct out *t, const struct ps_opts *o,
                             const struct ntl_perf_ps_thread *th, uint64_t pid)
{
    char state[48], stack[1024];
    for (int f = NTL_PERF_PS_T_TID; f <= NTL_PERF_PS_T_CSWITCH; f++) {
        if (f == NTL_PERF_PS_T_PID)
            continue;
        if (th->have & (1u << f))
            out_u64(t, th->v[f]);
        else
            out_null(t);
    }
    out_str(t, ntl_perf_ps_thread_state(state, sizeof state, th));
    cell_duration(t, th->have & (1u << NTL_PERF_PS_T_USER), th->v[NTL_PERF_PS_T_USER]);
    cell_duration(t, th->have & (1u << NTL_PERF_PS_T_KERNEL), th->v[NTL_PERF_PS_T_KERNEL]);
    cell_elapsed(t, th->have_elapsed, th->elapsed);
    if (o->stacks && pid && pid <= UINT32_MAX && (th->have & (1u << NTL_PERF_PS_T_TID)))
        out_str(t, ps_stacks_cell(o->walked, (uint32_t)pid, (uint32_t)th->v[NTL_PERF_PS_T_TID],
                                  stack, sizeof stack));
    else if (o->stacks)
        out_str(t, "");
    out_row_end(t);
}

static size_t add_thread_rows(struct out *t, const struct ps_opts *o, const struct ntl_perf_ps_sample *s)
{
    size_t rows = 0;

    for (size_t i = 0; i < s->nthreads; i++) {
        const struct ntl_perf_ps_thread *th = &s->threads[i];
        const struct ntl_perf_ps_proc *p = th->proc != SIZE_MAX ? &s->procs[th->proc] : NULL;
        if (o->filter && (!p || !proc_matches(o, p)))
            continue;
        if (o->host_column)
            out_str(t, s->host);
        out_str(t, p ? p->name : "");
        uint64_t pid = th->have & (1u << NTL_PERF_PS_T_PID) ? th->v[NTL_PERF_PS_T_PID]
                       : p && (p->have & (1u << NTL_PERF_PS_PID)) ? p->v[NTL_PERF_PS_PID] : 0;
        if (pid || (th->have & (1u << NTL_PERF_PS_T_PID)))
            out_u64(t, pid);
        else
            out_null(t);
        thread_own_cells(t, o, th, pid);
        rows++;
    }
    return rows;
}

/* Thread k's bucket: its process, or nprocs for a thread of no known one. */
static size_t thread_bucket(const struct ntl_perf_ps_sample *s, size_t k)
{
    return s->threads[k].proc < s->nprocs ? s->threads[k].proc : s->nprocs;
}

/* PsList -d on one host: each process as a "NAME PID:" line and a table of
 * its threads; threads of no known process last, under "(unknown)". The
 * threads are bucketed by process first: a Windows host has 100,000. */
static int render_thread_blocks(const struct ps_opts *o, const struct ntl_perf_ps_sample *s)
{
    size_t *start = calloc(2 * (s->nprocs + 2), sizeof *start), *cursor = start + s->nprocs + 2;
    size_t *order = malloc((s->nthreads ? s->nthreads : 1) * sizeof *order);
    int rc = 0;

    if (!start || !order) {
        free(start);
        free(order);
        return -1;
    }
    for (size_t k = 0; k < s->nthreads; k++)
        start[thread_bucket(s, k) + 1]++;
    for (size_t j = 0; j <= s->nprocs; j++)
        start[j + 1] += start[j];
    memcpy(cursor, start, (s->nprocs + 1) * sizeof *start);
    for (size_t k = 0; k < s->nthreads; k++)
        order[cursor[thread_bucket(s, k)]++] = k;
    for (size_t j = 0; j <= s->nprocs && rc == 0; j++) {
        const struct ntl_perf_ps_proc *p = j < s->nprocs ? &s->procs[j] : NULL;
        if (p ? !proc_matches(o, p) : o->filter || start[j] == start[j + 1])
            continue;
        if (!p)
            printf("(unknown):\n");
        else if (p->have & (1u << NTL_PERF_PS_PID))
            printf("%s %" PRIu64 ":\n", p->name, p->v[NTL_PERF_PS_PID]);
        else
            printf("%s:\n", p->name);
        struct out *t = out_new(stdout, OUT_TABLE);
        if (!t) {
            rc = -1;
            break;
        }
        thread_own_columns(t, o);
        uint64_t pid = p && (p->have & (1u << NTL_PERF_PS_PID)) ? p->v[NTL_PERF_PS_PID] : 0;
        for (size_t k = start[j]; k < start[j + 1]; k++)
            thread_own_cells(t, o, &s->threads[order[k]], pid);
        rc = out_close(t);
        putchar('\n');
    }
    free(start);
    free(order);
    return rc;
}

/* ---- rendering ---- */

/* PsList's line above a table: "Process information for HOST:". Rows carry
 * a Host column instead when there are several sources. */
static void banner(const struct ps_opts *o, const char *host)
{
    const char *what = o->view == VIEW_THREADS ? "Thread detail"
                       : o->view == VIEW_MEMORY ? "Process memory detail"
                       : o->view == VIEW_ALL    ? "Process and thread detail"
                                                : "Process information";
    if (o->fmt == OUT_TABLE && !o->host_column)
        printf("%s for %s:\n\n", what, host);
}

/* When the sample was taken: the source's own clock (PERF_DATA_BLOCK's
 * SystemTime), for the timestamp column of a refreshing view. */
static void cell_sample_time(struct out *t, const struct ntl_perf_ps_sample *s)
{
    int64_t secs;
    if (s->block && ntl_perf_systemtime_to_unix(&s->block->system_time, &secs))
        out_time(t, secs, s->block->system_time.milliseconds % 1000, 3);
    else
        out_null(t);
}

struct host {
    const char *spec;
    const struct cli_sources *cs;
    struct ntl_source *src;
    struct ntl_perf_titles *titles;
    struct ntl_perf_ps_indices ix;
    struct ntl_perf_ps_sample prev, cur;
    bool have_prev, done;
    int rc;                  /* of the last job */
    struct ntl_error err;
};

struct sample_job {
    struct host *hosts;
    bool threads, cpus;
};

/* One host's part of a round, run in parallel with the others'. */
static void take_sample(void *arg, size_t i)
{
    struct sample_job *j = arg;
    struct host *h = &j->hosts[i];
    if (h->done)
        return;
    ntl_error_clear(&h->err);
    h->rc = ntl_source_ps_take(h->src, &h->ix, j->threads, j->cpus, &h->cur, &h->err);
}

/* Opens one source and reads its titles, in parallel with the others: a
 * server that stalls costs its own timeout, not everyone's. */
static void open_host(void *arg, size_t i)
{
    struct host *h = &((struct host *)arg)[i];
    ntl_error_clear(&h->err);
    h->rc = cli_source_open_one(h->cs, i, &h->src, &h->err);
    if (h->rc >= 0)
        h->rc = ntl_source_ps_titles(h->src, &h->titles, &h->ix, &h->err);
}

/* The rows of every host that answered; returns how many matched. */
static size_t add_rows(struct out *t, const struct host *hosts, size_t n, const struct ps_opts *o,
                       enum view v)
{
    size_t matched = 0;
    for (size_t h = 0; h < n; h++) {
        if (hosts[h].rc < 0)
            continue;
        if (v == VIEW_TREE)
            matched += add_tree_rows(t, o, &hosts[h].cur);
        else if (v == VIEW_THREADS)
            matched += add_thread_rows(t, o, &hosts[h].cur);
        else
            matched += add_proc_rows(t, o, v, &hosts[h].cur);
    }
    return matched;
}

/* One snapshot of every host; -x is two sections, processes then threads. */
static int render_snapshot(const struct host *hosts, size_t n, const struct ps_opts *o,
                           size_t *matched)
{
    enum view pv = o->view == VIEW_THREADS ? VIEW_DEFAULT : o->view;
    struct out *t;

    if (o->view == VIEW_THREADS && o->fmt == OUT_TABLE && !o->host_column) {
        *matched = 0;
        for (size_t i = 0; i < hosts[0].cur.nprocs; i++)
            *matched += proc_matches(o, &hosts[0].cur.procs[i]);
        return render_thread_blocks(o, &hosts[0].cur);
    }
    if (!(t = out_new(stdout, o->fmt)))
        return -1;
    if (o->view == VIEW_ALL)
        out_section(t, "processes");
    if (o->view == VIEW_THREADS)
        thread_columns(t, o);
    else
        proc_columns(t, o, pv);
    *matched = add_rows(t, hosts, n, o, o->view == VIEW_THREADS ? VIEW_THREADS : pv);
    if (o->view == VIEW_ALL) {
        out_section(t, "threads");
        thread_columns(t, o);
        add_rows(t, hosts, n, o, VIEW_THREADS);
    }
    return out_close(t);
}

static int snapshot_once(struct host *hosts, size_t n, const struct ps_opts *o, const char *cmd)
{
    bool threads = o->view == VIEW_THREADS || o->view == VIEW_ALL;
    size_t ok = 0, matched = 0;
    int status = EXIT_OK;

    ps_parallel(n, take_sample, &(struct sample_job){hosts, threads, false});
    for (size_t h = 0; h < n; h++) {
        if (hosts[h].done) {
            status = EXIT_FAIL;   /* reported when it was opened */
            continue;
        }
        if (hosts[h].rc < 0) {
            if (hosts[h].err.status == NTL_ERR_EOF)
                ntl_error_set(&hosts[h].err, NTL_ERR_EOF, NULL, NTL_NO_OFFSET,
                              "the capture holds no snapshot");
            status = cli_fail(cmd, &hosts[h].err, hosts[h].spec);
            continue;
        }
        ok++;
        if (threads && !hosts[h].cur.have_threads)
            cli_warn(cmd, "%s: the source sent no Thread object", hosts[h].spec);
    }
    if (ok) {
        if (status == EXIT_OK)
            banner(o, hosts[0].cur.host);
        if (render_snapshot(hosts, n, o, &matched) < 0)
            status = cli_failf(cmd, "cannot write the output");
    }
    if (status == EXIT_OK && o->filter && !matched)
        status = cli_failf(cmd, "no process matches '%s'", o->filter);
    for (size_t h = 0; h < n; h++)
        ntl_perf_ps_sample_free(&hosts[h].cur);
    return status;
}

/* One refresh of -s: each live host's processes by CPU % over the interval
 * just ended. Returns how many hosts are still answering. */
static size_t task_round(struct out *t, struct host *hosts, size_t n, const struct ps_opts *o,
                         const char *cmd, int *status)
{
    size_t active = 0;

    ps_parallel(n, take_sample, &(struct sample_job){hosts, false, true});
    for (size_t h = 0; h < n; h++) {
        struct host *x = &hosts[h];
        if (x->done)
            continue;
        if (x->rc < 0) {
            if (x->err.status != NTL_ERR_EOF)
                *status = cli_fail(cmd, &x->err, x->spec);
            ntl_perf_ps_sample_free(&x->cur);
            x->done = true;
            continue;
        }
        active++;
        if (x->have_prev) {
            ntl_perf_ps_sample_cpu(&x->cur, &x->prev);
            qsort(x->cur.procs, x->cur.nprocs, sizeof *x->cur.procs, by_cpu);
            for (size_t i = 0; i < x->cur.nprocs; i++)
                if (proc_matches(o, &x->cur.procs[i])) {
                    if (o->fmt != OUT_TABLE)
                        cell_sample_time(t, &x->cur);
                    proc_row(t, o, VIEW_TASK, x->cur.host, &x->cur.procs[i], 0);
                }
        }
        ntl_perf_ps_sample_free(&x->prev);
        x->prev = x->cur;
        x->have_prev = true;
        memset(&x->cur, 0, sizeof x->cur);
    }
    return active;
}

/* -s: CPU % needs two samples; each refresh shows the interval just ended.
 * A table is redrawn per refresh (on a terminal, in place); the other
 * formats are one stream whose rows carry the sample's time. */
static int task_manager(struct host *hosts, size_t n, const struct ps_opts *o, const char *cmd)
{
    bool live = false, clear = o->fmt == OUT_TABLE && cli_stdout_is_terminal();
    long rounds = o->task_seconds ? (o->task_seconds + o->interval - 1) / o->interval : -1;
    struct out *t = out_new(stdout, o->fmt);
    int status = EXIT_OK;
    long shown = 0;

    if (!t)
        return cli_failf(cmd, "out of memory");
    for (size_t h = 0; h < n; h++)
        live = live || ntl_source_is_live(hosts[h].src);
    cli_stop_catch_signals(); /* Ctrl-C ends the view with its output whole */
    if (o->fmt != OUT_TABLE)
        out_column(t, "timestamp", NULL, OUT_LEFT);
    proc_columns(t, o, VIEW_TASK);
    for (long round = 0; (rounds < 0 || round <= rounds) && !cli_stop_requested(); round++) {
        if (round > 0 && live)
            cli_sleep_ms((unsigned)o->interval * 1000u);
        if (cli_stop_requested() || !task_round(t, hosts, n, o, cmd, &status))
            break;
        if (round == 0)
            continue;
        if (clear)
            fputs("\033[H\033[2J", stdout);
        banner(o, hosts[0].prev.host);
        shown++;
        if (out_flush(t) < 0)
            break;
        if (!clear && o->fmt == OUT_TABLE)
            fputc('\n', stdout);
    }
    if (out_close(t) < 0)
        status = cli_failf(cmd, "cannot write the output");
    for (size_t h = 0; h < n; h++)
        ntl_perf_ps_sample_free(&hosts[h].prev);
    if (status == EXIT_OK && !shown && !cli_stop_requested())
        status = cli_failf(cmd, "CPU %% needs two snapshots; the source holds fewer");
    return status;
}

/* \\COMPUTER (a source) or the one NAME or PID. */
static int add_operand(struct ps_opts *o, struct cli_sources *cs, const char *a)
{
    if (!strncmp(a, "\\\\", 2)) {
        if (!cli_sources_add(cs, a))
            return opt_usage_error(&ps_command, "at most %d sources", CLI_SOURCE_MAX);
        return EXIT_OK;
    }
    if (o->filter)
        return opt_usage_error(&ps_command, "one NAME or PID at most, not '%s' too", a);
    o->filter = a;
    o->filter_is_pid = cli_is_decimal(a) && cli_parse_u64(a, &o->filter_pid);
    return EXIT_OK;
}

/* Returns CLI_CONTINUE, or the exit code when there is nothing more to do. */
static int parse_args(int argc, char **argv, struct ps_opts *o, struct cli_sources *cs)
{
    struct opt opts[] = {
        OPT_GROUP("View (one of)"),
        OPT_CMDMODE('d', "threads", &o->view, VIEW_THREADS,
                    "thread detail: Tid, Pri, Cswtch, State, User Time,\n"
                    "Kernel Time, Elapsed Time"),
        OPT_CMDMODE('m', "memory", &o->view, VIEW_MEMORY,
                    "memory detail in KB: VM, WS, Priv, Priv Pk, Faults, NonP, Page"),
        OPT_CMDMODE('x', "all", &o->view, VIEW_ALL, "processes with all columns, then their threads"),
        OPT_CMDMODE('t', "tree", &o->view, VIEW_TREE, "the process tree, by creating process"),
        OPT_FLAG(0, "stacks", &o->stacks,
                 "with -d or -x on the local host: a Stack column, each thread's\n"
                 "innermost frames (as ntlens stacks walks them; tracing needs root)"),
        OPT_INT('s', "task-manager", &o->task_seconds, "SECONDS", 1, 31536000,
                "refresh with CPU % every -i seconds, for SECONDS\n(default: until interrupted)",
                .flags = OPT_OPTARG | OPT_NEXT_NUMBER),
        OPT_GROUP("Selection and refresh"),
        OPT_FLAG('e', "exact", &o->exact, "NAME must match exactly (default: names beginning with it)"),
        OPT_INT('i', "interval", &o->interval, "SECONDS", 1, 86400,
                "refresh interval of -s (default 1)", .aliases = "-r"),
        OPT_OUTPUT_OPTIONS(&o->fmt),
        OPT_SOURCE_OPTIONS(cs),
        OPT_END(),
    };
    int n, rc;

    memset(o, 0, sizeof *o);
    o->interval = 1;
    if ((n = parse_options(&ps_command, opts, argc, argv)) < 0)
        return parse_options_exit(n);
    for (int i = 1; i <= n; i++)
        if ((rc = add_operand(o, cs, argv[i])) != EXIT_OK)
            return rc;
    if (opt_given(opts, "task-manager")) {
        if (o->view != VIEW_DEFAULT)
            return opt_usage_error(&ps_command, "-s cannot be used with -d, -m, -x or -t");
        o->view = VIEW_TASK;
    } else if (opt_given(opts, "interval")) {
        return opt_usage_error(&ps_command, "-i sets the refresh interval of -s");
    }
    if (o->stacks && o->view != VIEW_THREADS && o->view != VIEW_ALL)
        return opt_usage_error(&ps_command, "--stacks adds a column to the thread views: "
                               "use it with -d or -x");
    if (o->view == VIEW_ALL && o->fmt != OUT_TABLE && o->fmt != OUT_JSON)
        return opt_usage_error(&ps_command, "-x prints two tables, processes and threads; %s holds "
                               "one: use -d for threads, or --format json",
                               out_format_names[o->fmt]);
    return CLI_CONTINUE;
}

int cmd_ps(int argc, char **argv)
{
    struct cli_sources cs;
    struct host *hosts;
    struct ps_opts o;
    size_t answering = 0;
    int rc;

    cli_sources_init(&cs);
    if ((rc = parse_args(argc, argv, &o, &cs)) != CLI_CONTINUE)
        return rc;
    if ((rc = cli_sources_prepare(&cs, argv[0])) != EXIT_OK) {
        cli_sources_clear(&cs);
        return rc;
    }
    o.host_column = cs.nspecs > 1;
    if (o.stacks && (cs.nspecs != 1 || strcmp(cs.specs[0], "local") != 0)) {
        cli_sources_clear(&cs);
        return opt_usage_error(&ps_command, "--stacks walks threads of this host: it cannot be "
                               "used with -S");
    }
    if (o.stacks) {
        cli_stop_catch_signals();
        if (!(o.walked = ps_stacks_new(cli_stop_flag()))) {
            cli_sources_clear(&cs);
            return cli_failf(argv[0], "out of memory");
        }
    }
    if (!(hosts = calloc(cs.nspecs, sizeof *hosts))) {
        cli_sources_clear(&cs);
        return cli_failf(argv[0], "out of memory");
    }
    for (size_t h = 0; h < cs.nspecs; h++) {
        hosts[h].spec = cs.specs[h];
        hosts[h].cs = &cs;
    }
    ps_parallel(cs.nspecs, open_host, hosts);
    cli_sources_clear(&cs);
    /* A source that fails gets its own error; the others go on. */
    for (size_t h = 0; h < cs.nspecs; h++) {
        if (hosts[h].rc < 0) {
            rc = cli_fail(argv[0], &hosts[h].err, cs.specs[h]);
            hosts[h].done = true;
        } else {
            answering++;
        }
    }
    if (answering) {
        int shown = o.view == VIEW_TASK ? task_manager(hosts, cs.nspecs, &o, argv[0])
                                        : snapshot_once(hosts, cs.nspecs, &o, argv[0]);
        if (rc == EXIT_OK)
            rc = shown;
    }
    for (size_t h = 0; h < cs.nspecs; h++) {
        ntl_perf_titles_free(hosts[h].titles);
        ntl_source_close(hosts[h].src);
    }
    free(hosts);
    ps_stacks_free(o.walked);
    return rc;
}
