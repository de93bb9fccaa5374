/* ntlens sample: typeperf rebuilt. Counter paths \OBJECT(INSTANCE)\COUNTER
 * with wildcards are expanded against the first snapshot (as typeperf
 * does); every later snapshot gives one row of values computed with PDH's
 * formulas (ntlens/perf_value.h), in typeperf's CSV layout or as JSON lines. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli-source.h"
#include "cli.h"
#include "commands.h"
#include "ntlens/perf.h"
#include "ntlens/perf_value.h"
#include "output.h"
#include "ntlens/perf_path.h"
#include "ntlens/source_perf.h"
#include "perf-cli.h"

static const char usage_text[] =
    "usage: ntlens sample [-si SECONDS] [-sc COUNT] [--format FORMAT] [--lang ID]\n"
    "                     [--query QUERY] [--scale] [SOURCE OPTIONS] PATH...\n"
    "\n"
    "Sample counter paths over time, like typeperf. A PATH is\n"
    "    [\\\\MACHINE]\\OBJECT[(INSTANCE)]\\COUNTER\n"
    "where OBJECT and COUNTER are names (case-insensitive) or title indices\n"
    "(\\230(*)\\784), INSTANCE is a name, NAME#N for the N-th of same-named ones,\n"
    "or PARENT/NAME for threads (explorer/0), and * and ? are wildcards in any\n"
    "part. Wildcards are expanded against the first snapshot.\n"
    "\n"
    "  -si, --interval SECONDS  time between samples of a live source (default 1)\n"
    "  -sc, --count COUNT       rows to print (default: until interrupted, or until\n"
    "                           the end of a capture)\n"
    "      --format FORMAT      csv (default, typeperf's \"(PDH-CSV 4.0)\" layout),\n"
    "                           json (JSON lines) or table\n"
    "      --scale              multiply values by each counter's DefaultScale (as\n"
    "                           Performance Monitor's graph does)\n"
    "      --lang ID            title language, hex registry id (default 009)\n"
    "      --query QUERY        Global (default), Costly, or object indices\n"
    "  -h, --help               this help\n"
    "\n"
    "Rates and timers need two samples: the first snapshot only primes them. A\n"
    "value that cannot be computed (an instance gone, a counter reset) is\n"
    "printed as \" \" in CSV and null in JSON.\n"
    "\n";

enum { OPT_FORMAT = 0x2000, OPT_LANG, OPT_QUERY, OPT_SCALE, OPT_SI, OPT_SC };

struct column {
    size_t host;             /* which source */
    char *path;              /* \\MACHINE\Object(instance)\Counter as printed */
    uint32_t object_index;
    uint32_t counter_index;  /* name index of the counter */
    size_t counter_pos;      /* position among the object's definitions */
    char *instance;          /* path name (parent/name#N); NULL: no instances */
    int32_t scale;
    bool have_prev;
    struct ntl_perf_raw prev;
};

struct sample_opts {
    double interval;
    long count;               /* 0: no limit */
    enum out_format fmt;
    bool scale;
    unsigned lang;
    const char *query;
};

struct columns {
    struct column *v;
    size_t n, cap;
};

static int add_column(struct columns *cols, size_t host, const char *path,
                      const struct ntl_perf_object *o, size_t counter, const char *instance)
{
    if (cols->n == cols->cap) {
        size_t cap = cols->cap ? 2 * cols->cap : 16;
        struct column *v = realloc(cols->v, cap * sizeof *v);
        if (!v)
            return -1;
        cols->v = v;
        cols->cap = cap;
    }
    struct column *c = &cols->v[cols->n];
    memset(c, 0, sizeof *c);
    c->path = strdup(path);
    c->instance = instance ? strdup(instance) : NULL;
    if (!c->path || (instance && !c->instance)) {
        free(c->path);
        free(c->instance);
        return -1;
    }
    c->host = host;
    c->object_index = o->name_index;
    c->counter_index = o->counters[counter].name_index;
    c->counter_pos = counter;
    c->scale = o->counters[counter].default_scale;
    cols->n++;
    return 0;
}

