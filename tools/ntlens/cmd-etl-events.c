/* ntlens etl events: one line (or JSON object) per event, streamed. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "etl-common.h"
#include "output.h"

static void usage(FILE *f)
{
    fputs("usage: ntlens etl events [OPTIONS] FILE.etl\n"
          "\n"
          "List the events of an ETW trace file, one per line: time (UTC), CPU, process\n"
          "and thread ids, header kind, provider GUID or kernel group, opcode, event id or\n"
          "hook id, payload size. Streams in file order unless --sorted.\n"
          "\n"
          "Options:\n"
          "  -f, --format FMT     table (default), csv or json (one object per line)\n"
          "  -p, --provider GUID  only events of this provider or class GUID\n"
          "  -g, --group GROUP    only kernel events of this group (name like Process,\n"
          "                       Image, Thread, PerfInfo, or a number)\n"
          "      --pid PID        only events of this process id\n"
          "  -k, --kind KIND      only this header kind: system, compact, perfinfo,\n"
          "                       classic, instance, event, message\n"
          "  -n, --limit N        stop after N events\n"
          "  -x, --hex            dump each payload in hex\n" ETL_COMMON_HELP
          "  -h, --help           show this help\n",
          f);
}

struct filter {
    bool provider_set;
    struct ntl_guid provider;
    int group;         /* -1: any */
    bool pid_set;
    uint32_t pid;
    int kind;          /* -1: any */
};

static bool keep(const struct filter *flt, const struct ntl_etl_event *ev)
{
    if (flt->provider_set && (!ev->has_guid || !ntl_guid_equal(&ev->guid, &flt->provider)))
        return false;
    if (flt->group >= 0 && (ev->kind > NTL_ETL_KIND_PERFINFO || ev->group != flt->group))
        return false;
    if (flt->pid_set && ev->pid != flt->pid)
        return false;
    if (flt->kind >= 0 && (int)ev->kind != flt->kind)
        return false;
    return true;
}

static void hexdump(const uint8_t *p, size_t n)
{
    for (size_t off = 0; off < n; off += 16) {
        printf("    %04zx ", off);
        for (size_t i = 0; i < 16; i++) {
            if (off + i < n)
                printf(" %02x", p[off + i]);
            else
                fputs("   ", stdout);
        }
        fputs("  |", stdout);
        for (size_t i = 0; i < 16 && off + i < n; i++) {
            uint8_t b = p[off + i];
            putchar(b >= 0x20 && b < 0x7f ? b : '.');
        }
        fputs("|\n", stdout);
    }
}

/* What the provider column shows: the kernel group or the GUID. */
static const char *provider_text(const struct ntl_etl_event *ev, char *buf, size_t size)
{
    if (ev->kind <= NTL_ETL_KIND_PERFINFO)
        return etl_cli_group(ev->group, buf, size);
    if (ev->has_guid)
        return ntl_guid_format(&ev->guid, buf, size);
    return "";
}

static const char *opcode_text(const struct ntl_etl_event *ev, char *buf, size_t size)
{
    if (ev->kind <= NTL_ETL_KIND_PERFINFO)
        return etl_cli_opcode(ev->group, ev->opcode, buf, size);
    snprintf(buf, size, "%u", ev->opcode);
    return buf;
}

static const char *id_text(const struct ntl_etl_event *ev, char *buf, size_t size)
{
    if (ev->kind <= NTL_ETL_KIND_PERFINFO)
        snprintf(buf, size, "0x%04x", ev->hook_id);
    else if (ev->kind == NTL_ETL_KIND_EVENT)
        snprintf(buf, size, "%u", ev->event_id);
    else if (ev->kind == NTL_ETL_KIND_MESSAGE)
        snprintf(buf, size, "%u", ev->message_number);
    else
        buf[0] = '\0';
    return buf;
}

static void id_or_empty(char *buf, size_t size, uint32_t v)
{
    if (v == UINT32_MAX)
        buf[0] = '\0';
    else
        snprintf(buf, size, "%" PRIu32, v);
}

