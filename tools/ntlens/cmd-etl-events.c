/* ntlens etl events: one record per event, streamed (a trace holds millions):
 * table rows have fixed widths, so no format waits for the end. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "commands.h"
#include "etl-common.h"
#include "etl-fields.h"
#include "etl-keywords.h"
#include "etl-merge.h"
#include "etl-record.h"
#include "ntlens/etl_fields.h"

static const struct opt_command events_command = {
    .name = "etl events",
    .synopsis = "FILE.etl...",
    .summary = "list the events of an ETW trace file",
    .description =
        "List the events of an ETW trace file, one per line: time, CPU, process and\n"
        "thread ids, header kind, provider name (or GUID), event name, event id or\n"
        "hook id, payload size and the decoded fields as name=value pairs (a JSON\n"
        "object in JSON). TraceLogging events name their provider, event and fields\n"
        "themselves; a payload that does not match its schema shows no fields and a\n"
        "decode_error. --raw shows the headers only, as before fields were decoded.\n"
        "Events come in time order (the per-CPU buffers merged) when the trace is at\n"
        "most 512 MiB, else in file order; --stream asks for file order, which starts\n"
        "printing at once and holds nothing in memory. Several traces merge into one\n"
        "list in time order, with a file column. The other formats carry every header\n"
        "field: the raw clock value, level, task, keyword, extended data item types,\n"
        "version and the event's file offset.",
};

struct filter {
    bool provider_set;
    struct ntl_guid provider;
    const char *provider_name; /* a name no table knows: matched against decoded names */
    int group;         /* -1: any */
    bool pid_set;
    uint64_t pid;
    bool tid_set;
    uint64_t tid;
    int kind;          /* -1: any */
    const char *event; /* the event's name, case-insensitive */
    bool level_set;
    uint64_t level;    /* events of this level or more severe (a lower number) */
    uint64_t keywords; /* 0: any; else events with one of these keyword bits */
    const char *level_arg, *keywords_arg; /* names resolved once manifests are loaded */
    bool start_set, end_set;
    struct etl_time start, end;
    uint64_t start_ft, end_ft; /* FILETIMEs, once the trace is open */
};

struct events_opts {
    struct filter flt;
    int fmt;
    bool hex;
    bool raw;
    bool stream;
    bool files;        /* several traces: a file column first */
    int nfiles;
    uint64_t count;
    struct opt_list manifests, binaries;
    struct etl_fields fields;
    struct etl_record record;
};

static bool keep(const struct filter *flt, const struct ntl_etl_event *ev,
                 const struct etl_fields *fields)
{
    if (flt->provider_name && (!fields->provider || strcasecmp(fields->provider, flt->provider_name)))
        return false;
    if (flt->provider_set && (!ev->has_guid || !ntl_guid_equal(&ev->guid, &flt->provider)))
        return false;
    if (flt->group >= 0 && (ev->kind > NTL_ETL_KIND_PERFINFO || ev->group != flt->group))
        return false;
    if (flt->pid_set && fields->pid != flt->pid)
        return false;
    if (flt->kind >= 0 && (int)ev->kind != flt->kind)
        return false;
    if (flt->tid_set && ev->tid != flt->tid)
        return false;
    if (flt->event && (!fields->event || strcasecmp(fields->event, flt->event)))
        return false;
    /* Level and keywords exist only in EVENT_HEADER events. */
    if (flt->level_set && (ev->kind != NTL_ETL_KIND_EVENT || ev->level > flt->level))
        return false;
    if (flt->keywords && (ev->kind != NTL_ETL_KIND_EVENT || !(ev->keyword & flt->keywords)))
        return false;
    return true;
}

/* --start and --end, on the event's time (FILETIME). */
static bool in_time(const struct filter *flt, const struct etl_cli *c, const struct ntl_etl_event *ev)
{
    uint64_t ft;
    if (!flt->start_set && !flt->end_set)
        return true;
    ft = ntl_etl_time_to_filetime(c->t, ev->timestamp);
    return (!flt->start_set || ft >= flt->start_ft) && (!flt->end_set || ft < flt->end_ft);
}

