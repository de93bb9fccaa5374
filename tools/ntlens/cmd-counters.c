/* ntlens counters: what a source offers, like typeperf -q / -qx: objects with
 * their index, name, detail level and instance count; an object's counters
 * with index, name, symbolic type, size, detail level and help; instances;
 * or counter paths. The records are made in cmd-counters-list.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-source.h"
#include "cli.h"
#include "cmd-counters.h"
#include "commands.h"
#include "ntlens/perf_path.h"
#include "ntlens/source_perf.h"
#include "parse-options.h"

static const struct opt_command counters_command = {
    .name = "counters",
    .synopsis = "[OBJECT...]",
    .summary = "list performance objects, counters and instances (typeperf -q)",
    .description =
        "List the performance objects a source offers (index, name, detail level,\n"
        "instance and counter counts), or with OBJECT operands their counters (index,\n"
        "name, counter type, size, detail level, default scale), their instances, or\n"
        "their counter paths. An OBJECT is a name (case-insensitive, * and ?\n"
        "wildcards) or an index (230). Indices the source's own title database does\n"
        "not name are shown as numbers unless --std-titles. With several -S sources\n"
        "every row starts with the host (paths with \\\\HOST).",
};

static int lang_cb(const struct opt *o, const char *arg, void *lang)
{
    if (!ntl_perf_parse_lang(arg, lang))
        return opt_error(o, "needs ID, a hex language id such as 009, not '%s'", arg);
    return 0;
}

static int detail_cb(const struct opt *o, const char *arg, void *level)
{
    if (!ntl_perf_parse_detail(arg, level))
        return opt_error(o, "needs LEVEL, one of novice, advanced, expert, wizard or a "
                            "number from 100 to 400, not '%s'", arg);
    return 0;
}

/* typeperf's -qx: counter paths, one per instance. */
static int qx_cb(const struct opt *o, const char *arg, void *opts)
{
    struct counters_opts *c = opts;
    (void)o;
    (void)arg;
    c->paths = c->instances = true;
    return 0;
}

/* Returns CLI_CONTINUE, or the exit code when there is nothing more to do. */
static int parse_args(int argc, char **argv, struct counters_opts *o, struct cli_sources *cs)
{
    struct opt opts[] = {
        OPT_GROUP("What to list"),
        OPT_FLAG(0, "instances", &o->instances,
                 "instances: name, \"parent/name#N\" path name, parent,\n"
                 "unique id; with --paths, one path per instance"),
        OPT_FLAG(0, "paths", &o->paths,
                 "counter paths \\OBJECT(*)\\COUNTER for `ntlens sample`,\n"
                 "one a line (typeperf -qx: --paths --instances)", .aliases = "-q"),
        OPT_CALLBACK(0, NULL, NULL, qx_cb, o, NULL, .flags = OPT_HIDDEN, .aliases = "-qx"),
        OPT_FLAG(0, "explain", &o->explain, "add each object's or counter's help text"),
        OPT_CALLBACK(0, "detail", "LEVEL", detail_cb, &o->detail,
                     "novice, advanced, expert or wizard (default), or\n"
                     "100..400: hide what is above that level"),
        OPT_GROUP("Titles and query"),
        OPT_CALLBACK(0, "lang", "ID", lang_cb, &o->lang, "title language, hex registry id (default 009)"),
        OPT_FLAG(0, "std-titles", &o->std_titles,
                 "name what the source's title database does not from\n"
                 "Windows' standard English table (default: show the index;\n"
                 "a source with its own numbering, such as Samba, would get\n"
                 "another counter's name)"),
        OPT_STRING(0, "query", &o->query, "QUERY",
                   "what to ask the source: Global (default), Costly, or\n"
                   "object indices (\"230 232\")"),
        OPT_OUTPUT_OPTIONS(&o->fmt),
        OPT_SOURCE_OPTIONS(cs),
        OPT_END(),
    };
    int n;

    memset(o, 0, sizeof *o);
    o->detail = NTL_PERF_DETAIL_WIZARD;
    o->lang = NTL_PERF_LANG_ENGLISH;
    o->query = "Global";
    o->fmt = OUT_TABLE;
    if ((n = parse_options(&counters_command, opts, argc, argv)) < 0)
        return parse_options_exit(n);
    o->objects = argv + 1;
    o->nobjects = n;
    o->view = o->paths       ? VIEW_PATHS
              : o->instances ? VIEW_INSTANCES
              : n            ? VIEW_COUNTERS
                             : VIEW_OBJECTS;
    return CLI_CONTINUE;
}