static void print_table(struct etl_cli *c, const struct ntl_etl_event *ev, bool hex)
{
    char tbuf[64], pbuf[64], obuf[32], ibuf[16], pid[16], tid[16];
    id_or_empty(pid, sizeof pid, ev->pid);
    id_or_empty(tid, sizeof tid, ev->tid);
    printf("%-28s %3u %6s %6s %-8s %-36s %-16s %6s %6zu\n", etl_cli_time(c, ev->timestamp, tbuf, sizeof tbuf),
           ev->cpu, pid, tid, ntl_etl_kind_name(ev->kind), provider_text(ev, pbuf, sizeof pbuf),
           opcode_text(ev, obuf, sizeof obuf), id_text(ev, ibuf, sizeof ibuf), ev->payload_size);
    if (hex)
        hexdump(ev->payload, ev->payload_size);
}

static void print_csv(struct etl_cli *c, const struct ntl_etl_event *ev, bool hex)
{
    char tbuf[64], pbuf[64], obuf[32], ibuf[16], pid[16], tid[16];
    id_or_empty(pid, sizeof pid, ev->pid);
    id_or_empty(tid, sizeof tid, ev->tid);
    printf("%s,%" PRIu64 ",%u,%s,%s,%s,", etl_cli_time(c, ev->timestamp, tbuf, sizeof tbuf),
           ev->timestamp, ev->cpu, pid, tid, ntl_etl_kind_name(ev->kind));
    out_csv_field(stdout, provider_text(ev, pbuf, sizeof pbuf), false);
    putchar(',');
    out_csv_field(stdout, opcode_text(ev, obuf, sizeof obuf), false);
    printf(",%s,%u,%zu,%" PRIu64, id_text(ev, ibuf, sizeof ibuf), ev->version, ev->payload_size,
           ev->offset);
    if (hex) {
        char *h = etl_cli_hex(ev->payload, ev->payload_size);
        printf(",%s", h);
        free(h);
    }
    putchar('\n');
}

static void print_json(struct etl_cli *c, const struct ntl_etl_event *ev, bool hex)
{
    char tbuf[64], gbuf[64], obuf[32];
    printf("{\"time\":");
    out_json_string(stdout, etl_cli_time(c, ev->timestamp, tbuf, sizeof tbuf));
    printf(",\"timestamp\":%" PRIu64 ",\"cpu\":%u", ev->timestamp, ev->cpu);
    if (ev->pid != UINT32_MAX)
        printf(",\"pid\":%" PRIu32, ev->pid);
    else
        printf(",\"pid\":null");
    if (ev->tid != UINT32_MAX)
        printf(",\"tid\":%" PRIu32, ev->tid);
    else
        printf(",\"tid\":null");
    printf(",\"kind\":\"%s\"", ntl_etl_kind_name(ev->kind));
    if (ev->kind <= NTL_ETL_KIND_PERFINFO) {
        printf(",\"hook_id\":%u,\"group\":", ev->hook_id);
        out_json_string(stdout, etl_cli_group(ev->group, gbuf, sizeof gbuf));
        printf(",\"opcode\":%u,\"opcode_name\":", ev->opcode);
        out_json_string(stdout, etl_cli_opcode(ev->group, ev->opcode, obuf, sizeof obuf));
        if (ev->has_pebs)
            printf(",\"pebs_index\":%" PRIu64, ev->pebs_index);
        if (ev->pmc_count)
            printf(",\"pmc_count\":%u", ev->pmc_count);
    } else {
        printf(",\"opcode\":%u", ev->opcode);
    }
    if (ev->has_guid)
        printf(",\"provider\":\"%s\"", ntl_guid_format(&ev->guid, gbuf, sizeof gbuf));
    if (ev->kind == NTL_ETL_KIND_EVENT) {
        printf(",\"event_id\":%u,\"level\":%u,\"task\":%u,\"keyword\":%" PRIu64
               ",\"extended_types\":[", ev->event_id, ev->level, ev->task, ev->keyword);
        struct ntl_etl_ext_item item;
        size_t pos = 0;
        /* A malformed item ends the list; the reader checked the items already. */
        for (int i = 0; ntl_etl_ext_next(ev, &pos, &item, NULL) > 0; i++)
            printf("%s%u", i ? "," : "", item.type);
        putchar(']');
    }
    if (ev->kind == NTL_ETL_KIND_MESSAGE)
        printf(",\"message_number\":%u", ev->message_number);
    printf(",\"version\":%u,\"payload_size\":%zu,\"offset\":%" PRIu64, ev->version, ev->payload_size,
           ev->offset);
    if (hex) {
        char *h = etl_cli_hex(ev->payload, ev->payload_size);
        printf(",\"payload\":\"%s\"", h);
        free(h);
    }
    fputs("}\n", stdout);
}

