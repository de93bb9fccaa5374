/* ntlens dump build: a minidump of kernel modules mapped at the addresses an
 * ETW trace recorded, with the kernel's import optimization applied (seed
 * 002: what LoadLibraryEx + MiniDumpWriteDump + relocation did on Windows,
 * here in portable C). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "dump-common.h"
#include "ntlens/minidump_build.h"
#include "output.h"

static void usage(FILE *f)
{
    fputs("usage: ntlens dump build [OPTIONS] --module FILE... -o OUT.dmp\n"
          "\n"
          "Build a minidump of kernel modules: each module file is mapped as the loader\n"
          "maps it, relocated to the load address the ETW trace recorded (or --base),\n"
          "its imports bound, and the kernel's import optimization applied to its\n"
          "IMPORT_CONTROL_TRANSFER sites. Prints a report of every site.\n"
          "\n"
          "Options:\n"
          "  -e, --etl FILE         take load addresses from the trace's image events\n"
          "  -m, --module FILE      a module file (.sys, .exe, .dll); repeatable; module\n"
          "                         files may also be given as arguments\n"
          "  -b, --base NAME=ADDR   load address of module NAME (overrides the trace)\n"
          "  -s, --search DIR       look for module files named like a --module (or the\n"
          "                         trace's modules) in DIR; repeatable\n"
          "  -a, --all-kernel       every kernel module the trace has loaded at its end that\n"
          "                         the search directories hold (needs --etl and --search)\n"
          "  -o, --output FILE      the minidump to write (required)\n"
          "  -c, --code-only        write only each module's headers and executable sections\n"
          "                         (like MiniDumpWithCodeSegs; smaller dumps)\n"
          "      --no-import-optimization\n"
          "                         leave call sites as in the files (the remote system\n"
          "                         does not use import optimization)\n"
          "      --os-version MAJ.MIN.BUILD\n"
          "                         SystemInfo version (default: from the trace, else 10.0.0)\n"
          "  -f, --format FMT       report as table (default), csv or json\n"
          "  -q, --quiet            no report\n"
          "  -h, --help             show this help\n",
          f);
}

static void report(const struct ntl_md_build *b, enum out_format fmt)
{
    const struct ntl_iopt_report *rep = &b->report;
    struct out_table *t = out_table_new();

    out_table_column(t, "module", NULL, OUT_LEFT);
    out_table_column(t, "rva", NULL, OUT_RIGHT);
    out_table_column(t, "address", NULL, OUT_RIGHT);
    out_table_column(t, "kind", NULL, OUT_LEFT);
    out_table_column(t, "iat_index", NULL, OUT_RIGHT);
    out_table_column(t, "import", NULL, OUT_LEFT);
    out_table_column(t, "target", NULL, OUT_RIGHT);
    out_table_column(t, "resolved", NULL, OUT_LEFT);
    out_table_column(t, "result", NULL, OUT_LEFT);
    out_table_column(t, "detail", NULL, OUT_LEFT);
    for (size_t i = 0; i < rep->count; i++) {
        const struct ntl_iopt_site *s = &rep->sites[i];
        out_table_str(t, ntl_md_base_name(b->modules[s->module].path));
        dump_hex_cell(t, fmt, s->rva, 0);
        dump_hex_cell(t, fmt, s->address, 16);
        out_table_str(t, s->call ? "call" : "jmp");
        if (s->iat_index == 0x7ffff && fmt == OUT_TABLE)
            out_table_str(t, "0x7FFFF");
        else
            out_table_u64(t, s->iat_index);
        if (s->import_dll[0])
            out_table_strf(t, "%s!%s", s->import_dll, s->import_name);
        else
            out_table_null(t);
        if (s->target) {
            dump_hex_cell(t, fmt, s->target, 16);
            out_table_strf(t, "%s!%s", ntl_md_base_name(b->modules[s->target_module].path),
                           s->target_name);
        } else {
            out_table_null(t);
            out_table_null(t);
        }
        out_table_str(t, s->status == NTL_IOPT_PATCHED ? "patched" : "skipped");
        if (s->detail[0])
            out_table_str(t, s->detail);
        else
            out_table_null(t);
        out_table_row_end(t);
    }
    out_table_render(t, stdout, fmt);
    out_table_free(t);
}

static bool parse_version(const char *s, uint32_t v[3])
{
    unsigned a, b, c;
    char tail;
    if (sscanf(s, "%u.%u.%u%c", &a, &b, &c, &tail) != 3)
        return false;
    v[0] = a;
    v[1] = b;
    v[2] = c;
    return true;
}

/* A note of the pipeline as the warning the user reads. */
static void warn_note(const char *cmd, const struct ntl_md_note *n)
{
    switch (n->kind) {
    case NTL_MD_NOTE_TRACE_SKIPPED:
        cli_warn(cmd, "%s: %s; %" PRIu64 " bad part(s) of the trace skipped", n->subject, n->detail,
                 n->value);
        break;
    case NTL_MD_NOTE_NOT_IN_SEARCH:
        cli_warn(cmd, "%s (0x%016" PRIx64 ") is not in the search directories", n->subject,
                 n->address);
        break;
    case NTL_MD_NOTE_MORE_NOT_FOUND:
        cli_warn(cmd, "%" PRIu64 " more of the trace's kernel modules are not in the search "
                 "directories", n->value);
        break;
    case NTL_MD_NOTE_SIZE_MISMATCH:
        cli_warn(cmd, "%s: SizeOfImage 0x%" PRIx64 ", the trace recorded 0x%" PRIx64
                 " (another build?)", n->subject, n->value, n->expected);
        break;
    case NTL_MD_NOTE_STAMP_MISMATCH:
        cli_warn(cmd, "%s: TimeDateStamp 0x%" PRIx64 ", the trace recorded 0x%" PRIx64
                 " (another build?)", n->subject, n->value, n->expected);
        break;
    case NTL_MD_NOTE_BASE_UNUSED:
        cli_warn(cmd, "--base %s matches no --module", n->subject);
        break;
    case NTL_MD_NOTE_OVERLAP:
        cli_warn(cmd, "%s and %s overlap in memory", n->subject, n->other);
        break;
    }
}

