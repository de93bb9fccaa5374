/* ntlens dump show: the streams, system info, threads, modules and memory
 * ranges of any minidump. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dump-common.h"
#include "commands.h"
#include "ntlens/minidump.h"
#include "output.h"

#define DUMP_FILE_LIMIT (8ull << 30)

static void usage(FILE *f)
{
    fputs("usage: ntlens dump show [OPTIONS] FILE.dmp\n"
          "\n"
          "Show what a minidump holds: its streams, system information, threads,\n"
          "modules (base, size, checksum, TimeDateStamp, CodeView GUID/age/PDB) and\n"
          "memory ranges (with the module each lies in).\n"
          "\n"
          "Options:\n"
          "  -s, --section NAME   only one table: streams, system, threads, modules, memory\n"
          "                       (default: all, one after another in table format)\n"
          "  -f, --format FMT     table (default), csv or json; csv needs --section, json\n"
          "                       without --section prints one object with every table\n"
          "  -r, --read ADDR[:LEN]\n"
          "                       instead, hex-dump LEN bytes (default 64, at most 1 MiB) of\n"
          "                       the dump's memory at virtual address ADDR\n"
          "  -h, --help           show this help\n",
          f);
}

static enum out_format fmt = OUT_TABLE;

static void hex_cell(struct out_table *t, uint64_t v) { dump_hex_cell(t, fmt, v, 0); }

static void guid_text(const uint8_t *g, uint32_t age, char *buf, size_t n)
{
    snprintf(buf, n, "%08X-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X %u",
             (unsigned)(g[0] | g[1] << 8 | g[2] << 16 | (uint32_t)g[3] << 24),
             (unsigned)(g[4] | g[5] << 8), (unsigned)(g[6] | g[7] << 8), g[8], g[9], g[10], g[11],
             g[12], g[13], g[14], g[15], age);
}

static const char *arch_name(uint16_t a)
{
    switch (a) {
    case 0: return "x86";
    case 5: return "ARM";
    case 6: return "IA64";
    case 9: return "AMD64";
    case 12: return "ARM64";
    default: return "?";
    }
}

/* MINIDUMP_SYSTEM_INFO.PlatformId: Windows' VER_PLATFORM_* and Breakpad's. */
static const char *platform_name(uint32_t p)
{
    switch (p) {
    case 0: return "Win32s";
    case 1: return "Windows 9x";
    case 2: return "Windows NT";
    case 0x8000: return "Unix";
    case 0x8101: return "macOS";
    case 0x8102: return "iOS";
    case 0x8201: return "Linux";
    case 0x8202: return "Solaris";
    case 0x8203: return "Android";
    case 0x8204: return "PS3";
    case 0x8205: return "NaCl";
    case 0x8206: return "Fuchsia";
    default: return NULL;
    }
}

static struct out_table *streams_table(const struct ntl_minidump *md)
{
    struct out_table *t = out_table_new();
    out_table_column(t, "index", NULL, OUT_RIGHT);
    out_table_column(t, "type", NULL, OUT_RIGHT);
    out_table_column(t, "name", NULL, OUT_LEFT);
    out_table_column(t, "rva", NULL, OUT_RIGHT);
    out_table_column(t, "size", NULL, OUT_RIGHT);
    for (size_t i = 0; i < md->stream_count; i++) {
        const char *n = ntl_md_stream_name(md->streams[i].type);
        out_table_u64(t, i);
        if (md->streams[i].type > 0xffff) {
            char buf[16];
            snprintf(buf, sizeof buf, "0x%x", md->streams[i].type);
            out_table_num_text(t, md->streams[i].type, buf);
        } else {
            out_table_u64(t, md->streams[i].type);
        }
        if (n)
            out_table_str(t, n);
        else
            out_table_strf(t, "0x%x", md->streams[i].type);
        hex_cell(t, md->streams[i].rva);
        out_table_u64(t, md->streams[i].size);
        out_table_row_end(t);
    }
    return t;
}

static struct out_table *system_table(const struct ntl_minidump *md)
{
    struct out_table *t = out_table_new();
    const struct ntl_md_system_info *s = &md->sys;
    out_table_column(t, "architecture", NULL, OUT_LEFT);
    out_table_column(t, "processors", NULL, OUT_RIGHT);
    out_table_column(t, "product_type", NULL, OUT_RIGHT);
    out_table_column(t, "version", NULL, OUT_LEFT);
    out_table_column(t, "platform", NULL, OUT_LEFT);
    out_table_column(t, "csd_version", NULL, OUT_LEFT);
    out_table_column(t, "process_id", NULL, OUT_RIGHT);
    out_table_column(t, "timestamp", NULL, OUT_RIGHT);
    if (s->present) {
        out_table_str(t, arch_name(s->arch));
        out_table_u64(t, s->processors);
        out_table_u64(t, s->product_type);
        out_table_strf(t, "%u.%u.%u", s->major, s->minor, s->build);
        if (platform_name(s->platform))
            out_table_str(t, platform_name(s->platform));
        else
            out_table_strf(t, "0x%x", s->platform);
        out_table_str(t, s->csd_version);
        if (md->has_misc && (md->misc_flags & 1))
            out_table_u64(t, md->process_id);
        else
            out_table_null(t);
        out_table_u64(t, md->timestamp);
        out_table_row_end(t);
    }
    return t;
}

