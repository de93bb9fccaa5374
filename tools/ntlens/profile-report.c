/* `ntlens profile`'s report: Kernrate's module table, then per process and
 * thread, then functions and buckets of the zoomed modules. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "cli.h"
#include "ntlens/profile_report.h"
#include "profile-cli.h"

struct report {
    const char *cmd;
    struct ntl_profile *p;
    const struct profile_report_opts *ro;
    struct out *o;
    uint64_t total;
    struct ntl_profile_module_row *mods;
    size_t nmods;
};

static void percent(struct out *o, uint64_t hits, uint64_t total)
{
    out_num(o, total ? 100.0 * (double)hits / (double)total : 0, 2);
}

static void pid_cell(struct out *o, uint32_t pid)
{
    if (pid == NTL_PROFILE_KERNEL_PID || pid == NTL_PROFILE_NO_PID)
        out_null(o);
    else
        out_u64(o, pid);
}

static void modules(struct report *r)
{
    const struct ntl_profile_info *info = ntl_profile_info(r->p);
    double secs = (double)info->duration_ns / 1e9;
    out_column(r->o, "pid", "PID", OUT_RIGHT);
    out_column(r->o, "name", "Module", OUT_LEFT);
    out_column(r->o, "base", NULL, OUT_RIGHT);
    out_column(r->o, "size", NULL, OUT_RIGHT);
    out_column(r->o, "hits", NULL, OUT_RIGHT);
    out_column(r->o, "percent", NULL, OUT_RIGHT);
    out_column(r->o, "hits_per_second", "Hits/s", OUT_RIGHT);
    out_column(r->o, "path", NULL, OUT_LEFT);
    for (size_t i = 0; i < r->nmods; i++) {
        const struct ntl_profile_range *g = r->mods[i].r;
        pid_cell(r->o, g ? g->pid : NTL_PROFILE_NO_PID);
        out_str(r->o, g ? g->name : "unknown");
        g ? out_addr(r->o, g->base, 16) : out_null(r->o);
        g ? out_addr(r->o, g->size, 1) : out_null(r->o);
        out_u64(r->o, r->mods[i].hits);
        percent(r->o, r->mods[i].hits, r->total);
        secs > 0 ? out_num(r->o, (double)r->mods[i].hits / secs, 1) : out_null(r->o);
        out_str(r->o, g ? g->path : "");
        out_row_end(r->o);
    }
}

static int processes(struct report *r)
{
    struct ntl_profile_process_row *v;
    struct ntl_error err = {0};
    size_t n;
    if (ntl_profile_processes(r->p, &v, &n, &err) < 0)
        return cli_fail(r->cmd, &err, NULL);
    out_column(r->o, "pid", "PID", OUT_RIGHT);
    out_column(r->o, "name", "Process", OUT_LEFT);
    out_column(r->o, "hits", NULL, OUT_RIGHT);
    out_column(r->o, "percent", NULL, OUT_RIGHT);
    out_column(r->o, "unknown", NULL, OUT_RIGHT);
    for (size_t i = 0; i < n; i++) {
        pid_cell(r->o, v[i].pid);
        v[i].name ? out_str(r->o, v[i].name) : out_null(r->o);
        out_u64(r->o, v[i].hits);
        percent(r->o, v[i].hits, r->total);
        out_u64(r->o, v[i].unknown);
        out_row_end(r->o);
    }
    free(v);
    return 0;
}

static int threads(struct report *r)
{
    struct ntl_profile_thread_row *v;
    struct ntl_error err = {0};
    size_t n;
    if (ntl_profile_threads(r->p, &v, &n, &err) < 0)
        return cli_fail(r->cmd, &err, NULL);
    out_column(r->o, "tid", "TID", OUT_RIGHT);
    out_column(r->o, "pid", "PID", OUT_RIGHT);
    out_column(r->o, "hits", NULL, OUT_RIGHT);
    out_column(r->o, "percent", NULL, OUT_RIGHT);
    for (size_t i = 0; i < n; i++) {
        out_u64(r->o, v[i].tid);
        pid_cell(r->o, v[i].pid);
        out_u64(r->o, v[i].hits);
        percent(r->o, v[i].hits, r->total);
        out_row_end(r->o);
    }
    free(v);
    return 0;
}

/* Whether the report zooms into module row i. */
static bool zoomed(const struct report *r, size_t i)
{
    const struct ntl_profile_range *g = r->mods[i].r;
    if (!g)
        return false;
    if (i < r->ro->top)
        return true;
    for (size_t k = 0; k < r->ro->zoom.n; k++)
        if (!strcasecmp(r->ro->zoom.items[k], g->name))
            return true;
    return false;
}