/* The payload under its table row, as offset, hex and ASCII lines. */
static void hexdump(FILE *f, const uint8_t *p, size_t n)
{
    for (size_t off = 0; off < n; off += 16) {
        fprintf(f, "    %04zx ", off);
        for (size_t i = 0; i < 16; i++) {
            if (off + i < n)
                fprintf(f, " %02x", p[off + i]);
            else
                fputs("   ", f);
        }
        fputs("  |", f);
        for (size_t i = 0; i < 16 && off + i < n; i++) {
            uint8_t b = p[off + i];
            fputc(b >= 0x20 && b < 0x7f ? b : '.', f);
        }
        fputs("|\n", f);
    }
}

static void cell_id(struct out *o, uint32_t v)
{
    if (v == UINT32_MAX)
        out_null(o);
    else
        out_u64(o, v);
}

/* ---- the table: the fields a reader scans, at fixed widths ---- */

static void table_columns(struct out *o, bool raw)
{
    static const struct { const char *key, *title; int width; enum out_align align; } cols[] = {
        {"timestamp", NULL, 28, OUT_LEFT}, {"cpu", "CPU", 3, OUT_RIGHT},
        {"pid", "PID", 6, OUT_RIGHT},      {"tid", "TID", 6, OUT_RIGHT},
        {"kind", NULL, 8, OUT_LEFT},       {"provider", "Provider/Group", 36, OUT_LEFT},
        {"opcode", NULL, 16, OUT_LEFT},    {"id", "ID", 6, OUT_RIGHT},
        {"payload_size", "Size", 6, OUT_RIGHT},
    };
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        if (!raw && !strcmp(cols[i].key, "opcode"))
            out_column(o, "event", NULL, OUT_LEFT);
        else
            out_column(o, cols[i].key, cols[i].title, cols[i].align);
        out_column_width(o, !raw && i == 5 ? 40 : cols[i].width);
    }
    if (!raw) {
        out_column(o, "fields", NULL, OUT_LEFT);
        out_column_width(o, 1); /* the last column: never padded */
    }
}

/* The table row with names and fields. */
static void table_row_fields(struct out *o, struct etl_cli *c, const struct ntl_etl_event *ev,
                             const struct etl_fields *f, bool hex)
{
    etl_cli_out_time(o, c, ev->timestamp);
    out_u64(o, ev->cpu);
    cell_id(o, f->pid);
    cell_id(o, ev->tid);
    out_str(o, ntl_etl_kind_name(ev->kind));
    etl_cell_provider(o, ev, f->provider);
    f->event ? out_str(o, f->event) : out_u64(o, ev->opcode);
    if (etl_is_kernel(ev))
        out_strf(o, "0x%04x", ev->hook_id);
    else if (ev->kind == NTL_ETL_KIND_EVENT)
        out_u64(o, ev->event_id);
    else if (ev->kind == NTL_ETL_KIND_MESSAGE)
        out_u64(o, ev->message_number);
    else
        out_null(o);
    out_u64(o, ev->payload_size);
    if (f->has_fields)
        out_str(o, f->text.s);
    else if (f->error[0])
        out_strf(o, "!%s", f->error);
    else
        out_str(o, "");
    out_row_end(o);
    if (hex)
        hexdump(stdout, ev->payload, ev->payload_size);
}

