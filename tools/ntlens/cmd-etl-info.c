/* ntlens etl info: the logfile header and what a full pass over the buffers
 * finds (buffers, events by header kind, losses, time span, CPUs). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "etl-common.h"
#include "ntlens/compress.h"
#include "output.h"

static void usage(FILE *f)
{
    fputs("usage: ntlens etl info [OPTIONS] FILE.etl\n"
          "\n"
          "Summarise an ETW trace file: the logfile header (logger, OS build, pointer\n"
          "size, clock, time zone), buffers and their compression, events by header\n"
          "kind, events and buffers lost, the time span and the CPUs seen.\n"
          "\n"
          "Options:\n"
          "  -f, --format FMT     table (default), csv or json\n"
          "  -b, --buffers        list every buffer instead: offset, sizes, CPU, timestamp,\n"
          "                       sequence, flags, type, compression and event count\n" ETL_COMMON_HELP
          "  -h, --help           show this help\n",
          f);
}

struct kv {
    struct out_table *table; /* field/value rows for table and CSV */
    struct out_table *json;  /* one row, a column per field, for JSON */
};

static void kv_str(struct kv *kv, const char *key, const char *v)
{
    out_table_str(kv->table, key);
    out_table_str(kv->table, v);
    out_table_row_end(kv->table);
    out_table_column(kv->json, key, NULL, OUT_LEFT);
    out_table_str(kv->json, v);
}

static void kv_u64(struct kv *kv, const char *key, uint64_t v)
{
    out_table_str(kv->table, key);
    out_table_strf(kv->table, "%" PRIu64, v);
    out_table_row_end(kv->table);
    out_table_column(kv->json, key, NULL, OUT_LEFT);
    out_table_u64(kv->json, v);
}

static void kv_num(struct kv *kv, const char *key, double v, int decimals)
{
    out_table_str(kv->table, key);
    out_table_strf(kv->table, "%.*f", decimals, v);
    out_table_row_end(kv->table);
    out_table_column(kv->json, key, NULL, OUT_LEFT);
    out_table_num(kv->json, v, decimals);
}

static void kv_bool(struct kv *kv, const char *key, bool v)
{
    out_table_str(kv->table, key);
    out_table_str(kv->table, v ? "true" : "false");
    out_table_row_end(kv->table);
    out_table_column(kv->json, key, NULL, OUT_LEFT);
    out_table_bool(kv->json, v);
}

static void kv_time(struct kv *kv, const char *key, uint64_t filetime)
{
    char buf[64];
    kv_str(kv, key, filetime ? ntl_filetime_format(filetime, buf, sizeof buf) : "");
}

static const char *clock_name(enum ntl_etl_clock c)
{
    switch (c) {
    case NTL_ETL_CLOCK_QPC: return "qpc";
    case NTL_ETL_CLOCK_SYSTEM: return "system-time";
    case NTL_ETL_CLOCK_CPU_CYCLE: return "cpu-cycles";
    }
    return "?";
}

/* One row per WMI buffer. */
static int list_buffers(struct etl_cli *c, enum out_format fmt)
{
    struct out_table *t = out_table_new();
    struct ntl_etl_buffer b;
    struct ntl_error err = {0};
    bool failed = false;
    int rc;
    static const char *const cols[] = {"index", "offset", "size", "saved_offset", "data_size", "cpu",
                                       "timestamp", "sequence", "flags", "type", "compressed",
                                       "events", "status"};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        out_table_column(t, cols[i], NULL, i < 8 || i == 11 ? OUT_RIGHT : OUT_LEFT);
    for (;;) {
        rc = ntl_etl_next_buffer(c->t, &b, &err);
        if (rc == 0)
            break;
        if (rc < 0) {
            failed = !etl_cli_recover(c, rc, &err);
            if (!b.size) {
                if (failed)
                    break;
                continue;
            }
        }
        out_table_u64(t, b.index);
        out_table_strf(t, "0x%" PRIx64, b.offset);
        out_table_u64(t, b.size);
        out_table_u64(t, b.saved_offset);
        out_table_u64(t, b.data_size);
        out_table_u64(t, b.processor);
        out_table_u64(t, b.timestamp);
        out_table_u64(t, b.sequence);
        out_table_strf(t, "0x%04x", b.flags);
        out_table_u64(t, b.type);
        out_table_bool(t, b.compressed);
        out_table_u64(t, b.events);
        out_table_str(t, rc < 0 ? "bad" : "ok");
        out_table_row_end(t);
        if (failed)
            break;
    }
    int wr = out_table_render(t, stdout, fmt);
    out_table_free(t);
    if (wr < 0)
        return cli_failf(c->cmd, "write error");
    return failed ? EXIT_FAIL : EXIT_OK;
}

