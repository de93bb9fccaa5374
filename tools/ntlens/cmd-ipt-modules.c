/* ntlens ipt modules: the quick analysis of seed 002. Every TIP, TIP.PGE,
 * TIP.PGD and FUP target is reconstructed (no instruction decoding) and
 * attributed to the modules of a map, so one knows which modules a full
 * decode will need. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "output.h"
#include "progress.h"
#include "ntlens/ipt_modules.h"
#include "ntlens/ipt_trace.h"

struct module_hits {
    uint64_t targets;
    uint64_t addresses;
};



static void usage(const char *cmd)
{
    printf("Usage: ntlens %s [OPTIONS] TRACE...\n"
           "Count the branch targets of Intel PT traces (TIP, TIP.PGE, TIP.PGD and FUP\n"
           "packets, IP compression resolved) per module, without decoding instructions.\n\n"
           "  -m, --modules MAP      module map: lines 'BASE SIZE NAME' (hex, 0x optional,\n"
           "                         '#' comments), as 'ntlens etl images --map' prints\n"
           "  -a, --addresses        list every distinct target with its count\n"
           "      --all              list modules without targets too\n"
           "      --wrapped POS      each TRACE is a full circular buffer whose next write\n"
           "                         position is POS (see ntlens ipt dump)\n"
           "      --format FMT       table (default), csv or json\n"
           "  -h, --help             show this help\n\n"
           "Targets in no module of MAP are listed separately.\n",
           cmd);
}

static char *read_text(const char *path, size_t *len, struct ntl_error *err)
{
    struct ntl_buf b;
    if (ntl_file_read(path, (size_t)64 << 20, &b, err) < 0) {
        ntl_buf_free(&b);
        return NULL;
    }
    if (ntl_buf_append(&b, "", 1) < 0) {
        ntl_buf_free(&b);
        ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
        return NULL;
    }
    *len = b.len - 1;
    return (char *)b.data;
}

/* qsort has no context argument in C11: what the comparison needs. */
static const struct module_hits *sort_hits;
static const struct ntl_ipt_module_map *sort_map;

/* Modules by targets, most first, then by base. */
static int cmp_index(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (sort_hits[i].targets != sort_hits[j].targets)
        return sort_hits[i].targets > sort_hits[j].targets ? -1 : 1;
    if (sort_map->mods[i].base != sort_map->mods[j].base)
        return sort_map->mods[i].base < sort_map->mods[j].base ? -1 : 1;
    return 0;
}

static void hex_cell(struct out_table *t, uint64_t v)
{
    char text[24];
    snprintf(text, sizeof text, "0x%" PRIx64, v);
    out_table_num_text(t, (double)v, text);
}

static void addr_cell(struct out_table *t, uint64_t v)
{
    /* JSON numbers lose precision above 2^53: addresses are strings there. */
    out_table_strf(t, "0x%016" PRIx64, v);
}

static int render(FILE *f, const struct out_table *t, enum out_format fmt)
{
    return out_table_render(t, f, fmt);
}

enum { O_ALL = 256, O_WRAPPED, O_FORMAT };

