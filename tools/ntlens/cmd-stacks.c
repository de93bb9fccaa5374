/* ntlens stacks: the call stacks of every thread of a live process (Linux:
 * libdw and /proc; Windows: dbghelp and the ntlens.sys driver) or of a
 * Windows minidump, kernel frames above user frames as Process Explorer
 * shows them. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-stop.h"
#include "cli.h"
#include "commands.h"
#include "dump-common.h"
#include "ntlens/buf.h"
#include "ntlens/stack.h"
#include "out.h"
#include "parse-options.h"
#include "stacks.h"

#define MAX_TIDS 4096

struct stacks_opts {
    bool kernel, no_lines;
    long max_frames;
    const char *modules_dir;
    const char *driver;
    int fmt;                 /* enum out_format, STACKS_FOLDED or STACKS_TEXT */
    uint32_t tids[MAX_TIDS];
    size_t ntids;
};

static const char *const format_names[] = {"table", "csv", "tsv", "json", "jsonl", "folded",
                                           "text", NULL};

static const struct opt_command stacks_command = {
    .name = "stacks",
    .synopsis = "PID | FILE.dmp [TID...]",
    .summary = "call stacks of every thread, kernel and user mode (Process Explorer)",
    .description =
        "Show where each thread of a process is: a block per thread with its name, state\n"
        "and wait (Linux: wchan), then its frames innermost first, kernel frames (K)\n"
        "above user frames (U), each as module!function+offset with the source file and\n"
        "line where debug information has them. A frame that is not certain says how it\n"
        "was found: [inline] (a function inlined at the same address), [frame-pointer]\n"
        "or [scan]. An operand of digits is a live process; anything else is a minidump\n"
        "file. TIDs after it limit the walk to those threads.\n"
        "Linux: each thread is stopped (ptrace) only while its registers and stack are\n"
        "copied, one thread after another, and always let go, also on Ctrl-C; the header\n"
        "says how long the threads were stopped in all. User frames come from libdw's\n"
        "CFI unwinder (.eh_frame, .debug_frame), kernel frames from\n"
        "/proc/PID/task/TID/stack (--kernel; root only). Tracing another user's process\n"
        "needs root or CAP_SYS_PTRACE (and kernel.yama.ptrace_scope decides the rest).\n"
        "Windows: each thread is suspended only while its registers and stack are\n"
        "copied; dbghelp's StackWalk64 unwinds the copy. Kernel frames (--kernel) come\n"
        "from the ntlens.sys driver, loaded as a kernel service: it needs an\n"
        "administrator and a signing policy that admits it (test signing).\n"
        "Source lines are on by default: libdw reads each module's line table once.\n"
        "--format table, csv, tsv, json and jsonl give one record per frame; folded gives\n"
        "one 'state;outer;...;inner COUNT' line per distinct stack, identical stacks\n"
        "merged: which 200 threads wait in the same place.",
};

