/* ntlens samba-provider: fills Samba's perfmon store (names.tdb, data.tdb)
 * with this host's performance objects, so that a stock smbd's winreg
 * server answers HKEY_PERFORMANCE_DATA with real Process, Thread,
 * Processor and Memory data. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-source.h"
#include "cli.h"
#include "commands.h"
#include "ntlens/msrpc.h"
#include "ntlens/perf.h"
#include "samba-provider.h"

static const char usage_text[] =
    "usage: ntlens samba-provider --state-dir DIR [--interval SECONDS] [--once] [-v]\n"
    "                             [SOURCE OPTIONS]\n"
    "\n"
    "Write this host's performance objects (Process, Thread, Processor, Memory, ...)\n"
    "into Samba's perfmon store, DIR/perfmon/names.tdb and data.tdb, where smbd's\n"
    "winreg server reads them to answer HKEY_PERFORMANCE_DATA queries. DIR is smbd's\n"
    "state directory (`testparm -s --parameter-name \"state directory\"`, usually\n"
    "/var/lib/samba). Runs until interrupted, refreshing every interval.\n"
    "\n"
    "      --state-dir DIR      Samba's state directory (required)\n"
    "  -i, --interval SECONDS   refresh interval, 1 to 86400 (default 5)\n"
    "      --once               write one snapshot and exit\n"
    "  -v, --verbose            one line per refresh on stderr\n"
    "  -h, --help               this help\n"
    "\n"
    "The data comes from the local source by default; -S takes any one source\n"
    "(a capture file, or a remote host to relay).\n"
    "\n";

enum { OPT_STATE_DIR = 0x2000, OPT_ONCE };

struct provider {
    const char *cmd;
    const char *state_dir;
    struct ntl_source *src;
    struct ntl_perf_titles *titles;
    struct ntl_buf block;
};

/* Names and help texts, read once: the source's own, completed by Windows'
 * standard English table. */
static int load_titles(struct provider *p)
{
    struct ntl_error err;
    struct ntl_buf raw;
    int rc = EXIT_OK;

    ntl_error_clear(&err);
    ntl_buf_init(&raw, NTL_SOURCE_DEFAULT_MAX_BLOCK);
    p->titles = ntl_perf_titles_new();
    if (!p->titles)
        return cli_failf(p->cmd, "out of memory");
    if (ntl_source_titles(p->src, NTL_TITLES_COUNTER, NTL_PERF_LANG_ENGLISH, &raw, &err) >= 0 &&
        ntl_perf_titles_add(p->titles, false, raw.data, raw.len, &err) < 0)
        rc = cli_fail(p->cmd, &err, "counter names");
    ntl_error_clear(&err);
    if (rc == EXIT_OK &&
        ntl_source_titles(p->src, NTL_TITLES_HELP, NTL_PERF_LANG_ENGLISH, &raw, &err) >= 0 &&
        ntl_perf_titles_add(p->titles, true, raw.data, raw.len, &err) < 0)
        rc = cli_fail(p->cmd, &err, "help texts");
    if (rc == EXIT_OK && ntl_perf_titles_add_standard(p->titles) < 0)
        rc = cli_failf(p->cmd, "out of memory");
    ntl_buf_free(&raw);
    return rc;
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

int cmd_samba_provider(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"state-dir", required_argument, NULL, OPT_STATE_DIR},
        {"interval", required_argument, NULL, 'i'},
        {"once", no_argument, NULL, OPT_ONCE},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        CLI_SOURCE_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    const char *cmd = argv[0];
    struct provider p = {.cmd = cmd};
    struct cli_sources cs;
    bool once = false, verbose = false, eof = false;
    long interval = 5;
    int opt, rc;

    cli_sources_init(&cs);
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "i:vh" CLI_SOURCE_SHORTOPTS, longopts, NULL)) != -1) {
        switch (opt) {
        case OPT_STATE_DIR:
            p.state_dir = optarg;
            break;
        case 'i':
            if (!cli_parse_int(optarg, 1, 86400, &interval))
                return cli_usage_error(cmd, "--interval takes seconds from 1 to 86400, not '%s'",
                                       optarg);
            break;
        case OPT_ONCE:
            once = true;
            break;
        case 'v':
            verbose = true;
            break;
        case 'h':
            fputs(usage_text, stdout);
            fputs(cli_source_help, stdout);
            return EXIT_OK;
        case '?':
            return cli_usage_error(cmd, "unknown or incomplete option '%s'", argv[optind - 1]);
        default:
            rc = cli_sources_option(&cs, cmd, opt, optarg);
            if (rc < 0)
                return EXIT_USAGE;
            if (rc == 0)
                return cli_usage_error(cmd, "unknown option");
        }
    }
    if (optind < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!p.state_dir || !*p.state_dir)
        return cli_usage_error(cmd, "--state-dir DIR is required (smbd's state directory)");
    if (cs.nspecs > 1)
        return cli_usage_error(cmd, "one source at a time");

    rc = cli_sources_open(&cs, cmd, &p.src);
    cli_sources_clear(&cs);
    if (rc != EXIT_OK)
        return rc;
    ntl_buf_init(&p.block, cs.opt.max_block ? cs.opt.max_block : NTL_SOURCE_DEFAULT_MAX_BLOCK);
    rc = load_titles(&p);
    if (rc == EXIT_OK && !once)
        samba_provider_catch_signals();
    while (rc == EXIT_OK) {
        rc = refresh(&p, verbose || once, &eof);
        if (rc != EXIT_OK || once || eof || samba_provider_stopping())
            break;
        samba_provider_sleep_ms((unsigned)interval * 1000u);
        if (samba_provider_stopping())
            break;
    }
    ntl_buf_free(&p.block);
    ntl_perf_titles_free(p.titles);
    ntl_source_close(p.src);
    return rc;
}
