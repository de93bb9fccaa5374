/* ntlens ipt modules: the quick analysis of seed 002. Every TIP, TIP.PGE,
 * TIP.PGD and FUP target is reconstructed (no instruction decoding) and
 * attributed to the modules of a map, so one knows which modules a full
 * decode will need. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "out.h"
#include "parse-options.h"
#include "progress.h"
#include "ntlens/ipt_modules.h"
#include "ntlens/ipt_trace.h"

struct modules_opts {
    const char *map_path;
    bool addresses, all, wrapped;
    uint64_t wrap_pos;
    int fmt; /* enum out_format */
};

struct module_hits {
    uint64_t targets;
    uint64_t addresses;
};

/* What the scan found, and where each distinct target falls. */
struct scan {
    struct ntl_ipt_module_map map;
    struct ntl_ipt_targets tg;
    struct ntl_ipt_target *targets; /* distinct, by address */
    size_t n;
    long *where;                    /* per target: module index, or -1 */
    struct module_hits *hits;       /* per module */
    uint64_t outside, outside_addrs;
};

static const struct opt_command modules_command = {
    .name = "ipt modules",
    .synopsis = "TRACE...",
    .summary = "count Intel PT branch targets per module",
    .description =
        "Count the branch targets of Intel PT traces (TIP, TIP.PGE, TIP.PGD and FUP\n"
        "packets, IP compression resolved) per module, without decoding instructions.\n"
        "Targets in no module of the map are listed separately. JSON holds the sections\n"
        "summary, modules, unmatched and addresses; CSV, TSV and JSON lines hold one\n"
        "table: the addresses with --addresses, else the modules.",
};

/* Returns CLI_CONTINUE with the number of TRACE operands (argv[1..]) in
 * *ntraces, or the exit code. */
static int parse_args(int argc, char **argv, struct modules_opts *o, int *ntraces)
{
    struct opt opts[] = {
        OPT_GROUP("What is counted"),
        OPT_STRING(0, "modules", &o->map_path, "FILE",
                   "module map: lines 'BASE SIZE NAME' (hex, 0x\n"
                   "optional, '#' comments), as 'ntlens etl images\n"
                   "--map' prints"),
        OPT_FLAG('a', "addresses", &o->addresses, "list every distinct target with its count"),
        OPT_FLAG('x', "all", &o->all, "list modules without targets too"),
        OPT_U64(0, "wrapped", &o->wrap_pos, "POS", 0, NTL_IPT_MAX_TRACE,
                "each TRACE is a full circular buffer whose next\n"
                "write position is POS (see ntlens ipt dump)"),
        OPT_OUTPUT_OPTIONS(&o->fmt),
        OPT_END(),
    };
    int n;

    memset(o, 0, sizeof *o);
    o->fmt = OUT_TABLE;
    if ((n = parse_options(&modules_command, opts, argc, argv)) < 0)
        return parse_options_exit(n);
    o->wrapped = opt_given(opts, "wrapped");
    if (n == 0)
        return opt_usage_error(&modules_command, "missing TRACE");
    if (!o->map_path && !o->addresses)
        return opt_usage_error(&modules_command, "give --modules FILE, --addresses, or both");
    *ntraces = n;
    return CLI_CONTINUE;
}

static int load_map(const char *cmd, const char *path, struct ntl_ipt_module_map *map)
{
    struct ntl_error err;
    struct ntl_buf b;
    int rc;
    ntl_error_clear(&err);
    rc = ntl_file_read(path, (size_t)64 << 20, &b, &err);
    if (rc >= 0)
        rc = ntl_ipt_module_map_parse((const char *)b.data, b.len, map, &err);
    ntl_buf_free(&b);
    return rc < 0 ? cli_fail(cmd, &err, path) : EXIT_OK;
}

