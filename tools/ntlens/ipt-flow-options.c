/* ipt flow's options: libipt ptxed's, spelled as ptxed spells them, plus
 * --pages for kAFL's page folders; and the memory image they describe. */
#ifdef NTLENS_HAVE_IPT_FLOW
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ipt-flow.h"
#include "out.h"

static const struct opt_command ipt_flow_command = {
    .name = "ipt flow",
    .synopsis = "[TRACE]",
    .summary = "reconstruct the instructions an Intel PT trace executed (libipt's ptxed)",
    .description =
        "Walk the code of the memory image along the Intel PT trace TRACE (or --pt\n"
        "FILE) and print every instruction executed and every event, exactly as\n"
        "libipt's ptxed prints them, with ptxed's options. The image is the code at\n"
        "the addresses it ran at: --raw FILE:ADDR loads a file at an address, --elf\n"
        "FILE an ELF file's segments, --pages DIR a folder of ADDR.bin pages (kAFL's\n"
        "image/), --pe FILE:BASE a PE image mapped as Windows maps it, --dump FILE\n"
        "every memory range of a minidump, --etl TRACE --modules DIR the kernel\n"
        "modules the ETW trace saw loaded, found in DIR, and each process's\n"
        "user-mode modules in the address space of its CR3 (with --event, all\n"
        "those loaded at the event's time). --cr3 CR3 puts the image\n"
        "options after it in that address space: a PIP (\"paging, cr3\") switches to\n"
        "it, and the default image serves what it lacks. --etl TRACE --event N\n"
        "decodes the trace of the N-th Intel PT event of TRACE (seed 002's workflow:\n"
        "with --dump KERNEL.dmp from `ntlens dump build`). --calls prints the call\n"
        "tree instead, --functions instructions and visits per function; names\n"
        "come from ELF symbols, PE exports and dump modules. Decode errors are\n"
        "printed as ptxed does, [OFFSET, IP: error: WHAT], and decoding goes on at\n"
        "the next PSB.\n"
        "With --format, one record per instruction or event instead, and decode\n"
        "errors go to stderr.",
};

static int cpu_cb(const struct opt *opt, const char *arg, void *ctx)
{
    struct ntl_ipt_cpu *cpu = ctx;
    if (!strcmp(arg, "none")) {
        memset(cpu, 0, sizeof *cpu);
        return 0;
    }
    if (ntl_ipt_cpu_parse(arg, cpu))
        return 0;
    return opt_error(opt, "needs none or FAMILY/MODEL[/STEPPING], not '%s'", arg);
}

/* FILE:ADDR as ptxed reads it: the last ':' starts the address. */
int ipt_flow_split_addr(const char *arg, char *path, size_t n, uint64_t *addr)
{
    const char *colon = strrchr(arg, ':');
    char *end;
    if (!colon || colon == arg || (size_t)(colon - arg) >= n)
        return -1;
    errno = 0;
    *addr = strtoull(colon + 1, &end, 0);
    if (errno || end == colon + 1 || *end)
        return -1;
    memcpy(path, arg, (size_t)(colon - arg));
    path[colon - arg] = '\0';
    return 0;
}

/* --elf's FILE[:BASE]: a ':' and a number at the end give the base. */
bool ipt_flow_split_elf(const char *arg, char *path, size_t n, uint64_t *base)
{
    if (ipt_flow_split_addr(arg, path, n, base) == 0)
        return true;
    snprintf(path, n, "%s", arg);
    return false;
}