/* Returns CLI_CONTINUE with the process or dump in *target, or the exit code. */
static int parse_args(int argc, char **argv, struct stacks_opts *o, const char **target)
{
    struct opt opts[] = {
        OPT_GROUP("What to walk"),
        OPT_FLAG(0, "kernel", &o->kernel,
                 "kernel frames too (Linux: /proc/PID/task/TID/stack, root only;\n"
                 "Windows: through the ntlens.sys driver)"),
        OPT_FLAG(0, "no-lines", &o->no_lines, "no source files and lines (faster on big binaries)"),
        OPT_INT(0, "max-frames", &o->max_frames, "N", 1, NTL_STACK_MAX_FRAMES,
                "at most N frames per thread (default 1024)"),
        OPT_STRING(0, "driver", &o->driver, "FILE",
                   "with --kernel on Windows: the ntlens.sys to load (default: the one\n"
                   "next to ntlens.exe)"),
        OPT_STRING(0, "modules", &o->modules_dir, "DIR",
                   "a minidump: read unwind data and exports from the module files in DIR"),
        /* OPT_OUTPUT_OPTIONS, plus folded stacks and the text blocks. */
        OPT_GROUP("Output options"),
        OPT_CHOICE('f', "format", &o->fmt, "FORMAT", format_names,
                   "text (default: a block per thread), table, csv, tsv, json (one\n"
                   "document), jsonl (JSON lines; both one record per frame) or folded\n"
                   "(one 'state;outer;...;inner COUNT' line per distinct stack)"),
        OPT_CALLBACK(0, "local-time", NULL, out_local_time_cb, NULL,
                     "times in local time with their UTC offset (default: UTC)"),
        OPT_END(),
    };
    memset(o, 0, sizeof *o);
    o->fmt = STACKS_TEXT;
    int n = parse_options(&stacks_command, opts, argc, argv);
    if (n < 0)
        return parse_options_exit(n);
    if (n == 0)
        return opt_usage_error(&stacks_command, "no process id or minidump file given");
    *target = argv[1];
    if (n - 1 > MAX_TIDS)
        return opt_usage_error(&stacks_command, "at most %d thread ids", MAX_TIDS);
    for (int i = 2; i <= n; i++) {
        uint64_t tid;
        if (!cli_is_decimal(argv[i]) || !cli_parse_u64(argv[i], &tid) || tid == 0 ||
            tid > UINT32_MAX)
            return opt_usage_error(&stacks_command, "'%s' is not a thread id", argv[i]);
        o->tids[o->ntids++] = (uint32_t)tid;
    }
    if (o->driver && !o->kernel)
        return opt_usage_error(&stacks_command, "--driver loads kernel frames: give --kernel too");
    if (o->modules_dir && cli_is_decimal(*target))
        return opt_usage_error(&stacks_command, "--modules is for a minidump, not a live "
                               "process");
    return CLI_CONTINUE;
}

static int walk(const char *cmd, const char *target, const struct ntl_stack_options *so,
                struct ntl_stack_process **p)
{
    struct ntl_error err = {0};
    if (cli_is_decimal(target)) {
        uint64_t pid;
        if (!cli_parse_u64(target, &pid) || pid == 0 || pid > UINT32_MAX)
            return cli_usage_error(cmd, "'%s' is not a process id", target);
        if (ntl_stack_live((uint32_t)pid, so, p, &err) < 0)
            return cli_fail(cmd, &err, NULL);
        return 0;
    }
    struct ntl_buf file;
    if (ntl_file_read(target, (size_t)DUMP_FILE_LIMIT, &file, &err) < 0)
        return cli_fail(cmd, &err, target);
    int rc = ntl_stack_from_dump(file.data, file.len, so, p, &err);
    ntl_buf_free(&file);
    return rc < 0 ? cli_fail(cmd, &err, target) : 0;
}

static int print(const char *cmd, const struct stacks_opts *o, const struct ntl_stack_process *p)
{
    int rc;
    if (o->fmt == STACKS_TEXT)
        rc = stacks_print_text(stdout, p);
    else if (o->fmt == STACKS_FOLDED)
        rc = stacks_print_folded(stdout, p);
    else {
        struct out *out = out_new(stdout, (enum out_format)o->fmt);
        if (!out)
            return cli_failf(cmd, "out of memory");
        rc = stacks_print_records(out, p);
        if (out_close(out) < 0)
            rc = -1;
    }
    return rc < 0 ? cli_failf(cmd, "cannot write the output") : 0;
}

int cmd_stacks(int argc, char **argv)
{
    const char *cmd = argv[0], *target = NULL;
    struct stacks_opts *o = malloc(sizeof *o);
    struct ntl_stack_process *p = NULL;
    if (!o)
        return cli_failf(cmd, "out of memory");
    int rc = parse_args(argc, argv, o, &target);
    if (rc == CLI_CONTINUE) {
        /* Ctrl-C ends the walk between threads; every thread is let go. */
        cli_stop_catch_signals();
        struct ntl_stack_options so = {
            .tids = o->ntids ? o->tids : NULL, .ntids = o->ntids, .kernel = o->kernel,
            .lines = !o->no_lines, .max_frames = (unsigned)o->max_frames,
            .modules_dir = o->modules_dir, .driver = o->driver, .stop = cli_stop_flag(),
        };
        rc = walk(cmd, target, &so, &p);
        if (rc == 0 && *p->note) /* "no kernel frames: ..." */
            cli_warn(cmd, "%s", p->note);
        if (rc == 0)
            rc = print(cmd, o, p);
    }
    ntl_stack_process_free(p);
    free(o);
    return rc;
}