static struct out_table *threads_table(const struct ntl_minidump *md)
{
    struct out_table *t = out_table_new();
    out_table_column(t, "thread_id", NULL, OUT_RIGHT);
    out_table_column(t, "teb", NULL, OUT_RIGHT);
    out_table_column(t, "stack", NULL, OUT_RIGHT);
    out_table_column(t, "stack_size", NULL, OUT_RIGHT);
    out_table_column(t, "context_size", NULL, OUT_RIGHT);
    for (size_t i = 0; i < md->thread_count; i++) {
        const struct ntl_md_thread *th = &md->threads[i];
        out_table_u64(t, th->id);
        hex_cell(t, th->teb);
        hex_cell(t, th->stack_start);
        out_table_u64(t, th->stack_size);
        out_table_u64(t, th->context_size);
        out_table_row_end(t);
    }
    return t;
}

static struct out_table *modules_table(const struct ntl_minidump *md)
{
    struct out_table *t = out_table_new();
    char buf[96];
    out_table_column(t, "base", NULL, OUT_RIGHT);
    out_table_column(t, "size", NULL, OUT_RIGHT);
    out_table_column(t, "checksum", NULL, OUT_RIGHT);
    out_table_column(t, "timestamp", NULL, OUT_RIGHT);
    out_table_column(t, "name", NULL, OUT_LEFT);
    out_table_column(t, "codeview", "guid age", OUT_LEFT);
    out_table_column(t, "pdb", NULL, OUT_LEFT);
    for (size_t i = 0; i < md->module_count; i++) {
        const struct ntl_md_module *m = &md->modules[i];
        dump_hex_cell(t, fmt, m->base, 16);
        hex_cell(t, m->size);
        hex_cell(t, m->checksum);
        hex_cell(t, m->timestamp);
        out_table_str(t, m->name);
        if (m->has_cv) {
            guid_text(m->guid, m->age, buf, sizeof buf);
            out_table_str(t, buf);
            out_table_str(t, m->pdb);
        } else {
            out_table_null(t);
            out_table_null(t);
        }
        out_table_row_end(t);
    }
    return t;
}

static struct out_table *memory_table(const struct ntl_minidump *md)
{
    struct out_table *t = out_table_new();
    out_table_column(t, "start", NULL, OUT_RIGHT);
    out_table_column(t, "end", NULL, OUT_RIGHT);
    out_table_column(t, "size", NULL, OUT_RIGHT);
    out_table_column(t, "file_offset", NULL, OUT_RIGHT);
    out_table_column(t, "module", NULL, OUT_LEFT);
    for (size_t i = 0; i < md->range_count; i++) {
        const struct ntl_md_range *r = &md->ranges[i];
        const struct ntl_md_module *m = ntl_md_module_at(md, r->start);
        dump_hex_cell(t, fmt, r->start, 16);
        dump_hex_cell(t, fmt, r->start + r->size, 16);
        hex_cell(t, r->size);
        hex_cell(t, r->file_offset);
        if (m)
            out_table_str(t, m->name);
        else
            out_table_null(t);
        out_table_row_end(t);
    }
    return t;
}

static const struct {
    const char *name;
    struct out_table *(*build)(const struct ntl_minidump *);
} sections[] = {
    {"streams", streams_table}, {"system", system_table}, {"threads", threads_table},
    {"modules", modules_table}, {"memory", memory_table},
};
#define NSECTIONS (sizeof sections / sizeof sections[0])

#define READ_MAX (1u << 20)

static bool parse_read(const char *arg, uint64_t *addr, uint64_t *len)
{
    char buf[64];
    char *colon;
    snprintf(buf, sizeof buf, "%s", arg);
    colon = strchr(buf, ':');
    *len = 64;
    if (colon) {
        *colon = 0;
        if (!cli_parse_u64(colon + 1, len) || *len == 0 || *len > READ_MAX)
            return false;
    }
    return cli_parse_u64(buf, addr);
}

