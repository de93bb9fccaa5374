/* ntlens capture: record performance-data snapshots, with the title and help
 * databases, into a capture file (docs/capture-format.md) that every
 * command reads back with -S FILE; or build one from raw QueryValue answers
 * saved by other tools (--import). The parts are in capture.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "cli-source.h"
#include "cli.h"
#include "commands.h"
#include "ntlens/perf_path.h"
#include "parse-options.h"

static const struct opt_command capture_command = {
    .name = "capture",
    .synopsis = "-o FILE | --import -o FILE RAW...",
    .summary = "record performance-data snapshots to a file",
    .description =
        "Record snapshots (raw PERF_DATA_BLOCK answers), the title and help databases\n"
        "and the time of each snapshot into FILE; every performance-data command reads\n"
        "it back with -S FILE. Each snapshot is checked with the parser before it is\n"
        "stored. Without -n, recording goes on until Ctrl-C or SIGTERM (from a capture\n"
        "source: to its end); either keeps the snapshots taken so far. The file is\n"
        "written whole, never half, and the report on stderr says what it holds.\n"
        "With --import, each RAW file is one PERF_DATA_BLOCK answer, in time order.",
};

static int interval_cb(const struct opt *o, const char *arg, void *seconds)
{
    double v;
    if (!cli_parse_double(arg, &v) || !(v >= 0 && v <= 86400))
        return opt_error(o, "needs SECONDS, a number from 0 to 86400 (fractions allowed), "
                            "not '%s'", arg);
    *(double *)seconds = v;
    return 0;
}

static int lang_cb(const struct opt *o, const char *arg, void *opts)
{
    struct capture_opts *c = opts;
    if (c->nlangs == CAPTURE_MAX_LANGS)
        return opt_error(o, "may be given at most %d times", CAPTURE_MAX_LANGS);
    if (!ntl_perf_parse_lang(arg, &c->langs[c->nlangs]))
        return opt_error(o, "needs ID, a hex language id such as 009, not '%s'", arg);
    c->nlangs++;
    return 0;
}

/* What goes with --import and what does not; returns CLI_CONTINUE or 2. */
static int check_mode(const struct opt *opts, const struct capture_opts *o,
                      const struct cli_sources *cs, char **operands, int noperands)
{
    static const char *const record_only[][2] = {
        {"count", "-n"}, {"interval", "-i"}, {"query", "--query"}, {NULL, NULL},
    };

    if (!o->output)
        return opt_usage_error(&capture_command, "option '-o' (the capture file to write) is required");
    if (!o->import) {
        if (o->titles || o->help_titles || o->description)
            return opt_usage_error(&capture_command,
                                   "--titles, --help-titles and --description go with --import");
        if (noperands)
            return opt_usage_error(&capture_command, "unexpected operand '%s' (RAW files go "
                                   "with --import)", operands[0]);
        if (cs->nspecs > 1)
            return opt_usage_error(&capture_command, "one source at a time (-S given %zu times)",
                                   cs->nspecs);
        return CLI_CONTINUE;
    }
    for (size_t i = 0; record_only[i][0]; i++)
        if (opt_given(opts, record_only[i][0]))
            return opt_usage_error(&capture_command, "option '%s' does not go with --import",
                                   record_only[i][1]);
    if (cs->nspecs)
        return opt_usage_error(&capture_command, "--import reads RAW files, not a source (-S)");
    if (!noperands)
        return opt_usage_error(&capture_command, "--import needs at least one RAW file");
    if (o->nlangs > 1)
        return opt_usage_error(&capture_command, "--import stores one language (--lang once)");
    return CLI_CONTINUE;
}

/* Returns CLI_CONTINUE, or the exit code when there is nothing more to do. */
static int parse_args(int argc, char **argv, struct capture_opts *o, struct cli_sources *cs,
                      int *noperands)
{
    struct opt opts[] = {
        OPT_GROUP("Recording"),
        OPT_STRING('o', "output", &o->output, "FILE", "the capture file to write (required)"),
        OPT_INT('n', "count", &o->count, "N", 0, NTL_CAPTURE_MAX_SNAPSHOTS,
                "snapshots to take (default 0: until Ctrl-C or SIGTERM;\n"
                "from a capture source, all it holds)"),
        OPT_CALLBACK('i', "interval", "SECONDS", interval_cb, &o->interval,
                     "time between snapshots (default 1, may be fractional)"),
        OPT_CALLBACK(0, "lang", "ID", lang_cb, o,
                     "title language to store, hex (default 009); repeatable"),
        OPT_STRING(0, "query", &o->query, "QUERY",
                   "Global (default), Costly, or object indices (\"230 232\")"),
        OPT_FLAG('q', "quiet", &o->quiet, "no report of what was written"),
        OPT_GROUP("Import"),
        OPT_FLAG(0, "import", &o->import,
                 "build the capture from RAW files instead: each one\n"
                 "PERF_DATA_BLOCK answer, in time order"),
        OPT_STRING(0, "titles", &o->titles, "FILE",
                   "with --import: a raw \"Counter <lang>\" answer"),
        OPT_STRING(0, "help-titles", &o->help_titles, "FILE",
                   "with --import: a raw \"Help <lang>\" (\"Explain\") answer"),
        OPT_STRING(0, "description", &o->description, "TEXT",
                   "with --import: where the data came from"),
        OPT_SOURCE_OPTIONS(cs),
        OPT_END(),
    };
    int n;

    memset(o, 0, sizeof *o);
    o->interval = 1.0;
    o->query = "Global";
    if ((n = parse_options(&capture_command, opts, argc, argv)) < 0)
        return parse_options_exit(n);
    *noperands = n;
    if (o->nlangs == 0)
        o->langs[o->nlangs++] = NTL_PERF_LANG_ENGLISH;
    return check_mode(opts, o, cs, argv + 1, n);
}

int cmd_capture(int argc, char **argv)
{
    struct capture_opts o;
    struct cli_sources cs;
    struct ntl_source *src;
    int rc, n = 0;

    cli_sources_init(&cs);
    if ((rc = parse_args(argc, argv, &o, &cs, &n)) != CLI_CONTINUE)
        return rc;
    if (o.import)
        return capture_import(argv[0], &o, argv + 1, n);
    if ((rc = cli_sources_open(&cs, argv[0], &src)) != EXIT_OK) {
        cli_sources_clear(&cs);
        return rc;
    }
    cli_sources_clear(&cs);
    rc = capture_record(argv[0], &o, src);
    cli_sources_close(&src, 1);
    return rc;
}
