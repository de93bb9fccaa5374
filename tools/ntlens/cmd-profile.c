/* ntlens profile: Kernrate's report of a sampling profile, from the
 * SampledProfile events of an ETW trace (--etl) or sampled live
 * (profile-live-*.c: perf_event on Linux). */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "commands.h"
#include "etl-common.h"
#include "ntlens/buf.h"
#include "ntlens/profile_etl.h"
#include "ntlens/profile_nt.h"
#include "ntlens/profile_perf.h"
#include "ntlens/profile_report.h"
#include "ntlens/profile_symbols.h"
#include "profile-cli.h"

static const struct opt_command profile_command = {
    .name = "profile",
    .synopsis = "--etl TRACE.etl | -p PID | -a | -- COMMAND [ARG...]",
    .summary = "sampling profile: hits per module, function and bucket (Kernrate)",
    .description =
        "Report a sampling profile the way Kernrate does: hits per module (with\n"
        "percent and hits per second), per process, then per function and per\n"
        "bucket inside the modules you zoom into (--zoom NAME, --top N).\n"
        "With --etl, the samples are the SampledProfile events of an ETW trace\n"
        "(PerfInfo group, opcode 46), placed in the modules its image events load\n"
        "at the time of each sample and attributed to the sampled thread's process;\n"
        "samples outside every module count as 'unknown'. --modules DIR names\n"
        "functions from the exports of the module files found in DIR.\n"
        "Live, on Linux, perf_event samples a process (-p), a command it starts\n"
        "(-- COMMAND), or every process (-a) with the software cpu-clock at -F HZ,\n"
        "until the command ends, --duration passes or Ctrl-C; modules come from\n"
        "/proc/PID/maps and mmap records, function names from their ELF symbols.\n"
        "Samples the kernel lost, and throttling, are reported on stderr.\n"
        "CSV, TSV and JSON lines hold one table: the modules unless --report\n"
        "chooses another. --format folded writes every sample's stack, root first\n"
        "('process;caller;function COUNT'), for flame-graph tools; --format\n"
        "speedscope writes them in speedscope's JSON file format, one profile per\n"
        "process (open the file at speedscope.app or with the speedscope command).",
};

static const char *const format_names[] = {"table", "csv", "tsv", "json", "jsonl", "folded",
                                           "speedscope", NULL};

static const char *const table_names[] = {"all", "modules", "processes", "threads",
                                          "functions", "buckets", NULL};

struct profile_opts {
    struct profile_report_opts ro;
    struct profile_live_opts live;
    const char *etl;
    const char *modules_dir;
    uint64_t bucket_size;
    bool pid_set, tid_set;
    uint64_t pid, tid;
    double start, end;        /* seconds from the trace's start; < 0: not given */
};

static int source_cb(const struct opt *o, const char *arg, void *ctx)
{
    int s = ntl_profile_nt_source_parse(arg);
    if (s < 0)
        return opt_error(o, "needs NAME, a KPROFILE_SOURCE (Time, TotalCycles, ...) or a number "
                         "from 0 to %d, not '%s'", NTL_PROFILE_NT_SOURCES - 1, arg);
    *(int *)ctx = s;
    return 0;
}

static int seconds_cb(const struct opt *o, const char *arg, void *ctx)
{
    char *end;
    double v = strtod(arg, &end);
    if (end == arg || *end || !(v >= 0 && v <= 1e9))
        return opt_error(o, "needs SECONDS from the trace's start, a number like 2.5, not '%s'",
                         arg);
    *(double *)ctx = v;
    return 0;
}

