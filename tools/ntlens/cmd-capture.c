/* ntlens capture: record performance-data snapshots, with the title and help
 * databases, into a capture file (docs/capture-format.md) that every
 * command reads back with -S FILE; or build one from raw QueryValue answers
 * saved by other tools (--import). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-source.h"
#include "cli.h"
#include "commands.h"
#include "ntlens/perf.h"
#include "ntlens/perf_capture.h"
#include "ntlens/perf_path.h"
#include "perf-cli.h"
#include "progress.h"

static const char usage_text[] =
    "usage: ntlens capture -o FILE [-n COUNT] [-i SECONDS] [--lang ID]... [--query QUERY]\n"
    "                      [SOURCE OPTIONS]\n"
    "       ntlens capture --import RAW... [--titles FILE] [--help-titles FILE]\n"
    "                      [--lang ID] [--description TEXT] -o FILE\n"
    "\n"
    "Record COUNT snapshots (raw PERF_DATA_BLOCK answers), the title and help\n"
    "databases and the time of each snapshot into FILE. Every performance-data\n"
    "command reads it back with -S FILE. Each snapshot is checked with the parser\n"
    "before it is stored.\n"
    "\n"
    "  -o, --output FILE        the capture file to write\n"
    "  -n, --count COUNT        snapshots to take (default 1; from a capture source,\n"
    "                           0 copies all)\n"
    "  -i, --interval SECONDS   time between snapshots (default 1, may be fractional)\n"
    "      --lang ID            title language to store, hex (default 009); repeatable\n"
    "      --query QUERY        Global (default), Costly, or object indices (\"230 232\")\n"
    "      --import             build the capture from RAW files instead: each one\n"
    "                           PERF_DATA_BLOCK answer, in time order\n"
    "      --titles FILE        with --import: a raw \"Counter <lang>\" answer\n"
    "      --help-titles FILE   with --import: a raw \"Help <lang>\" (\"Explain\") answer\n"
    "      --description TEXT   with --import: where the data came from\n"
    "  -h, --help               this help\n"
    "\n";

enum { OPT_LANG = 0x2000, OPT_QUERY, OPT_IMPORT, OPT_TITLES, OPT_HELP_TITLES, OPT_DESC };

#define MAX_LANGS 16
#define RAW_LIMIT (256u << 20)

struct capture_opts {
    const char *output;
    long count;
    double interval;
    unsigned langs[MAX_LANGS];
    size_t nlangs;
    const char *query;
    bool import;
    const char *titles, *help_titles, *description;
};

/* Checks a block with the parser; returns its SystemTime as Unix ns (0 when
 * the header's time is invalid) through *ns. */
static int check_block(const char *cmd, const char *what, const uint8_t *data, size_t size,
                       int64_t *ns)
{
    struct ntl_perf_block *b;
    struct ntl_error err;
    if (ntl_perf_block_parse(data, size, &b, &err) < 0)
        return cli_fail(cmd, &err, what);
    int64_t secs;
    *ns = 0;
    if (ntl_perf_systemtime_to_unix(&b->system_time, &secs))
        *ns = secs * 1000000000 + (int64_t)b->system_time.milliseconds * 1000000;
    ntl_perf_block_free(b);
    return EXIT_OK;
}

static int import_titles(const char *cmd, struct ntl_capture_writer *w, const char *path,
                         bool help, unsigned lang)
{
    struct ntl_buf raw;
    struct ntl_error err;
    if (ntl_file_read(path, RAW_LIMIT, &raw, &err) < 0)
        return cli_fail(cmd, &err, NULL);
    /* refuse what the reader would refuse later */
    struct ntl_perf_titles *t = ntl_perf_titles_new();
    int rc = t ? ntl_perf_titles_add(t, help, raw.data, raw.len, &err) : NTL_ERR_NOMEM;
    ntl_perf_titles_free(t);
    if (rc < 0) {
        if (rc == NTL_ERR_NOMEM)
            ntl_error_set(&err, rc, NULL, NTL_NO_OFFSET, NULL);
        ntl_buf_free(&raw);
        return cli_fail(cmd, &err, path);
    }
    rc = ntl_capture_writer_titles(w, help, lang, raw.data, raw.len, &err);
    ntl_buf_free(&raw);
    return rc < 0 ? cli_fail(cmd, &err, path) : EXIT_OK;
}

