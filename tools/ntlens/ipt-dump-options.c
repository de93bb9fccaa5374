/* ipt dump's options: libipt ptdump's, spelled as ptdump spells them, plus
 * --wrapped and the output formats; and ptdump's TRACE operand, whose
 * FILE:FROM[-TO] form decodes one byte range of the file. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ipt-dump.h"
#include "out.h"
#include "parse-options.h"
#include "ntlens/ipt_trace.h"

static const struct opt_command ipt_dump_command = {
    .name = "ipt dump",
    .synopsis = "TRACE[:FROM[-TO]]",
    .summary = "print the packets of an Intel PT trace (libipt's ptdump)",
    .description =
        "Print the Intel PT packets of TRACE (a raw trace: perf's AUX area, a kAFL\n"
        "buffer, an ETW ProcessorTrace payload) exactly as libipt's ptdump does, with\n"
        "ptdump's options. TRACE:FROM-TO decodes the bytes [FROM, TO) of the file only\n"
        "(decimal or 0x hex; TRACE:FROM or TRACE:FROM- to the end, TRACE:-TO from the\n"
        "start); offsets then count from FROM, as ptdump prints them. With --format,\n"
        "one record per packet instead, and diagnostics go to stderr.",
};

static int cpu_cb(const struct opt *opt, const char *arg, void *ctx)
{
    struct ntl_ipt_cpu *cpu = ctx;
    if (!strcmp(arg, "none")) {
        memset(cpu, 0, sizeof *cpu);
        return 0;
    }
    if (!strcmp(arg, "auto")) {
        if (!ipt_dump_host_cpu(cpu))
            return opt_error(opt, "auto: this machine's CPU cannot be identified");
        return 0;
    }
    if (ntl_ipt_cpu_parse(arg, cpu))
        return 0;
    return opt_error(opt, "needs none, auto or FAMILY/MODEL[/STEPPING], not '%s'", arg);
}

/* A number of a range as ptdump reads it (strtoull, base 0). */
static bool range_number(const char **s, uint64_t *v)
{
    char *end;
    if (!isdigit((unsigned char)**s))
        return false;
    errno = 0;
    *v = strtoull(*s, &end, 0);
    if (errno)
        return false;
    *s = end;
    return true;
}

/* Splits FILE:FROM[-TO] (also FILE:FROM- and FILE:-TO). As in ptdump, the
 * last ':' starts the range only when a range follows it; otherwise it is
 * part of the name (C:\trace.pt). */
static int split_range(const struct opt_command *cmd, char *arg, struct ipt_dump_opts *o)
{
    char *colon = strrchr(arg, ':');
    const char *r;
    bool have_from, have_to = false;
    o->path = arg;
    if (!colon)
        return CLI_CONTINUE;
    r = colon + 1;
    have_from = range_number(&r, &o->from);
    if (*r == '-') {
        r++;
        have_to = range_number(&r, &o->to);
    }
    if (*r || (!have_from && !have_to)) {
        o->from = o->to = 0;
        return CLI_CONTINUE;
    }
    if (have_to && o->to <= o->from)
        return opt_usage_error(cmd, "'%s': the range must end after it starts", arg);
    *colon = '\0';
    o->ranged = true;
    return CLI_CONTINUE;
}

static int check_operands(int n, char **argv, struct ipt_dump_opts *o, const struct opt *opts)
{
    if (n != 1)
        return opt_usage_error(&ipt_dump_command, n ? "more than one TRACE" : "missing TRACE");
    o->wrapped = opt_given(opts, "wrapped");
    int rc = split_range(&ipt_dump_command, argv[1], o);
    if (rc == CLI_CONTINUE && o->ranged && o->wrapped)
        return opt_usage_error(&ipt_dump_command, "a range TRACE:FROM-TO cannot be used with '--wrapped'");
    return rc;
}

