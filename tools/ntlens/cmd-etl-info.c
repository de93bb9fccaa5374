/* ntlens etl info: the logfile header and what a full pass over the buffers
 * finds (buffers, events by header kind, losses, time span, CPUs); or, with
 * --buffers, one record per buffer. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "etl-common.h"
#include "ntlens/compress.h"

static const struct opt_command info_command = {
    .name = "etl info",
    .synopsis = "FILE.etl",
    .summary = "summarise an ETW trace file",
    .description =
        "Summarise an ETW trace file: the logfile header (logger, OS build, pointer\n"
        "size, clock, time zone), buffers and their compression, events by header\n"
        "kind, events and buffers lost, the time span and the CPUs seen. A file that\n"
        "ends inside a buffer is reported as truncated, with what comes before the cut.\n"
        "The table shows one field per line; the other formats one record.",
};

/* The summary is one record. As a table it is a Field/Value list (a row per
 * field); in the other formats a column per field, so it is written in two
 * passes over the same field list: the columns, then the cells. */
enum kv_pass { KV_VERTICAL, KV_COLUMNS, KV_CELLS };

struct kv {
    struct out *o;
    enum kv_pass pass;
};

/* True when the caller adds the field's value cell now. */
static bool kv_begin(struct kv *kv, const char *key)
{
    if (kv->pass == KV_COLUMNS)
        out_column(kv->o, key, NULL, OUT_LEFT);
    else if (kv->pass == KV_VERTICAL)
        out_str(kv->o, key);
    return kv->pass != KV_COLUMNS;
}

static void kv_end(struct kv *kv)
{
    if (kv->pass == KV_VERTICAL)
        out_row_end(kv->o);
}

#define KV(kv, key, cell)         \
    do {                          \
        if (kv_begin(kv, key)) {  \
            cell;                 \
            kv_end(kv);           \
        }                         \
    } while (0)

static const char *clock_name(enum ntl_etl_clock c)
{
    switch (c) {
    case NTL_ETL_CLOCK_QPC: return "qpc";
    case NTL_ETL_CLOCK_SYSTEM: return "system-time";
    case NTL_ETL_CLOCK_CPU_CYCLE: return "cpu-cycles";
    }
    return "?";
}

struct summary {
    const char *path;
    const struct ntl_etl_logfile *lf;
    struct ntl_etl_stats st;
    int compression;            /* the trace's format, for compressed traces */
    uint64_t first, last;       /* FILETIMEs of the first and last events; 0: none */
};

static void header_fields(struct kv *kv, const struct summary *s)
{
    const struct ntl_etl_logfile *lf = s->lf;
    char buf[128];
    KV(kv, "file", out_str(kv->o, s->path));
    /* First, so a cut file is seen before its counts are read as whole. */
    KV(kv, "truncated", out_bool(kv->o, s->st.truncated));
    KV(kv, "logger_name", out_str(kv->o, lf->logger_name));
    KV(kv, "log_file_name", out_str(kv->o, lf->log_file_name));
    KV(kv, "os_version", out_strf(kv->o, "%u.%u build %u", lf->version[0], lf->version[1],
                                  lf->provider_version));
    KV(kv, "pointer_size", out_u64(kv->o, lf->pointer_size));
    KV(kv, "number_of_processors", out_u64(kv->o, lf->number_of_processors));
    KV(kv, "cpu_speed_mhz", out_u64(kv->o, lf->cpu_speed_mhz));
    KV(kv, "log_file_mode", out_strf(kv->o, "0x%08x", lf->log_file_mode));
    KV(kv, "buffer_size", out_u64(kv->o, lf->buffer_size));
    KV(kv, "buffers_written", out_u64(kv->o, lf->buffers_written));
    KV(kv, "events_lost", out_u64(kv->o, lf->events_lost));
    KV(kv, "buffers_lost", out_u64(kv->o, lf->buffers_lost));
    KV(kv, "clock", out_str(kv->o, clock_name(lf->clock)));
    KV(kv, "perf_freq", out_u64(kv->o, lf->perf_freq));
    KV(kv, "boot_time", out_filetime(kv->o, lf->boot_time));
    KV(kv, "start_time", out_filetime(kv->o, lf->start_time));
    KV(kv, "end_time", out_filetime(kv->o, lf->end_time));
    KV(kv, "time_zone", out_str(kv->o, etl_tz_name(lf->tz_standard_name, buf, sizeof buf)));
    KV(kv, "time_zone_daylight", out_str(kv->o, etl_tz_name(lf->tz_daylight_name, buf, sizeof buf)));
    KV(kv, "time_zone_bias_minutes", out_i64(kv->o, lf->tz_bias));
}

