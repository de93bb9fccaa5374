/* ntlens dump show: the streams, system info, threads, modules and memory
 * ranges of any minidump, or the bytes at an address of its memory. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "dump-common.h"
#include "dump-show.h"
#include "ntlens/minidump.h"
#include "out.h"
#include "parse-options.h"

#define READ_MAX (1u << 20)

struct show_opts {
    int section;       /* index in dump_sections; -1: every one */
    int fmt;           /* enum out_format */
    bool read;         /* --read given */
    uint64_t read_addr, read_len;
};

static const struct opt_command show_command = {
    .name = "dump show",
    .synopsis = "FILE.dmp",
    .summary = "show the streams, modules and memory of a minidump",
    .description =
        "Show what a minidump holds: its streams, system information, threads, modules\n"
        "(base, size, checksum, TimeDateStamp, CodeView GUID, age and PDB) and memory\n"
        "ranges (with the module each lies in). Every section by default, one after\n"
        "another in a table and as one object of arrays in JSON; CSV, TSV and JSON lines\n"
        "hold one table, so they need --section. A cut or damaged dump shows what it can\n"
        "and names each stream it cannot read (exit 1); an irregular one (a stream listed\n"
        "twice, no streams, a module of SizeOfImage 0) warns with the file offset and lists\n"
        "the oddities in its irregularities section.",
};

/* --read ADDR[:LEN]: the address and length, validated here so a mistake
 * gets the parser's wording. */
static int read_cb(const struct opt *opt, const char *arg, void *ctx)
{
    struct show_opts *o = ctx;
    char buf[64];
    char *colon;

    if (snprintf(buf, sizeof buf, "%s", arg) >= (int)sizeof buf)
        goto bad;
    o->read_len = 64;
    if ((colon = strchr(buf, ':'))) {
        *colon = 0;
        if (!cli_parse_u64(colon + 1, &o->read_len) || o->read_len == 0 || o->read_len > READ_MAX)
            goto bad;
    }
    if (!cli_parse_u64(buf, &o->read_addr))
        goto bad;
    o->read = true;
    return 0;
bad:
    return opt_error(opt, "needs ADDR[:LEN], an address and a length from 1 to %u, not '%s'",
                     READ_MAX, arg);
}

/* Returns CLI_CONTINUE with the dump's path in *path, or the exit code. */
static int parse_args(int argc, char **argv, struct show_opts *o, const char **path)
{
    struct opt opts[] = {
        OPT_GROUP("What to show"),
        OPT_CHOICE(0, "section", &o->section, "NAME", dump_section_names,
                   "only one table: streams, system, threads, modules,\n"
                   "memory or irregularities"),
        OPT_CALLBACK(0, "read", "ADDR[:LEN]", read_cb, o,
                     "instead, the LEN bytes (default 64, at most 1 MiB) of the\n"
                     "dump's memory at virtual address ADDR, as a hex dump"),
        OPT_OUTPUT_OPTIONS(&o->fmt),
        OPT_END(),
    };
    int n;

    memset(o, 0, sizeof *o);
    o->section = -1;
    if ((n = parse_options(&show_command, opts, argc, argv)) < 0)
        return parse_options_exit(n);
    if (n == 0)
        return opt_usage_error(&show_command, "no minidump file given");
    if (n > 1)
        return opt_usage_error(&show_command, "one minidump file at most, not '%s' too", argv[2]);
    *path = argv[1];
    if (o->read && o->section >= 0)
        return opt_usage_error(&show_command, "option '--read' cannot be used with '--section'");
    if (!o->read && o->section < 0 && o->fmt != OUT_TABLE && o->fmt != OUT_JSON)
        return opt_usage_error(&show_command, "option '--format' %s holds one table: choose one "
                               "with '--section' (streams, system, threads, modules, memory or "
                               "irregularities)",
                               out_format_names[o->fmt]);
    return CLI_CONTINUE;
}

/* 16 bytes a line, "ADDR: hex bytes  |ascii|", in a table; records of
 * address, bytes and text in the other formats. */
static void hexdump_line(struct out *t, int fmt, uint64_t addr, const uint8_t *b, size_t n)
{
    char hex[16 * 3 + 1], text[17];
    size_t k;
    memset(hex, ' ', sizeof hex);
    for (k = 0; k < n; k++)
        snprintf(hex + 3 * k, sizeof hex - 3 * k, "%02x ", b[k]);
    hex[3 * n] = ' '; /* snprintf's terminator, when padding follows */
    hex[fmt == OUT_TABLE ? 47 : 3 * n - 1] = 0;
    for (k = 0; k < n; k++)
        text[k] = b[k] >= 0x20 && b[k] < 0x7f ? (char)b[k] : '.';
    text[n] = 0;
    if (fmt == OUT_TABLE) {
        printf("%016" PRIx64 ": %s  |%s|\n", addr, hex, text);
        return;
    }
    out_addr(t, addr, 16);
    out_str(t, hex);
    out_str(t, text);
    out_row_end(t);
}