int ipt_dump_parse_args(int argc, char **argv, struct ipt_dump_opts *o)
{
    long mtc_freq = 0, nom_freq = 0;
    uint64_t eax = 0, ebx = 0;
    struct opt opts[] = {
        OPT_GROUP("What is printed (ptdump's options)"),
        OPT_FLAG(0, "no-offset", &o->no_offset, "do not print the offset column"),
        OPT_FLAG(0, "raw", &o->show_raw, "print the raw bytes of each packet"),
        OPT_FLAG(0, "lastip", &o->show_lastip, "print the reconstructed IP of IP packets"),
        OPT_FLAG(0, "exec-mode", &o->show_exec_mode, "print the execution mode of MODE.Exec packets"),
        OPT_FLAG(0, "no-pad", &o->no_pad, "do not print PAD packets"),
        OPT_FLAG(0, "no-timing", &o->no_timing, "do not print timing packets (TSC, MTC, CYC,\nCBR, TMA)"),
        OPT_FLAG(0, "no-cyc", &o->no_cyc, "do not print CYC packets, nor use them for time"),
        OPT_FLAG('q', "quiet", &o->quiet, "print diagnostics only"),
        OPT_GROUP("Decoding"),
        OPT_FLAG(0, "no-sync", &o->no_sync, "decode from offset 0 instead of the first PSB"),
        OPT_U64(0, "wrapped", &o->wrap_pos, "POS", 0, NTL_IPT_MAX_TRACE,
                "TRACE is a full circular buffer whose next\n"
                "write position is POS: decode from the first PSB\n"
                "after POS, across the end, up to POS (offsets\n"
                "printed are offsets in the file)"),
        OPT_CALLBACK(0, "cpu", "CPU", cpu_cb, &o->cpu,
                     "decode for this CPU and its errata: none (the\n"
                     "SDM, default), auto (this machine) or\n"
                     "FAMILY/MODEL[/STEPPING]"),
        OPT_INT(0, "mtc-freq", &mtc_freq, "N", 0, 15, "IA32_RTIT_CTL.MTCFreq"),
        OPT_INT(0, "nom-freq", &nom_freq, "N", 0, 255, "nominal core:bus ratio\n(MSR_PLATFORM_INFO[15:8])"),
        OPT_U64(0, "cpuid-0x15.eax", &eax, "N", 0, UINT32_MAX, "CPUID leaf 0x15 EAX (TSC:CTC denominator)"),
        OPT_U64(0, "cpuid-0x15.ebx", &ebx, "N", 0, UINT32_MAX, "CPUID leaf 0x15 EBX (TSC:CTC numerator)"),
        OPT_GROUP("Time (ptdump's options)"),
        OPT_CMDMODE(0, "time", &o->show, IPT_SHOW_TIME, "print the estimated TSC at timing packets"),
        OPT_CMDMODE(0, "tcal", &o->show, IPT_SHOW_TCAL, "print the CYC calibration at timing packets"),
        OPT_FLAG(0, "time-delta", &o->time_delta, "print time and calibration as deltas"),
        OPT_FLAG(0, "no-tcal", &o->no_tcal, "do not calibrate CYC"),
        OPT_FLAG(0, "no-wall-clock", &o->no_wall_clock, "print time relative to the first timing packet"),
        OPT_FLAG(0, "keep-tcal-on-ovf", &o->keep_tcal_on_ovf, "keep the calibration across an overflow"),
        OPT_GROUP("Output options"),
        OPT_CHOICE('f', "format", &o->fmt, "FORMAT", out_format_names,
                   "one record per packet: table, csv, tsv, json\n"
                   "(one document) or jsonl (JSON lines); default:\n"
                   "ptdump's lines"),
        OPT_CALLBACK(0, "local-time", NULL, out_local_time_cb, NULL,
                     "times in local time with their UTC offset (default: UTC)"),
        OPT_END(),
    };
    int n;

    memset(o, 0, sizeof *o);
    o->fmt = IPT_FORMAT_PTDUMP;
    if ((n = parse_options(&ipt_dump_command, opts, argc, argv)) < 0)
        return parse_options_exit(n);
    o->tc.mtc_freq = (uint8_t)mtc_freq;
    o->tc.nom_freq = (uint8_t)nom_freq;
    o->tc.cpuid_15_eax = (uint32_t)eax;
    o->tc.cpuid_15_ebx = (uint32_t)ebx;
    return check_operands(n, argv, o, opts);
}