static int run_import(const char *cmd, const struct capture_opts *o, char **files, int nfiles)
{
    struct ntl_capture_writer *w =
        ntl_capture_writer_new(o->description ? o->description : "imported raw answers");
    struct ntl_error err;
    int rc = EXIT_OK;
    if (!w)
        return cli_failf(cmd, "out of memory");
    if (o->titles && (rc = import_titles(cmd, w, o->titles, false, o->langs[0])) != EXIT_OK)
        goto out;
    if (o->help_titles &&
        (rc = import_titles(cmd, w, o->help_titles, true, o->langs[0])) != EXIT_OK)
        goto out;
    for (int i = 0; i < nfiles; i++) {
        struct ntl_buf raw;
        int64_t ns = 0;
        if (ntl_file_read(files[i], RAW_LIMIT, &raw, &err) < 0) {
            rc = cli_fail(cmd, &err, NULL);
            goto out;
        }
        if ((rc = check_block(cmd, files[i], raw.data, raw.len, &ns)) != EXIT_OK) {
            ntl_buf_free(&raw);
            goto out;
        }
        int r = ntl_capture_writer_snapshot(w, ns, "Global", raw.data, raw.len, &err);
        ntl_buf_free(&raw);
        if (r < 0) {
            rc = cli_fail(cmd, &err, files[i]);
            goto out;
        }
    }
    if (ntl_capture_writer_save(w, o->output, &err) < 0)
        rc = cli_fail(cmd, &err, o->output);
out:
    ntl_capture_writer_free(w);
    return rc;
}

static int store_titles(const char *cmd, struct ntl_capture_writer *w, struct ntl_source *src,
                        unsigned lang, bool help)
{
    struct ntl_buf raw;
    struct ntl_error err;
    ntl_buf_init(&raw, RAW_LIMIT);
    int rc = ntl_source_titles(src, help ? NTL_TITLES_HELP : NTL_TITLES_COUNTER, lang, &raw, &err);
    if (rc < 0) {
        cli_warn(cmd, "%s titles %03x not stored: %s", help ? "help" : "counter", lang,
                 err.message);
        ntl_buf_free(&raw);
        return EXIT_OK;
    }
    rc = ntl_capture_writer_titles(w, help, lang, raw.data, raw.len, &err);
    ntl_buf_free(&raw);
    return rc < 0 ? cli_fail(cmd, &err, NULL) : EXIT_OK;
}

static int run_record(const char *cmd, const struct capture_opts *o, struct ntl_source *src)
{
    struct ntl_capture_writer *w = ntl_capture_writer_new(ntl_source_describe(src));
    struct ntl_buf raw;
    struct ntl_error err;
    struct progress bar;
    int rc = EXIT_OK;
    bool live = ntl_source_is_live(src);
    long count = o->count;

    if (!w)
        return cli_failf(cmd, "out of memory");
    ntl_buf_init(&raw, 0);
    for (size_t i = 0; i < o->nlangs; i++)
        if ((rc = store_titles(cmd, w, src, o->langs[i], false)) != EXIT_OK ||
            (rc = store_titles(cmd, w, src, o->langs[i], true)) != EXIT_OK)
            goto out;
    if (!live && count == 0)
        count = (long)ntl_source_snapshot_count(src);
    if (count == 0) {
        rc = cli_usage_error(cmd, "-n 0 (everything) is only for capture sources");
        goto out;
    }
    progress_start(&bar, "capture", (uint64_t)count);
    for (long i = 0; i < count; i++) {
        if (i > 0 && live)
            perf_sleep_ms((unsigned)(o->interval * 1000.0 + 0.5));
        int64_t now = perf_now_unix_ns();
        raw.len = 0;
        int r = ntl_source_query(src, o->query, &raw, &err);
        if (r == NTL_ERR_EOF) {
            if (i == 0)
                rc = cli_failf(cmd, "%s holds no snapshot", ntl_source_describe(src));
            break;
        }
        if (r < 0) {
            rc = cli_fail(cmd, &err, ntl_source_describe(src));
            break;
        }
        char what[64];
        int64_t block_ns = 0;
        snprintf(what, sizeof what, "snapshot %ld", i + 1);
        if ((rc = check_block(cmd, what, raw.data, raw.len, &block_ns)) != EXIT_OK)
            break;
        /* a capture source keeps the times it was recorded with */
        if (!live && block_ns)
            now = block_ns;
        if (ntl_capture_writer_snapshot(w, now, o->query, raw.data, raw.len, &err) < 0) {
            rc = cli_fail(cmd, &err, NULL);
            break;
        }
        progress_update(&bar, (uint64_t)i + 1);
    }
    progress_end(&bar);
    if (rc == EXIT_OK && ntl_capture_writer_save(w, o->output, &err) < 0)
        rc = cli_fail(cmd, &err, o->output);
out:
    ntl_buf_free(&raw);
    ntl_capture_writer_free(w);
    return rc;
}