/* Runs the pipeline, writes the dump and reports. */
static int build(const char *cmd, struct ntl_md_build_options *o, const struct dump_base *bases,
                 size_t nbases, const char *out, bool quiet, enum out_format fmt)
{
    struct ntl_md_build_base *bb = calloc(nbases + 1, sizeof *bb);
    struct ntl_md_build b;
    struct ntl_error err = {0};
    int rc;
    if (!bb)
        return cli_failf(cmd, "out of memory");
    for (size_t k = 0; k < nbases; k++)
        bb[k] = (struct ntl_md_build_base){bases[k].name, bases[k].addr};
    o->bases = bb;
    o->base_count = nbases;
    rc = ntl_md_build(o, &b, &err);
    free(bb);
    if (rc == NTL_MD_NO_BASE) {
        char msg[512];
        return cli_failf(cmd, "%s; give --base NAME=ADDR", ntl_error_format(&err, msg, sizeof msg));
    }
    if (rc < 0)
        return cli_fail(cmd, &err, NULL); /* the message names the file */
    for (size_t i = 0; i < b.note_count; i++)
        warn_note(cmd, &b.notes[i]);
    if (ntl_file_write(out, b.dump.data, b.dump.len, &err) < 0) {
        ntl_md_build_free(&b);
        return cli_fail(cmd, &err, NULL);
    }
    if (!quiet && o->import_optimization)
        report(&b, fmt);
    if (!quiet) {
        for (size_t i = 0; i < b.module_count; i++)
            fprintf(stderr, "%s: 0x%016" PRIx64 " size 0x%x (%s)\n", b.modules[i].dump_name,
                    b.modules[i].base, b.modules[i].size,
                    b.modules[i].origin == NTL_MD_ORIGIN_BASE ? "--base" : "trace");
        if (o->import_optimization)
            fprintf(stderr, "%zu import optimization sites: %zu patched, %zu skipped\n",
                    b.report.count, b.report.patched, b.report.skipped);
        fprintf(stderr, "wrote %s: %zu modules, %zu bytes\n", out, b.module_count, b.dump.len);
    }
    ntl_md_build_free(&b);
    return EXIT_OK;
}