static void function_columns(struct out *o)
{
    out_column(o, "pid", "PID", OUT_RIGHT);
    out_column(o, "module", NULL, OUT_LEFT);
    out_column(o, "function", NULL, OUT_LEFT);
    out_column(o, "address", NULL, OUT_RIGHT);
    out_column(o, "hits", NULL, OUT_RIGHT);
    out_column(o, "percent", NULL, OUT_RIGHT);
}

static int functions(struct report *r, size_t m)
{
    const struct ntl_profile_range *g = r->mods[m].r;
    struct ntl_profile_function_row *v;
    struct ntl_error err = {0};
    size_t n;
    if (ntl_profile_functions(r->p, r->mods[m].range, &v, &n, &err) < 0)
        return cli_fail(r->cmd, &err, NULL);
    for (size_t i = 0; i < n; i++) {
        pid_cell(r->o, g->pid);
        out_str(r->o, g->name);
        if (v[i].symbol)
            out_str(r->o, v[i].symbol);
        else
            out_strf(r->o, "%s+0x%" PRIx64, g->name, v[i].offset);
        out_addr(r->o, g->base + v[i].offset, 16);
        out_u64(r->o, v[i].hits);
        percent(r->o, v[i].hits, r->total);
        out_row_end(r->o);
    }
    free(v);
    return 0;
}

static void bucket_columns(struct out *o)
{
    out_column(o, "pid", "PID", OUT_RIGHT);
    out_column(o, "module", NULL, OUT_LEFT);
    out_column(o, "address", NULL, OUT_RIGHT);
    out_column(o, "hits", NULL, OUT_RIGHT);
    out_column(o, "percent", NULL, OUT_RIGHT);
    out_column(o, "symbol", NULL, OUT_LEFT);
}

static int buckets(struct report *r, size_t m)
{
    const struct ntl_profile_range *g = r->mods[m].r;
    struct ntl_profile_bucket_row *v;
    struct ntl_error err = {0};
    size_t n;
    if (ntl_profile_buckets(r->p, r->mods[m].range, &v, &n, &err) < 0)
        return cli_fail(r->cmd, &err, NULL);
    for (size_t i = 0; i < n; i++) {
        pid_cell(r->o, g->pid);
        out_str(r->o, g->name);
        out_addr(r->o, g->base + v[i].offset, 16);
        out_u64(r->o, v[i].hits);
        percent(r->o, v[i].hits, r->total);
        if (v[i].symbol)
            out_strf(r->o, "%s+0x%" PRIx64, v[i].symbol, v[i].disp);
        else
            out_strf(r->o, "%s+0x%" PRIx64, g->name, v[i].offset);
        out_row_end(r->o);
    }
    free(v);
    return 0;
}

/* The per-module tables (functions or buckets) of every zoomed module. */
static int zoom_tables(struct report *r, bool want_buckets)
{
    (want_buckets ? bucket_columns : function_columns)(r->o);
    for (size_t i = 0; i < r->nmods; i++) {
        if (!zoomed(r, i))
            continue;
        int rc = want_buckets ? buckets(r, i) : functions(r, i);
        if (rc)
            return rc;
    }
    return 0;
}

static int tables(struct report *r)
{
    int rc = 0, t = r->ro->table;
    if (t == PROFILE_MODULES)
        modules(r);
    else if (t == PROFILE_PROCESSES)
        rc = processes(r);
    else if (t == PROFILE_THREADS)
        rc = threads(r);
    else if (t == PROFILE_FUNCTIONS || t == PROFILE_BUCKETS)
        rc = zoom_tables(r, t == PROFILE_BUCKETS);
    if (t != PROFILE_ALL)
        return rc;
    out_section(r->o, "modules");
    modules(r);
    out_section(r->o, "processes");
    if ((rc = processes(r)))
        return rc;
    bool any = false;
    for (size_t i = 0; i < r->nmods; i++)
        any |= zoomed(r, i);
    if (!any)
        return 0;
    out_section(r->o, "functions");
    if ((rc = zoom_tables(r, false)) || !r->ro->buckets)
        return rc;
    out_section(r->o, "buckets");
    return zoom_tables(r, true);
}

int profile_report(const char *cmd, struct ntl_profile *p, const struct profile_report_opts *ro)
{
    struct report r = {.cmd = cmd, .p = p, .ro = ro, .total = ntl_profile_total(p)};
    struct ntl_error err = {0};
    if (ntl_profile_modules(p, &r.mods, &r.nmods, &err) < 0)
        return cli_fail(cmd, &err, NULL);
    if (!(r.o = out_new(stdout, (enum out_format)ro->fmt))) {
        free(r.mods);
        return cli_failf(cmd, "out of memory");
    }
    int rc = tables(&r);
    free(r.mods);
    if (out_close(r.o) < 0 && !rc)
        rc = cli_failf(cmd, "write error");
    return rc;
}
