/* ntlens ps: PsList v1.41 rebuilt on performance data. Processes come from
 * the Process object (230), threads from the Thread object (232), CPU % in
 * task-manager mode from two samples with PDH's PERF_100NSEC_TIMER formula. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli-source.h"
#include "cli.h"
#include "commands.h"
#include "output.h"
#include "ps.h"

enum view { VIEW_DEFAULT, VIEW_MEMORY, VIEW_THREADS, VIEW_ALL, VIEW_TREE, VIEW_TASK };

struct ps_opts {
    enum view view;
    bool exact;
    bool task;               /* -s */
    long task_seconds;       /* 0: until interrupted */
    long refresh;            /* -r, seconds */
    enum out_format fmt;
    const char *filter;      /* name prefix or pid */
    bool filter_is_pid;
    uint64_t filter_pid;
    bool host_column;
};

static const char usage_text[] =
    "usage: ntlens ps [-d | -m | -x | -t | -s [N] [-r N]] [-e] [--format FORMAT]\n"
    "                 [SOURCE OPTIONS] [\\\\COMPUTER] [NAME | PID]\n"
    "\n"
    "List processes and threads from performance data, like Sysinternals PsList.\n"
    "Default columns: Name, Pid, Pri, Thd, Hnd, Priv (KB), CPU Time, Elapsed Time.\n"
    "\n"
    "  -d, --threads            thread detail: Tid, Pri, Cswtch, State, User Time,\n"
    "                           Kernel Time, Elapsed Time\n"
    "  -m, --memory             memory detail in KB: VM, WS, Priv, Priv Pk, Faults,\n"
    "                           NonP, Page\n"
    "  -x, --all                processes with all columns, then their threads\n"
    "  -t, --tree               the process tree, by creating process\n"
    "  -e, --exact              NAME must match exactly (default: names beginning with it)\n"
    "  -s, --task-manager[=N]   refresh with CPU % every -r seconds, for N seconds\n"
    "                           (default: until interrupted)\n"
    "  -r, --refresh N          refresh interval for -s, in seconds (default 1)\n"
    "      --format FORMAT      table (default), csv or json (-s: JSON lines)\n"
    "  -h, --help               this help\n"
    "\n"
    "NAME or PID selects processes (a name matches case-insensitively); \\\\COMPUTER\n"
    "is the same as -S \\\\COMPUTER. With several sources, rows carry a Host column.\n"
    "\n";

enum { OPT_FORMAT = 0x2000 };