static void free_columns(struct columns *cols)
{
    for (size_t i = 0; i < cols->n; i++) {
        free(cols->v[i].path);
        free(cols->v[i].instance);
    }
    free(cols->v);
}

/* Expands one parsed path against a host's first snapshot; returns the
 * columns added or -1 after printing an error. */
static long expand(const char *cmd, const char *spec, const struct ntl_perf_path *p, size_t host,
                   const struct ntl_perf_block *b, const struct ntl_perf_titles *titles,
                   struct columns *cols)
{
    const char *machine = p->machine[0] ? p->machine
                                        : (b->system_name[0] ? b->system_name : ".");
    struct ntl_perf_path_iter it;
    struct ntl_perf_path_match *m = malloc(sizeof *m);
    struct ntl_error err;
    long added = 0;
    int r;

    if (!m) {
        cli_failf(cmd, "out of memory");
        return -1;
    }
    ntl_perf_path_iter_begin(&it, p, b, titles);
    while ((r = ntl_perf_path_next(&it, machine, m, &err)) > 0) {
        if (add_column(cols, host, m->path, m->object, m->counter,
                       m->instance ? m->instance_name : NULL) < 0) {
            r = -1;
            cli_failf(cmd, "out of memory");
            break;
        }
        added++;
    }
    if (r < 0 && err.status)
        cli_fail(cmd, &err, spec);
    free(m);
    return r < 0 ? -1 : added;
}

/* Per snapshot: the instance of each column's object by path name, through
 * one hash table per object used. */
#define MAX_INDEXED 64 /* objects with instances one row may use */

struct inst_index {
    const struct ntl_perf_object *obj;
    uint32_t *slots; /* instance + 1; 0 empty */
    size_t mask;
};

static uint32_t str_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int index_build(struct inst_index *ix, const struct ntl_perf_object *o)
{
    char name[1024];
    size_t n = 16;
    while (n < 2 * o->ninstances)
        n *= 2;
    ix->obj = o;
    ix->slots = calloc(n, sizeof *ix->slots);
    ix->mask = n - 1;
    if (!ix->slots)
        return -1;
    for (size_t j = 0; j < o->ninstances; j++) {
        ntl_perf_instance_path_name(&o->instances[j], name, sizeof name);
        size_t s = str_hash(name) & ix->mask;
        while (ix->slots[s])
            s = (s + 1) & ix->mask;
        ix->slots[s] = (uint32_t)j + 1;
    }
    return 0;
}

static long index_find(const struct inst_index *ix, const char *key)
{
    char name[1024];
    size_t s = str_hash(key) & ix->mask;
    while (ix->slots[s]) {
        size_t j = ix->slots[s] - 1;
        ntl_perf_instance_path_name(&ix->obj->instances[j], name, sizeof name);
        if (!strcmp(name, key))
            return (long)j;
        s = (s + 1) & ix->mask;
    }
    return -1;
}

/* The raw sample of a column in block b; false when it is not there. */
static bool column_raw(const struct column *c, const struct ntl_perf_block *b,
                       struct inst_index *ixs, size_t *nixs, struct ntl_perf_raw *raw)
{
    const struct ntl_perf_object *o = ntl_perf_block_find_object(b, c->object_index);
    struct ntl_error err;
    if (!o)
        return false;
    size_t pos = c->counter_pos;
    if (pos >= o->ncounters || o->counters[pos].name_index != c->counter_index) {
        int f = ntl_perf_object_find_counter(o, c->counter_index);
        if (f < 0)
            return false;
        pos = (size_t)f;
    }
    size_t inst = 0;
    if (c->instance) {
        if (o->num_instances == NTL_PERF_NO_INSTANCES)
            return false;
        size_t k;
        for (k = 0; k < *nixs; k++)
            if (ixs[k].obj == o)
                break;
        if (k == *nixs) {
            if (k == MAX_INDEXED || index_build(&ixs[k], o) < 0)
                return false;
            (*nixs)++;
        }
        long j = index_find(&ixs[k], c->instance);
        if (j < 0)
            return false;
        inst = (size_t)j;
    } else if (o->num_instances != NTL_PERF_NO_INSTANCES) {
        return false;
    }
    return ntl_perf_raw_get(b, o, pos, inst, raw, &err) == 0;
}