/* 16 bytes a line: "ADDR: hex bytes  |ascii|". */
static int hexdump(const char *cmd, const struct ntl_minidump *md, uint64_t addr, uint64_t len)
{
    uint8_t *buf = malloc((size_t)len);
    size_t got;
    if (!buf)
        return cli_failf(cmd, "out of memory");
    got = ntl_md_read(md, addr, buf, (size_t)len);
    for (size_t i = 0; i < got; i += 16) {
        size_t n = got - i < 16 ? got - i : 16;
        printf("%016" PRIx64 ":", addr + i);
        for (size_t k = 0; k < 16; k++)
            if (k < n)
                printf(" %02x", buf[i + k]);
            else
                fputs("   ", stdout);
        fputs("  |", stdout);
        for (size_t k = 0; k < n; k++)
            putchar(buf[i + k] >= 0x20 && buf[i + k] < 0x7f ? buf[i + k] : '.');
        puts("|");
    }
    free(buf);
    if (got < len)
        return cli_failf(cmd, "the dump holds no memory at 0x%" PRIx64 " (%zu of %" PRIu64
                         " bytes read)", addr + got, got, len);
    return EXIT_OK;
}

/* After the tables: each stream that could not be read, and why the first. */
static int bad_streams(const char *cmd, const char *path, const struct ntl_minidump *md,
                       const struct ntl_error *first)
{
    char msg[512];
    for (size_t i = 0; i < md->stream_count; i++) {
        const struct ntl_md_stream *s = &md->streams[i];
        const char *name = ntl_md_stream_name(s->type);
        if (s->status < 0)
            fprintf(stderr, "ntlens %s: %s: stream %zu (%s%s) could not be read: %s\n", cmd, path, i,
                    name ? name : "type ", name ? "" : "?", ntl_md_status_name(s->status));
    }
    return cli_failf(cmd, "%s: incomplete dump: %s", path, ntl_error_format(first, msg, sizeof msg));
}

int cmd_dump_show(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"section", required_argument, NULL, 's'},
        {"format", required_argument, NULL, 'f'},
        {"read", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = argv[0];
    int only = -1, opt, rc = EXIT_OK;
    bool read_mode = false;
    uint64_t read_addr = 0, read_len = 0;
    struct ntl_buf file;
    struct ntl_minidump md;
    struct ntl_error err = {0};

    optind = 1;
    while ((opt = getopt_long(argc, argv, "s:f:r:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 's':
            for (size_t i = 0; i < NSECTIONS; i++)
                if (!strcmp(optarg, sections[i].name))
                    only = (int)i;
            if (only < 0)
                return cli_usage_error(cmd, "unknown section '%s'", optarg);
            break;
        case 'f':
            if (!out_format_parse(optarg, &fmt))
                return cli_usage_error(cmd, "unknown format '%s'", optarg);
            break;
        case 'r':
            if (!parse_read(optarg, &read_addr, &read_len))
                return cli_usage_error(cmd, "--read wants ADDR[:LEN], LEN 1..%u", READ_MAX);
            read_mode = true;
            break;
        case 'h': usage(stdout); return EXIT_OK;
        default: return cli_usage_error(cmd, "unknown option");
        }
    }
    if (optind != argc - 1)
        return cli_usage_error(cmd, "want exactly one minidump file");
    if (fmt == OUT_CSV && only < 0)
        return cli_usage_error(cmd, "--format csv needs --section");
    if (ntl_file_read(argv[optind], (size_t)DUMP_FILE_LIMIT, &file, &err) < 0)
        return cli_fail(cmd, &err, NULL); /* the message names the file */
    /* A cut or damaged dump: show every stream that reads, then name the others. */
    int parsed = ntl_md_parse_partial(file.data, file.len, &md, &err);
    if (parsed < 0 && parsed != NTL_MD_INCOMPLETE) {
        ntl_buf_free(&file);
        return cli_fail(cmd, &err, argv[optind]);
    }
    if (read_mode) {
        rc = hexdump(cmd, &md, read_addr, read_len);
        if (parsed == NTL_MD_INCOMPLETE)
            rc = bad_streams(cmd, argv[optind], &md, &err);
        ntl_md_free(&md);
        ntl_buf_free(&file);
        return rc;
    }
    if (fmt == OUT_JSON && only < 0)
        fputs("{", stdout);
    for (size_t i = 0; i < NSECTIONS; i++) {
        struct out_table *t;
        if (only >= 0 && (size_t)only != i)
            continue;
        t = sections[i].build(&md);
        if (fmt == OUT_JSON && only < 0) {
            printf("%s\"%s\": ", i ? ", " : "", sections[i].name);
        } else if (fmt == OUT_TABLE && only < 0) {
            printf("%s%s\n", i ? "\n" : "", sections[i].name);
        }
        if (out_table_render(t, stdout, fmt) < 0)
            rc = cli_failf(cmd, "write error");
        out_table_free(t);
    }
    if (fmt == OUT_JSON && only < 0)
        fputs("}\n", stdout);
    if (parsed == NTL_MD_INCOMPLETE && fflush(stdout) == 0)
        rc = bad_streams(cmd, argv[optind], &md, &err);
    ntl_md_free(&md);
    ntl_buf_free(&file);
    return rc;
}