static int parse_args(int argc, char **argv, struct etl_cli *c, struct profile_opts *po)
{
    struct opt opts[] = {
        OPT_GROUP("Producer"),
        OPT_STRING(0, "etl", &po->etl, "TRACE.etl", "the SampledProfile events of an ETW trace"),
        OPT_U64(0, "pid", &po->pid, "PID", 0, UINT32_MAX,
                "live: sample this process; with --etl: only its samples", .aliases = "-p"),
        OPT_U64(0, "tid", &po->tid, "TID", 0, UINT32_MAX, "with --etl: only this thread's samples"),
        OPT_CALLBACK(0, "start", "SECONDS", seconds_cb, &po->start,
                     "with --etl: only samples from SECONDS after the trace's start"),
        OPT_CALLBACK(0, "end", "SECONDS", seconds_cb, &po->end,
                     "with --etl: only samples before SECONDS after the trace's start"),
        OPT_FLAG(0, "all-cpus", &po->live.all, "live: sample every process (system-wide)",
                 .aliases = "-a"),
        OPT_U64(0, "freq", &po->live.freq, "HZ", 1, 100000,
                "live: samples per second per CPU (default 4000)", .aliases = "-F"),
        OPT_U64(0, "duration", &po->live.duration, "SECONDS", 1, 86400,
                "live: stop after SECONDS (default: when the command ends, or Ctrl-C)"),
        OPT_CALLBACK(0, "source", "NAME", source_cb, &po->live.source,
                     "Windows: the KPROFILE_SOURCE to sample on, by name (Time,\n"
                     "TotalCycles, CacheMisses, ...) or number; Linux samples cpu-clock"),
        OPT_GROUP("Report"),
        OPT_LIST(0, "zoom", &po->ro.zoom, "NAME",
                 "functions of this module too (repeatable; case-insensitive)"),
        OPT_U64(0, "top", &po->ro.top, "N", 0, 1000, "functions of the N modules with most hits"),
        OPT_FLAG(0, "buckets", &po->ro.buckets, "the bucket list of zoomed modules too"),
        OPT_U64(0, "bucket-size", &po->bucket_size, "BYTES", 4, 1ull << 31,
                "bytes per bucket, a power of two from 4 to 2^31 (default 4)"),
        OPT_STRING(0, "modules", &po->modules_dir, "DIR",
                   "name functions from the exports of the module files in DIR"),
        OPT_CHOICE(0, "report", &po->ro.table, "TABLE", table_names,
                   "all (default for table and json), modules (default for csv,\n"
                   "tsv, jsonl), processes, threads, functions or buckets"),
        /* OPT_OUTPUT_OPTIONS, plus folded stacks and speedscope. */
        OPT_GROUP("Output options"),
        OPT_CHOICE('f', "format", &po->ro.fmt, "FORMAT", format_names,
                   "table (default), csv, tsv, json (one document), jsonl (JSON lines)\n"
                   "folded (one 'a;b;c COUNT' line per stack, for flame graphs) or\n"
                   "speedscope (speedscope's JSON file format, a profile per process)"),
        OPT_CALLBACK(0, "local-time", NULL, out_local_time_cb, NULL,
                     "times in local time with their UTC offset (default: UTC)"),
        OPT_ETL_OPTIONS(c),
        OPT_END(),
    };
    int n = parse_options(&profile_command, opts, argc, argv);
    if (n < 0)
        return parse_options_exit(n);
    po->pid_set = opt_given(opts, "pid");
    po->tid_set = opt_given(opts, "tid");
    int modes = !!po->etl + (po->pid_set && !po->etl) + po->live.all + (n > 0);
    if (modes != 1)
        return opt_usage_error(&profile_command, "%s",
                               modes ? "choose one of --etl, -p, -a and a command"
                                     : "expected --etl TRACE.etl, -p PID, -a or -- COMMAND");
    if (po->etl && (opt_given(opts, "freq") || opt_given(opts, "duration")))
        return opt_usage_error(&profile_command, "--freq and --duration are for live sampling");
    if (po->etl && opt_given(opts, "source"))
        return opt_usage_error(&profile_command, "--source is for live sampling");
    if (!po->etl && (po->tid_set || po->start >= 0 || po->end >= 0))
        return opt_usage_error(&profile_command, "--tid, --start and --end filter the samples "
                               "of --etl");
    if (po->end == 0 || (po->start >= 0 && po->end >= 0 && po->end <= po->start))
        return opt_usage_error(&profile_command, "--end must come after --start and the "
                               "trace's start");
    po->live.pid = po->pid;
    po->live.argc = n;
    po->live.argv = argv + 1;
    if (po->bucket_size & (po->bucket_size - 1))
        return opt_usage_error(&profile_command,
                               "option '--bucket-size' needs a power of two, not %" PRIu64,
                               po->bucket_size);
    bool stacks = po->ro.fmt == PROFILE_FOLDED || po->ro.fmt == PROFILE_SPEEDSCOPE;
    if (stacks && opt_given(opts, "report"))
        return opt_usage_error(&profile_command, "--format %s prints stacks, not a --report",
                               format_names[po->ro.fmt]);
    if (po->ro.table == PROFILE_ALL && po->ro.fmt != OUT_TABLE && po->ro.fmt != OUT_JSON &&
        !stacks) {
        if (opt_given(opts, "report"))
            return opt_usage_error(&profile_command, "--report all prints several tables; "
                                   "%s holds one: choose one, or --format json",
                                   out_format_names[po->ro.fmt]);
        po->ro.table = PROFILE_MODULES;
    }
    return CLI_CONTINUE;
}