static void pass_fields(struct kv *kv, const struct summary *s)
{
    const struct ntl_etl_stats *st = &s->st;
    bool compressed = (s->lf->log_file_mode & NTL_ETL_MODE_COMPRESSED) || st->buffers_compressed;
    unsigned cpus = 0;
    char key[64];

    KV(kv, "buffers", out_u64(kv->o, st->buffers));
    KV(kv, "compressed", out_bool(kv->o, compressed));
    KV(kv, "compression", compressed ? out_str(kv->o, ntl_compress_format_name(s->compression))
                                     : out_null(kv->o));
    KV(kv, "buffers_compressed", out_u64(kv->o, st->buffers_compressed));
    KV(kv, "bytes_compressed", out_u64(kv->o, st->bytes_compressed));
    KV(kv, "bytes_decompressed", out_u64(kv->o, st->bytes_decompressed));
    KV(kv, "buffers_bad", out_u64(kv->o, st->buffers_bad));
    KV(kv, "buffers_duplicate", out_u64(kv->o, st->buffers_duplicate));
    /* Fields read past (each also warned on stderr): the file is irregular. */
    KV(kv, "irregularities", out_u64(kv->o, st->irregularities));
    KV(kv, "events", out_u64(kv->o, st->events));
    for (int k = 0; k < NTL_ETL_KIND_COUNT; k++) {
        snprintf(key, sizeof key, "events_%s", ntl_etl_kind_name((enum ntl_etl_kind)k));
        KV(kv, key, out_u64(kv->o, st->events_by_kind[k]));
    }
    KV(kv, "buffers_flagged_events_lost", out_u64(kv->o, st->buffers_events_lost));
    KV(kv, "first_event", out_filetime(kv->o, s->first));
    KV(kv, "last_event", out_filetime(kv->o, s->last));
    KV(kv, "duration", out_duration(kv->o, s->first && s->last >= s->first ? s->last - s->first : 0));
    for (int i = 0; i < 64; i++)
        cpus += (st->cpu_mask >> i) & 1;
    KV(kv, "cpus_seen", out_u64(kv->o, cpus));
    KV(kv, "max_cpu", out_u64(kv->o, st->max_cpu));
}

static void write_summary(struct out *o, enum out_format fmt, const struct summary *s)
{
    struct kv kv = {o, fmt == OUT_TABLE ? KV_VERTICAL : KV_COLUMNS};
    if (kv.pass == KV_VERTICAL) {
        out_column(o, "field", NULL, OUT_LEFT);
        out_column(o, "value", NULL, OUT_LEFT);
    }
    for (;;) {
        header_fields(&kv, s);
        pass_fields(&kv, s);
        if (kv.pass != KV_COLUMNS)
            break;
        kv.pass = KV_CELLS;
    }
    if (kv.pass == KV_CELLS)
        out_row_end(o);
}

/* Reads every event, then writes the summary (even after an error: what
 * was read is worth showing). */