static void format_time(const struct ntl_perf_block *b, bool iso, char *buf, size_t size)
{
    int64_t secs;
    unsigned ms = b->system_time.milliseconds % 1000;
    if (!ntl_perf_systemtime_to_unix(&b->system_time, &secs)) {
        int64_t ns = perf_now_unix_ns();
        secs = ns / 1000000000;
        ms = (unsigned)(ns / 1000000 % 1000);
    }
    time_t t = (time_t)secs;
    struct tm *tm = iso ? gmtime(&t) : localtime(&t);
    if (!tm) {
        snprintf(buf, size, "?");
        return;
    }
    if (iso)
        snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm->tm_year + 1900,
                 tm->tm_mon + 1, tm->tm_mday, tm->tm_hour, tm->tm_min, tm->tm_sec, ms);
    else /* typeperf: local time, MM/DD/YYYY HH:MM:SS.mmm */
        snprintf(buf, size, "%02d/%02d/%04d %02d:%02d:%02d.%03u", tm->tm_mon + 1, tm->tm_mday,
                 tm->tm_year + 1900, tm->tm_hour, tm->tm_min, tm->tm_sec, ms);
}

static void print_header(const struct columns *cols, enum out_format fmt)
{
    if (fmt != OUT_CSV)
        return;
    out_csv_field(stdout, "(PDH-CSV 4.0)", true);
    for (size_t i = 0; i < cols->n; i++) {
        fputc(',', stdout);
        out_csv_field(stdout, cols->v[i].path, true);
    }
    fputc('\n', stdout);
}

struct host {
    struct ntl_source *src;
    const char *machine;        /* the \\MACHINE of paths it serves; NULL: paths without one */
    struct ntl_perf_titles *titles;
    struct ntl_buf raw;
    struct ntl_perf_block *block;
};

/* One row from each host's current block; updates each column's previous
 * sample. The row's time is the first host's. */
static int print_row(const struct sample_opts *o, struct columns *cols, struct host *hosts,
                     struct out_table *table, bool print)
{
    struct inst_index ixs[MAX_INDEXED];
    size_t nixs = 0;
    const struct ntl_perf_block *ixblock = NULL;
    char when[64], val[64];
    format_time(hosts[0].block, o->fmt == OUT_JSON, when, sizeof when);
    if (print && o->fmt == OUT_CSV)
        out_csv_field(stdout, when, true);
    else if (print && o->fmt == OUT_JSON) {
        fputs("{\"time\":", stdout);
        out_json_string(stdout, when);
        fputs(",\"values\":{", stdout);
    } else if (print)
        out_table_str(table, when);
    for (size_t i = 0; i < cols->n; i++) {
        struct column *c = &cols->v[i];
        const struct ntl_perf_block *b = hosts[c->host].block;
        struct ntl_perf_raw raw;
        double v = 0;
        int st = -1;
        if (b != ixblock) { /* columns are grouped by host: one index set at a time */
            for (size_t k = 0; k < nixs; k++)
                free(ixs[k].slots);
            nixs = 0;
            ixblock = b;
        }
        bool have = column_raw(c, b, ixs, &nixs, &raw);
        if (have) {
            st = ntl_perf_value_compute(&raw, c->have_prev ? &c->prev : NULL, &v);
            c->prev = raw;
            c->have_prev = true;
        } else {
            c->have_prev = false;
        }
        /* no time passed (the same snapshot twice) gives no value, not 0 */
        bool ok = have && (st == NTL_PERF_VALUE_OK || st == NTL_PERF_VALUE_UNKNOWN_TYPE);
        if (ok && o->scale)
            v *= ntl_perf_scale(c->scale);
        if (!print)
            continue;
        snprintf(val, sizeof val, "%f", v);
        if (o->fmt == OUT_CSV) {
            fputc(',', stdout);
            out_csv_field(stdout, ok ? val : " ", true);
        } else if (o->fmt == OUT_JSON) {
            if (i)
                fputc(',', stdout);
            out_json_string(stdout, c->path);
            fputc(':', stdout);
            if (ok)
                fprintf(stdout, "%.17g", v);
            else
                fputs("null", stdout);
        } else if (ok) {
            out_table_num(table, v, 6);
        } else {
            out_table_null(table);
        }
    }
    for (size_t k = 0; k < nixs; k++)
        free(ixs[k].slots);
    if (print && o->fmt == OUT_CSV)
        fputc('\n', stdout);
    else if (print && o->fmt == OUT_JSON)
        fputs("}}\n", stdout);
    else if (print)
        out_table_row_end(table);
    fflush(stdout);
    return ferror(stdout) ? -1 : 0;
}