static int help(void)
{
    fputs(usage_text, stdout);
    fputs(cli_source_help, stdout);
    return EXIT_OK;
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

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

static void cell_field(struct out_table *t, const struct ntl_perf_ps_proc *p, enum ntl_perf_ps_field f)
{
    if (p->have & (1u << f))
        out_table_u64(t, p->v[f]);
    else
        out_table_null(t);
}

static void cell_kb(struct out_table *t, bool have, uint64_t bytes)
{
    if (have)
        out_table_u64(t, bytes / 1024);
    else
        out_table_null(t);
}

static void cell_duration(struct out_table *t, bool have, uint64_t hundred_ns)
{
    char buf[48];
    if (!have) {
        out_table_null(t);
        return;
    }
    out_table_num_text(t, (double)hundred_ns / 1e7, out_format_duration(buf, sizeof buf, hundred_ns));
}

static void cell_elapsed(struct out_table *t, bool have, double seconds)
{
    if (have && seconds >= 1.8e12) /* beyond 100 ns units in 64 bits: a source's nonsense */
        out_table_num(t, seconds, 3);
    else
        cell_duration(t, have && seconds >= 0, have && seconds >= 0 ? (uint64_t)(seconds * 1e7 + 0.5) : 0);
}

static void proc_cell_kb(struct out_table *t, const struct ntl_perf_ps_proc *p, enum ntl_perf_ps_field f)
{
    cell_kb(t, p->have & (1u << f), p->v[f]);
}

/* ---- process tables ---- */

static void proc_columns(struct out_table *t, const struct ps_opts *o, enum view v)
{
    if (o->host_column)
        out_table_column(t, "host", "Host", OUT_LEFT);
    out_table_column(t, "name", "Name", OUT_LEFT);
    out_table_column(t, "pid", "Pid", OUT_RIGHT);
    if (v == VIEW_TREE)
        out_table_column(t, "ppid", "Ppid", OUT_RIGHT);
    if (v == VIEW_TASK)
        out_table_column(t, "cpu", "CPU", OUT_RIGHT);
    if (v != VIEW_MEMORY) {
        out_table_column(t, "pri", "Pri", OUT_RIGHT);
        out_table_column(t, "thd", "Thd", OUT_RIGHT);
        out_table_column(t, "hnd", "Hnd", OUT_RIGHT);
    }
    if (v == VIEW_DEFAULT || v == VIEW_TASK || v == VIEW_ALL) {
        out_table_column(t, "priv_kb", "Priv", OUT_RIGHT);
        out_table_column(t, "cpu_time", "CPU Time", OUT_RIGHT);
        out_table_column(t, "elapsed_time", "Elapsed Time", OUT_RIGHT);
    }
    if (v == VIEW_TREE) {
        out_table_column(t, "vm_kb", "VM", OUT_RIGHT);
        out_table_column(t, "ws_kb", "WS", OUT_RIGHT);
        out_table_column(t, "priv_kb", "Priv", OUT_RIGHT);
        out_table_column(t, "depth", "Depth", OUT_RIGHT);
    }
    if (v == VIEW_MEMORY || v == VIEW_ALL) {
        out_table_column(t, "vm_kb", "VM", OUT_RIGHT);
        out_table_column(t, "ws_kb", "WS", OUT_RIGHT);
        if (v == VIEW_MEMORY)
            out_table_column(t, "priv_kb", "Priv", OUT_RIGHT);
        out_table_column(t, "priv_peak_kb", "Priv Pk", OUT_RIGHT);
        out_table_column(t, "faults", "Faults", OUT_RIGHT);
        out_table_column(t, "nonp_kb", "NonP", OUT_RIGHT);
        out_table_column(t, "page_kb", "Page", OUT_RIGHT);
    }
}

static void proc_row(struct out_table *t, const struct ps_opts *o, enum view v, const char *host,
                     const struct ntl_perf_ps_proc *p, int depth)
{
    if (o->host_column)
        out_table_str(t, host);
    if (v == VIEW_TREE)
        out_table_indent(t, o->host_column ? 0 : depth);
    out_table_str(t, p->name);
    cell_field(t, p, NTL_PERF_PS_PID);
    if (v == VIEW_TREE)
        cell_field(t, p, NTL_PERF_PS_PPID);
    if (v == VIEW_TASK) {
        if (p->have_cpu_pct)
            out_table_num(t, p->cpu_pct, 0);
        else
            out_table_null(t);
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
        out_table_i64(t, depth);
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
    out_table_row_end(t);
}

static size_t add_proc_rows(struct out_table *t, const struct ps_opts *o, enum view v,
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

/* Depth-first from each root, children in the source's order. A process is
 * a root when its creator is absent or itself; cycles (possible in hostile
 * data) are broken by visiting each process once. */
static size_t add_tree_rows(struct out_table *t, const struct ps_opts *o, const struct ntl_perf_ps_sample *s)
{
    size_t n = s->nprocs, rows = 0, sp = 0;
    struct pid_slot *slots = calloc(n ? n : 1, sizeof *slots);
    size_t *parent = calloc(n ? n : 1, sizeof *parent), *first = calloc(n ? n : 1, sizeof *first);
    size_t *next = calloc(n ? n : 1, sizeof *next), *last = calloc(n ? n : 1, sizeof *last);
    /* shown: display depth of the parent's row, -1 when the parent is hidden
     * (a NAME or PID filter shows each match's subtree from depth 0). */
    struct { size_t idx; int shown; } *stack = calloc(n ? n : 1, sizeof *stack);
    bool *seen = calloc(n ? n : 1, sizeof *seen);
    size_t *kids = calloc(n ? n : 1, sizeof *kids);

    if (!slots || !parent || !first || !next || !last || !stack || !seen || !kids) {
        fputs("ntlens: out of memory\n", stderr);
        exit(EXIT_FAIL);
    }
    for (size_t i = 0; i < n; i++) {
        slots[i].pid = s->procs[i].v[NTL_PERF_PS_PID];
        slots[i].idx = i;
        first[i] = next[i] = last[i] = SIZE_MAX;
    }
    qsort(slots, n, sizeof *slots, by_pid);
    for (size_t i = 0; i < n; i++) {
        const struct ntl_perf_ps_proc *p = &s->procs[i];
        size_t par = SIZE_MAX;
        if ((p->have & (1u << NTL_PERF_PS_PPID)) && p->v[NTL_PERF_PS_PPID] != p->v[NTL_PERF_PS_PID])
            par = find_pid(slots, n, p->v[NTL_PERF_PS_PPID]);
        parent[i] = par;
        if (par != SIZE_MAX) {
            if (last[par] == SIZE_MAX)
                first[par] = i;
            else
                next[last[par]] = i;
            last[par] = i;
        }
    }
    /* Roots first, then anything a cycle kept unreachable. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t r = 0; r < n; r++) {
            if (seen[r] || (pass == 0 && parent[r] != SIZE_MAX))
                continue;
            stack[sp].idx = r;
            stack[sp].shown = -1;
            sp++;
            seen[r] = true;
            while (sp) {
                size_t i = stack[--sp].idx;
                int depth = stack[sp].shown >= 0 ? stack[sp].shown + 1
                            : proc_matches(o, &s->procs[i]) ? 0 : -1;
                size_t nk = 0;
                if (depth >= 0) {
                    proc_row(t, o, VIEW_TREE, s->host, &s->procs[i], depth);
                    rows++;
                }
                /* Push children in reverse so they pop in source order. */
                for (size_t c = first[i]; c != SIZE_MAX; c = next[c])
                    if (!seen[c])
                        kids[nk++] = c;
                while (nk) {
                    size_t c = kids[--nk];
                    seen[c] = true;
                    stack[sp].idx = c;
                    stack[sp].shown = depth < 1000 ? depth : 999;
                    sp++;
                }
            }
        }
    free(slots);
    free(parent);
    free(first);
    free(next);
    free(last);
    free(stack);
    free(seen);
    free(kids);
    return rows;
}

/* ---- threads ---- */

/* Tid to Elapsed Time: a thread's own columns, after Host, Process and Pid
 * in the flat table and alone in PsList's per-process blocks. */
static void thread_own_columns(struct out_table *t)
{
    out_table_column(t, "tid", "Tid", OUT_RIGHT);
    out_table_column(t, "pri", "Pri", OUT_RIGHT);
    out_table_column(t, "cswtch", "Cswtch", OUT_RIGHT);
    out_table_column(t, "state", "State", OUT_LEFT);
    out_table_column(t, "user_time", "User Time", OUT_RIGHT);
    out_table_column(t, "kernel_time", "Kernel Time", OUT_RIGHT);
    out_table_column(t, "elapsed_time", "Elapsed Time", OUT_RIGHT);
}

static void thread_columns(struct out_table *t, const struct ps_opts *o)
{
    if (o->host_column)
        out_table_column(t, "host", "Host", OUT_LEFT);
    out_table_column(t, "process", "Process", OUT_LEFT);
    out_table_column(t, "pid", "Pid", OUT_RIGHT);
    thread_own_columns(t);
}

static void thread_own_cells(struct out_table *t, const struct ntl_perf_ps_thread *th)
{
    char state[48];
    for (int f = NTL_PERF_PS_T_TID; f <= NTL_PERF_PS_T_CSWITCH; f++) {
        if (f == NTL_PERF_PS_T_PID)
            continue;
        if (th->have & (1u << f))
            out_table_u64(t, th->v[f]);
        else
            out_table_null(t);
    }
    out_table_str(t, ntl_perf_ps_thread_state(state, sizeof state, th));
    cell_duration(t, th->have & (1u << NTL_PERF_PS_T_USER), th->v[NTL_PERF_PS_T_USER]);
    cell_duration(t, th->have & (1u << NTL_PERF_PS_T_KERNEL), th->v[NTL_PERF_PS_T_KERNEL]);
    cell_elapsed(t, th->have_elapsed, th->elapsed);
    out_table_row_end(t);
}

static size_t add_thread_rows(struct out_table *t, const struct ps_opts *o, const struct ntl_perf_ps_sample *s)
{
    size_t rows = 0;

    for (size_t i = 0; i < s->nthreads; i++) {
        const struct ntl_perf_ps_thread *th = &s->threads[i];
        const struct ntl_perf_ps_proc *p = th->proc != SIZE_MAX ? &s->procs[th->proc] : NULL;
        if (o->filter && (!p || !proc_matches(o, p)))
            continue;
        if (o->host_column)
            out_table_str(t, s->host);
        out_table_str(t, p ? p->name : "");
        if (th->have & (1u << NTL_PERF_PS_T_PID))
            out_table_u64(t, th->v[NTL_PERF_PS_T_PID]);
        else if (p && (p->have & (1u << NTL_PERF_PS_PID)))
            out_table_u64(t, p->v[NTL_PERF_PS_PID]);
        else
            out_table_null(t);
        thread_own_cells(t, th);
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
        struct out_table *t = out_table_new();
        thread_own_columns(t);
        for (size_t k = start[j]; k < start[j + 1]; k++)
            thread_own_cells(t, &s->threads[order[k]]);
        rc = out_table_render(t, stdout, OUT_TABLE);
        putchar('\n');
        out_table_free(t);
    }
    free(start);
    free(order);
    return rc;
}

/* ---- rendering ---- */

static int render(struct out_table *t, const struct ps_opts *o, bool stream)
{
    int rc = stream && o->fmt == OUT_JSON ? out_table_render_jsonl(t, stdout)
                                          : out_table_render(t, stdout, o->fmt);
    fflush(stdout);
    return rc;
}

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

/* -x: processes, then threads. JSON is one object with both arrays; CSV is
 * two tables separated by an empty line; a table gets a blank line between. */
static int render_all(struct out_table *procs, struct out_table *threads, const struct ps_opts *o)
{
    int rc;
    if (o->fmt == OUT_JSON)
        fputs("{\"processes\":", stdout);
    rc = out_table_render(procs, stdout, o->fmt);
    fputs(o->fmt == OUT_JSON ? ",\"threads\":" : "\n", stdout);
    rc |= out_table_render(threads, stdout, o->fmt);
    if (o->fmt == OUT_JSON)
        fputs("}\n", stdout);
    fflush(stdout);
    return rc || ferror(stdout) ? -1 : 0;
}

struct host {
    const char *spec;
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

static void load_titles(void *arg, size_t i)
{
    struct host *h = &((struct host *)arg)[i];
    ntl_error_clear(&h->err);
    h->rc = ntl_source_ps_titles(h->src, &h->titles, &h->ix, &h->err);
}

static int snapshot_once(struct host *hosts, size_t n, const struct ps_opts *o, const char *cmd)
{
    bool threads = o->view == VIEW_THREADS || o->view == VIEW_ALL;
    struct out_table *pt = out_table_new(), *tt = out_table_new();
    enum view pv = o->view == VIEW_THREADS ? VIEW_DEFAULT : o->view;
    size_t matched = 0;
    int status = EXIT_OK, rc;

    proc_columns(pt, o, pv);
    thread_columns(tt, o);
    ps_parallel(n, take_sample, &(struct sample_job){hosts, threads, false});
    for (size_t h = 0; h < n; h++) {
        if (hosts[h].rc < 0) {
            if (hosts[h].err.status == NTL_ERR_EOF)
                ntl_error_set(&hosts[h].err, NTL_ERR_EOF, NULL, NTL_NO_OFFSET,
                              "the capture holds no snapshot");
            status = cli_fail(cmd, &hosts[h].err, hosts[h].spec);
            ntl_perf_ps_sample_free(&hosts[h].cur);
            continue;
        }
        if (threads && !hosts[h].cur.have_threads)
            cli_warn(cmd, "%s: the source sent no Thread object", hosts[h].spec);
        if (o->view == VIEW_TREE)
            matched += add_tree_rows(pt, o, &hosts[h].cur);
        else if (o->view == VIEW_THREADS)
            matched += add_thread_rows(tt, o, &hosts[h].cur);
        else
            matched += add_proc_rows(pt, o, pv, &hosts[h].cur);
        if (o->view == VIEW_ALL)
            add_thread_rows(tt, o, &hosts[h].cur);
    }
    if (status == EXIT_OK || matched) {
        if (status == EXIT_OK)
            banner(o, hosts[0].cur.host);
        if (o->view == VIEW_ALL)
            rc = render_all(pt, tt, o);
        else if (o->view == VIEW_THREADS && o->fmt == OUT_TABLE && !o->host_column)
            rc = render_thread_blocks(o, &hosts[0].cur);
        else
            rc = render(o->view == VIEW_THREADS ? tt : pt, o, false);
        if (rc < 0)
            status = cli_failf(cmd, "cannot write the output");
    }
    if (status == EXIT_OK && o->filter && !matched)
        status = cli_failf(cmd, "no process matches '%s'", o->filter);
    out_table_free(pt);
    out_table_free(tt);
    for (size_t h = 0; h < n; h++)
        ntl_perf_ps_sample_free(&hosts[h].cur);
    return status;
}

/* -s: CPU % needs two samples; each refresh shows the interval just ended. */
static int task_manager(struct host *hosts, size_t n, const struct ps_opts *o, const char *cmd)
{
    bool live = false, clear = o->fmt == OUT_TABLE && ps_stdout_is_terminal();
    long rounds = o->task_seconds ? (o->task_seconds + o->refresh - 1) / o->refresh : -1;
    int status = EXIT_OK;
    long shown = 0;

    for (size_t h = 0; h < n; h++)
        live = live || ntl_source_is_live(hosts[h].src);
    for (long round = 0; rounds < 0 || round <= rounds; round++) {
        struct out_table *t = out_table_new();
        size_t active = 0;

        if (round > 0 && live)
            ps_sleep_ms((unsigned)o->refresh * 1000u);
        proc_columns(t, o, VIEW_TASK);
        ps_parallel(n, take_sample, &(struct sample_job){hosts, false, true});
        for (size_t h = 0; h < n; h++) {
            struct host *x = &hosts[h];
            if (x->done)
                continue;
            if (x->rc < 0) {
                if (x->err.status != NTL_ERR_EOF)
                    status = cli_fail(cmd, &x->err, x->spec);
                ntl_perf_ps_sample_free(&x->cur);
                x->done = true;
                continue;
            }
            active++;
            if (x->have_prev) {
                ntl_perf_ps_sample_cpu(&x->cur, &x->prev);
                qsort(x->cur.procs, x->cur.nprocs, sizeof *x->cur.procs, by_cpu);
                add_proc_rows(t, o, VIEW_TASK, &x->cur);
            }
            ntl_perf_ps_sample_free(&x->prev);
            x->prev = x->cur;
            x->have_prev = true;
            memset(&x->cur, 0, sizeof x->cur);
        }
        if (!active) {
            out_table_free(t);
            break;
        }
        if (round > 0) {
            if (clear)
                fputs("\033[H\033[2J", stdout);
            banner(o, hosts[0].prev.host);
            shown++;
            if (render(t, o, true) < 0) {
                out_table_free(t);
                return cli_failf(cmd, "cannot write the output");
            }
            if (!clear && o->fmt == OUT_TABLE)
                fputc('\n', stdout);
        }
        out_table_free(t);
    }
    for (size_t h = 0; h < n; h++)
        ntl_perf_ps_sample_free(&hosts[h].prev);
    if (status == EXIT_OK && !shown)
        status = cli_failf(cmd, "CPU %% needs two snapshots; the source holds fewer");
    return status;
}

/* \\COMPUTER (a source) or the one NAME or PID. */
static int add_operand(struct ps_opts *o, struct cli_sources *cs, const char *cmd, const char *a)
{
    if (!strncmp(a, "\\\\", 2))
        return cli_sources_add(cs, cmd, a) < 0 ? EXIT_USAGE : EXIT_OK;
    if (o->filter)
        return cli_usage_error(cmd, "one NAME or PID at most, not '%s' too", a);
    o->filter = a;
    o->filter_is_pid = all_digits(a) && cli_parse_u64(a, &o->filter_pid);
    return EXIT_OK;
}

static int parse_args(int argc, char **argv, struct ps_opts *o, struct cli_sources *cs)
{
    static const struct option longopts[] = {
        {"threads", no_argument, NULL, 'd'},
        {"memory", no_argument, NULL, 'm'},
        {"all", no_argument, NULL, 'x'},
        {"tree", no_argument, NULL, 't'},
        {"exact", no_argument, NULL, 'e'},
        {"task-manager", optional_argument, NULL, 's'},
        {"refresh", required_argument, NULL, 'r'},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"help", no_argument, NULL, 'h'},
        CLI_SOURCE_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    const char *cmd = argv[0];
    int c, views = 0;
    bool refresh_given = false;

    memset(o, 0, sizeof *o);
    o->refresh = 1;
    opterr = 0;
    optind = 1;
    /* Options and operands may mix (PsList puts NAME last, users do not);
     * "+" stops getopt at each operand, which is taken and skipped. */
    for (;;) {
        int r;
        c = getopt_long(argc, argv, "+dmxtes::r:h" CLI_SOURCE_SHORTOPTS, longopts, NULL);
        if (c == -1) {
            if (optind >= argc || !strcmp(argv[optind - 1], "--"))
                break;
            if ((r = add_operand(o, cs, cmd, argv[optind++])) != EXIT_OK)
                return r;
            continue;
        }
        switch (c) {
        case 'd': o->view = VIEW_THREADS; views++; break;
        case 'm': o->view = VIEW_MEMORY; views++; break;
        case 'x': o->view = VIEW_ALL; views++; break;
        case 't': o->view = VIEW_TREE; views++; break;
        case 'e': o->exact = true; break;
        case 's': {
            /* PsList's "-s [n]": the seconds may be the next argument. */
            const char *arg = optarg;
            if (!arg && optind < argc && all_digits(argv[optind]))
                arg = argv[optind++];
            o->task = true;
            if (arg && !cli_parse_int(arg, 1, 31536000, &o->task_seconds))
                return cli_usage_error(cmd, "-s takes seconds from 1, not '%s'", arg);
            break;
        }
        case 'r':
            if (!cli_parse_int(optarg, 1, 86400, &o->refresh))
                return cli_usage_error(cmd, "-r takes seconds from 1 to 86400, not '%s'", optarg);
            refresh_given = true;
            break;
        case OPT_FORMAT:
            if (!out_format_parse(optarg, &o->fmt))
                return cli_usage_error(cmd, "--format takes table, csv or json, not '%s'", optarg);
            break;
        case 'h':
            return -1;
        case '?':
            if (optopt)
                return cli_usage_error(cmd, "unknown option '-%c'", optopt);
            return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        default:
            r = cli_sources_option(cs, cmd, c, optarg);
            if (r < 0)
                return EXIT_USAGE;
            if (r == 0)
                return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (views > 1 || (o->task && views))
        return cli_usage_error(cmd, "-d, -m, -x, -t and -s do not combine");
    if (refresh_given && !o->task)
        return cli_usage_error(cmd, "-r sets the refresh interval of -s");
    for (; optind < argc; optind++)
        if ((c = add_operand(o, cs, cmd, argv[optind])) != EXIT_OK)
            return c;
    if (o->task)
        o->view = VIEW_TASK;
    return EXIT_OK;
}

int cmd_ps(int argc, char **argv)
{
    struct cli_sources cs;
    struct ntl_source *sources[CLI_SOURCE_MAX];
    struct host *hosts;
    struct ps_opts o;
    int rc;

    cli_sources_init(&cs);
    rc = parse_args(argc, argv, &o, &cs);
    if (rc < 0)
        return help();
    if (rc != EXIT_OK)
        return rc;
    if ((rc = cli_sources_open(&cs, argv[0], sources)) != EXIT_OK) {
        cli_sources_clear(&cs);
        return rc;
    }
    cli_sources_clear(&cs);
    o.host_column = cs.nspecs > 1;
    if (!(hosts = calloc(cs.nspecs, sizeof *hosts))) {
        cli_sources_close(sources, cs.nspecs);
        return cli_failf(argv[0], "out of memory");
    }
    for (size_t h = 0; h < cs.nspecs; h++) {
        hosts[h].spec = cs.specs[h];
        hosts[h].src = sources[h];
    }
    ps_parallel(cs.nspecs, load_titles, hosts);
    for (size_t h = 0; h < cs.nspecs && rc == EXIT_OK; h++)
        if (hosts[h].rc < 0)
            rc = cli_fail(argv[0], &hosts[h].err, cs.specs[h]);
    if (rc == EXIT_OK)
        rc = o.task ? task_manager(hosts, cs.nspecs, &o, argv[0])
                    : snapshot_once(hosts, cs.nspecs, &o, argv[0]);
    for (size_t h = 0; h < cs.nspecs; h++)
        ntl_perf_titles_free(hosts[h].titles);
    free(hosts);
    cli_sources_close(sources, cs.nspecs);
    return rc;
}