static unsigned log2u(uint64_t v)
{
    unsigned s = 0;
    while (v > 1) {
        v >>= 1;
        s++;
    }
    return s;
}

/* The file in dir whose name is the module's (case-insensitive, as
 * Windows names them); NULL when none. */
static char *find_module_file(const char *dir, const char *name)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char *found = NULL;
    if (!d)
        return NULL;
    while (!found && (e = readdir(d)))
        if (!strcasecmp(e->d_name, name) &&
            (found = malloc(strlen(dir) + strlen(e->d_name) + 2)))
            sprintf(found, "%s/%s", dir, e->d_name);
    closedir(d);
    return found;
}

/* --modules DIR's loader (on lib/profile's thread): the exports of the
 * file in DIR named as the module. */
static int load_exports(void *ctx, const char *name, const char *path,
                        struct ntl_profile_symtab **out, struct ntl_error *err)
{
    char *file = find_module_file(ctx, name);
    struct ntl_buf b;
    int rc;
    (void)path;
    if (!file)
        return 0;
    ntl_buf_init(&b, 1u << 30);
    if ((rc = ntl_file_read(file, 1u << 30, &b, err)) >= 0)
        rc = ntl_profile_symtab_from_pe(b.data, b.len, out, err);
    ntl_buf_free(&b);
    free(file);
    return rc;
}

struct load_ctx {
    const char *cmd, *dir;
};

/* A module with hits whose file would not load (the join's, in the order
 * of the modules table): named again, only then. */
static void load_failed(void *ctx, const struct ntl_profile_range *r, const struct ntl_error *e)
{
    const struct load_ctx *lc = ctx;
    char *file = find_module_file(lc->dir, r->name);
    cli_warn(lc->cmd, "%s: %s; its functions are offsets", file ? file : r->name, e->message);
    free(file);
}

/* Live sampling's loader: the ELF symbols of a range whose path is a file
 * ("[vdso]", "[kernel.kallsyms]" are not); a file without them is left
 * unnamed, as before. */
static int load_elf(void *ctx, const char *name, const char *path,
                    struct ntl_profile_symtab **out, struct ntl_error *err)
{
    (void)ctx;
    (void)name;
    if (path[0] != '/' || ntl_profile_symtab_from_elf(path, out, err) < 0)
        *out = NULL;
    return 0;
}

/* The raw timestamp secs after the trace's start (its header event), in
 * the trace's clock; 0 (no bound) when secs < 0. */