/* Each image option, in order, with the address space --cr3 put in force. */
static int add_image(const struct opt *opt, const char *arg, void *ctx)
{
    struct ipt_image_specs *l = ctx;
    static const struct { const char *name; enum ipt_image_kind kind; } kinds[] = {
        {"raw", IPT_IMG_RAW}, {"elf", IPT_IMG_ELF}, {"pages", IPT_IMG_PAGES},
        {"pe", IPT_IMG_PE}, {"dump", IPT_IMG_DUMP},
    };
    char path[4096];
    uint64_t addr;
    size_t k = 0;
    while (strcmp(kinds[k].name, opt->long_name))
        k++;
    if ((kinds[k].kind == IPT_IMG_RAW || kinds[k].kind == IPT_IMG_PE) &&
        ipt_flow_split_addr(arg, path, sizeof path, &addr) < 0)
        return opt_error(opt, "needs FILE:%s, not '%s'",
                         kinds[k].kind == IPT_IMG_PE ? "BASE" : "ADDR", arg);
    if (l->n == OPT_LIST_MAX)
        return opt_error(opt, "and the other image options can be given at most %d times",
                         OPT_LIST_MAX);
    l->v[l->n++] = (struct ipt_image_spec){kinds[k].kind, l->in_space, l->cr3, arg};
    return 0;
}

static int set_cr3(const struct opt *opt, const char *arg, void *ctx)
{
    struct ipt_image_specs *l = ctx;
    char *end;
    if (!strcmp(arg, "any")) {
        l->in_space = false;
        return 0;
    }
    errno = 0;
    l->cr3 = strtoull(arg, &end, 16);
    if (errno || end == arg || *end)
        return opt_error(opt, "needs a CR3 in hex (as ptxed prints it) or any, not '%s'", arg);
    l->in_space = true;
    return 0;
}

static int check_operands(struct ipt_flow_opts *o, int n, char **argv);

