/* ntlens etl ipt: extract every Intel PT (ProcessorTrace) event of a trace as
 * a raw .pt file, unwrapped when the circular buffer wrapped, with a JSON
 * sidecar describing the event. */
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

static const struct opt_command ipt_command = {
    .name = "etl ipt",
    .synopsis = "FILE.etl -o DIR",
    .summary = "extract Intel PT traces from an ETW trace file",
    .description =
        "Extract the Intel Processor Trace events of an ETW trace (class GUID\n"
        NTL_ETL_IPT_GUID ", EventType 32). Each trace is written\n"
        "to DIR/ipt-NNNN.pt with DIR/ipt-NNNN.json beside it (event time, process,\n"
        "thread, IptOption decoded, TraceSize, TracePosition, how it was unwrapped).\n"
        "A trace whose TraceSize equals the configured buffer size has wrapped: it is\n"
        "written from the first PSB found circularly from TracePosition, across the\n"
        "end of the buffer, up to TracePosition. What was written goes to stdout, a\n"
        "record per trace: path, time, process, thread, CPU, sizes, bytes written.",
};

struct ipt_opts {
    const char *dir;
    bool raw;
    bool hook_set;
    uint64_t hook;
    int fmt;
};

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

static void summary_columns(struct out *o)
{
    out_column(o, "index", NULL, OUT_RIGHT);
    out_column(o, "timestamp", NULL, OUT_LEFT);
    out_column(o, "pid", "PID", OUT_RIGHT);
    out_column(o, "tid", "TID", OUT_RIGHT);
    out_column(o, "cpu", "CPU", OUT_RIGHT);
    out_column(o, "trace_size", NULL, OUT_RIGHT);
    out_column(o, "trace_position", NULL, OUT_RIGHT);
    out_column(o, "buffer_bytes", NULL, OUT_RIGHT);
    out_column(o, "wrapped", NULL, OUT_LEFT);
    out_column(o, "code_mode", NULL, OUT_LEFT);
    out_column(o, "bytes", NULL, OUT_RIGHT);
    out_column(o, "path", NULL, OUT_LEFT);
}

static void summary_row(struct out *o, struct etl_cli *c, const struct ntl_etl_event *ev,
                        const struct ntl_etl_ipt_event *ipt, size_t written, const char *path,
                        unsigned n)
{
    struct ntl_ipt_option opt;
    ntl_ipt_option_decode(ipt->ipt_option, &opt);
    out_u64(o, n);
    etl_cli_out_time(o, c, ev->timestamp);
    out_u64(o, ipt->process);
    out_u64(o, ipt->thread);
    out_u64(o, ev->cpu);
    out_u64(o, ipt->trace_size);
    out_u64(o, ipt->trace_position);
    out_u64(o, ntl_ipt_option_buffer_bytes(ipt->ipt_option));
    out_bool(o, ipt->wrapped);
    out_str(o, code_mode_name(opt.trace_code_mode));
    out_u64(o, written);
    out_str(o, path);
    out_row_end(o);
}

/* The bytes to write for trace n: the recording, or a wrapped ring unwrapped
 * into lin (unless --raw). EXIT_FAIL after printing an error. */
static int trace_bytes(struct etl_cli *c, const struct ipt_opts *io, const struct ntl_etl_event *ev,
                       const struct ntl_etl_ipt_event *ipt, unsigned n, struct ntl_buf *lin,
                       struct extracted *x, const uint8_t **out)
{
    struct ntl_ipt_wrap w;
    struct ntl_error err = {0};
    int u;

    *out = ipt->trace;
    x->written = ipt->trace_size;
    if (!ipt->wrapped || io->raw)
        return EXIT_OK;
    lin->len = 0;
    u = ntl_ipt_unwrap(ipt->trace, ipt->trace_size, ipt->trace_position, lin, &w, &err);
    if (u == 0) {
        x->unwrapped = true;
        x->psb = w.psb;
        x->skipped = w.skipped;
        *out = lin->data;
        x->written = lin->len;
    } else if (u == NTL_ERR_NOT_FOUND) {
        x->no_psb = true;
        progress_clear();
        cli_warn(c->cmd, "trace %u (event at offset 0x%" PRIx64 ") wrapped but holds no PSB; "
                 "written as recorded", n, ev->offset);
    } else {
        ntl_error_prefix(&err, "trace %u", n);
        etl_cli_error(c, &err, NULL);
        return EXIT_FAIL;
    }
    return EXIT_OK;
}

struct writer {
    struct etl_cli *c;
    const struct ipt_opts *io;
    struct out *o;
    struct ntl_buf lin, json;
    bool made_dir;
    unsigned n;
};

