/* ntlens etl ipt: extract every Intel PT (ProcessorTrace) event of a trace as
 * a raw .pt file, unwrapped when the circular buffer wrapped, with a JSON
 * sidecar describing the event. */
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "etl-common.h"
#include "etl-mkdir.h"
#include "ntlens/buf.h"
#include "ntlens/etl_ipt.h"
#include "ntlens/ipt_sync.h"
#include "output.h"

static void usage(FILE *f)
{
    fputs("usage: ntlens etl ipt [OPTIONS] FILE.etl -o DIR\n"
          "\n"
          "Extract the Intel Processor Trace events of an ETW trace (class GUID\n"
          NTL_ETL_IPT_GUID ", EventType 32). Each trace is written\n"
          "to DIR/ipt-NNNN.pt with DIR/ipt-NNNN.json beside it (event time, process,\n"
          "thread, IptOption decoded, TraceSize, TracePosition, how it was unwrapped).\n"
          "A trace whose TraceSize equals the configured buffer size has wrapped: it is\n"
          "written from the first PSB found circularly from TracePosition, across the\n"
          "end of the buffer, up to TracePosition. A summary table goes to stdout.\n"
          "\n"
          "Options:\n"
          "  -o, --output DIR     where to write the traces (created when there is one)\n"
          "      --raw            write wrapped traces as recorded, without unwrapping\n"
          "      --hook HOOK      also read kernel events (SYSTEM/PERFINFO headers) with\n"
          "                       this hook id (group << 8 | opcode, e.g. 0x1f20) as\n"
          "                       ProcessorTrace events\n"
          "  -f, --format FMT     summary as table (default), csv or json\n" ETL_COMMON_HELP
          "  -h, --help           show this help\n",
          f);
}