static int hexdump(const char *cmd, const struct ntl_minidump *md, const struct show_opts *o)
{
    uint8_t *buf = malloc((size_t)o->read_len);
    struct out *t = o->fmt == OUT_TABLE ? NULL : out_new(stdout, o->fmt);
    size_t got;
    int rc = EXIT_OK;

    if (!buf || (o->fmt != OUT_TABLE && !t)) {
        free(buf);
        out_close(t);
        return cli_failf(cmd, "out of memory");
    }
    if (t) {
        out_column(t, "address", NULL, OUT_RIGHT);
        out_column(t, "bytes", NULL, OUT_LEFT);
        out_column(t, "text", NULL, OUT_LEFT);
    }
    got = ntl_md_read(md, o->read_addr, buf, (size_t)o->read_len);
    for (size_t i = 0; i < got; i += 16)
        hexdump_line(t, o->fmt, o->read_addr + i, buf + i, got - i < 16 ? got - i : 16);
    free(buf);
    if (out_close(t) < 0 || fflush(stdout) != 0)
        rc = cli_failf(cmd, "cannot write the output");
    if (rc == EXIT_OK && got < o->read_len)
        rc = cli_failf(cmd, "the dump holds no memory at 0x%" PRIx64 " (%zu of %" PRIu64
                       " bytes read)", o->read_addr + got, got, o->read_len);
    return rc;
}

/* One section, or every one: JSON as an object of arrays, a table with
 * each section under its title. */
static int show_sections(const char *cmd, const struct ntl_minidump *md, const struct show_opts *o)
{
    struct out *t = out_new(stdout, o->fmt);
    if (!t)
        return cli_failf(cmd, "out of memory");
    if (o->section >= 0) {
        dump_sections[o->section].write(t, o->fmt, md);
    } else {
        for (size_t i = 0; i < DUMP_SECTION_COUNT; i++) {
            out_section(t, dump_sections[i].name);
            if (o->fmt == OUT_TABLE)
                printf("%s\n", dump_sections[i].title);
            dump_sections[i].write(t, o->fmt, md);
        }
    }
    if (out_close(t) < 0 || fflush(stdout) != 0)
        return cli_failf(cmd, "cannot write the output");
    return EXIT_OK;
}

/* After the output: each stream that could not be read, and why the first. */
static int bad_streams(const char *cmd, const char *path, const struct ntl_minidump *md,
                       const struct ntl_error *first)
{
    char msg[512];
    for (size_t i = 0; i < md->stream_count; i++) {
        const struct ntl_md_stream *s = &md->streams[i];
        const char *name = ntl_md_stream_name(s->type);
        if (s->status < 0)
            cli_failf(cmd, "%s: stream %zu (%s%s) could not be read: %s", path, i,
                      name ? name : "type ", name ? "" : "?", ntl_md_status_name(s->status));
    }
    return cli_failf(cmd, "%s: incomplete dump: %s", path, ntl_error_format(first, msg, sizeof msg));
}

/* Before the output: what is odd but was read on, with its file offset. */
static void irregularities(const char *cmd, const char *path, const struct ntl_minidump *md)
{
    for (size_t i = 0; i < md->irregular_count && i < NTL_MD_MAX_IRREGULARITIES; i++)
        cli_warn(cmd, "%s: irregular dump: at offset 0x%" PRIx64 ": %s", path,
                 md->irregular[i].offset, md->irregular[i].what);
    if (md->irregular_count > NTL_MD_MAX_IRREGULARITIES)
        cli_warn(cmd, "%s: irregular dump: %zu more irregularities", path,
                 md->irregular_count - NTL_MD_MAX_IRREGULARITIES);
}

int cmd_dump_show(int argc, char **argv)
{
    const char *cmd = argv[0], *path = NULL;
    struct show_opts o;
    struct ntl_buf file;
    struct ntl_minidump md;
    struct ntl_error err = {0};
    int rc, parsed;

    if ((rc = parse_args(argc, argv, &o, &path)) != CLI_CONTINUE)
        return rc;
    if (ntl_file_read(path, (size_t)DUMP_FILE_LIMIT, &file, &err) < 0)
        return cli_fail(cmd, &err, path);
    /* A cut or damaged dump: show every stream that reads, then name the others. */
    parsed = ntl_md_parse_partial(file.data, file.len, &md, &err);
    if (parsed < 0 && parsed != NTL_MD_INCOMPLETE) {
        ntl_buf_free(&file);
        return cli_fail(cmd, &err, path);
    }
    irregularities(cmd, path, &md);
    rc = o.read ? hexdump(cmd, &md, &o) : show_sections(cmd, &md, &o);
    if (parsed == NTL_MD_INCOMPLETE)
        rc = bad_streams(cmd, path, &md, &err);
    ntl_md_free(&md);
    ntl_buf_free(&file);
    return rc;
}