static uint64_t trace_time(const struct ntl_etl *t, double secs)
{
    const struct ntl_etl_logfile *lf = ntl_etl_logfile(t);
    double freq = lf->clock == NTL_ETL_CLOCK_SYSTEM      ? 1e7
                : lf->clock == NTL_ETL_CLOCK_CPU_CYCLE ? lf->cpu_speed_mhz * 1e6
                                                       : (double)lf->perf_freq;
    return secs < 0 ? 0 : lf->header_timestamp + (uint64_t)(secs * freq);
}

/* The trace in file order into a log, then the log in time order into p
 * (ntl_profile_etl_log_add: no sorted copy of the whole trace). */
static int read_trace(struct etl_cli *c, struct ntl_profile *p, struct ntl_profile_etl_log *log,
                      struct ntl_profile_etl_stacks *stacks, const struct profile_opts *po)
{
    struct ntl_profile_etl_options opt = {
        .bucket_shift = po->bucket_size ? log2u(po->bucket_size) : 0,
        .pid_set = po->pid_set, .pid = (uint32_t)po->pid,
        .tid_set = po->tid_set, .tid = (uint32_t)po->tid,
        .start = trace_time(c->t, po->start), .end = trace_time(c->t, po->end)};
    struct ntl_etl_event ev;
    struct ntl_profile_etl_fed fed;
    struct ntl_error err = {0};
    uint64_t first = 0, last = 0, samples = 0;
    int rc;
    while ((rc = etl_cli_next(c, &ev)) > 0)
        if (ntl_profile_etl_log_add(log, stacks, c->t, &ev, &opt, &err) < 0) {
            etl_cli_error(c, &err, NULL);
            return EXIT_FAIL;
        }
    if (rc < 0)
        return EXIT_FAIL;
    while ((rc = ntl_profile_etl_log_feed(log, p, stacks, &opt, &fed, &err)) > 0) {
        int k = fed.kind;
        if (k == NTL_ERR_NOMEM || k == NTL_ERR_LIMIT) {
            etl_cli_error(c, &err, NULL);
            return EXIT_FAIL;
        }
        if (k < 0) {
            if (!c->keep_going) {
                etl_cli_error(c, &err, " (--keep-going skips bad events)");
                return EXIT_FAIL;
            }
            etl_cli_skip(c, &err, "skipped");
        } else if (k == NTL_PROFILE_ETL_SAMPLE) {
            first = samples++ ? first : fed.timestamp;
            last = fed.timestamp;
        }
    }
    if (rc < 0) {
        etl_cli_error(c, &err, NULL);
        return EXIT_FAIL;
    }
    struct ntl_profile_info *info = ntl_profile_info(p);
    snprintf(info->source, sizeof info->source, "SampledProfile");
    info->cpus = ntl_etl_logfile(c->t)->number_of_processors;
    if (samples > 1)
        info->duration_ns = (ntl_etl_time_to_filetime(c->t, last) -
                             ntl_etl_time_to_filetime(c->t, first)) * 100;
    return rc < 0 ? EXIT_FAIL : EXIT_OK;
}

