/* ntlens dump relocate: move modules of a minidump to new addresses
 * (MINIDUMP_MODULE.BaseOfImage and the matching memory descriptors), as seed
 * 002 does after MiniDumpWriteDump. Dumps are evidence: the result goes to a
 * new file unless --in-place says otherwise. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "commands.h"
#include "dump-common.h"
#include "ntlens/minidump.h"
#include "out.h"
#include "parse-options.h"

struct relocate_opts {
    const char *in, *out;   /* out NULL: --in-place */
    bool in_place, quiet;
    int fmt;                /* enum out_format */
    struct dump_bases moves;
};

/* What one move did, for the records printed after the dump is written. */
struct move_record {
    char *name;             /* the module's name in the dump (malloc'd) */
    uint64_t from, to;
    int ranges;
};

static const struct opt_command relocate_command = {
    .name = "dump relocate",
    .synopsis = "FILE.dmp NAME=ADDR...",
    .summary = "move modules of a minidump to new addresses",
    .description =
        "Move modules of a minidump to new base addresses: rewrites each module's\n"
        "MINIDUMP_MODULE.BaseOfImage and the StartOfMemoryRange of every memory\n"
        "descriptor inside its image. NAME is the module's file name (case-insensitive)\n"
        "or its full name in the dump. The result goes to -o FILE; the dump itself is\n"
        "rewritten only with --in-place. Prints a record of each module moved: its\n"
        "name in the dump, the base it had, the base it has, and the ranges moved.",
};

/* The same path, or (where the system gives file ids) the same file. */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!strcmp(a, b))
        return true;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return false;
    return sa.st_ino != 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Checks the operands and the choice between -o and --in-place. */
static int check_args(int n, char **argv, struct relocate_opts *o)
{
    if (n < 1)
        return opt_usage_error(&relocate_command, "no minidump file given");
    o->in = argv[1];
    if (n < 2)
        return opt_usage_error(&relocate_command, "no NAME=ADDR given: which module goes where?");
    if (o->in_place && o->out)
        return opt_usage_error(&relocate_command, "option '--output' cannot be used with '--in-place'");
    if (!o->in_place && !o->out)
        return opt_usage_error(&relocate_command, "no '-o FILE' given: name the relocated dump, "
                               "or rewrite %s with '--in-place'", o->in);
    if (o->out && same_file(o->in, o->out))
        return opt_usage_error(&relocate_command, "option '-o' names the input dump %s; give "
                               "another file or '--in-place'", o->in);
    for (int i = 2; i <= n; i++) {
        int rc = dump_bases_add(&o->moves, argv[i]);
        if (rc == -2)
            return cli_failf(relocate_command.name, "out of memory");
        if (rc < 0)
            return opt_usage_error(&relocate_command, "'%s' is not NAME=ADDR", argv[i]);
    }
    return CLI_CONTINUE;
}

/* Returns CLI_CONTINUE, or the exit code. */
static int parse_args(int argc, char **argv, struct relocate_opts *o)
{
    struct opt opts[] = {
        OPT_GROUP("Where the result goes (one of)"),
        OPT_STRING('o', "output", &o->out, "FILE", "write the relocated dump to FILE"),
        OPT_FLAG(0, "in-place", &o->in_place, "rewrite the input dump instead"),
        OPT_GROUP("Report"),
        OPT_FLAG('q', "quiet", &o->quiet, "print nothing but errors"),
        OPT_OUTPUT_OPTIONS(&o->fmt),
        OPT_END(),
    };
    int n;

    memset(o, 0, sizeof *o);
    if ((n = parse_options(&relocate_command, opts, argc, argv)) < 0)
        return parse_options_exit(n);
    return check_args(n, argv, o);
}

static int print_records(const struct move_record *r, size_t n, int fmt)
{
    struct out *t = out_new(stdout, fmt);
    if (!t)
        return -1;
    out_column(t, "name", NULL, OUT_LEFT);
    out_column(t, "from", NULL, OUT_RIGHT);
    out_column(t, "to", NULL, OUT_RIGHT);
    out_column(t, "ranges", NULL, OUT_RIGHT);
    for (size_t i = 0; i < n; i++) {
        out_str(t, r[i].name);
        out_addr(t, r[i].from, 16);
        out_addr(t, r[i].to, 16);
        out_u64(t, (uint64_t)r[i].ranges);
        out_row_end(t);
    }
    return out_close(t);
}

/* Moves one module of the dump in file; *rec says from where to where. */
static int move_one(struct ntl_buf *file, const struct dump_base *m, struct move_record *rec,
                    struct ntl_error *err)
{
    struct ntl_minidump md;
    const struct ntl_md_module *mod;
    int rc = ntl_md_parse(file->data, file->len, &md, err);
    if (rc < 0)
        return rc;
    if ((mod = ntl_md_module_find(&md, m->name))) {
        rec->from = mod->base;
        rec->name = strdup(mod->name);
    }
    ntl_md_free(&md);
    rc = ntl_md_relocate(file->data, file->len, m->name, m->addr, err);
    if (rc < 0)
        return rc;
    if (!rec->name && !(rec->name = strdup(m->name)))
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    rec->to = m->addr;
    rec->ranges = rc;
    return 0;
}

/* Reads the dump, moves every module, writes the result, prints the records. */
static int relocate(const char *cmd, const struct relocate_opts *o)
{
    struct move_record *recs = calloc(o->moves.n, sizeof *recs);
    struct ntl_error err = {0};
    struct ntl_buf file;
    int rc = EXIT_OK;

    if (!recs)
        return cli_failf(cmd, "out of memory");
    if (ntl_file_read(o->in, (size_t)DUMP_FILE_LIMIT, &file, &err) < 0) {
        free(recs);
        return cli_fail(cmd, &err, o->in);
    }
    for (size_t i = 0; i < o->moves.n && rc == EXIT_OK; i++)
        if (move_one(&file, &o->moves.v[i], &recs[i], &err) < 0)
            rc = cli_fail(cmd, &err, o->in);
    if (rc == EXIT_OK && ntl_file_write(o->out ? o->out : o->in, file.data, file.len, &err) < 0)
        rc = cli_fail(cmd, &err, NULL);
    if (rc == EXIT_OK && !o->quiet) {
        if (print_records(recs, o->moves.n, o->fmt) < 0 || fflush(stdout) != 0)
            rc = cli_failf(cmd, "cannot write the output");
        fprintf(stderr, "wrote %s: %zu module%s moved\n", o->out ? o->out : o->in, o->moves.n,
                o->moves.n == 1 ? "" : "s");
    }
    for (size_t i = 0; i < o->moves.n; i++)
        free(recs[i].name);
    free(recs);
    ntl_buf_free(&file);
    return rc;
}

int cmd_dump_relocate(int argc, char **argv)
{
    struct relocate_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc == CLI_CONTINUE)
        rc = relocate(argv[0], &o);
    dump_bases_free(&o.moves);
    return rc;
}