int ipt_flow_parse_args(int argc, char **argv, struct ipt_flow_opts *o)
{
    long mtc_freq = 0, nom_freq = 0, fcfg[4] = {0}, jobs = 1;
    uint64_t eax = 0, ebx = 0;
#define FILTER(n)                                                                            \
    OPT_INT(0, "filter:addr" #n "_cfg", &fcfg[n], "N", 0, 15,                                \
            "IA32_RTIT_CTL.ADDR" #n "_CFG the trace was\nrecorded with (1 filter, 2 stop)"),  \
    OPT_U64(0, "filter:addr" #n "_a", &o->filter.a[n], "ADDR", 0, UINT64_MAX,               \
            "IA32_RTIT_ADDR" #n "_A"),                                                        \
    OPT_U64(0, "filter:addr" #n "_b", &o->filter.b[n], "ADDR", 0, UINT64_MAX,               \
            "IA32_RTIT_ADDR" #n "_B")
    struct opt opts[] = {
        OPT_GROUP("Input (ptxed's options)"),
        OPT_STRING(0, "pt", &o->trace, "FILE", "the trace (instead of the TRACE operand)"),
        OPT_CALLBACK(0, "raw", "FILE:ADDR", add_image, &o->images,
                     "load FILE's bytes at address ADDR (repeatable)"),
        OPT_CALLBACK(0, "elf", "FILE[:BASE]", add_image, &o->images,
                     "load an ELF file's segments at their addresses,\nor moved to start at BASE (repeatable)"),
        OPT_CALLBACK(0, "cpu", "CPU", cpu_cb, &o->cpu,
                     "decode for this CPU and its errata: none (the\nSDM, default) or FAMILY/MODEL[/STEPPING]"),
        OPT_INT(0, "mtc-freq", &mtc_freq, "N", 0, 15, "IA32_RTIT_CTL.MTCFreq"),
        OPT_INT(0, "nom-freq", &nom_freq, "N", 0, 255, "nominal core:bus ratio"),
        OPT_U64(0, "cpuid-0x15.eax", &eax, "N", 0, UINT32_MAX, "CPUID leaf 0x15 EAX (TSC:CTC denominator)"),
        OPT_U64(0, "cpuid-0x15.ebx", &ebx, "N", 0, UINT32_MAX, "CPUID leaf 0x15 EBX (TSC:CTC numerator)"),
        OPT_GROUP("Input (beyond ptxed)"),
        OPT_CALLBACK(0, "pages", "DIR", add_image, &o->images,
                     "load every ADDR.bin of DIR at ADDR (hex), as\nkAFL dumps pages (repeatable)"),
        OPT_CALLBACK(0, "pe", "FILE:BASE", add_image, &o->images,
                     "map a PE image at BASE as the Windows loader\n"
                     "does: sections at their RVAs, rebased, imports\n"
                     "bound to the other PE modules (repeatable)"),
        OPT_CALLBACK(0, "dump", "FILE", add_image, &o->images,
                     "load every memory range of a minidump (such as\n`ntlens dump build` writes; repeatable)"),
        OPT_STRING(0, "etl", &o->etl, "TRACE",
                   "an ETW trace: with --modules, map the kernel\n"
                   "modules it saw loaded at their addresses, and\n"
                   "each process's in its CR3's address space;\n"
                   "with --event, decode its Intel PT trace"),
        OPT_LIST(0, "modules", &o->modules, "DIR",
                 "where --etl's module files are (repeatable)"),
        OPT_U64(0, "event", &o->event, "N", 1, UINT32_MAX,
                "decode the N-th Intel PT event of --etl (from 1,\nas `etl ipt` numbers them)"),
        OPT_FLAG(0, "import-optimization", &o->import_opt,
                 "apply the kernel's import optimization to --pe\n"
                 "and --etl modules from their DVRT, as Windows\ndoes at load time"),
        OPT_CALLBACK(0, "cr3", "CR3", set_cr3, &o->images,
                     "the image options after it load into address\n"
                     "space CR3 (hex, as \"paging, cr3:\" prints it),\n"
                     "until the next --cr3; any: the default image"),
        OPT_GROUP("IP filter of the recording (ptxed's options; erratum SKL014)"),
        FILTER(0), FILTER(1), FILTER(2), FILTER(3),
        OPT_GROUP("What is printed (ptxed's options)"),
        OPT_FLAG(0, "no-inst", &o->no_inst, "print instruction addresses only, not the\ninstructions"),
        OPT_FLAG('q', "quiet", &o->quiet, "print nothing but errors and --stat"),
        OPT_FLAG(0, "offset", &o->offset, "print the trace offset of each line"),
        OPT_FLAG(0, "event:ip", &o->event_ip, "print the IP of events"),
        OPT_FLAG(0, "event:iflags", &o->event_iflags,
                 "print changes of the interrupt flag (MODE.Exec's\nIF bit) as events"),
        OPT_FLAG(0, "event:time", &o->event_tsc,
                 "print the time (estimated TSC) of events where\nthere is one"),
        OPT_FLAG(0, "event:tick", &o->ticks,
                 "print [tick] after a branch whose TNT or TIP\ncame later than the packet before"),
        OPT_FLAG(0, "stat", &o->stat,
                 "print statistics at the end: instructions, and\nblocks with the block decoder"),
        OPT_FLAG(0, "stat:insn", &o->stat_insn, "print the number of instructions at the end"),
        OPT_FLAG(0, "stat:blocks", &o->stat_blocks,
                 "print the number of blocks at the end (runs of\ninstructions that need no trace between them)"),
        OPT_GROUP("Decoding (ptxed's options)"),
        OPT_FLAG(0, "check", &o->check,
                 "report inconsistencies between trace and code\n(a compressed return whose bit is not-taken,\n"
                 "a branch the trace has no packet for) as\nerrors; ntlens always does"),
        OPT_CMDMODE(0, "block-decoder", &o->decoder, IPT_FLOW_BLOCKS,
                    "ptxed's block decoder (the default; for --stat)"),
        OPT_CMDMODE(0, "insn-decoder", &o->decoder, IPT_FLOW_INSNS,
                    "ptxed's instruction decoder (the same output;\n--stat counts no blocks)"),
        OPT_FLAG(0, "block:show-blocks", &o->show_blocks,
                 "print [block] where the block decoder starts\na block"),
        OPT_FLAG(0, "block:end-on-call", &o->end_on_call,
                 "the block decoder ends a block after a call"),
        OPT_FLAG(0, "block:end-on-jump", &o->end_on_jump,
                 "the block decoder ends a block after a direct\njump"),
        OPT_FLAG(0, "insn:keep-tcal-on-ovf", &o->keep_tcal_insn,
                 "the instruction decoder keeps the CYC\ncalibration across an overflow"),
        OPT_FLAG(0, "block:keep-tcal-on-ovf", &o->keep_tcal_blocks,
                 "the block decoder keeps the CYC calibration\nacross an overflow"),
        OPT_FLAG(0, "resync-on-error", &o->resync_on_error,
                 "after an error, go on at the next packet that\ntells the IP (default: at the next PSB)"),
        OPT_INT('j', "jobs", &jobs, "N", 1, 64,
                "decode on N threads, the trace split at PSBs\n"
                "(the same output; one thread with --cr3\naddress spaces, with --event:time/tick and\n"
                "with --no-inst, which one thread prints faster)"),
        OPT_GROUP("What is printed (beyond ptxed)"),
        OPT_FLAG(0, "calls", &o->calls,
                 "print the call tree as it ran instead: each call\n"
                 "indented by depth with its target's name, each\nreturn matched to its call"),
        OPT_FLAG(0, "functions", &o->functions,
                 "print instructions and visits per function\ninstead, most instructions first"),
        OPT_GROUP("Output options"),
        OPT_CHOICE('f', "format", &o->fmt, "FORMAT", out_format_names,
                   "one record per instruction or event: table, csv,\n"
                   "tsv, json (one document) or jsonl (JSON lines);\n"
                   "default: ptxed's lines"),
        OPT_END(),
    };
    int n;

    memset(o, 0, sizeof *o);
    o->fmt = IPT_FORMAT_PTXED;
    if ((n = parse_options(&ipt_flow_command, opts, argc, argv)) < 0)
        return parse_options_exit(n);
#undef FILTER
    for (int i = 0; i < 4; i++)
        o->filter.cfg[i] = (uint8_t)fcfg[i];
    /* ptxed: --stat alone means every count the decoder has. */
    if (o->stat && !o->stat_insn && !o->stat_blocks) {
        o->stat_insn = true;
        o->stat_blocks = o->decoder == IPT_FLOW_BLOCKS;
    }
    o->stat |= o->stat_insn || o->stat_blocks;
    o->jobs = (unsigned)jobs;
    o->tc.mtc_freq = (uint8_t)mtc_freq;
    o->tc.nom_freq = (uint8_t)nom_freq;
    o->tc.cpuid_15_eax = (uint32_t)eax;
    o->tc.cpuid_15_ebx = (uint32_t)ebx;
    return check_operands(o, n, argv);
}

/* What the option table cannot say: the trace given once, the options that
 * need --etl, an image to decode against. */
static int check_operands(struct ipt_flow_opts *o, int n, char **argv)
{
    if (n > 1)
        return opt_usage_error(&ipt_flow_command, "more than one TRACE");
    if (n == 1 && o->trace)
        return opt_usage_error(&ipt_flow_command, "TRACE given twice: as an operand and with '--pt'");
    if (n == 1)
        o->trace = argv[1];
    if (o->event && !o->etl)
        return opt_usage_error(&ipt_flow_command, "'--event' needs '--etl TRACE'");
    if (o->modules.n && !o->etl)
        return opt_usage_error(&ipt_flow_command, "'--modules' needs '--etl TRACE'");
    if (o->etl && !o->event && !o->modules.n)
        return opt_usage_error(&ipt_flow_command,
                               "'--etl' needs '--event N' (its trace) or '--modules DIR' (its modules)");
    if (o->trace && o->event)
        return opt_usage_error(&ipt_flow_command, "TRACE given twice: as a file and with '--event'");
    if (!o->trace && !o->event)
        return opt_usage_error(&ipt_flow_command, "missing TRACE");
    if (o->images.n == 0 && !o->modules.n)
        return opt_usage_error(&ipt_flow_command,
                               "no memory image: give '--raw FILE:ADDR', '--elf FILE', '--pages DIR',\n"
                               "'--pe FILE:BASE', '--dump FILE' or '--etl TRACE --modules DIR'");
    if (o->calls && o->functions)
        return opt_usage_error(&ipt_flow_command, "'--calls' and '--functions' exclude each other");
    return CLI_CONTINUE;
}
#endif