/* Every trace into sc->tg; a trace without a PSB is skipped with a warning. */
static int scan_traces(const char *cmd, char **paths, int npaths, const struct modules_opts *o,
                       struct scan *sc)
{
    struct ntl_error err;
    struct progress prog;
    ntl_error_clear(&err);
    progress_start(&prog, "scanning", (uint64_t)npaths);
    for (int i = 0; i < npaths; i++) {
        struct ntl_ipt_trace in;
        int rc = ntl_ipt_trace_load(&in, paths[i], o->wrapped, o->wrap_pos, &err);
        if (rc >= 0)
            rc = ntl_ipt_targets_scan(&sc->tg, in.data, in.size, &err);
        ntl_ipt_trace_free(&in);
        progress_update(&prog, (uint64_t)i + 1);
        if (rc == NTL_ERR_NOT_FOUND) {
            cli_warn(cmd, "%s: no PSB, nothing to scan", paths[i]);
        } else if (rc < 0) {
            progress_end(&prog);
            return cli_fail(cmd, &err, paths[i]);
        }
    }
    progress_end(&prog);
    if (sc->tg.errors)
        cli_warn(cmd, "%" PRIu64 " decode error(s), the first at offset 0x%" PRIx64
                 "; resumed at the next PSB each time", sc->tg.errors, sc->tg.first_error);
    return EXIT_OK;
}

/* The distinct targets, each attributed to its module. */
static int attribute(const char *cmd, struct scan *sc)
{
    struct ntl_error err;
    ntl_error_clear(&err);
    if (ntl_ipt_targets_sorted(&sc->tg, &sc->targets, &sc->n, &err) < 0)
        return cli_fail(cmd, &err, NULL);
    sc->hits = calloc(sc->map.n ? sc->map.n : 1, sizeof *sc->hits);
    sc->where = malloc((sc->n ? sc->n : 1) * sizeof *sc->where);
    if (!sc->hits || !sc->where)
        return cli_failf(cmd, "out of memory");
    for (size_t i = 0; i < sc->n; i++) {
        long m = sc->where[i] = ntl_ipt_module_map_find(&sc->map, sc->targets[i].ip);
        if (m >= 0) {
            sc->hits[m].targets += sc->targets[i].count;
            sc->hits[m].addresses++;
        } else {
            sc->outside += sc->targets[i].count;
            sc->outside_addrs++;
        }
    }
    return EXIT_OK;
}

/* ---- sections ---- */