/* The source's title database (names, or help texts) under the chosen policy. */
static int load_titles(const char *cmd, const struct counters_opts *o, struct ntl_source *src,
                       enum ntl_title_kind kind, struct ntl_perf_titles *t)
{
    enum ntl_source_titles_fill fill = o->std_titles ? NTL_SOURCE_TITLES_STANDARD
                                                     : NTL_SOURCE_TITLES_OWN;
    struct ntl_error err;
    bool missing;

    if (ntl_source_load_titles(src, kind, o->lang, fill, t, &missing, &err) < 0)
        return cli_fail(cmd, &err, ntl_source_describe(src));
    if (missing && kind == NTL_TITLES_COUNTER)
        cli_warn(cmd, "%s has no title database for language %03x; %s", ntl_source_describe(src),
                 o->lang, o->std_titles ? "using Windows' standard names"
                                        : "indices shown as numbers (--std-titles: "
                                          "Windows' standard names)");
    return EXIT_OK;
}

/* Adds one source's rows to t (paths in the table format: lines on stdout). */
static int list_source(const char *cmd, const struct counters_opts *o, struct ntl_source *src,
                       struct out *t, size_t *rows)
{
    struct ntl_perf_titles *titles = ntl_perf_titles_new(), *help = ntl_perf_titles_new();
    struct ntl_buf raw;
    struct ntl_perf_block *b = NULL;
    struct ntl_error err;
    int rc = EXIT_OK;

    ntl_buf_init(&raw, 0);
    if (!titles || !help)
        rc = cli_failf(cmd, "out of memory");
    if (rc == EXIT_OK)
        rc = load_titles(cmd, o, src, NTL_TITLES_COUNTER, titles);
    if (rc == EXIT_OK && o->explain)
        rc = load_titles(cmd, o, src, NTL_TITLES_HELP, help);
    if (rc == EXIT_OK && ntl_source_snapshot(src, o->query, &raw, &b, &err) < 0)
        rc = cli_fail(cmd, &err, ntl_source_describe(src));
    if (rc == EXIT_OK) {
        struct counters_source s = {
            .block = b, .titles = titles, .help = help,
            .host = b->system_name[0] ? b->system_name : ntl_source_describe(src),
        };
        *rows += counters_rows(t, o, &s);
    }
    ntl_perf_block_free(b);
    ntl_buf_free(&raw);
    ntl_perf_titles_free(titles);
    ntl_perf_titles_free(help);
    return rc;
}

static int run(const char *cmd, const struct counters_opts *o, struct ntl_source **srcs,
               size_t nsrcs)
{
    struct out *t = NULL;
    size_t rows = 0;
    int rc = EXIT_OK;

    /* typeperf -q's plain lines are the table format of --paths */
    if (o->view != VIEW_PATHS || o->fmt != OUT_TABLE) {
        if (!(t = out_new(stdout, o->fmt)))
            return cli_failf(cmd, "out of memory");
        counters_columns(t, o);
    }
    for (size_t i = 0; i < nsrcs && rc == EXIT_OK; i++)
        rc = list_source(cmd, o, srcs[i], t, &rows);
    if (rc == EXIT_OK && o->nobjects && rows == 0 && o->view != VIEW_INSTANCES)
        rc = cli_failf(cmd, "no object matches %s%s", o->objects[0],
                       o->nobjects > 1 ? " or the others" : "");
    if ((out_close(t) < 0 || fflush(stdout) != 0) && rc == EXIT_OK)
        rc = cli_failf(cmd, "cannot write the output");
    return rc;
}

int cmd_counters(int argc, char **argv)
{
    struct ntl_source *srcs[CLI_SOURCE_MAX];
    struct counters_opts o;
    struct cli_sources cs;
    int rc;

    cli_sources_init(&cs);
    if ((rc = parse_args(argc, argv, &o, &cs)) != CLI_CONTINUE)
        return rc;
    if ((rc = cli_sources_open(&cs, argv[0], srcs)) != EXIT_OK) {
        cli_sources_clear(&cs);
        return rc;
    }
    cli_sources_clear(&cs);
    o.host_column = cs.nspecs > 1;
    rc = run(argv[0], &o, srcs, cs.nspecs);
    cli_sources_close(srcs, cs.nspecs);
    return rc;
}