/* Takes the next snapshot of every host. NTL_ERR_EOF when a capture ends. */
static int snapshot_all(const char *cmd, const struct sample_opts *o, struct host *hosts,
                        size_t nhosts)
{
    struct ntl_error err;
    for (size_t h = 0; h < nhosts; h++) {
        ntl_perf_block_free(hosts[h].block);
        int r = ntl_source_snapshot(hosts[h].src, o->query, &hosts[h].raw, &hosts[h].block, &err);
        if (r == NTL_ERR_EOF)
            return r;
        if (r < 0) {
            cli_fail(cmd, &err, ntl_source_describe(hosts[h].src));
            return NTL_ERR_IO;
        }
    }
    return 0;
}

static bool is_unnamed_machine(const char *m)
{
    return !m[0] || !strcmp(m, ".") || !strcasecmp(m, "localhost");
}

static int run(const char *cmd, const struct sample_opts *o, struct host *hosts, size_t nhosts,
               char **paths, int npaths)
{
    struct columns cols = {0};
    struct out_table *table = NULL;
    bool live = true;
    int rc;

    for (size_t h = 0; h < nhosts; h++) {
        live = live && ntl_source_is_live(hosts[h].src);
        if (!(hosts[h].titles = ntl_perf_titles_new()))
            return cli_failf(cmd, "out of memory");
        struct ntl_error err;
        if (ntl_source_load_titles(hosts[h].src, NTL_TITLES_COUNTER, o->lang,
                                   NTL_SOURCE_TITLES_STANDARD, hosts[h].titles, NULL, &err) < 0)
            return cli_fail(cmd, &err, ntl_source_describe(hosts[h].src));
    }
    rc = snapshot_all(cmd, o, hosts, nhosts);
    if (rc == NTL_ERR_EOF)
        return cli_failf(cmd, "a capture source holds no snapshot");
    if (rc < 0)
        return EXIT_FAIL;
    /* columns grouped by host, in path order within each */
    unsigned char *served = calloc((size_t)npaths, 1);
    if (!served)
        return cli_failf(cmd, "out of memory");
    for (size_t h = 0; h < nhosts; h++) {
        for (int i = 0; i < npaths; i++) {
            struct ntl_perf_path p;
            ntl_perf_path_parse(paths[i], &p, NULL); /* checked before the sources were opened */
            bool serves;
            if (hosts[h].machine) /* opened for this \\MACHINE */
                serves = !strcasecmp(hosts[h].machine, p.machine);
            else /* -S or local: paths without a machine, and its own name */
                serves = is_unnamed_machine(p.machine) ||
                         !strcasecmp(hosts[h].block->system_name, p.machine) ||
                         (ntl_source_is_this_machine(p.machine) &&
                          ntl_source_is_this_machine(hosts[h].block->system_name));
            if (!serves)
                continue;
            served[i] = 1;
            if (is_unnamed_machine(p.machine))
                p.machine[0] = '\0';
            long n = expand(cmd, paths[i], &p, h, hosts[h].block, hosts[h].titles, &cols);
            if (n < 0) {
                rc = EXIT_FAIL;
                goto out;
            }
            if (n == 0) {
                rc = cli_failf(cmd, "no counter matches %s in %s", paths[i],
                               ntl_source_describe(hosts[h].src));
                goto out;
            }
        }
    }
    for (int i = 0; i < npaths; i++)
        if (!served[i]) {
            rc = cli_failf(cmd, "%s: no source is that machine (its name is not the -S "
                                "source's system name)", paths[i]);
            goto out;
        }
    bool prime = false;
    for (size_t i = 0; i < cols.n; i++) {
        const struct ntl_perf_object *ob =
            ntl_perf_block_find_object(hosts[cols.v[i].host].block, cols.v[i].object_index);
        prime = prime || ntl_perf_type_needs_two_samples(ob->counters[cols.v[i].counter_pos].type);
    }
    if (o->fmt == OUT_TABLE) {
        table = out_table_new();
        out_table_column(table, "time", "Time", OUT_LEFT);
        for (size_t i = 0; i < cols.n; i++)
            out_table_column(table, cols.v[i].path, NULL, OUT_RIGHT);
    }
    print_header(&cols, o->fmt);
    long rows = 0;
    if (print_row(o, &cols, hosts, table, !prime) < 0)
        goto write_error;
    if (!prime)
        rows++;
    while (o->count == 0 || rows < o->count) {
        if (live)
            perf_sleep_ms((unsigned)(o->interval * 1000.0 + 0.5));
        int r = snapshot_all(cmd, o, hosts, nhosts);
        if (r == NTL_ERR_EOF)
            break;
        if (r < 0) {
            rc = EXIT_FAIL;
            goto out;
        }
        if (print_row(o, &cols, hosts, table, true) < 0)
            goto write_error;
        rows++;
    }
    if (table && out_table_render(table, stdout, OUT_TABLE) < 0)
        goto write_error;
    if (rows == 0)
        cli_warn(cmd, "the source ended before a second snapshot: rates need two");
    rc = EXIT_OK;
    goto out;
write_error:
    rc = cli_failf(cmd, "cannot write the output");
out:
    free(served);
    out_table_free(table);
    free_columns(&cols);
    return rc;
}

