/* ntlens sample: typeperf rebuilt. Counter paths \OBJECT(INSTANCE)\COUNTER
 * with wildcards are expanded against the first snapshot (as typeperf
 * does); every later snapshot gives one row of values computed with PDH's
 * formulas. This file parses the options (typeperf's spellings included),
 * gathers the paths and opens the sources; sample-run.c does the rest. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli-source.h"
#include "cli.h"
#include "commands.h"
#include "ntlens/perf_path.h"
#include "parse-options.h"
#include "sample.h"

static const struct opt_command sample_command = {
    .name = "sample",
    .synopsis = "PATH...",
    .summary = "sample performance counters over time (typeperf)",
    .description =
        "Sample counter paths over time, like typeperf. A PATH is\n"
        "    [\\\\MACHINE]\\OBJECT[(INSTANCE)]\\COUNTER\n"
        "where OBJECT and COUNTER are names (case-insensitive) or title indices\n"
        "(\\230(*)\\784), INSTANCE is a name, NAME#N for the N-th of same-named ones,\n"
        "or PARENT/NAME for threads (explorer/0), and * and ? are wildcards in any\n"
        "part. Wildcards are expanded against the first snapshot. Without -S, each\n"
        "\\\\MACHINE is read remotely and paths without one (or naming this machine)\n"
        "read the local source; with -S, a \\\\MACHINE picks the -S source of that name.\n"
        "\n"
        "Rates and timers need two samples: the first snapshot only primes them. A\n"
        "value that cannot be computed (an instance gone, a counter reset) is \" \" in\n"
        "CSV and TSV and null in JSON. CSV (the default) and TSV are typeperf's\n"
        "layouts: a \"(PDH-CSV 4.0)\" header, then the local time as MM/DD/YYYY\n"
        "HH:MM:SS.mmm and each value. Table, json and jsonl rows carry an ISO 8601\n"
        "timestamp and one column per counter path. Ctrl-C ends the run with what was\n"
        "printed whole (a JSON document closed), exit 0.",
};

/* Paths from the operands and from -cf FILE. */
struct paths {
    char **v;
    size_t n, cap;
    char *text; /* FILE's contents, which its paths point into */
};

static bool parse_seconds_part(const char *s, size_t len, bool fraction, double *v)
{
    char buf[32], *end;
    if (!len || len >= sizeof buf || s[0] < '0' || s[0] > '9')
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (!fraction && strspn(buf, "0123456789") != len)
        return false;
    errno = 0;
    *v = strtod(buf, &end);
    return !errno && !*end;
}

/* SECONDS (0.5 allowed) or typeperf's [[hh:]mm:]ss, 0 to 86400 seconds. */
static bool parse_interval(const char *arg, double *seconds)
{
    double part[3];
    size_t n = 0;
    const char *p = arg;

    for (;;) {
        size_t len = strcspn(p, ":");
        bool last = !p[len];
        if (n == 3 || !parse_seconds_part(p, len, last, &part[n]))
            return false;
        n++;
        if (last)
            break;
        p += len + 1;
    }
    /* below the first part, minutes and seconds stay under 60 */
    for (size_t i = 1; i < n; i++)
        if (part[i] >= 60)
            return false;
    *seconds = n == 3 ? part[0] * 3600 + part[1] * 60 + part[2]
               : n == 2 ? part[0] * 60 + part[1] : part[0];
    return *seconds <= 86400;
}

static int interval_cb(const struct opt *o, const char *arg, void *ctx)
{
    if (!parse_interval(arg, ctx))
        return opt_error(o, "needs SECONDS, a number from 0 to 86400 or [[hh:]mm:]ss, not '%s'",
                         arg);
    return 0;
}

static int lang_cb(const struct opt *o, const char *arg, void *ctx)
{
    if (!ntl_perf_parse_lang(arg, ctx))
        return opt_error(o, "needs ID, a hex language id such as 009, not '%s'", arg);
    return 0;
}

static int paths_add(struct paths *ps, char *path)
{
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? 2 * ps->cap : 16;
        char **v = realloc(ps->v, cap * sizeof *v);
        if (!v)
            return -1;
        ps->v = v;
        ps->cap = cap;
    }
    ps->v[ps->n++] = path;
    return 0;
}

static void paths_free(struct paths *ps)
{
    free(ps->text);
    free(ps->v);
}

#define COUNTER_FILE_MAX (16u << 20)