int cmd_capture(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"count", required_argument, NULL, 'n'},
        {"interval", required_argument, NULL, 'i'},
        {"lang", required_argument, NULL, OPT_LANG},
        {"query", required_argument, NULL, OPT_QUERY},
        {"import", no_argument, NULL, OPT_IMPORT},
        {"titles", required_argument, NULL, OPT_TITLES},
        {"help-titles", required_argument, NULL, OPT_HELP_TITLES},
        {"description", required_argument, NULL, OPT_DESC},
        {"help", no_argument, NULL, 'h'},
        CLI_SOURCE_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    const char *cmd = argv[0];
    struct capture_opts o = {.count = 1, .interval = 1.0, .query = "Global"};
    struct cli_sources cs;
    int c, r;

    cli_sources_init(&cs);
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:n:i:h" CLI_SOURCE_SHORTOPTS, longopts, NULL)) != -1) {
        if ((r = cli_sources_option(&cs, cmd, c, optarg)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            continue;
        }
        switch (c) {
        case 'o': o.output = optarg; break;
        case 'n':
            if (!cli_parse_int(optarg, 0, (long)NTL_CAPTURE_MAX_SNAPSHOTS, &o.count))
                return cli_usage_error(cmd, "-n takes a count from 0 to %u, not '%s'",
                                       NTL_CAPTURE_MAX_SNAPSHOTS, optarg);
            break;
        case 'i':
            if (!cli_parse_double(optarg, &o.interval) || o.interval < 0 || o.interval > 86400)
                return cli_usage_error(cmd, "-i takes seconds from 0 to 86400, not '%s'", optarg);
            break;
        case OPT_LANG:
            if (o.nlangs == MAX_LANGS)
                return cli_usage_error(cmd, "at most %d --lang options", MAX_LANGS);
            if (!ntl_perf_parse_lang(optarg, &o.langs[o.nlangs++]))
                return cli_usage_error(cmd, "--lang takes a hex language id such as 009, "
                                            "not '%s'", optarg);
            break;
        case OPT_QUERY: o.query = optarg; break;
        case OPT_IMPORT: o.import = true; break;
        case OPT_TITLES: o.titles = optarg; break;
        case OPT_HELP_TITLES: o.help_titles = optarg; break;
        case OPT_DESC: o.description = optarg; break;
        case 'h':
            fputs(usage_text, stdout);
            fputs(cli_source_help, stdout);
            return EXIT_OK;
        default:
            return cli_usage_error(cmd, "unknown option or missing value: '%s'",
                                   argv[optind - 1]);
        }
    }
    if (!o.output)
        return cli_usage_error(cmd, "-o FILE is required");
    if (o.nlangs == 0)
        o.langs[o.nlangs++] = NTL_PERF_LANG_ENGLISH;
    if (o.import) {
        if (cs.nspecs)
            return cli_usage_error(cmd, "--import reads RAW files, not a source (-S)");
        if (optind >= argc)
            return cli_usage_error(cmd, "--import needs at least one RAW file");
        if (o.nlangs > 1)
            return cli_usage_error(cmd, "--import stores one language (--lang once)");
        return run_import(cmd, &o, argv + optind, argc - optind);
    }
    if (o.titles || o.help_titles || o.description)
        return cli_usage_error(cmd, "--titles, --help-titles and --description go with --import");
    if (optind < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (cs.nspecs > 1)
        return cli_usage_error(cmd, "one source at a time (-S given %zu times)", cs.nspecs);

    struct ntl_source *src;
    if ((r = cli_sources_open(&cs, cmd, &src)) != EXIT_OK) {
        cli_sources_clear(&cs);
        return r;
    }
    cli_sources_clear(&cs);
    r = run_record(cmd, &o, src);
    cli_sources_close(&src, 1);
    return r;
}