static void jprintf(struct ntl_buf *b, const char *fmt, ...) NTL_PRINTF(2, 3);
static void jprintf(struct ntl_buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        ntl_buf_append(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static const char *code_mode_name(unsigned m)
{
    switch (m) {
    case 1: return "user";
    case 2: return "kernel";
    case 3: return "user+kernel";
    default: return "";
    }
}

struct extracted {
    bool unwrapped;
    bool no_psb;
    size_t psb, skipped, written;
};

static void sidecar(struct ntl_buf *j, struct etl_cli *c, const struct ntl_etl_event *ev,
                    const struct ntl_etl_ipt_event *ipt, const struct extracted *x, const char *pt_name)
{
    struct ntl_ipt_option o;
    char tbuf[64], gbuf[64];
    ntl_ipt_option_decode(ipt->ipt_option, &o);
    jprintf(j, "{\n  \"trace_file\": \"%s\",\n", pt_name);
    jprintf(j, "  \"event_time\": \"%s\",\n", etl_cli_time(c, ev->timestamp, tbuf, sizeof tbuf));
    jprintf(j, "  \"event_timestamp_raw\": %" PRIu64 ",\n", ev->timestamp);
    jprintf(j, "  \"event_kind\": \"%s\",\n", ntl_etl_kind_name(ev->kind));
    if (ev->has_guid)
        jprintf(j, "  \"provider\": \"%s\",\n", ntl_guid_format(&ev->guid, gbuf, sizeof gbuf));
    else
        jprintf(j, "  \"hook_id\": \"0x%04x\",\n", ev->hook_id);
    jprintf(j, "  \"file_offset\": %" PRIu64 ",\n  \"cpu\": %u,\n", ev->offset, ev->cpu);
    jprintf(j, "  \"trigger_time\": \"%s\",\n",
            etl_cli_time(c, ipt->event_timestamp, tbuf, sizeof tbuf));
    jprintf(j, "  \"EventTimeStamp\": %" PRIu64 ",\n", ipt->event_timestamp);
    jprintf(j, "  \"Process\": %" PRIu32 ",\n  \"Thread\": %" PRIu32 ",\n", ipt->process, ipt->thread);
    jprintf(j, "  \"IptOption\": \"0x%016" PRIx64 "\",\n", ipt->ipt_option);
    jprintf(j, "  \"IptOptionFields\": {\"TraceMode\": %u, \"TimeMode\": %u, \"MTCFreq\": %u, "
               "\"CycThresh\": %u, \"BufferSize\": %u, \"TraceSessionMode\": %u, "
               "\"TraceChild\": %u, \"TraceCodeMode\": %u, \"Reserved2\": %u, \"Reserved3\": %u},\n",
            o.trace_mode, o.time_mode, o.mtc_freq, o.cyc_thresh, o.buffer_size,
            o.trace_session_mode, o.trace_child, o.trace_code_mode, o.reserved2, o.reserved3);
    jprintf(j, "  \"buffer_bytes\": %" PRIu64 ",\n", ntl_ipt_option_buffer_bytes(ipt->ipt_option));
    jprintf(j, "  \"code_mode\": \"%s\",\n", code_mode_name(o.trace_code_mode));
    jprintf(j, "  \"TraceSize\": %" PRIu32 ",\n  \"TracePosition\": %" PRIu32 ",\n",
            ipt->trace_size, ipt->trace_position);
    jprintf(j, "  \"wrapped\": %s,\n  \"unwrapped\": %s,\n", ipt->wrapped ? "true" : "false",
            x->unwrapped ? "true" : "false");
    if (x->unwrapped)
        jprintf(j, "  \"psb_offset\": %zu,\n  \"skipped_bytes\": %zu,\n", x->psb, x->skipped);
    if (x->no_psb)
        jprintf(j, "  \"note\": \"wrapped buffer without a PSB: written as recorded\",\n");
    jprintf(j, "  \"written_bytes\": %zu\n}\n", x->written);
}

int cmd_etl_ipt(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"raw", no_argument, NULL, 'r'},
        {"hook", required_argument, NULL, 'k'},
        {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        ETL_COMMON_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    struct etl_cli c = {.cmd = argv[0]};
    enum out_format fmt = OUT_TABLE;
    const char *dir = NULL;
    bool raw = false, hook_set = false;
    uint64_t hook = 0;
    int opt, rc = 0;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:f:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o':
            dir = optarg;
            break;
        case 'r':
            raw = true;
            break;
        case 'k':
            if (!cli_parse_u64(optarg, &hook) || hook > 0xFFFF)
                return cli_usage_error(argv[0], "bad hook id '%s'", optarg);
            hook_set = true;
            break;
        case 'f':
            if (!out_format_parse(optarg, &fmt))
                return cli_usage_error(argv[0], "unknown format '%s' (table, csv, json)", optarg);
            break;
        case 'h':
            usage(stdout);
            return EXIT_OK;
        default:
            if (etl_cli_option(&c, opt, optarg, &rc)) {
                if (rc)
                    return rc;
                break;
            }
            return cli_usage_error(argv[0], "unknown option");
        }
    }
    if (optind + 1 != argc)
        return cli_usage_error(argv[0], "expected one trace file");
    if (!dir)
        return cli_usage_error(argv[0], "-o DIR is required");
    char msg[200];
    bool made_dir = false;
    if ((rc = etl_cli_open(&c, argv[optind])))
        return rc;

    struct out_table *t = out_table_new();
    out_table_column(t, "index", NULL, OUT_RIGHT);
    out_table_column(t, "time", NULL, OUT_LEFT);
    out_table_column(t, "pid", NULL, OUT_RIGHT);
    out_table_column(t, "tid", NULL, OUT_RIGHT);
    out_table_column(t, "trace_size", "size", OUT_RIGHT);
    out_table_column(t, "trace_position", "position", OUT_RIGHT);
    out_table_column(t, "buffer_bytes", "buffer", OUT_RIGHT);
    out_table_column(t, "wrapped", NULL, OUT_LEFT);
    out_table_column(t, "code_mode", "code", OUT_LEFT);
    out_table_column(t, "written", NULL, OUT_RIGHT);
    out_table_column(t, "file", NULL, OUT_LEFT);

    struct ntl_etl_event ev;
    struct ntl_etl_ipt_event ipt;
    struct ntl_error err = {0};
    struct ntl_buf lin, json;
    bool failed = false;
    unsigned n = 0;
    char tbuf[64], path[4096], name[64];
    ntl_buf_init(&lin, 0);
    ntl_buf_init(&json, 0);
    while ((rc = etl_cli_next(&c, &ev)) > 0) {
        int d = hook_set && ev.kind <= NTL_ETL_KIND_PERFINFO && ev.hook_id == hook
                    ? ntl_etl_ipt_decode_payload(&ev, &ipt, &err)
                    : ntl_etl_ipt_decode(&ev, &ipt, &err);
        if (d == 0)
            continue;
        if (d < 0) {
            if (!c.keep_going) {
                etl_cli_error(&c, &err, " (--keep-going skips bad events)");
                failed = true;
                break;
            }
            etl_cli_skip(&c, &err, "skipped");
            continue;
        }
        n++;
        struct extracted x = {0};
        const uint8_t *out = ipt.trace;
        size_t out_len = ipt.trace_size;
        if (ipt.wrapped && !raw) {
            struct ntl_ipt_wrap w;
            lin.len = 0;
            int u = ntl_ipt_unwrap(ipt.trace, ipt.trace_size, ipt.trace_position, &lin, &w, &err);
            if (u == 0) {
                x.unwrapped = true;
                x.psb = w.psb;
                x.skipped = w.skipped;
                out = lin.data;
                out_len = lin.len;
            } else if (u == NTL_ERR_NOT_FOUND) {
                x.no_psb = true;
                cli_warn(argv[0], "trace %u (event at offset 0x%" PRIx64 ") wrapped but holds no PSB; "
                         "written as recorded", n, ev.offset);
            } else {
                ntl_error_prefix(&err, "trace %u", n);
                etl_cli_error(&c, &err, NULL);
                failed = true;
                break;
            }
        }
        x.written = out_len;
        /* The folder appears only when there is a trace to put in it. */
        if (!made_dir && etl_mkdir(dir, msg, sizeof msg) < 0) {
            progress_end(&c.progress);
            cli_failf(argv[0], "cannot create %s: %s", dir, msg);
            failed = true;
            break;
        }
        made_dir = true;
        snprintf(name, sizeof name, "ipt-%04u.pt", n);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (ntl_file_write(path, out, out_len, &err) < 0) {
            progress_end(&c.progress);
            cli_fail(argv[0], &err, NULL); /* the message names the file */
            failed = true;
            break;
        }
        json.len = 0;
        sidecar(&json, &c, &ev, &ipt, &x, name);
        snprintf(path, sizeof path, "%s/ipt-%04u.json", dir, n);
        if (ntl_file_write(path, json.data, json.len, &err) < 0) {
            progress_end(&c.progress);
            cli_fail(argv[0], &err, NULL); /* the message names the file */
            failed = true;
            break;
        }
        struct ntl_ipt_option o;
        ntl_ipt_option_decode(ipt.ipt_option, &o);
        out_table_u64(t, n);
        out_table_str(t, etl_cli_time(&c, ev.timestamp, tbuf, sizeof tbuf));
        out_table_u64(t, ipt.process);
        out_table_u64(t, ipt.thread);
        out_table_u64(t, ipt.trace_size);
        out_table_u64(t, ipt.trace_position);
        out_table_u64(t, ntl_ipt_option_buffer_bytes(ipt.ipt_option));
        out_table_bool(t, ipt.wrapped);
        out_table_str(t, code_mode_name(o.trace_code_mode));
        out_table_u64(t, x.written);
        out_table_str(t, name);
        out_table_row_end(t);
    }
    if (rc < 0)
        failed = true;
    etl_cli_close(&c);
    ntl_buf_free(&lin);
    ntl_buf_free(&json);
    int wr = out_table_render(t, stdout, fmt);
    out_table_free(t);
    if (n == 0 && !failed)
        fprintf(stderr, "ntlens %s: no Intel PT events in %s\n", argv[0], argv[optind]);
    if (wr < 0 || fflush(stdout) != 0)
        return cli_failf(argv[0], "write error");
    return failed ? EXIT_FAIL : EXIT_OK;
}