static void summary_rows(struct out *t, const struct scan *sc)
{
    static const char *const keys[][2] = {
        {"targets", NULL}, {"tip", "TIP"}, {"tip_pge", "TIP.PGE"}, {"tip_pgd", "TIP.PGD"},
        {"fup", "FUP"}, {"suppressed", NULL}, {"psb", "PSB"}, {"decode_errors", NULL},
        {"distinct", NULL}, {"bytes", NULL},
    };
    const uint64_t v[] = {
        sc->tg.total, sc->tg.by_type[0], sc->tg.by_type[1], sc->tg.by_type[2], sc->tg.by_type[3],
        sc->tg.suppressed, sc->tg.psbs, sc->tg.errors, sc->n, sc->tg.bytes,
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        out_column(t, keys[i][0], keys[i][1], OUT_RIGHT);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        out_u64(t, v[i]);
    out_row_end(t);
}

/* qsort has no context argument in C11: what the comparison needs. */
static const struct scan *sort_scan;

/* Modules by targets, most first, then by base. */
static int cmp_index(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const struct module_hits *h = sort_scan->hits;
    const struct ntl_ipt_module *m = sort_scan->map.mods;
    if (h[i].targets != h[j].targets)
        return h[i].targets > h[j].targets ? -1 : 1;
    if (m[i].base != m[j].base)
        return m[i].base < m[j].base ? -1 : 1;
    return 0;
}

static void module_row(struct out *t, const char *name, bool have, uint64_t base, uint64_t size,
                       uint64_t targets, uint64_t addresses)
{
    out_str(t, name);
    if (have) {
        out_addr(t, base, 16);
        out_addr(t, size, 1);
    } else {
        out_null(t);
        out_null(t);
    }
    out_u64(t, targets);
    out_u64(t, addresses);
    out_row_end(t);
}

static int module_rows(struct out *t, const struct scan *sc, bool all)
{
    size_t *order = malloc((sc->map.n ? sc->map.n : 1) * sizeof *order);
    if (!order)
        return -1;
    out_column(t, "name", NULL, OUT_LEFT);
    out_column(t, "base", NULL, OUT_LEFT);
    out_column(t, "size", NULL, OUT_RIGHT);
    out_column(t, "targets", NULL, OUT_RIGHT);
    out_column(t, "addresses", NULL, OUT_RIGHT);
    for (size_t i = 0; i < sc->map.n; i++)
        order[i] = i;
    sort_scan = sc;
    qsort(order, sc->map.n, sizeof *order, cmp_index);
    for (size_t k = 0; k < sc->map.n; k++) {
        const struct ntl_ipt_module *m = &sc->map.mods[order[k]];
        const struct module_hits *h = &sc->hits[order[k]];
        if (h->targets || all)
            module_row(t, m->name, true, m->base, m->size, h->targets, h->addresses);
    }
    module_row(t, "(no module)", false, 0, 0, sc->outside, sc->outside_addrs);
    free(order);
    return 0;
}

static void unmatched_rows(struct out *t, const struct scan *sc)
{
    out_column(t, "address", "Address In No Module", OUT_LEFT);
    out_column(t, "count", NULL, OUT_RIGHT);
    for (size_t i = 0; i < sc->n; i++)
        if (sc->where[i] < 0) {
            out_addr(t, sc->targets[i].ip, 16);
            out_u64(t, sc->targets[i].count);
            out_row_end(t);
        }
}

static void address_rows(struct out *t, const struct scan *sc)
{
    out_column(t, "address", NULL, OUT_LEFT);
    out_column(t, "count", NULL, OUT_RIGHT);
    out_column(t, "module", NULL, OUT_LEFT);
    out_column(t, "offset", NULL, OUT_RIGHT);
    for (size_t i = 0; i < sc->n; i++) {
        long m = sc->where[i];
        out_addr(t, sc->targets[i].ip, 16);
        out_u64(t, sc->targets[i].count);
        if (m >= 0) {
            out_str(t, sc->map.mods[m].name);
            out_addr(t, sc->targets[i].ip - sc->map.mods[m].base, 1);
        } else {
            out_null(t);
            out_null(t);
        }
        out_row_end(t);
    }
}

/* A table or JSON shows every section; CSV, TSV and JSON lines hold one
 * table: the addresses when asked for, else the modules. */
static int render(struct out *t, const struct scan *sc, const struct modules_opts *o)
{
    bool sections = o->fmt == OUT_TABLE || o->fmt == OUT_JSON;
    int rc = 0;
    if (sections) {
        out_section(t, "summary");
        summary_rows(t, sc);
    }
    if (o->map_path && (sections || !o->addresses)) {
        if (sections)
            out_section(t, "modules");
        rc = module_rows(t, sc, o->all);
        if (sections && (o->fmt == OUT_JSON || sc->outside_addrs)) {
            out_section(t, "unmatched");
            unmatched_rows(t, sc);
        }
    }
    if (o->addresses) {
        if (sections)
            out_section(t, "addresses");
        address_rows(t, sc);
    }
    return rc;
}

static void scan_free(struct scan *sc)
{
    free(sc->hits);
    free(sc->where);
    free(sc->targets);
    ntl_ipt_targets_free(&sc->tg);
    ntl_ipt_module_map_free(&sc->map);
}

int cmd_ipt_modules(int argc, char **argv)
{
    const char *cmd = argv[0];
    struct modules_opts o;
    struct scan sc;
    struct out *t;
    int n = 0, rc;

    if ((rc = parse_args(argc, argv, &o, &n)) != CLI_CONTINUE)
        return rc;
    memset(&sc, 0, sizeof sc);
    ntl_ipt_targets_init(&sc.tg, 0);
    rc = o.map_path ? load_map(cmd, o.map_path, &sc.map) : EXIT_OK;
    if (rc == EXIT_OK)
        rc = scan_traces(cmd, argv + 1, n, &o, &sc);
    if (rc == EXIT_OK)
        rc = attribute(cmd, &sc);
    if (rc == EXIT_OK) {
        if (!(t = out_new(stdout, (enum out_format)o.fmt)))
            rc = cli_failf(cmd, "out of memory");
        else if ((render(t, &sc, &o) | out_close(t)) < 0)
            rc = cli_failf(cmd, "write error");
    }
    scan_free(&sc);
    return rc;
}
