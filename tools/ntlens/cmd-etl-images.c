/* ntlens etl images: every image event (Load, Unload, DCStart, DCEnd), or a
 * module map (`BASE SIZE NAME` lines) for `ntlens ipt modules --modules`. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "etl-common.h"
#include "ntlens/etl_images.h"

static const struct opt_command images_command = {
    .name = "etl images",
    .synopsis = "FILE.etl",
    .summary = "list image load events of an ETW trace file",
    .description =
        "List the image events of an ETW trace (kernel Image and Process groups:\n"
        "Load, Unload, DCStart, DCEnd): time, process id, base, size, checksum,\n"
        "TimeDateStamp, default base and file name. With --map, a module map instead:\n"
        "one 'BASE SIZE NAME' line per module loaded (each base and name once), which\n"
        "'ntlens ipt modules --modules FILE' reads; --format other than table writes\n"
        "the map's records (base, size, name) through the chosen format.",
};

struct images_opts {
    bool kernel_only, map;
    bool pid_set;
    uint64_t pid;
    int fmt;
};

struct seen {
    uint64_t base;
    char *name;
};

struct seen_set {
    struct seen *v;
    size_t n, cap;
};

/* 1 when (base, name) was added before, 0 when added now, -1 out of memory. */
static int seen_before(struct seen_set *s, uint64_t base, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].base == base && !strcmp(s->v[i].name, name))
            return 1;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        struct seen *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    if (!(s->v[s->n].name = strdup(name)))
        return -1;
    s->v[s->n++].base = base;
    return 0;
}

static void seen_free(struct seen_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].name);
    free(s->v);
}

static void image_columns(struct out *o)
{
    out_column(o, "kind", NULL, OUT_LEFT);
    out_column(o, "timestamp", NULL, OUT_LEFT);
    out_column(o, "pid", "PID", OUT_RIGHT);
    out_column(o, "base", NULL, OUT_RIGHT);
    out_column(o, "size", NULL, OUT_RIGHT);
    out_column(o, "checksum", NULL, OUT_RIGHT);
    out_column(o, "time_date_stamp", "TimeDateStamp", OUT_RIGHT);
    out_column(o, "default_base", NULL, OUT_RIGHT);
    out_column(o, "kernel", NULL, OUT_LEFT);
    out_column(o, "name", NULL, OUT_LEFT);
}

/* Sizes, checksums and stamps are hex in a table and CSV, exact numbers in
 * JSON; bases are addresses, hex strings everywhere. A TimeDateStamp is an
 * identifier (symbol servers key on it; reproducible builds hash it), not a
 * time, so it is not shown as one. */
static void image_row(struct out *o, const struct ntl_etl_image *img)
{
    char hbuf[32];
    out_str(o, ntl_etl_image_kind_name(img->kind));
    out_filetime(o, img->filetime);
    out_u64(o, img->pid);
    out_addr(o, img->base, 16);
    snprintf(hbuf, sizeof hbuf, "0x%" PRIx64, img->size);
    out_num_text(o, (double)img->size, hbuf);
    snprintf(hbuf, sizeof hbuf, "0x%08" PRIx32, img->checksum);
    out_num_text(o, img->checksum, hbuf);
    snprintf(hbuf, sizeof hbuf, "0x%08" PRIx32, img->time_date_stamp);
    out_num_text(o, img->time_date_stamp, hbuf);
    out_addr(o, img->default_base, 16);
    out_bool(o, img->kernel);
    out_str(o, img->name);
    out_row_end(o);
}