int cmd_etl_info(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'},
        {"buffers", no_argument, NULL, 'b'},
        {"help", no_argument, NULL, 'h'},
        ETL_COMMON_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    struct etl_cli c = {.cmd = argv[0]};
    enum out_format fmt = OUT_TABLE;
    bool buffers = false;
    int opt, rc = 0;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "f:bh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'b':
            buffers = true;
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
    const char *path = argv[optind];
    if (buffers && c.sorted)
        return cli_usage_error(argv[0], "--buffers lists buffers in file order; drop --sorted");
    if ((rc = etl_cli_open(&c, path)))
        return rc;
    if (buffers) {
        rc = list_buffers(&c, fmt);
        etl_cli_close(&c);
        return rc;
    }

    struct ntl_etl_event ev;
    bool failed = false;
    while ((rc = etl_cli_next(&c, &ev)) > 0)
        ;
    if (rc < 0)
        failed = true;
    struct ntl_etl_stats st;
    ntl_etl_get_stats(c.t, &st);
    const struct ntl_etl_logfile *lf = ntl_etl_logfile(c.t);

    struct kv kv = {out_table_new(), out_table_new()};
    out_table_column(kv.table, "field", NULL, OUT_LEFT);
    out_table_column(kv.table, "value", NULL, OUT_LEFT);
    char buf[128];

    kv_str(&kv, "file", path);
    kv_str(&kv, "logger_name", lf->logger_name);
    kv_str(&kv, "log_file_name", lf->log_file_name);
    snprintf(buf, sizeof buf, "%u.%u build %u", lf->version[0], lf->version[1], lf->provider_version);
    kv_str(&kv, "os_version", buf);
    kv_u64(&kv, "pointer_size", lf->pointer_size);
    kv_u64(&kv, "number_of_processors", lf->number_of_processors);
    kv_u64(&kv, "cpu_speed_mhz", lf->cpu_speed_mhz);
    snprintf(buf, sizeof buf, "0x%08x", lf->log_file_mode);
    kv_str(&kv, "log_file_mode", buf);
    kv_u64(&kv, "buffer_size", lf->buffer_size);
    kv_u64(&kv, "buffers_written", lf->buffers_written);
    kv_u64(&kv, "buffers", st.buffers);
    bool compressed = (lf->log_file_mode & NTL_ETL_MODE_COMPRESSED) || st.buffers_compressed;
    kv_bool(&kv, "compressed", compressed);
    kv_str(&kv, "compression", compressed ? ntl_compress_format_name(ntl_etl_compression_format(c.t))
                                          : "");
    kv_u64(&kv, "buffers_compressed", st.buffers_compressed);
    kv_u64(&kv, "bytes_compressed", st.bytes_compressed);
    kv_u64(&kv, "bytes_decompressed", st.bytes_decompressed);
    kv_u64(&kv, "buffers_bad", st.buffers_bad);
    kv_u64(&kv, "events", st.events);
    for (int k = 0; k < NTL_ETL_KIND_COUNT; k++) {
        snprintf(buf, sizeof buf, "events_%s", ntl_etl_kind_name((enum ntl_etl_kind)k));
        kv_u64(&kv, buf, st.events_by_kind[k]);
    }
    kv_u64(&kv, "events_lost", lf->events_lost);
    kv_u64(&kv, "buffers_lost", lf->buffers_lost);
    kv_u64(&kv, "buffers_flagged_events_lost", st.buffers_events_lost);
    kv_str(&kv, "clock", clock_name(lf->clock));
    kv_u64(&kv, "perf_freq", lf->perf_freq);
    kv_time(&kv, "boot_time", lf->boot_time);
    kv_time(&kv, "start_time", lf->start_time);
    kv_time(&kv, "end_time", lf->end_time);
    uint64_t first = st.first_timestamp ? ntl_etl_time_to_filetime(c.t, st.first_timestamp) : 0;
    uint64_t last = st.last_timestamp ? ntl_etl_time_to_filetime(c.t, st.last_timestamp) : 0;
    kv_time(&kv, "first_event", first);
    kv_time(&kv, "last_event", last);
    kv_num(&kv, "duration_s", first && last >= first ? (double)(last - first) / 1e7 : 0.0, 6);
    unsigned cpus = 0;
    for (int i = 0; i < 64; i++)
        cpus += (st.cpu_mask >> i) & 1;
    kv_u64(&kv, "cpus_seen", cpus);
    kv_u64(&kv, "max_cpu", st.max_cpu);
    kv_str(&kv, "time_zone", lf->tz_standard_name);
    out_table_str(kv.table, "time_zone_bias_minutes");
    out_table_strf(kv.table, "%d", lf->tz_bias);
    out_table_row_end(kv.table);
    out_table_column(kv.json, "time_zone_bias_minutes", NULL, OUT_LEFT);
    out_table_i64(kv.json, lf->tz_bias);
    out_table_row_end(kv.json);

    int wr = fmt == OUT_JSON ? out_table_render_jsonl(kv.json, stdout)
                             : out_table_render(kv.table, stdout, fmt);
    out_table_free(kv.table);
    out_table_free(kv.json);
    etl_cli_close(&c);
    if (wr < 0)
        return cli_failf(argv[0], "write error");
    return failed ? EXIT_FAIL : EXIT_OK;
}
