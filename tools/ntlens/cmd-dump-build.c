/* ntlens dump build: a minidump of kernel modules mapped at the addresses an
 * ETW trace recorded, with the kernel's import optimization applied (seed
 * 002: what LoadLibraryEx + MiniDumpWriteDump + relocation did on Windows,
 * here in portable C). The pipeline is lib/minidump's; this parses options,
 * runs it, writes the dump and reports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "dump-build.h"
#include "dump-common.h"
#include "ntlens/minidump_build.h"
#include "out.h"
#include "parse-options.h"

struct build_opts {
    struct ntl_md_build_options lib;
    struct opt_list modules, dirs;
    struct dump_bases bases;
    const char *out;
    bool quiet, no_iopt;
    int fmt;                       /* enum out_format */
    const char **module_files;     /* --module values, then the operands */
};

static const struct opt_command build_command = {
    .name = "dump build",
    .synopsis = "-o OUT.dmp [--module] FILE...",
    .summary = "build a minidump of kernel modules from an ETW trace",
    .description =
        "Build a minidump of kernel modules: each module file is mapped as the loader\n"
        "maps it, relocated to the load address the ETW trace recorded (or --base),\n"
        "its imports bound, and the kernel's import optimization applied to its\n"
        "IMPORT_CONTROL_TRANSFER sites. Prints a record of every site; on stderr, each\n"
        "module's base and where it came from, and what was written. Module files may\n"
        "also be given as operands.",
};

static int base_cb(const struct opt *opt, const char *arg, void *ctx)
{
    int rc = dump_bases_add(ctx, arg);
    if (rc == -2)
        return opt_error(opt, "cannot be stored: out of memory");
    return rc < 0 ? opt_error(opt, "needs NAME=ADDR, a module name and its load address, not '%s'",
                              arg) : 0;
}

static int version_cb(const struct opt *opt, const char *arg, void *ctx)
{
    struct ntl_md_build_options *o = ctx;
    unsigned a, b, c;
    char tail;
    if (sscanf(arg, "%u.%u.%u%c", &a, &b, &c, &tail) != 3)
        return opt_error(opt, "needs MAJOR.MINOR.BUILD, three whole numbers, not '%s'", arg);
    o->version[0] = a;
    o->version[1] = b;
    o->version[2] = c;
    o->version_set = true;
    return 0;
}

/* The options' combinations and the module list (--module, then operands). */
static int check_args(int n, char **argv, struct build_opts *o)
{
    size_t nmods = o->modules.n + (size_t)n;
    if (o->lib.all_kernel && (!o->lib.etl_path || !o->dirs.n))
        return opt_usage_error(&build_command, "option '--all-kernel' needs '--etl' and '--search'");
    if (!nmods && !o->lib.all_kernel)
        return opt_usage_error(&build_command, "no module given: name each with '--module FILE' "
                               "(or as an operand), or use '--all-kernel'");
    if (!o->out)
        return opt_usage_error(&build_command, "no output given: '-o FILE' names the dump to write");
    if (!(o->module_files = calloc(nmods + 1, sizeof *o->module_files)))
        return cli_failf(build_command.name, "out of memory");
    memcpy(o->module_files, o->modules.items, o->modules.n * sizeof *o->module_files);
    for (int i = 1; i <= n; i++)
        o->module_files[o->modules.n + (size_t)i - 1] = argv[i];
    o->lib.modules = o->module_files;
    o->lib.module_count = nmods;
    o->lib.search_dirs = o->dirs.items;
    o->lib.search_dir_count = o->dirs.n;
    o->lib.import_optimization = !o->no_iopt;
    return CLI_CONTINUE;
}

/* Returns CLI_CONTINUE, or the exit code. */
static int parse_args(int argc, char **argv, struct build_opts *o)
{
    struct opt opts[] = {
        OPT_GROUP("Modules and their addresses"),
        OPT_LIST(0, "module", &o->modules, "FILE",
                 "a module file (.sys, .exe, .dll), or a name to look up\nin --search; repeatable"),
        OPT_STRING(0, "etl", &o->lib.etl_path, "FILE",
                   "take load addresses from the trace's image events"),
        OPT_CALLBACK('b', "base", "NAME=ADDR", base_cb, &o->bases,
                     "load address of module NAME (overrides the trace); repeatable"),
        OPT_LIST(0, "search", &o->dirs, "DIR",
                 "look for module files named like a --module (or the\ntrace's modules) in DIR; repeatable"),
        OPT_FLAG(0, "all-kernel", &o->lib.all_kernel,
                 "every kernel module the trace has loaded at its end that\nthe search directories hold "
                 "(needs --etl and --search)"),
        OPT_GROUP("The dump"),
        OPT_STRING('o', "output", &o->out, "FILE", "the minidump to write (required)"),
        OPT_FLAG('c', "code-only", &o->lib.code_only,
                 "write only each module's headers and executable sections\n(like MiniDumpWithCodeSegs)"),
        OPT_FLAG(0, "no-import-optimization", &o->no_iopt,
                 "leave call sites as in the files (the remote system does\nnot use import optimization)"),
        OPT_CALLBACK(0, "os-version", "MAJ.MIN.BUILD", version_cb, &o->lib,
                     "SystemInfo version (default: from the trace, else 10.0.0)"),
        OPT_GROUP("Report"),
        OPT_FLAG('q', "quiet", &o->quiet, "print nothing but errors and warnings"),
        OPT_OUTPUT_OPTIONS(&o->fmt),
        OPT_END(),
    };
    int n;

    memset(o, 0, sizeof *o);
    if ((n = parse_options(&build_command, opts, argc, argv)) < 0)
        return parse_options_exit(n);
    return check_args(n, argv, o);
}

/* Runs the pipeline, writes the dump and reports. */
static int build(const char *cmd, struct build_opts *o)
{
    struct ntl_md_build_base *bb = calloc(o->bases.n + 1, sizeof *bb);
    struct ntl_md_build b;
    struct ntl_error err = {0};
    int rc = EXIT_OK;

    if (!bb)
        return cli_failf(cmd, "out of memory");
    for (size_t k = 0; k < o->bases.n; k++)
        bb[k] = (struct ntl_md_build_base){o->bases.v[k].name, o->bases.v[k].addr};
    o->lib.bases = bb;
    o->lib.base_count = o->bases.n;
    rc = ntl_md_build(&o->lib, &b, &err);
    free(bb);
    if (rc == NTL_MD_NO_BASE) {
        char msg[512];
        return cli_failf(cmd, "%s; give --base NAME=ADDR", ntl_error_format(&err, msg, sizeof msg));
    }
    if (rc < 0)
        return cli_fail(cmd, &err, NULL); /* the message names the file */
    for (size_t i = 0; i < b.note_count; i++)
        dump_build_warn_note(cmd, &b.notes[i]);
    if (ntl_file_write(o->out, b.dump.data, b.dump.len, &err) < 0)
        rc = cli_fail(cmd, &err, NULL);
    else if (!o->quiet && o->lib.import_optimization && dump_build_print_sites(&b, o->fmt) < 0)
        rc = cli_failf(cmd, "cannot write the output");
    if (rc == EXIT_OK && !o->quiet)
        dump_build_summary(&b, o->out, o->lib.import_optimization);
    ntl_md_build_free(&b);
    return rc;
}

int cmd_dump_build(int argc, char **argv)
{
    struct build_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc == CLI_CONTINUE)
        rc = build(argv[0], &o);
    dump_bases_free(&o.bases);
    free(o.module_files);
    return rc;
}