int cmd_ipt_modules(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"modules", required_argument, NULL, 'm'},
        {"addresses", no_argument, NULL, 'a'},
        {"all", no_argument, NULL, O_ALL},
        {"wrapped", required_argument, NULL, O_WRAPPED},
        {"format", required_argument, NULL, O_FORMAT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = argv[0], *map_path = NULL;
    bool addresses = false, all = false, wrapped = false;
    uint64_t wrap_pos = 0;
    enum out_format fmt = OUT_TABLE;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "m:ah", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(cmd);
            return EXIT_OK;
        case 'm':
            map_path = optarg;
            break;
        case 'a':
            addresses = true;
            break;
        case O_ALL:
            all = true;
            break;
        case O_WRAPPED:
            if (!cli_parse_u64(optarg, &wrap_pos))
                return cli_usage_error(cmd, "--wrapped wants a byte position, not '%s'", optarg);
            wrapped = true;
            break;
        case O_FORMAT:
            if (!out_format_parse(optarg, &fmt))
                return cli_usage_error(cmd, "--format wants table, csv or json, not '%s'", optarg);
            break;
        default:
            if (optopt)
                return cli_usage_error(cmd, "option -%c needs an argument or is unknown", optopt);
            return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error(cmd, "missing TRACE");
    if (!map_path && !addresses)
        return cli_usage_error(cmd, "give --modules MAP, --addresses, or both");

    struct ntl_error err;
    ntl_error_clear(&err);
    struct ntl_ipt_module_map map = {NULL, 0};
    if (map_path) {
        size_t len;
        char *text = read_text(map_path, &len, &err);
        if (!text)
            return cli_fail(cmd, &err, map_path);
        int rc = ntl_ipt_module_map_parse(text, len, &map, &err);
        free(text);
        if (rc < 0)
            return cli_fail(cmd, &err, map_path);
    }

    struct ntl_ipt_targets tg;
    ntl_ipt_targets_init(&tg, 0);
    struct progress prog;
    progress_start(&prog, "scanning", (uint64_t)(argc - optind));
    int status = EXIT_OK;
    for (int i = optind; i < argc; i++) {
        struct ntl_ipt_trace in;
        int rc = ntl_ipt_trace_load(&in, argv[i], wrapped, wrap_pos, &err);
        if (rc >= 0)
            rc = ntl_ipt_targets_scan(&tg, in.data, in.size, &err);
        ntl_ipt_trace_free(&in);
        progress_update(&prog, (uint64_t)(i - optind + 1));
        if (rc == NTL_ERR_NOT_FOUND) {
            cli_warn(cmd, "%s: no PSB, nothing to scan", argv[i]);
            continue;
        }
        if (rc < 0) {
            progress_end(&prog);
            status = cli_fail(cmd, &err, argv[i]);
            goto out;
        }
    }
    progress_end(&prog);
    if (tg.errors)
        cli_warn(cmd, "%" PRIu64 " decode error(s), the first at offset 0x%" PRIx64
                 "; resumed at the next PSB each time", tg.errors, tg.first_error);

    struct ntl_ipt_target *targets;
    size_t n;
    if (ntl_ipt_targets_sorted(&tg, &targets, &n, &err) < 0) {
        status = cli_fail(cmd, &err, NULL);
        goto out;
    }
    struct module_hits *hits = calloc(map.n ? map.n : 1, sizeof *hits);
    long *where = malloc((n ? n : 1) * sizeof *where);
    if (!hits || !where) {
        free(hits);
        free(where);
        free(targets);
        status = cli_failf(cmd, "out of memory");
        goto out;
    }
    uint64_t outside = 0, outside_addrs = 0;
    for (size_t i = 0; i < n; i++) {
        where[i] = ntl_ipt_module_map_find(&map, targets[i].ip);
        if (where[i] >= 0) {
            hits[where[i]].targets += targets[i].count;
            hits[where[i]].addresses++;
        } else {
            outside += targets[i].count;
            outside_addrs++;
        }
    }

    struct out_table *mt = out_table_new(), *ut = out_table_new(), *at = out_table_new();
    out_table_column(mt, "module", "MODULE", OUT_LEFT);
    out_table_column(mt, "base", "BASE", OUT_LEFT);
    out_table_column(mt, "size", "SIZE", OUT_RIGHT);
    out_table_column(mt, "targets", "TARGETS", OUT_RIGHT);
    out_table_column(mt, "addresses", "ADDRESSES", OUT_RIGHT);
    if (map.n) {
        size_t *order = malloc(map.n * sizeof *order);
        if (order) {
            for (size_t i = 0; i < map.n; i++)
                order[i] = i;
            sort_hits = hits;
            sort_map = &map;
            qsort(order, map.n, sizeof *order, cmp_index);
            for (size_t k = 0; k < map.n; k++) {
                size_t i = order[k];
                if (!hits[i].targets && !all)
                    continue;
                out_table_str(mt, map.mods[i].name);
                addr_cell(mt, map.mods[i].base);
                hex_cell(mt, map.mods[i].size);
                out_table_u64(mt, hits[i].targets);
                out_table_u64(mt, hits[i].addresses);
                out_table_row_end(mt);
            }
            free(order);
        }
    }
    if (map_path) {
        out_table_str(mt, "(no module)");
        out_table_null(mt);
        out_table_null(mt);
        out_table_u64(mt, outside);
        out_table_u64(mt, outside_addrs);
        out_table_row_end(mt);
    }

    out_table_column(ut, "address", "ADDRESS IN NO MODULE", OUT_LEFT);
    out_table_column(ut, "count", "COUNT", OUT_RIGHT);
    out_table_column(at, "address", "ADDRESS", OUT_LEFT);
    out_table_column(at, "count", "COUNT", OUT_RIGHT);
    out_table_column(at, "module", "MODULE", OUT_LEFT);
    out_table_column(at, "offset", "OFFSET", OUT_RIGHT);
    for (size_t i = 0; i < n; i++) {
        if (where[i] < 0 && map_path) {
            addr_cell(ut, targets[i].ip);
            out_table_u64(ut, targets[i].count);
            out_table_row_end(ut);
        }
        if (addresses) {
            addr_cell(at, targets[i].ip);
            out_table_u64(at, targets[i].count);
            if (where[i] >= 0) {
                out_table_str(at, map.mods[where[i]].name);
                hex_cell(at, targets[i].ip - map.mods[where[i]].base);
            } else {
                out_table_null(at);
                out_table_null(at);
            }
            out_table_row_end(at);
        }
    }

    int wr = 0;
    if (fmt == OUT_JSON) {
        printf("{\"targets\":%" PRIu64 ",\"tip\":%" PRIu64 ",\"tip_pge\":%" PRIu64
               ",\"tip_pgd\":%" PRIu64 ",\"fup\":%" PRIu64 ",\"suppressed\":%" PRIu64
               ",\"psb\":%" PRIu64 ",\"decode_errors\":%" PRIu64 ",\"distinct\":%zu"
               ",\"bytes\":%" PRIu64,
               tg.total, tg.by_type[0], tg.by_type[1], tg.by_type[2], tg.by_type[3],
               tg.suppressed, tg.psbs, tg.errors, n, tg.bytes);
        if (map_path) {
            fputs(",\"modules\":", stdout);
            wr |= render(stdout, mt, OUT_JSON);
            fputs(",\"unmatched\":", stdout);
            wr |= render(stdout, ut, OUT_JSON);
        }
        if (addresses) {
            fputs(",\"addresses\":", stdout);
            wr |= render(stdout, at, OUT_JSON);
        }
        fputs("}\n", stdout);
    } else if (fmt == OUT_CSV) {
        /* One table per CSV: the addresses when asked for, else the modules. */
        wr |= render(stdout, addresses ? at : mt, OUT_CSV);
    } else {
        printf("%" PRIu64 " targets (TIP %" PRIu64 ", TIP.PGE %" PRIu64 ", TIP.PGD %" PRIu64
               ", FUP %" PRIu64 "), %zu distinct; %" PRIu64 " suppressed; %" PRIu64
               " PSB; %" PRIu64 " decode errors\n\n",
               tg.total, tg.by_type[0], tg.by_type[1], tg.by_type[2], tg.by_type[3], n,
               tg.suppressed, tg.psbs, tg.errors);
        if (map_path) {
            wr |= render(stdout, mt, OUT_TABLE);
            if (out_table_rows(ut)) {
                putchar('\n');
                wr |= render(stdout, ut, OUT_TABLE);
            }
        }
        if (addresses) {
            if (map_path)
                putchar('\n');
            wr |= render(stdout, at, OUT_TABLE);
        }
    }
    out_table_free(mt);
    out_table_free(ut);
    out_table_free(at);
    free(hits);
    free(where);
    free(targets);
    if (wr || fflush(stdout) != 0)
        status = cli_failf(cmd, "write error");
out:
    ntl_ipt_targets_free(&tg);
    ntl_ipt_module_map_free(&map);
    return status;
}