/* The whole of FILE, NUL-terminated, into ps->text. */
static int read_counter_file(const char *cmd, const char *file, struct paths *ps)
{
    FILE *f = fopen(file, "rb");
    size_t len = 0, cap = 0;

    if (!f)
        return cli_failf(cmd, "cannot open %s: %s", file, strerror(errno));
    for (;;) {
        if (cap - len < 4096) {
            char *t = cap < COUNTER_FILE_MAX ? realloc(ps->text, cap + 65536) : NULL;
            if (!t) {
                fclose(f);
                return cli_failf(cmd, "%s: %s", file, cap < COUNTER_FILE_MAX
                                 ? "out of memory" : "larger than 16 MiB: not a list of paths");
            }
            ps->text = t;
            cap += 65536;
        }
        size_t got = fread(ps->text + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
    }
    ps->text[len] = '\0';
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return cli_failf(cmd, "cannot read %s", file);
    if (len >= 2 && ((unsigned char)ps->text[0] == 0xFF || (unsigned char)ps->text[0] == 0xFE))
        return cli_failf(cmd, "%s is UTF-16 text: save it as UTF-8", file);
    if (strlen(ps->text) != len)
        return cli_failf(cmd, "%s holds NUL bytes: not a list of counter paths", file);
    return EXIT_OK;
}

/* typeperf's -cf FILE: one counter path per line. Blank lines, a UTF-8 BOM,
 * CR LF endings and spaces around a path are allowed. */
static int add_counter_file(const char *cmd, const char *file, struct paths *ps)
{
    int rc = read_counter_file(cmd, file, ps);
    char *line = ps->text;
    unsigned lineno = 1;

    if (rc != EXIT_OK)
        return rc;
    if (!strncmp(line, "\xEF\xBB\xBF", 3))
        line += 3;
    for (; *line; lineno++) {
        char *end = line + strcspn(line, "\n"), *next = *end ? end + 1 : end;
        *end = '\0';
        line += strspn(line, " \t");
        while (end > line && strchr(" \t\r", end[-1]))
            *--end = '\0';
        struct ntl_perf_path p;
        struct ntl_error err;
        if (*line && ntl_perf_path_parse(line, &p, &err) < 0)
            return opt_usage_error(&sample_command, "%s:%u: bad counter path '%s': %s", file,
                                   lineno, line, err.message);
        if (*line && paths_add(ps, line) < 0)
            return cli_failf(cmd, "out of memory");
        line = next;
    }
    return EXIT_OK;
}

/* Returns CLI_CONTINUE, or the exit code when there is nothing more to do. */
static int parse_args(int argc, char **argv, struct sample_opts *o, struct cli_sources *cs,
                      struct paths *ps)
{
    struct opt opts[] = {
        OPT_GROUP("Sampling"),
        OPT_CALLBACK('i', "interval", "SECONDS", interval_cb, &o->interval,
                     "time between samples of a live source, in seconds\n"
                     "(0.5 allowed) or as [[hh:]mm:]ss (default 1)", .aliases = "-si"),
        OPT_INT('n', "count", &o->count, "N", 1, 100000000,
                "rows to print (default: until interrupted, or until\n"
                "the end of a capture)", .aliases = "-sc"),
        OPT_STRING(0, "counter-file", &o->counter_file, "FILE",
                   "counter paths from FILE, one per line (blank lines\n"
                   "skipped), after those given as operands", .aliases = "-cf"),
        OPT_FLAG(0, "scale", &o->scale, "multiply values by each counter's DefaultScale\n"
                 "(as Performance Monitor's graph does)"),
        OPT_CALLBACK(0, "lang", "ID", lang_cb, &o->lang,
                     "title language, hex registry id (default 009)"),
        OPT_STRING(0, "query", &o->query, "QUERY", "Global (default), Costly, or object indices"),
        OPT_FLAG(0, "std-titles", &o->std_titles,
                 "fill counters the source's own title database lacks\n"
                 "from Windows' standard titles"),
        OPT_GROUP("Output options"),
        OPT_CHOICE('f', "format", &o->fmt, "FORMAT", out_format_names,
                   "csv (default) or tsv in typeperf's layout (any case:\n"
                   "-f CSV); table, json (one document) or jsonl (JSON lines)"),
        OPT_CALLBACK(0, "local-time", NULL, out_local_time_cb, NULL,
                     "timestamps of table, json and jsonl in local time with\n"
                     "their UTC offset (csv and tsv: local, as typeperf writes)"),
        OPT_STRING('o', "output", &o->output, "FILE", "write the rows to FILE (default: stdout)"),
        OPT_SOURCE_OPTIONS(cs),
        OPT_STRING(0, "server", &o->server, "HOST", "typeperf's -s HOST: the same as -S \\\\HOST",
                   .aliases = "-s"),
        OPT_END(),
    };
    int n, rc;

    if ((n = parse_options(&sample_command, opts, argc, argv)) < 0)
        return parse_options_exit(n);
    for (int i = 1; i <= n; i++) {
        struct ntl_perf_path p;
        struct ntl_error err;
        if (ntl_perf_path_parse(argv[i], &p, &err) < 0)
            return opt_usage_error(&sample_command, "bad counter path '%s': %s", argv[i],
                                   err.message);
        if (paths_add(ps, argv[i]) < 0)
            return cli_failf(argv[0], "out of memory");
    }
    if (o->counter_file && (rc = add_counter_file(argv[0], o->counter_file, ps)) != EXIT_OK)
        return rc;
    if (ps->n == 0)
        return opt_usage_error(&sample_command, "give at least one counter path (or -cf FILE), "
                               "e.g. \\Processor(_Total)\\%% Processor Time");
    return CLI_CONTINUE;
}

/* The sources a run reads, besides -S: one per \\MACHINE named. */
struct machines {
    char specs[CLI_SOURCE_MAX][300]; /* "\\MACHINE" */
    size_t n;
    size_t nplain;                   /* sources that serve paths without a machine */
};

/* Without -S, each \\MACHINE in the paths is a source of its own, as in
 * typeperf, and paths without one (or naming this machine) read the local
 * source. With -S, the sources given serve every path; a \\MACHINE then
 * picks the source whose system name it is. */
static int plan_sources(struct cli_sources *cs, const struct paths *ps, struct machines *m)
{
    bool any_plain = false;

    for (size_t i = 0; i < ps->n; i++) {
        struct ntl_perf_path p;
        ntl_perf_path_parse(ps->v[i], &p, NULL); /* checked by parse_args */
        if (ntl_source_is_this_machine(p.machine) || cs->nspecs) {
            any_plain = true;
            continue;
        }
        size_t k;
        for (k = 0; k < m->n; k++)
            if (!strcasecmp(m->specs[k] + 2, p.machine))
                break;
        if (k < m->n)
            continue;
        if (m->n + cs->nspecs + 1 >= CLI_SOURCE_MAX)
            return opt_usage_error(&sample_command, "more than %d machines", CLI_SOURCE_MAX - 2);
        snprintf(m->specs[m->n++], sizeof m->specs[0], "\\\\%s", p.machine);
    }
    m->nplain = cs->nspecs;
    if (m->nplain == 0 && any_plain) {
        cli_sources_add(cs, "local");
        m->nplain = 1;
    }
    for (size_t k = 0; k < m->n; k++)
        cli_sources_add(cs, m->specs[k]);
    return EXIT_OK;
}

static int run_on_sources(const char *cmd, const struct sample_opts *o, struct cli_sources *cs,
                          const struct machines *m, struct paths *ps)
{
    struct ntl_source *srcs[CLI_SOURCE_MAX];
    size_t nhosts = cs->nspecs;
    struct sample_host *hosts;
    int rc;

    rc = cli_sources_open(cs, cmd, srcs);
    cli_sources_clear(cs);
    if (rc != EXIT_OK)
        return rc;
    if (!(hosts = calloc(nhosts, sizeof *hosts))) {
        cli_sources_close(srcs, nhosts);
        return cli_failf(cmd, "out of memory");
    }
    for (size_t h = 0; h < nhosts; h++) {
        hosts[h].src = srcs[h];
        hosts[h].machine = h < m->nplain ? NULL : m->specs[h - m->nplain] + 2;
        ntl_buf_init(&hosts[h].raw, 0);
    }
    rc = sample_run(cmd, o, hosts, nhosts, ps->v, ps->n);
    for (size_t h = 0; h < nhosts; h++) {
        ntl_perf_block_free(hosts[h].block);
        ntl_buf_free(&hosts[h].raw);
        ntl_perf_titles_free(hosts[h].titles);
    }
    free(hosts);
    cli_sources_close(srcs, nhosts);
    return rc;
}

int cmd_sample(int argc, char **argv)
{
    struct sample_opts o = {.interval = 1.0, .fmt = OUT_CSV, .lang = NTL_PERF_LANG_ENGLISH,
                            .query = "Global"};
    struct paths ps = {0};
    struct cli_sources cs;
    struct machines *m = calloc(1, sizeof *m);
    char server[300];
    int rc;

    if (!m)
        return cli_failf(argv[0], "out of memory");
    cli_sources_init(&cs);
    rc = parse_args(argc, argv, &o, &cs, &ps);
    if (rc == CLI_CONTINUE && o.server) {
        snprintf(server, sizeof server, "\\\\%s", o.server);
        rc = cli_sources_add(&cs, server) ? CLI_CONTINUE
                                          : opt_usage_error(&sample_command, "at most %d sources",
                                                            CLI_SOURCE_MAX);
    }
    if (rc == CLI_CONTINUE && (rc = plan_sources(&cs, &ps, m)) == EXIT_OK)
        rc = run_on_sources(argv[0], &o, &cs, m, &ps);
    cli_sources_clear(&cs);
    paths_free(&ps);
    free(m);
    return rc;
}