int cmd_etl_events(int argc, char **argv)
{
    enum { OPT_PID = 1 };
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'},
        {"provider", required_argument, NULL, 'p'},
        {"group", required_argument, NULL, 'g'},
        {"pid", required_argument, NULL, OPT_PID},
        {"kind", required_argument, NULL, 'k'},
        {"limit", required_argument, NULL, 'n'},
        {"hex", no_argument, NULL, 'x'},
        {"help", no_argument, NULL, 'h'},
        ETL_COMMON_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    struct etl_cli c = {.cmd = argv[0]};
    struct filter flt = {.group = -1, .kind = -1};
    enum out_format fmt = OUT_TABLE;
    bool hex = false;
    uint64_t limit = UINT64_MAX, v;
    int opt, rc = 0;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "f:p:g:k:n:xh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'f':
            if (!out_format_parse(optarg, &fmt))
                return cli_usage_error(argv[0], "unknown format '%s' (table, csv, json)", optarg);
            break;
        case 'p':
            if (!ntl_guid_parse(optarg, &flt.provider))
                return cli_usage_error(argv[0], "bad GUID '%s'", optarg);
            flt.provider_set = true;
            break;
        case 'g':
            if ((flt.group = ntl_etl_group_parse(optarg)) < 0)
                return cli_usage_error(argv[0], "unknown kernel group '%s'", optarg);
            break;
        case OPT_PID:
            if (!cli_parse_u64(optarg, &v) || v > UINT32_MAX)
                return cli_usage_error(argv[0], "bad process id '%s'", optarg);
            flt.pid_set = true;
            flt.pid = (uint32_t)v;
            break;
        case 'k':
            flt.kind = -1;
            for (int k = 0; k < NTL_ETL_KIND_COUNT; k++)
                if (!strcmp(optarg, ntl_etl_kind_name((enum ntl_etl_kind)k)))
                    flt.kind = k;
            if (flt.kind < 0)
                return cli_usage_error(argv[0], "unknown header kind '%s'", optarg);
            break;
        case 'n':
            if (!cli_parse_u64(optarg, &limit))
                return cli_usage_error(argv[0], "bad limit '%s'", optarg);
            break;
        case 'x':
            hex = true;
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
    if ((rc = etl_cli_open(&c, argv[optind])))
        return rc;

    if (fmt == OUT_TABLE)
        printf("%-28s %3s %6s %6s %-8s %-36s %-16s %6s %6s\n", "TIME", "CPU", "PID", "TID", "KIND",
               "PROVIDER/GROUP", "OPCODE", "ID", "SIZE");
    else if (fmt == OUT_CSV)
        printf("time,timestamp,cpu,pid,tid,kind,provider,opcode,id,version,payload_size,offset%s\n",
               hex ? ",payload" : "");

    struct ntl_etl_event ev;
    uint64_t shown = 0;
    while (shown < limit && (rc = etl_cli_next(&c, &ev)) > 0) {
        if (!keep(&flt, &ev))
            continue;
        shown++;
        switch (fmt) {
        case OUT_TABLE: print_table(&c, &ev, hex); break;
        case OUT_CSV: print_csv(&c, &ev, hex); break;
        default: print_json(&c, &ev, hex); break;
        }
        if (ferror(stdout))
            break;
    }
    etl_cli_close(&c);
    if (fflush(stdout) != 0 || ferror(stdout))
        return cli_failf(argv[0], "write error");
    return rc < 0 ? EXIT_FAIL : EXIT_OK;
}