/* Writes trace w->n and its sidecar, then its record. */
static int extract(struct writer *w, const struct ntl_etl_event *ev, const struct ntl_etl_ipt_event *ipt)
{
    struct extracted x = {0};
    struct ntl_error err = {0};
    const uint8_t *bytes;
    char path[4096], name[64], msg[200];

    if (trace_bytes(w->c, w->io, ev, ipt, w->n, &w->lin, &x, &bytes) != EXIT_OK)
        return EXIT_FAIL;
    /* The folder appears only when there is a trace to put in it. */
    if (!w->made_dir && etl_mkdir(w->io->dir, msg, sizeof msg) < 0) {
        progress_end(&w->c->progress);
        return cli_failf(w->c->cmd, "cannot create %s: %s", w->io->dir, msg);
    }
    w->made_dir = true;
    snprintf(name, sizeof name, "ipt-%04u.pt", w->n);
    snprintf(path, sizeof path, "%s/%s", w->io->dir, name);
    if (ntl_file_write(path, bytes, x.written, &err) < 0) {
        progress_end(&w->c->progress);
        return cli_fail(w->c->cmd, &err, NULL); /* the message names the file */
    }
    summary_row(w->o, w->c, ev, ipt, x.written, path, w->n);
    w->json.len = 0;
    sidecar(&w->json, w->c, ev, ipt, &x, name);
    snprintf(path, sizeof path, "%s/ipt-%04u.json", w->io->dir, w->n);
    if (ntl_file_write(path, w->json.data, w->json.len, &err) < 0) {
        progress_end(&w->c->progress);
        return cli_fail(w->c->cmd, &err, NULL);
    }
    return EXIT_OK;
}

static int extract_all(struct writer *w)
{
    struct ntl_etl_event ev;
    struct ntl_etl_ipt_event ipt;
    struct ntl_error err = {0};
    int rc;

    while ((rc = etl_cli_next(w->c, &ev)) > 0) {
        int d = w->io->hook_set && ev.kind <= NTL_ETL_KIND_PERFINFO && ev.hook_id == w->io->hook
                    ? ntl_etl_ipt_decode_payload(&ev, &ipt, &err)
                    : ntl_etl_ipt_decode(&ev, &ipt, &err);
        if (d == 0)
            continue;
        if (d < 0) {
            if (!w->c->keep_going) {
                etl_cli_error(w->c, &err, " (--keep-going skips bad events)");
                return EXIT_FAIL;
            }
            etl_cli_skip(w->c, &err, "skipped");
            continue;
        }
        w->n++;
        if (extract(w, &ev, &ipt) != EXIT_OK)
            return EXIT_FAIL;
    }
    return rc < 0 ? EXIT_FAIL : EXIT_OK;
}

static int parse_args(int argc, char **argv, struct etl_cli *c, struct ipt_opts *io)
{
    struct opt opts[] = {
        OPT_STRING('o', "output", &io->dir, "DIR",
                   "where to write the traces (created when there is one)"),
        OPT_FLAG(0, "raw", &io->raw, "write wrapped traces as recorded, without unwrapping"),
        OPT_U64(0, "hook", &io->hook, "HOOK", 0, 0xFFFF,
                "also read kernel events (SYSTEM/PERFINFO headers) with this\n"
                "hook id (group << 8 | opcode, e.g. 0x1f20) as ProcessorTrace events"),
        OPT_OUTPUT_OPTIONS(&io->fmt),
        OPT_ETL_OPTIONS(c),
        OPT_END(),
    };
    int n = parse_options(&ipt_command, opts, argc, argv);
    if (n < 0)
        return parse_options_exit(n);
    if (n != 1)
        return opt_usage_error(&ipt_command, "expected one trace file");
    if (!io->dir)
        return opt_usage_error(&ipt_command, "option '--output' is required: where to write the traces");
    io->hook_set = opt_given(opts, "hook");
    return CLI_CONTINUE;
}

int cmd_etl_ipt(int argc, char **argv)
{
    struct etl_cli c = {.cmd = argv[0]};
    struct ipt_opts io = {.fmt = OUT_TABLE};
    struct writer w = {.c = &c, .io = &io};
    int rc;

    if ((rc = parse_args(argc, argv, &c, &io)) != CLI_CONTINUE)
        return rc;
    if ((rc = etl_cli_open(&c, argv[1])))
        return rc;
    if (!(w.o = out_new(stdout, (enum out_format)io.fmt))) {
        etl_cli_close(&c);
        return cli_failf(argv[0], "out of memory");
    }
    summary_columns(w.o);
    ntl_buf_init(&w.lin, 0);
    ntl_buf_init(&w.json, 0);
    rc = extract_all(&w);
    etl_cli_close(&c);
    ntl_buf_free(&w.lin);
    ntl_buf_free(&w.json);
    if (w.n == 0 && rc == EXIT_OK)
        fprintf(stderr, "ntlens %s: no Intel PT events in %s\n", argv[0], argv[1]);
    return etl_cli_out_close(&c, w.o, rc);
}