int cmd_sample(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"interval", required_argument, NULL, OPT_SI},
        {"count", required_argument, NULL, OPT_SC},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"scale", no_argument, NULL, OPT_SCALE},
        {"lang", required_argument, NULL, OPT_LANG},
        {"query", required_argument, NULL, OPT_QUERY},
        {"help", no_argument, NULL, 'h'},
        CLI_SOURCE_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    const char *cmd = argv[0];
    struct sample_opts o = {.interval = 1.0, .fmt = OUT_CSV, .lang = NTL_PERF_LANG_ENGLISH,
                            .query = "Global"};
    struct cli_sources cs;
    int c, r;

    /* typeperf's single-dash long options: -si SECONDS, -sc COUNT. */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            break;
        if (!strcmp(argv[i], "-si"))
            argv[i] = (char *)"--interval";
        else if (!strcmp(argv[i], "-sc"))
            argv[i] = (char *)"--count";
    }

    cli_sources_init(&cs);
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h" CLI_SOURCE_SHORTOPTS, longopts, NULL)) != -1) {
        if ((r = cli_sources_option(&cs, cmd, c, optarg)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            continue;
        }
        switch (c) {
        case OPT_SI:
            if (!cli_parse_double(optarg, &o.interval) || o.interval < 0 || o.interval > 86400)
                return cli_usage_error(cmd, "-si takes seconds from 0 to 86400, not '%s'",
                                       optarg);
            break;
        case OPT_SC:
            if (!cli_parse_int(optarg, 1, 100000000, &o.count))
                return cli_usage_error(cmd, "-sc takes a count from 1, not '%s'", optarg);
            break;
        case OPT_FORMAT:
            if (!out_format_parse(optarg, &o.fmt))
                return cli_usage_error(cmd, "--format takes csv, json or table, not '%s'",
                                       optarg);
            break;
        case OPT_SCALE: o.scale = true; break;
        case OPT_QUERY: o.query = optarg; break;
        case OPT_LANG:
            if (!ntl_perf_parse_lang(optarg, &o.lang))
                return cli_usage_error(cmd, "--lang takes a hex language id such as 009, "
                                            "not '%s'", optarg);
            break;
        case 'h':
            fputs(usage_text, stdout);
            fputs(cli_source_help, stdout);
            return EXIT_OK;
        default:
            return cli_usage_error(cmd, "unknown option or missing value: '%s'",
                                   argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error(cmd, "give at least one counter path, e.g. "
                                    "\\Processor(_Total)\\%% Processor Time");

    /* Sources: without -S, each \\MACHINE in the paths is a source of its
     * own, as in typeperf, and paths without one read the local source.
     * With -S, the sources given serve every path; a \\MACHINE then picks
     * the source whose system name it is. */
    static char machine_specs[CLI_SOURCE_MAX][300];
    const char *machines[CLI_SOURCE_MAX];
    size_t nmachines = 0;
    bool any_local = false;
    for (int i = optind; i < argc; i++) {
        struct ntl_perf_path p;
        struct ntl_error perr;
        if (ntl_perf_path_parse(argv[i], &p, &perr) < 0)
            return cli_usage_error(cmd, "bad counter path '%s': %s", argv[i], perr.message);
        if (ntl_source_is_this_machine(p.machine) || cs.nspecs) {
            any_local = true; /* with -S, a machine name selects among the -S sources */
            continue;
        }
        size_t k;
        for (k = 0; k < nmachines; k++)
            if (!strcasecmp(machines[k], p.machine))
                break;
        if (k < nmachines)
            continue;
        if (nmachines + cs.nspecs + 1 >= CLI_SOURCE_MAX)
            return cli_usage_error(cmd, "too many machines");
        snprintf(machine_specs[nmachines], sizeof machine_specs[0], "\\\\%s", p.machine);
        machines[nmachines] = machine_specs[nmachines] + 2;
        nmachines++;
    }
    size_t nplain = cs.nspecs;
    if (nplain == 0 && any_local) {
        cli_sources_add(&cs, cmd, "local");
        nplain = 1;
    }
    for (size_t k = 0; k < nmachines; k++)
        cli_sources_add(&cs, cmd, machine_specs[k]);

    struct ntl_source *srcs[CLI_SOURCE_MAX];
    if ((r = cli_sources_open(&cs, cmd, srcs)) != EXIT_OK) {
        cli_sources_clear(&cs);
        return r;
    }
    cli_sources_clear(&cs);
    size_t nhosts = cs.nspecs;
    struct host *hosts = calloc(nhosts, sizeof *hosts);
    if (!hosts) {
        cli_sources_close(srcs, nhosts);
        return cli_failf(cmd, "out of memory");
    }
    for (size_t h = 0; h < nhosts; h++) {
        hosts[h].src = srcs[h];
        hosts[h].machine = h < nplain ? NULL : machines[h - nplain];
        ntl_buf_init(&hosts[h].raw, 0);
    }
    r = run(cmd, &o, hosts, nhosts, argv + optind, argc - optind);
    for (size_t h = 0; h < nhosts; h++) {
        ntl_perf_block_free(hosts[h].block);
        ntl_buf_free(&hosts[h].raw);
        ntl_perf_titles_free(hosts[h].titles);
    }
    free(hosts);
    cli_sources_close(srcs, nhosts);
    return r;
}