/* One map line or record per module loaded; -1 out of memory. */
static int map_entry(struct out *o, const struct images_opts *io, struct seen_set *seen,
                     const struct ntl_etl_image *img)
{
    int s;
    /* Empty or wrapping ranges say nothing about addresses; leave them out. */
    if (img->kind == NTL_ETL_IMAGE_UNLOAD || !img->size || img->base + img->size - 1 < img->base)
        return 0;
    if ((s = seen_before(seen, img->base, img->name)) != 0)
        return s < 0 ? -1 : 0;
    if (io->fmt == OUT_TABLE) {
        progress_clear();
        printf("0x%016" PRIx64 " 0x%" PRIx64 " %s\n", img->base, img->size, img->name);
        return 0;
    }
    out_addr(o, img->base, 16);
    out_addr(o, img->size, 1);
    out_str(o, img->name);
    out_row_end(o);
    return 0;
}

static int list_images(struct etl_cli *c, struct out *o, const struct images_opts *io)
{
    struct seen_set seen = {0};
    struct ntl_etl_event ev;
    struct ntl_etl_image img;
    struct ntl_error err = {0};
    int rc, status = EXIT_OK;

    while ((rc = etl_cli_next(c, &ev)) > 0) {
        int d = ntl_etl_image_decode(c->t, &ev, &img, &err);
        if (d < 0) {
            if (!c->keep_going) {
                etl_cli_error(c, &err, " (--keep-going skips bad events)");
                status = EXIT_FAIL;
                break;
            }
            etl_cli_skip(c, &err, "skipped");
            continue;
        }
        if (d == 0 || (io->kernel_only && !img.kernel) || (io->pid_set && img.pid != io->pid))
            continue;
        if (!io->map)
            image_row(o, &img);
        else if (map_entry(o, io, &seen, &img) < 0) {
            status = cli_failf(c->cmd, "out of memory");
            break;
        }
    }
    seen_free(&seen);
    return rc < 0 ? EXIT_FAIL : status;
}

static int parse_args(int argc, char **argv, struct etl_cli *c, struct images_opts *io)
{
    struct opt opts[] = {
        OPT_FLAG(0, "kernel", &io->kernel_only, "only kernel-mode modules"),
        OPT_U64(0, "pid", &io->pid, "PID", 0, UINT32_MAX, "only images of this process id"),
        OPT_FLAG(0, "map", &io->map,
                 "print a module map instead: one 'BASE SIZE NAME' line (hex, 0x\n"
                 "prefix) per module loaded, each base and name once"),
        OPT_OUTPUT_OPTIONS(&io->fmt),
        OPT_ETL_OPTIONS(c),
        OPT_END(),
    };
    int n = parse_options(&images_command, opts, argc, argv);
    if (n < 0)
        return parse_options_exit(n);
    if (n != 1)
        return opt_usage_error(&images_command, "expected one trace file");
    io->pid_set = opt_given(opts, "pid");
    return CLI_CONTINUE;
}

static void map_columns(struct out *o)
{
    out_column(o, "base", NULL, OUT_RIGHT);
    out_column(o, "size", NULL, OUT_RIGHT);
    out_column(o, "name", NULL, OUT_LEFT);
}

int cmd_etl_images(int argc, char **argv)
{
    struct etl_cli c = {.cmd = argv[0]};
    struct images_opts io = {.fmt = OUT_TABLE};
    struct out *o = NULL;
    int rc;

    if ((rc = parse_args(argc, argv, &c, &io)) != CLI_CONTINUE)
        return rc;
    if ((rc = etl_cli_open(&c, argv[1])))
        return rc;
    /* The map's own text is its table: `BASE SIZE NAME` lines, no writer. */
    if (!(io.map && io.fmt == OUT_TABLE) && !(o = out_new(stdout, (enum out_format)io.fmt))) {
        etl_cli_close(&c);
        return cli_failf(argv[0], "out of memory");
    }
    if (o)
        (io.map ? map_columns : image_columns)(o);
    rc = list_images(&c, o, &io);
    etl_cli_close(&c);
    if (!o && (fflush(stdout) != 0 || ferror(stdout)))
        return cli_failf(argv[0], "write error");
    return etl_cli_out_close(&c, o, rc);
}