static void table_row(struct out *o, struct etl_cli *c, const struct ntl_etl_event *ev, bool hex)
{
    char buf[64];
    etl_cli_out_time(o, c, ev->timestamp);
    out_u64(o, ev->cpu);
    cell_id(o, ev->pid);
    cell_id(o, ev->tid);
    out_str(o, ntl_etl_kind_name(ev->kind));
    if (etl_is_kernel(ev))
        out_str(o, etl_cli_group(ev->group, buf, sizeof buf));
    else
        out_str(o, ev->has_guid ? ntl_guid_format(&ev->guid, buf, sizeof buf) : "");
    if (etl_is_kernel(ev))
        out_str(o, etl_cli_opcode(ev->group, ev->opcode, buf, sizeof buf));
    else
        out_u64(o, ev->opcode);
    if (etl_is_kernel(ev))
        out_strf(o, "0x%04x", ev->hook_id);
    else if (ev->kind == NTL_ETL_KIND_EVENT)
        out_u64(o, ev->event_id);
    else if (ev->kind == NTL_ETL_KIND_MESSAGE)
        out_u64(o, ev->message_number);
    else
        out_null(o);
    out_u64(o, ev->payload_size);
    out_row_end(o);
    if (hex)
        hexdump(stdout, ev->payload, ev->payload_size);
}

static int list_events(struct etl_merge *m, struct out *o, struct events_opts *eo)
{
    struct ntl_etl_event ev;
    struct etl_cli *c;
    uint64_t shown = 0;
    int rc = 1, status = EXIT_OK;

    while (status == EXIT_OK && shown < eo->count && (rc = etl_merge_next(m, &ev, &c)) > 0) {
        if (eo->raw)
            eo->fields.pid = ev.pid;
        else if (etl_fields_decode(&eo->fields, &ev) < 0)
            return cli_failf(c->cmd, "out of memory");
        if (!keep(&eo->flt, &ev, &eo->fields) || !in_time(&eo->flt, c, &ev))
            continue;
        shown++;
        if (eo->files)
            out_str(o, c->path); /* the first column when several traces merge */
        if (eo->fmt == OUT_TABLE && eo->raw)
            table_row(o, c, &ev, eo->hex);
        else if (eo->fmt == OUT_TABLE)
            table_row_fields(o, c, &ev, &eo->fields, eo->hex);
        else
            status = etl_record_row(&eo->record, o, c, &ev, &eo->fields, etl_merge_filetime(m));
        if (out_file_error(o))
            break; /* a closed pipe: out_close reports it */
    }
    return rc < 0 ? EXIT_FAIL : status;
}

static int provider_cb(const struct opt *o, const char *arg, void *ctx)
{
    struct filter *flt = ctx;
    if (!*arg)
        return opt_error(o, "needs NAME or GUID, like Microsoft-Windows-DotNETRuntime, not ''");
    if (ntl_guid_parse(arg, &flt->provider) || ntl_etl_provider_lookup(arg, &flt->provider))
        flt->provider_set = true;
    else
        flt->provider_name = arg;
    return 0;
}

static int group_cb(const struct opt *o, const char *arg, void *ctx)
{
    struct filter *flt = ctx;
    if ((flt->group = ntl_etl_group_parse(arg)) < 0)
        return opt_error(o, "needs GROUP, a kernel group name (Process, Image, ...) or number, not '%s'", arg);
    return 0;
}

static int time_cb(const struct opt *o, const char *arg, void *ctx)
{
    struct filter *flt = ctx;
    bool start = !strcmp(o->long_name, "start");
    if (!etl_cli_parse_time(arg, start ? &flt->start : &flt->end))
        return opt_error(o, "needs TIME, +SECONDS from the trace's start or an ISO 8601 UTC time "
                         "like 2020-07-29T00:07:01.5Z, not '%s'", arg);
    *(start ? &flt->start_set : &flt->end_set) = true;
    return 0;
}