static int from_trace(struct etl_cli *c, struct ntl_profile *p, const struct profile_opts *po)
{
    /* File order: the log puts the samples in time order, each meeting
     * the modules and threads of its time. Decompressing is the largest
     * part of reading: a second thread does it ahead. */
    c->decompress_ahead = true;
    struct ntl_error err = {0};
    /* --modules: the exports load on a second thread while the samples
     * are placed. */
    if (po->modules_dir &&
        ntl_profile_symbols_start(p, load_exports, (void *)po->modules_dir, true, &err) < 0)
        return cli_fail(c->cmd, &err, NULL);
    int rc = etl_cli_open(c, po->etl);
    if (rc)
        return rc;
    struct ntl_profile_etl_stacks *stacks = NULL;
    struct ntl_profile_etl_log *log = NULL;
    struct ntl_profile_etl_stack_counts counts;
    if (ntl_profile_etl_stacks_new(&stacks, &err) < 0 || ntl_profile_etl_log_new(&log, &err) < 0) {
        ntl_profile_etl_stacks_free(stacks);
        etl_cli_close(c);
        return cli_fail(c->cmd, &err, NULL);
    }
    /* Without flame graphs, only the count of undefined keys is told. */
    if (po->ro.fmt != PROFILE_FOLDED && po->ro.fmt != PROFILE_SPEEDSCOPE)
        ntl_profile_etl_stacks_counts_only(stacks);
    rc = read_trace(c, p, log, stacks, po);
    ntl_profile_etl_log_free(log);
    etl_cli_close(c);
    /* Samples that only the end rundown explains (DCEnd). */
    if (rc == EXIT_OK && ntl_profile_place_late(p, &err) < 0)
        rc = cli_fail(c->cmd, &err, NULL);
    else if (rc == EXIT_OK && ntl_profile_etl_stacks_finish(p, stacks, &counts, &err) < 0)
        rc = cli_fail(c->cmd, &err, NULL);
    else if (rc == EXIT_OK && counts.keys_undefined)
        cli_warn(c->cmd, "%" PRIu64 " stack keys were never defined; those stacks are partial",
                 counts.keys_undefined);
    ntl_profile_etl_stacks_free(stacks);
    struct load_ctx lc = {c->cmd, po->modules_dir};
    if (rc == EXIT_OK && ntl_profile_symbols_join(p, load_failed, &lc, &err) < 0)
        cli_warn(c->cmd, "%s", err.message);
    return rc;
}

/* Samples live, then says what the kernel dropped and names functions from
 * the modules' ELF symbols. */
static int from_live(const char *cmd, struct ntl_profile *p, struct profile_opts *po)
{
    struct ntl_profile_perf_stats st = {0};
    po->live.bucket_shift = po->bucket_size ? log2u(po->bucket_size) : 2;
    if (!po->live.freq)
        po->live.freq = 4000;
    struct ntl_error err = {0};
    int rc = profile_live(cmd, p, &po->live, &st);
    if (rc)
        return rc;
    /* The modules' ELF symbols load on a second thread only now: loaded
     * while sampling, they took the profiled program's cores (2.3 ms of
     * CPU in a 1 s run of spin, beside 3.3 ms of sampling). The thread
     * still settles and names the ranges' hits beside this one. */
    if (ntl_profile_symbols_start(p, load_elf, NULL, true, &err) < 0)
        return cli_fail(cmd, &err, NULL);
    if (st.lost)
        cli_warn(cmd, "the kernel lost %" PRIu64 " samples", st.lost);
    if (st.throttled)
        cli_warn(cmd, "sampling was throttled %" PRIu64 " times (perf_event_max_sample_rate); "
                      "lower -F", st.throttled);
    if (ntl_profile_symbols_join(p, NULL, NULL, &err) < 0)
        cli_warn(cmd, "%s", err.message);
    return 0;
}

int cmd_profile(int argc, char **argv)
{
    struct etl_cli c = {.cmd = argv[0]};
    struct profile_opts po = {.ro = {.fmt = OUT_TABLE}, .start = -1, .end = -1};
    struct ntl_profile *p;
    struct ntl_error err = {0};
    int rc;

    if ((rc = parse_args(argc, argv, &c, &po)) != CLI_CONTINUE)
        return rc;
    if (ntl_profile_new(&p, &err) < 0)
        return cli_fail(argv[0], &err, NULL);
    /* Only the flame-graph formats read the stacks. */
    ntl_profile_keep_stacks(p, po.ro.fmt == PROFILE_FOLDED || po.ro.fmt == PROFILE_SPEEDSCOPE);
    rc = po.etl ? from_trace(&c, p, &po) : from_live(argv[0], p, &po);
    if (rc == EXIT_OK)
        rc = po.ro.fmt == PROFILE_FOLDED       ? profile_folded(argv[0], p)
           : po.ro.fmt == PROFILE_SPEEDSCOPE ? profile_speedscope(argv[0], p)
                                             : profile_report(argv[0], p, &po.ro);
    ntl_profile_free(p);
    return rc;
}