static int summarise(struct etl_cli *c, struct out *o, enum out_format fmt)
{
    struct ntl_etl_event ev;
    struct summary s = {.path = c->path};
    int rc;

    while ((rc = etl_cli_next(c, &ev)) > 0)
        ;
    ntl_etl_get_stats(c->t, &s.st);
    s.lf = ntl_etl_logfile(c->t);
    s.compression = ntl_etl_compression_format(c->t);
    s.first = s.st.first_timestamp ? ntl_etl_time_to_filetime(c->t, s.st.first_timestamp) : 0;
    s.last = s.st.last_timestamp ? ntl_etl_time_to_filetime(c->t, s.st.last_timestamp) : 0;
    progress_end(&c->progress);
    write_summary(o, fmt, &s);
    return rc < 0 ? EXIT_FAIL : EXIT_OK;
}

static void buffer_columns(struct out *o)
{
    static const char *const cols[] = {"index", "offset", "size", "saved_offset", "data_size", "cpu",
                                       "timestamp", "sequence", "flags", "type", "compressed",
                                       "events", "status"};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        out_column(o, cols[i], NULL, i < 6 || i == 7 || i == 11 ? OUT_RIGHT : OUT_LEFT);
}

static void buffer_row(struct out *o, struct etl_cli *c, const struct ntl_etl_buffer *b, bool bad)
{
    out_u64(o, b->index);
    out_addr(o, b->offset, 1);
    out_u64(o, b->size);
    out_u64(o, b->saved_offset);
    out_u64(o, b->data_size);
    out_u64(o, b->processor);
    etl_cli_out_time(o, c, b->timestamp);
    out_u64(o, b->sequence);
    out_strf(o, "0x%04x", b->flags);
    out_u64(o, b->type);
    out_bool(o, b->compressed);
    out_u64(o, b->events);
    out_str(o, bad ? "bad" : "ok");
    out_row_end(o);
}

/* One record per WMI buffer, in file order. */
static int list_buffers(struct etl_cli *c, struct out *o)
{
    struct ntl_etl_buffer b;
    struct ntl_error err = {0};
    bool failed = false;
    int rc;

    buffer_columns(o);
    while ((rc = ntl_etl_next_buffer(c->t, &b, &err)) != 0) {
        if (rc < 0) {
            failed = !etl_cli_recover(c, rc, &err);
            if (!b.size) {
                if (failed)
                    break;
                continue;
            }
        }
        buffer_row(o, c, &b, rc < 0);
        if (failed)
            break;
    }
    return failed ? EXIT_FAIL : EXIT_OK;
}

static int parse_args(int argc, char **argv, struct etl_cli *c, int *fmt, bool *buffers)
{
    struct opt opts[] = {
        OPT_FLAG(0, "buffers", buffers,
                 "list every buffer instead: offset, sizes, CPU, time, sequence,\n"
                 "flags, type, compression and event count"),
        OPT_OUTPUT_OPTIONS(fmt),
        OPT_ETL_OPTIONS(c),
        OPT_END(),
    };
    int n = parse_options(&info_command, opts, argc, argv);
    if (n < 0)
        return parse_options_exit(n);
    if (n != 1)
        return opt_usage_error(&info_command, "expected one trace file");
    if (*buffers && c->sorted)
        return opt_usage_error(&info_command, "--buffers lists buffers in file order; drop --sorted");
    return CLI_CONTINUE;
}

int cmd_etl_info(int argc, char **argv)
{
    struct etl_cli c = {.cmd = argv[0]};
    int fmt = OUT_TABLE;
    bool buffers = false;
    struct out *o;
    int rc;

    if ((rc = parse_args(argc, argv, &c, &fmt, &buffers)) != CLI_CONTINUE)
        return rc;
    if ((rc = etl_cli_open(&c, argv[1])))
        return rc;
    if (!(o = out_new(stdout, (enum out_format)fmt))) {
        etl_cli_close(&c);
        return cli_failf(argv[0], "out of memory");
    }
    rc = buffers ? list_buffers(&c, o) : summarise(&c, o, (enum out_format)fmt);
    etl_cli_close(&c);
    return etl_cli_out_close(&c, o, rc);
}