/* --level and --keywords by name: known once the manifests are loaded. */
static int resolve_level_keywords(struct events_opts *eo)
{
    struct filter *flt = &eo->flt;
    const char *bad;
    if (flt->level_arg && etl_level_parse(&eo->fields, flt->level_arg, &flt->level) < 0)
        return opt_usage_error(&events_command, "--level: '%s' is no level 0..255 or level name",
                               flt->level_arg);
    flt->level_set = flt->level_arg != NULL;
    if (flt->keywords_arg &&
        etl_keywords_parse(&eo->fields, flt->keywords_arg, &flt->keywords, &bad) < 0)
        return opt_usage_error(&events_command, "--keywords: '%s' is no mask or keyword name",
                               bad);
    return CLI_CONTINUE;
}

static int parse_args(int argc, char **argv, struct etl_cli *c, struct events_opts *eo)
{
    const char *kinds[NTL_ETL_KIND_COUNT + 1] = {NULL};
    for (int k = 0; k < NTL_ETL_KIND_COUNT; k++)
        kinds[k] = ntl_etl_kind_name((enum ntl_etl_kind)k);
    struct opt opts[] = {
        OPT_GROUP("Selection"),
        OPT_CALLBACK('p', "provider", "NAME|GUID", provider_cb, &eo->flt,
                     "only events of this provider or class: a GUID, or a name\n"
                     "(Microsoft-Windows-DotNETRuntime, a TraceLogging provider's\n"
                     "own name, \"Windows Kernel\" for kernel events)"),
        OPT_CALLBACK('g', "group", "GROUP", group_cb, &eo->flt,
                     "only kernel events of this group (a name like Process, Image,\n"
                     "Thread, PerfInfo, or a number)"),
        OPT_U64(0, "pid", &eo->flt.pid, "PID", 0, UINT32_MAX, "only events of this process id"),
        OPT_U64(0, "tid", &eo->flt.tid, "TID", 0, UINT32_MAX, "only events of this thread id"),
        OPT_STRING(0, "event", &eo->flt.event, "NAME",
                   "only events of this name, as the event column shows it\n"
                   "(Process/DCStart, GarbageCollection/Start, PrimitiveTypesTest)"),
        OPT_STRING(0, "level", &eo->flt.level_arg, "LEVEL",
                   "only events of this level or a more severe one: 1 or win:Critical,\n"
                   "2 Error, 3 Warning, 4 Informational, 5 Verbose, or a level a\n"
                   "manifest names (EVENT_HEADER events)"),
        OPT_STRING(0, "keywords", &eo->flt.keywords_arg, "KEYWORDS",
                   "only events with one of these keyword bits: MASK or NAME[,NAME...]\n"
                   "(a manifest's keyword like GCKeyword, or win:ResponseTime ...)"),
        OPT_CALLBACK(0, "start", "TIME", time_cb, &eo->flt,
                     "only events at or after TIME: +SECONDS from the trace's start,\n"
                     "or an ISO 8601 UTC time"),
        OPT_CALLBACK(0, "end", "TIME", time_cb, &eo->flt, "only events before TIME (as --start)"),
        OPT_CHOICE(0, "kind", &eo->flt.kind, "KIND", kinds,
                   "only this header kind: system, compact, perfinfo, classic,\n"
                   "instance, event, message"),
        OPT_U64('n', "count", &eo->count, "N", 0, UINT64_MAX, "stop after N events"),
        OPT_U64(0, "limit", &eo->count, "N", 0, UINT64_MAX, "same as --count", .flags = OPT_HIDDEN),
        OPT_FLAG(0, "stream", &eo->stream,
                 "file order, as the buffers come (default: time order, the per-CPU\n"
                 "buffers merged, when the trace is at most 512 MiB; larger traces\n"
                 "stream in file order unless --sorted)"),
        OPT_FLAG(0, "raw", &eo->raw, "headers only: no names or fields (the view before they were\n"
                 "decoded, and faster)"),
        OPT_MANIFEST(&eo->manifests),
        OPT_MANIFEST_FROM(&eo->binaries),
        OPT_FLAG(0, "hex", &eo->hex, "dump each payload in hex (a payload column in other formats)"),
        OPT_OUTPUT_OPTIONS(&eo->fmt),
        OPT_ETL_OPTIONS(c),
        OPT_END(),
    };
    int n = parse_options(&events_command, opts, argc, argv);
    if (n < 0)
        return parse_options_exit(n);
    if (n < 1)
        return opt_usage_error(&events_command, "expected a trace file");
    if (n > 64)
        return opt_usage_error(&events_command, "at most 64 trace files, not %d", n);
    eo->files = n > 1;
    eo->nfiles = n;
    eo->flt.pid_set = opt_given(opts, "pid");
    eo->flt.tid_set = opt_given(opts, "tid");
    if (eo->stream && c->sorted)
        return opt_usage_error(&events_command, "--stream and --sorted ask for different orders");
    c->sort_if_fits = !eo->stream;
    /* Each event is written before the next is read (the merge of several
     * traces holds one per trace, each its own reader's last). */
    c->sorted_reload = true;
    /* Decompressing is a third of the command on a compressed trace: a
     * second thread does it ahead of both readings. */
    c->decompress_ahead = true;
    return CLI_CONTINUE;
}

