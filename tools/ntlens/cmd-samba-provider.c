/* ntlens samba-provider: fills Samba's perfmon store (names.tdb, data.tdb)
 * with this host's performance objects, so that a stock smbd's winreg
 * server answers HKEY_PERFORMANCE_DATA with real Process, Thread,
 * Processor and Memory data. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-source.h"
#include "cli-stop.h"
#include "cli.h"
#include "commands.h"
#include "ntlens/msrpc.h"
#include "ntlens/perf.h"
#include "ntlens/source_perf.h"
#include "parse-options.h"

static const struct opt_command provider_command = {
    .name = "samba-provider",
    .synopsis = NULL,
    .summary = "fill Samba's perfmon store so smbd serves this host's performance data",
    .description =
        "Write this host's performance objects (Process, Thread, Processor, Memory, ...)\n"
        "into Samba's perfmon store, DIR/perfmon/names.tdb and data.tdb, where smbd's\n"
        "winreg server reads them to answer HKEY_PERFORMANCE_DATA queries. DIR is smbd's\n"
        "state directory (`testparm -s --parameter-name \"state directory\"`, usually\n"
        "/var/lib/samba). Runs until interrupted, refreshing every interval.\n"
        "\n"
        "The data comes from the local source by default; -S takes any one source\n"
        "(a capture file, or a remote host to relay).",
};

struct provider_opts {
    const char *state_dir;
    long interval;
    bool once, verbose, std_titles;
};

struct provider {
    const char *cmd;
    const char *state_dir;
    struct ntl_source *src;
    struct ntl_perf_titles *titles;
    struct ntl_buf block;
};

/* Names and help texts, read once: the source's own, completed by Windows'
 * standard English table under --std-titles. */
static int load_titles(struct provider *p, bool std_titles)
{
    enum ntl_source_titles_fill fill =
        std_titles ? NTL_SOURCE_TITLES_STANDARD : NTL_SOURCE_TITLES_OWN;
    struct ntl_error err;

    if (!(p->titles = ntl_perf_titles_new()))
        return cli_failf(p->cmd, "out of memory");
    if (ntl_source_load_titles(p->src, NTL_TITLES_COUNTER, NTL_PERF_LANG_ENGLISH, fill,
                               p->titles, NULL, &err) < 0 ||
        ntl_source_load_titles(p->src, NTL_TITLES_HELP, NTL_PERF_LANG_ENGLISH, fill,
                               p->titles, NULL, &err) < 0)
        return cli_fail(p->cmd, &err, ntl_source_describe(p->src));
    return EXIT_OK;
}

static int refresh(struct provider *p, bool verbose, bool *eof)
{
    struct ntl_samba_perfmon_stats st;
    struct ntl_perf_block *b = NULL;
    struct ntl_error err;
    int rc;

    ntl_error_clear(&err);
    rc = ntl_source_query(p->src, "Global", &p->block, &err);
    if (rc == NTL_ERR_EOF) {
        *eof = true;
        return EXIT_OK;
    }
    if (rc < 0)
        return cli_fail(p->cmd, &err, ntl_source_describe(p->src));
    if (ntl_perf_block_parse(p->block.data, p->block.len, &b, &err) < 0)
        return cli_fail(p->cmd, &err, "performance data");
    rc = ntl_samba_perfmon_write(p->state_dir, b, p->titles, &st, &err);
    ntl_perf_block_free(b);
    if (rc < 0)
        return cli_fail(p->cmd, &err, p->state_dir);
    if (verbose)
        fprintf(stderr,
                "ntlens samba-provider: %zu objects, %zu counters, %zu instances "
                "(%zu counters renumbered, %zu text counters left out), titles to %" PRIu32
                "\n",
                st.objects, st.counters, st.instances, st.moved_indices, st.skipped_counters,
                st.last_index + 1);
    return EXIT_OK;
}

/* Returns CLI_CONTINUE, or the exit code when there is nothing more to do. */
static int parse_args(int argc, char **argv, struct provider_opts *o, struct cli_sources *cs)
{
    struct opt opts[] = {
        OPT_GROUP("Store"),
        OPT_STRING(0, "state-dir", &o->state_dir, "DIR", "Samba's state directory (required)"),
        OPT_INT('i', "interval", &o->interval, "SECONDS", 1, 86400,
                "refresh interval (default 5)"),
        OPT_FLAG(0, "once", &o->once, "write one snapshot and exit"),
        OPT_FLAG('v', "verbose", &o->verbose, "one line per refresh on stderr"),
        OPT_FLAG(0, "std-titles", &o->std_titles,
                 "fill counters the source's own title database lacks\n"
                 "from Windows' standard titles"),
        OPT_SOURCE_OPTIONS(cs),
        OPT_END(),
    };
    int n = parse_options(&provider_command, opts, argc, argv);

    if (n < 0)
        return parse_options_exit(n);
    if (n > 0)
        return opt_usage_error(&provider_command, "unexpected argument '%s'", argv[1]);
    if (!o->state_dir || !*o->state_dir)
        return opt_usage_error(&provider_command,
                               "--state-dir DIR is required (smbd's state directory)");
    if (cs->nspecs > 1)
        return opt_usage_error(&provider_command, "one source at a time, not %zu", cs->nspecs);
    return CLI_CONTINUE;
}

/* Refreshes the store until interrupted (or once, or at a capture's end). */
static int provide(struct provider *p, const struct provider_opts *o)
{
    bool eof = false;
    int rc = EXIT_OK;

    if (!o->once)
        cli_stop_catch_signals();
    while (rc == EXIT_OK) {
        rc = refresh(p, o->verbose || o->once, &eof);
        if (rc != EXIT_OK || o->once || eof || cli_stop_requested())
            break;
        cli_sleep_ms((unsigned)o->interval * 1000u);
        if (cli_stop_requested())
            break;
    }
    return rc;
}

int cmd_samba_provider(int argc, char **argv)
{
    struct provider_opts o = {.interval = 5};
    struct provider p = {.cmd = argv[0]};
    struct cli_sources cs;
    int rc;

    cli_sources_init(&cs);
    if ((rc = parse_args(argc, argv, &o, &cs)) != CLI_CONTINUE)
        return rc;
    p.state_dir = o.state_dir;
    rc = cli_sources_open(&cs, argv[0], &p.src);
    cli_sources_clear(&cs);
    if (rc != EXIT_OK)
        return rc;
    ntl_buf_init(&p.block, cs.max_block ? cs.max_block : NTL_SOURCE_DEFAULT_MAX_BLOCK);
    rc = load_titles(&p, o.std_titles);
    if (rc == EXIT_OK)
        rc = provide(&p, &o);
    ntl_buf_free(&p.block);
    ntl_perf_titles_free(p.titles);
    ntl_source_close(p.src);
    return rc;
}
