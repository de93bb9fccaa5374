/* ntlens etl images: every image event (Load, Unload, DCStart, DCEnd), or a
 * module map (`BASE SIZE NAME` lines) for `ntlens ipt modules --modules`. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "etl-common.h"
#include "ntlens/etl_images.h"
#include "output.h"

static void usage(FILE *f)
{
    fputs("usage: ntlens etl images [OPTIONS] FILE.etl\n"
          "\n"
          "List the image events of an ETW trace (kernel Image and Process groups:\n"
          "Load, Unload, DCStart, DCEnd): base, size, process id, checksum,\n"
          "TimeDateStamp, default base and file name.\n"
          "\n"
          "Options:\n"
          "  -f, --format FMT     table (default), csv or json\n"
          "  -k, --kernel         only kernel-mode modules\n"
          "      --pid PID        only images of this process id\n"
          "  -m, --map            print a module map instead: one 'BASE SIZE NAME' line (hex,\n"
          "                       0x prefix) per module loaded, each base and name once;\n"
          "                       'ntlens ipt modules --modules FILE' reads it\n" ETL_COMMON_HELP
          "  -h, --help           show this help\n",
          f);
}

struct seen {
    uint64_t base;
    char *name;
};

static bool seen_before(struct seen **set, size_t *n, size_t *cap, uint64_t base, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if ((*set)[i].base == base && !strcmp((*set)[i].name, name))
            return true;
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        struct seen *s = realloc(*set, *cap * sizeof *s);
        if (!s) {
            fputs("ntlens: out of memory\n", stderr);
            exit(EXIT_FAIL);
        }
        *set = s;
    }
    (*set)[*n].base = base;
    (*set)[*n].name = strdup(name);
    (*n)++;
    return false;
}

int cmd_etl_images(int argc, char **argv)
{
    enum { OPT_PID = 1 };
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'},
        {"kernel", no_argument, NULL, 'k'},
        {"pid", required_argument, NULL, OPT_PID},
        {"map", no_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        ETL_COMMON_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    struct etl_cli c = {.cmd = argv[0]};
    enum out_format fmt = OUT_TABLE;
    bool kernel_only = false, map = false, pid_set = false;
    uint32_t pid = 0;
    uint64_t v;
    int opt, rc = 0;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "f:kmh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'f':
            if (!out_format_parse(optarg, &fmt))
                return cli_usage_error(argv[0], "unknown format '%s' (table, csv, json)", optarg);
            break;
        case 'k':
            kernel_only = true;
            break;
        case OPT_PID:
            if (!cli_parse_u64(optarg, &v) || v > UINT32_MAX)
                return cli_usage_error(argv[0], "bad process id '%s'", optarg);
            pid_set = true;
            pid = (uint32_t)v;
            break;
        case 'm':
            map = true;
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

    struct out_table *t = out_table_new();
    out_table_column(t, "kind", NULL, OUT_LEFT);
    out_table_column(t, "time", NULL, OUT_LEFT);
    out_table_column(t, "pid", NULL, OUT_RIGHT);
    out_table_column(t, "base", NULL, OUT_RIGHT);
    out_table_column(t, "size", NULL, OUT_RIGHT);
    out_table_column(t, "checksum", NULL, OUT_RIGHT);
    out_table_column(t, "time_date_stamp", "timestamp", OUT_RIGHT);
    out_table_column(t, "default_base", NULL, OUT_RIGHT);
    out_table_column(t, "kernel", NULL, OUT_LEFT);
    out_table_column(t, "name", NULL, OUT_LEFT);

    struct seen *set = NULL;
    size_t nset = 0, capset = 0;
    struct ntl_etl_event ev;
    struct ntl_etl_image img;
    struct ntl_error err = {0};
    bool failed = false;
    char tbuf[64], hbuf[32];
    while ((rc = etl_cli_next(&c, &ev)) > 0) {
        int d = ntl_etl_image_decode(c.t, &ev, &img, &err);
        if (d < 0) {
            if (!c.keep_going) {
                etl_cli_error(&c, &err, " (--keep-going skips bad events)");
                failed = true;
                break;
            }
            etl_cli_skip(&c, &err, "skipped");
            continue;
        }
        if (d == 0 || (kernel_only && !img.kernel) || (pid_set && img.pid != pid))
            continue;
        if (map) {
            /* Empty or wrapping ranges say nothing about addresses; leave them out. */
            if (img.kind != NTL_ETL_IMAGE_UNLOAD && img.size && img.base + img.size - 1 >= img.base &&
                !seen_before(&set, &nset, &capset, img.base, img.name))
                printf("0x%016" PRIx64 " 0x%" PRIx64 " %s\n", img.base, img.size, img.name);
            continue;
        }
        out_table_str(t, ntl_etl_image_kind_name(img.kind));
        out_table_str(t, img.filetime ? ntl_filetime_format(img.filetime, tbuf, sizeof tbuf) : "");
        out_table_u64(t, img.pid);
        out_table_strf(t, "0x%016" PRIx64, img.base);
        /* Sizes, checksums and stamps are exact as JSON numbers; bases
         * (64-bit) stay hex strings. */
        snprintf(hbuf, sizeof hbuf, "0x%" PRIx64, img.size);
        out_table_num_text(t, (double)img.size, hbuf);
        snprintf(hbuf, sizeof hbuf, "0x%08" PRIx32, img.checksum);
        out_table_num_text(t, img.checksum, hbuf);
        snprintf(hbuf, sizeof hbuf, "0x%08" PRIx32, img.time_date_stamp);
        out_table_num_text(t, img.time_date_stamp, hbuf);
        out_table_strf(t, "0x%016" PRIx64, img.default_base);
        out_table_bool(t, img.kernel);
        out_table_str(t, img.name);
        out_table_row_end(t);
    }
    if (rc < 0)
        failed = true;
    etl_cli_close(&c);
    int wr = map ? 0 : out_table_render(t, stdout, fmt);
    out_table_free(t);
    for (size_t i = 0; i < nset; i++)
        free(set[i].name);
    free(set);
    if (wr < 0 || fflush(stdout) != 0)
        return cli_failf(argv[0], "write error");
    return failed ? EXIT_FAIL : EXIT_OK;
}