int cmd_etl_events(int argc, char **argv)
{
    struct etl_cli c = {.cmd = argv[0]};
    struct events_opts eo = {.flt = {.group = -1, .kind = -1}, .fmt = OUT_TABLE, .count = UINT64_MAX};
    struct etl_merge m;
    struct out *o;
    int rc, width = 0;

    if ((rc = parse_args(argc, argv, &c, &eo)) != CLI_CONTINUE)
        return rc;
    if ((rc = etl_fields_load_manifests(&eo.fields, &eo.manifests, argv[0])) ||
        (rc = etl_fields_load_binaries(&eo.fields, &eo.binaries, argv[0])) ||
        (rc = etl_merge_open(&m, &c, argv + 1, (size_t)eo.nfiles))) {
        etl_fields_free(&eo.fields);
        return rc;
    }
    if ((rc = resolve_level_keywords(&eo)) != CLI_CONTINUE) {
        etl_fields_free(&eo.fields);
        etl_merge_close(&m);
        return rc;
    }
    /* Offsets in --start and --end count from the first trace's start. */
    eo.flt.start_ft = etl_cli_time_filetime(&m.c[0], &eo.flt.start);
    eo.flt.end_ft = etl_cli_time_filetime(&m.c[0], &eo.flt.end);
    if (!(o = out_new(stdout, (enum out_format)eo.fmt))) {
        etl_fields_free(&eo.fields);
        etl_merge_close(&m);
        return cli_failf(argv[0], "out of memory");
    }
    /* Only the table's hex dump writes to stdout between rows. */
    if (eo.fmt != OUT_TABLE || !eo.hex)
        out_hold_rows(o);
    /* JSON shows the fields' object, the other formats their text. */
    eo.fields.text.off = eo.fmt == OUT_JSON || eo.fmt == OUT_JSONL;
    eo.fields.json.off = !eo.fields.text.off;
    if (eo.files) {
        for (int i = 1; i <= eo.nfiles; i++)
            width = (int)strlen(argv[i]) > width ? (int)strlen(argv[i]) : width;
        out_column(o, "file", NULL, OUT_LEFT);
        out_column_width(o, width);
    }
    if (eo.fmt == OUT_TABLE)
        table_columns(o, eo.raw);
    else
        etl_record_columns(o, eo.hex, eo.raw);
    eo.record.raw = eo.raw;
    eo.record.hex = eo.hex;
    if (etl_record_templates(&eo.record, (enum out_format)eo.fmt, eo.files) < 0)
        rc = cli_failf(argv[0], "out of memory");
    else
        rc = list_events(&m, o, &eo);
    etl_fields_free(&eo.fields);
    etl_merge_close(&m);
    rc = etl_cli_out_close(&c, o, rc);
    etl_record_free(&eo.record);
    return rc;
}