int cmd_dump_build(int argc, char **argv)
{
    enum { OPT_NO_IOPT = 1, OPT_OS_VERSION };
    static const struct option longopts[] = {
        {"etl", required_argument, NULL, 'e'},
        {"module", required_argument, NULL, 'm'},
        {"base", required_argument, NULL, 'b'},
        {"search", required_argument, NULL, 's'},
        {"all-kernel", no_argument, NULL, 'a'},
        {"output", required_argument, NULL, 'o'},
        {"no-import-optimization", no_argument, NULL, OPT_NO_IOPT},
        {"code-only", no_argument, NULL, 'c'},
        {"os-version", required_argument, NULL, OPT_OS_VERSION},
        {"format", required_argument, NULL, 'f'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = argv[0], *etl = NULL, *out = NULL;
    const char **mods = calloc((size_t)argc + 1, sizeof *mods);
    const char **dirs = calloc((size_t)argc + 1, sizeof *dirs);
    struct dump_base *bases = calloc((size_t)argc + 1, sizeof *bases);
    struct ntl_md_build_options o = {.import_optimization = true};
    size_t nmods = 0, nbases = 0, ndirs = 0;
    enum out_format fmt = OUT_TABLE;
    bool quiet = false;
    int opt, rc = EXIT_OK;

    if (!mods || !dirs || !bases) {
        rc = cli_failf(cmd, "out of memory");
        goto done;
    }
    optind = 1;
    while ((opt = getopt_long(argc, argv, "e:m:b:s:ao:cf:qh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'e': etl = optarg; break;
        case 'm':
            mods[nmods++] = optarg;
            break;
        case 's': dirs[ndirs++] = optarg; break;
        case 'a': o.all_kernel = true; break;
        case 'b':
            if (!dump_parse_base(optarg, &bases[nbases]))
                { rc = cli_usage_error(cmd, "--base wants NAME=ADDR, not '%s'", optarg); goto done; }
            nbases++;
            break;
        case 'o': out = optarg; break;
        case OPT_NO_IOPT: o.import_optimization = false; break;
        case 'c': o.code_only = true; break;
        case OPT_OS_VERSION:
            if (!parse_version(optarg, o.version))
                { rc = cli_usage_error(cmd, "--os-version wants MAJOR.MINOR.BUILD"); goto done; }
            o.version_set = true;
            break;
        case 'f':
            if (!out_format_parse(optarg, &fmt))
                { rc = cli_usage_error(cmd, "unknown format '%s'", optarg); goto done; }
            break;
        case 'q': quiet = true; break;
        case 'h': usage(stdout); rc = EXIT_OK; goto done;
        default: rc = cli_usage_error(cmd, "unknown option"); goto done;
        }
    }
    while (optind < argc)
        mods[nmods++] = argv[optind++];
    if (o.all_kernel && (!etl || !ndirs))
        { rc = cli_usage_error(cmd, "--all-kernel needs --etl and --search"); goto done; }
    if (!nmods && !o.all_kernel)
        { rc = cli_usage_error(cmd, "no module given (--module FILE)"); goto done; }
    if (!out) { rc = cli_usage_error(cmd, "no output file given (-o OUT.dmp)"); goto done; }
    o.etl_path = etl;
    o.modules = mods;
    o.module_count = nmods;
    o.search_dirs = dirs;
    o.search_dir_count = ndirs;
    rc = build(cmd, &o, bases, nbases, out, quiet, fmt);
done:
    for (size_t k = 0; k < nbases; k++)
        free(bases[k].name);
    free(mods);
    free(dirs);
    free(bases);
    return rc;
}
