/* ntlens ipt dump: Intel PT packets in exactly the format of libipt's ptdump
 * (same options, same columns, same diagnostics), or one JSON object per
 * packet. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "output.h"
#include "progress.h"
#include "ntlens/ipt_event.h"
#include "ntlens/ipt_packet.h"
#include "ntlens/ipt_time.h"
#include "ntlens/ipt_trace.h"

struct dump_opts {
    bool show_offset, show_raw, show_lastip, show_exec_mode, no_pad, no_sync, quiet;
    bool show_time, show_tcal, time_delta, no_tcal, no_wall_clock, no_cyc;
    bool keep_tcal_on_ovf, track_time, json;
    struct ntl_ipt_time_config tc;
};

/* The event decoder, and the last time and calibration printed (for
 * --time-delta). */
struct tracking {
    struct ntl_ipt_evd evd;
    uint64_t tsc, fcr;
};

/* One output line, column by column, as ptdump lays it out. */
struct line {
    char offset[17];
    char raw[33];
    char opcode[10];
    char payload[64];
    char id[5];
    char track[24];
    bool skip, skip_time, skip_tcal;
    bool have_ip; /* ip: the reconstructed IP of an IP packet */
    uint64_t ip;
};

static void diag(const char *what, uint64_t off, const char *why)
{
    if (why)
        printf("[%" PRIx64 ": %s: %s]\n", off, what, why);
    else
        printf("[%" PRIx64 ": %s]\n", off, what);
}

static void print_line(const struct line *l, const struct dump_opts *o)
{
    char out[256];
    int n = 0;
    const char *sep = "";
    if (l->skip || o->quiet)
        return;
    if (o->show_offset) {
        n += snprintf(out + n, sizeof out - (size_t)n, "%-17s", l->offset);
        sep = " ";
    }
    if (l->raw[0]) {
        n += snprintf(out + n, sizeof out - (size_t)n, "%s%-33s", sep, l->raw);
        sep = " ";
    }
    if (l->payload[0] || l->id[0])
        n += snprintf(out + n, sizeof out - (size_t)n, "%s%-10s", sep, l->opcode);
    else
        n += snprintf(out + n, sizeof out - (size_t)n, "%s%s", sep, l->opcode);
    if (l->id[0])
        n += snprintf(out + n, sizeof out - (size_t)n, " %-25s %-5s%s", l->payload, l->id, l->track);
    else if (l->payload[0])
        n += snprintf(out + n, sizeof out - (size_t)n, " %s", l->payload);
    if (n > (int)sizeof out - 2)
        n = (int)sizeof out - 2;
    out[n++] = '\n';
    fwrite(out, 1, (size_t)n, stdout);
}

static void fmt_ip(char *s, size_t n, unsigned ipc, uint64_t raw)
{
    switch (ipc) {
    case NTL_IPT_IPC_SUPPRESSED:
        snprintf(s, n, "%u: ????????????????", ipc);
        break;
    case NTL_IPT_IPC_UPDATE_16:
        snprintf(s, n, "%u: ????????????%04" PRIx64, ipc, raw);
        break;
    case NTL_IPT_IPC_UPDATE_32:
        snprintf(s, n, "%u: ????????%08" PRIx64, ipc, raw);
        break;
    case NTL_IPT_IPC_SEXT_48:
        snprintf(s, n, "%u: %016" PRIx64, ipc,
                 (uint64_t)((raw & (1ull << 47)) ? (raw | 0xffff000000000000ull) : raw));
        break;
    case NTL_IPT_IPC_UPDATE_48:
        snprintf(s, n, "%u: ????%012" PRIx64, ipc, raw);
        break;
    default:
        snprintf(s, n, "%u: %016" PRIx64, ipc, raw);
        break;
    }
}

static void print_time(struct line *l, struct tracking *t, uint64_t off, const struct dump_opts *o)
{
    uint64_t tsc;
    snprintf(l->id, sizeof l->id, "tsc");
    int rc = ntl_ipt_evd_tsc(&t->evd, &tsc);
    if (rc < 0 && !o->no_wall_clock) {
        diag("error printing time", off, ntl_ipt_time_strerror(rc));
        snprintf(l->track, sizeof l->track, "<unavailable>");
        return;
    }
    if (o->time_delta) {
        if (t->tsc <= tsc)
            snprintf(l->track, sizeof l->track, "+%" PRIx64, tsc - t->tsc);
        else
            snprintf(l->track, sizeof l->track, "-%" PRIx64, t->tsc - tsc);
        t->tsc = tsc;
    } else {
        snprintf(l->track, sizeof l->track, "%016" PRIx64, tsc);
    }
}

static void print_tcal(struct line *l, struct tracking *t, uint64_t off, const struct dump_opts *o)
{
    uint64_t fcr;
    snprintf(l->id, sizeof l->id, "fcr");
    int rc = ntl_ipt_evd_fcr(&t->evd, &fcr);
    if (rc < 0) {
        snprintf(l->track, sizeof l->track, "<unavailable>");
        diag("error printing time", off, ntl_ipt_time_strerror(rc));
        return;
    }
    double d = (double)fcr / (double)(1u << NTL_IPT_FCR_SHIFT);
    if (o->time_delta) {
        double old = (double)t->fcr / (double)(1u << NTL_IPT_FCR_SHIFT);
        snprintf(l->track, sizeof l->track, "%+.3f", d - old);
        t->fcr = fcr;
    } else {
        snprintf(l->track, sizeof l->track, "%.3f", d);
    }
}

static void track_time(struct line *l, struct tracking *t, uint64_t off, const struct dump_opts *o)
{
    if (o->show_tcal && !l->skip_tcal)
        print_tcal(l, t, off, o);
    if (o->show_time && !l->skip_time)
        print_time(l, t, off, o);
}

static void calib_diag(int rc, uint64_t off)
{
    if (rc < 0)
        diag("error calibrating time", off, ntl_ipt_time_strerror(rc));
}

static void update_diag(int rc, uint64_t off)
{
    if (rc < 0)
        diag("error updating time", off, ntl_ipt_time_strerror(rc));
}

/* The event layer's diagnostics for a timing packet, in ptdump's order,
 * then the time columns. */
static void track(const struct ntl_ipt_event *ev, struct line *l, struct tracking *t, uint64_t off,
                  const struct dump_opts *o)
{
    if (!(ev->flags & NTL_IPT_EV_TIMED))
        return;
    if (ev->fcr_status < 0)
        diag("calibration error", off, ntl_ipt_time_strerror(ev->fcr_status));
    calib_diag(ev->tcal_status, off);
    if (ev->time_status == NTL_IPT_UNCALIBRATED)
        diag("error updating time: no calibration", off, NULL);
    else
        update_diag(ev->time_status, off);
    if (ev->pkt.type == NTL_IPT_CBR)
        l->skip_time = true;
    if (ev->pkt.type == NTL_IPT_CYC)
        l->skip_tcal = true;
    track_time(l, t, off, o);
}

static const char *exec_mode_name(unsigned flags)
{
    static const char *const names[] = {
        [NTL_IPT_MODE_UNKNOWN] = "unknown", [NTL_IPT_MODE_16] = "16-bit",
        [NTL_IPT_MODE_32] = "32-bit", [NTL_IPT_MODE_64] = "64-bit",
    };
    return names[ntl_ipt_exec_mode(flags)];
}

static void join_flag(char *s, size_t n, const char *flag)
{
    size_t len = strlen(s);
    snprintf(s + len, n - len, "%s%s", len ? ", " : "", flag);
}

static void format_packet(const struct ntl_ipt_event *ev, struct line *l, struct tracking *t,
                          uint64_t off, const struct dump_opts *o)
{
    const struct ntl_ipt_packet *p = &ev->pkt;
    char *pl = l->payload;
    size_t pn = sizeof l->payload;
    snprintf(l->opcode, sizeof l->opcode, "%s", ntl_ipt_type_name(p->type));
    switch (p->type) {
    case NTL_IPT_PAD:
        l->skip = o->no_pad;
        break;
    case NTL_IPT_TNT_8:
    case NTL_IPT_TNT_64: {
        unsigned i = 0;
        for (unsigned b = p->count; b-- > 0 && i + 1 < pn;)
            pl[i++] = (p->payload >> b) & 1 ? '!' : '.';
        pl[i] = '\0';
        break;
    }
    case NTL_IPT_TIP:
    case NTL_IPT_TIP_PGE:
    case NTL_IPT_TIP_PGD:
    case NTL_IPT_FUP:
        fmt_ip(pl, pn, p->count, p->payload);
        l->have_ip = ev->ip_status == NTL_OK;
        l->ip = ev->ip;
        if (o->show_lastip) {
            snprintf(l->id, sizeof l->id, "ip");
            if (!l->have_ip)
                snprintf(l->track, sizeof l->track, "%s",
                         ev->ip_status == NTL_IPT_IP_SUPPRESSED ? "<suppressed>" : "<unavailable>");
            else
                snprintf(l->track, sizeof l->track, "%016" PRIx64, l->ip);
        }
        break;
    case NTL_IPT_MODE_EXEC:
        pl[0] = '\0';
        if (p->flags & NTL_IPT_F_CSL)
            join_flag(pl, pn, "cs.l");
        if (p->flags & NTL_IPT_F_CSD)
            join_flag(pl, pn, "cs.d");
        if (p->flags & NTL_IPT_F_IF)
            join_flag(pl, pn, "if");
        if (o->show_exec_mode) {
            snprintf(l->id, sizeof l->id, "em");
            snprintf(l->track, sizeof l->track, "%s", exec_mode_name(p->flags));
        }
        break;
    case NTL_IPT_MODE_TSX:
        pl[0] = '\0';
        if (p->flags & NTL_IPT_F_INTX)
            join_flag(pl, pn, "intx");
        if (p->flags & NTL_IPT_F_ABRT)
            join_flag(pl, pn, "abrt");
        break;
    case NTL_IPT_PIP:
        snprintf(pl, pn, "%" PRIx64 "%s", p->payload, (p->flags & NTL_IPT_F_NR) ? ", nr" : "");
        snprintf(l->id, sizeof l->id, "cr3");
        snprintf(l->track, sizeof l->track, "%016" PRIx64, p->payload);
        break;
    case NTL_IPT_VMCS:
        snprintf(pl, pn, "%" PRIx64, p->payload);
        snprintf(l->id, sizeof l->id, "vmcs");
        snprintf(l->track, sizeof l->track, "%016" PRIx64, p->payload);
        break;
    case NTL_IPT_TSC:
    case NTL_IPT_MNT:
        snprintf(pl, pn, "%" PRIx64, p->payload);
        break;
    case NTL_IPT_CYC:
        if (o->no_cyc) {
            l->skip = true;
            return;
        }
        snprintf(pl, pn, "%" PRIx64, p->payload);
        break;
    case NTL_IPT_CBR:
    case NTL_IPT_MTC:
        snprintf(pl, pn, "%" PRIx64, p->payload);
        break;
    case NTL_IPT_TMA:
        snprintf(pl, pn, "%" PRIx64 ", %" PRIx32, p->payload, p->aux);
        break;
    case NTL_IPT_EXSTOP:
        snprintf(pl, pn, "%s", (p->flags & NTL_IPT_F_IP) ? "ip" : "");
        break;
    case NTL_IPT_MWAIT:
        snprintf(pl, pn, "%08" PRIx64 ", %08" PRIx32, p->payload, p->aux);
        break;
    case NTL_IPT_PWRE:
        snprintf(pl, pn, "c%u.%u%s", ((p->aux >> 4) + 1) & 0xf, ((p->aux & 0xf) + 1) & 0xf,
                 (p->flags & NTL_IPT_F_HW) ? ", hw" : "");
        break;
    case NTL_IPT_PWRX: {
        unsigned wr = p->aux >> 8;
        const char *why = (wr & 1) ? "int" : (wr & 4) ? "st" : (wr & 8) ? "hw" : "";
        snprintf(pl, pn, "%s%sc%u, c%u", why, *why ? ": " : "", (((p->aux >> 4) & 0xf) + 1) & 0xf,
                 ((p->aux & 0xf) + 1) & 0xf);
        break;
    }
    case NTL_IPT_PTW:
        snprintf(pl, pn, "%x: %" PRIx64 "%s", p->count, p->payload,
                 (p->flags & NTL_IPT_F_IP) ? ", ip" : "");
        break;
    case NTL_IPT_BBP:
        snprintf(pl, pn, "sz: %u, type: %" PRIx32, p->count ? 4 : 8, p->aux);
        break;
    case NTL_IPT_BIP:
        snprintf(pl, pn, "id: %" PRIx32 ", %" PRIx64, p->aux, p->payload);
        break;
    case NTL_IPT_BEP:
        snprintf(pl, pn, "%s", (p->flags & NTL_IPT_F_IP) ? "ip" : "");
        break;
    case NTL_IPT_CFE: {
        static const char *const names[] = {
            "0", "intr", "iret", "smi", "rsm", "sipi", "init", "vmentry", "vmexit",
            "vmexit_intr", "shutdown", "11", "uintr", "uiret", "swintr", "15",
        };
        unsigned type = p->aux & 0x1f, vec = p->aux >> 8;
        const char *ip = (p->flags & NTL_IPT_F_IP) ? ", ip" : "";
        if (type == 5)
            snprintf(pl, pn, "%u: %x%s", type, vec, ip);
        else if (type == 1 || type == 9 || type == 12 || type == 14)
            snprintf(pl, pn, "%u: %u%s", type, vec, ip);
        else
            snprintf(pl, pn, "%u%s", type, ip);
        snprintf(l->id, sizeof l->id, "type");
        snprintf(l->track, sizeof l->track, "%s", type < 16 ? names[type] : "unknown");
        break;
    }
    case NTL_IPT_EVD: {
        static const char *const names[] = {"cr2", "vmxq", "vmxr"};
        snprintf(pl, pn, "%" PRIu32 ": %" PRIx64, p->aux, p->payload);
        snprintf(l->id, sizeof l->id, "type");
        snprintf(l->track, sizeof l->track, "%s", p->aux < 3 ? names[p->aux] : "unknown");
        break;
    }
    case NTL_IPT_TRIG:
        snprintf(pl, pn, "%02" PRIx32, p->aux & 0xff);
        if (p->flags & NTL_IPT_F_IP)
            snprintf(pl + strlen(pl), pn - strlen(pl), ", ip");
        if (p->flags & NTL_IPT_F_ICNTV)
            snprintf(pl + strlen(pl), pn - strlen(pl), ", icnt: %" PRIu32, p->aux >> 8);
        if (p->flags & NTL_IPT_F_MULT)
            snprintf(pl + strlen(pl), pn - strlen(pl), ", mult");
        break;
    default:
        break;
    }
    track(ev, l, t, off, o);
}

static void json_packet(const struct ntl_ipt_packet *p, uint64_t off, const struct line *l)
{
    printf("{\"offset\":%" PRIu64 ",\"type\":\"%s\",\"size\":%u", off, ntl_ipt_type_name(p->type),
           p->size);
    switch (p->type) {
    case NTL_IPT_TNT_8:
    case NTL_IPT_TNT_64:
        printf(",\"tnt\":\"%s\"", l->payload);
        break;
    case NTL_IPT_TIP:
    case NTL_IPT_TIP_PGE:
    case NTL_IPT_TIP_PGD:
    case NTL_IPT_FUP:
        printf(",\"ipc\":%u", p->count);
        if (p->count)
            printf(",\"ip_bytes\":\"0x%" PRIx64 "\"", p->payload);
        if (l->have_ip)
            printf(",\"ip\":\"0x%016" PRIx64 "\"", l->ip);
        break;
    case NTL_IPT_MODE_EXEC:
        printf(",\"csl\":%s,\"csd\":%s,\"if\":%s", (p->flags & 1) ? "true" : "false",
               (p->flags & 2) ? "true" : "false", (p->flags & 4) ? "true" : "false");
        break;
    case NTL_IPT_MODE_TSX:
        printf(",\"intx\":%s,\"abrt\":%s", (p->flags & 1) ? "true" : "false",
               (p->flags & 2) ? "true" : "false");
        break;
    case NTL_IPT_PIP:
        printf(",\"cr3\":\"0x%" PRIx64 "\",\"nr\":%s", p->payload,
               (p->flags & NTL_IPT_F_NR) ? "true" : "false");
        break;
    case NTL_IPT_PAD:
    case NTL_IPT_PSB:
    case NTL_IPT_PSBEND:
    case NTL_IPT_OVF:
    case NTL_IPT_STOP:
        break;
    default:
        if (l->payload[0]) {
            printf(",\"payload\":");
            out_json_string(stdout, l->payload);
        }
        break;
    }
    if (l->id[0] && l->track[0] && strcmp(l->id, "ip") != 0) {
        printf(",\"%s\":", l->id);
        out_json_string(stdout, l->track);
    }
    fputs("}\n", stdout);
}

static void print_raw(struct line *l, const uint8_t *bytes, unsigned size)
{
    size_t n = 0;
    for (unsigned i = 0; i < size && n + 2 < sizeof l->raw; i++) {
        static const char hex[] = "0123456789abcdef";
        l->raw[n++] = hex[bytes[i] >> 4];
        l->raw[n++] = hex[bytes[i] & 15];
    }
    l->raw[n] = '\0';
}

static void json_error(uint64_t off, const char *what, const char *why)
{
    printf("{\"offset\":%" PRIu64 ",\"error\":", off);
    char msg[160];
    snprintf(msg, sizeof msg, "%s: %s", what, why);
    out_json_string(stdout, msg);
    fputs("}\n", stdout);
}

/* The event layer's configuration for the options given. */
static void config_of(const struct dump_opts *o, const struct ntl_ipt_trace *in,
                      struct ntl_ipt_config *c)
{
    memset(c, 0, sizeof *c);
    c->buf = in->data;
    c->size = in->size;
    c->time = o->tc;
    c->flags = (o->track_time ? NTL_IPT_CFG_TIME : 0) | (o->no_tcal ? NTL_IPT_CFG_NO_TCAL : 0) |
               (o->keep_tcal_on_ovf ? NTL_IPT_CFG_KEEP_TCAL_ON_OVF : 0) |
               (o->no_cyc ? NTL_IPT_CFG_NO_CYC : 0);
}

/* The lines of one event: a run of PAD decodes as one packet, ptdump prints
 * each byte. */
static void print_event(struct ntl_ipt_event *ev, struct tracking *t,
                        const struct ntl_ipt_trace *in, const struct dump_opts *o)
{
    uint64_t off = ev->offset;
    unsigned copies = ev->pkt.type == NTL_IPT_PAD ? ev->pkt.count : 1;
    if (ev->pkt.type == NTL_IPT_PAD)
        ev->pkt.size = ev->pkt.count = 1;
    for (unsigned i = 0; i < copies; i++, off++) {
        struct line l;
        memset(&l, 0, sizeof l);
        uint64_t shown = ntl_ipt_trace_file_offset(in, off);
        if (o->show_offset)
            snprintf(l.offset, sizeof l.offset, "%016" PRIx64, shown);
        if (o->show_raw)
            print_raw(&l, in->data + off, ev->pkt.size);
        format_packet(ev, &l, t, shown, o);
        if (o->json) {
            if (!l.skip && !o->quiet)
                json_packet(&ev->pkt, shown, &l);
        } else {
            print_line(&l, o);
        }
    }
}

static int dump(const char *cmd, const struct ntl_ipt_trace *in, struct dump_opts *o)
{
    struct ntl_ipt_config cfg;
    struct ntl_ipt_event ev;
    struct tracking t = {.tsc = 0, .fcr = 0};
    struct ntl_error err;
    config_of(o, in, &cfg);
    ntl_ipt_evd_init(&t.evd, &cfg);
    ntl_error_clear(&err);
    if (o->no_sync) {
        ntl_ipt_evd_seek(&t.evd, 0);
    } else if (ntl_ipt_evd_sync_first(&t.evd, &err) < 0) {
        fflush(stdout);
        return cli_failf(cmd, "no PSB in the %zu-byte trace: nothing to decode (--no-sync decodes from offset 0)",
                         in->size);
    }
    /* A bar only when the packets go elsewhere than the terminal. */
    struct progress prog = {0};
    bool bar = !isatty(fileno(stdout));
    if (bar)
        progress_start(&prog, "decoding", in->size);
    size_t next_update = 0;
    for (;;) {
        uint64_t off = ntl_ipt_offset(&t.evd.pkt);
        if (bar && off >= next_update) {
            progress_update(&prog, off);
            next_update = off + (1u << 20);
        }
        int rc = ntl_ipt_evd_next(&t.evd, &ev, &err);
        if (rc == 0)
            break;
        if (rc > 0) {
            print_event(&ev, &t, in, o);
            continue;
        }
        uint64_t shown = ntl_ipt_trace_file_offset(in, off);
        if (rc == NTL_ERR_TRUNCATED) {
            fflush(stdout);
            cli_warn(cmd, "the trace ends inside a packet at offset 0x%" PRIx64, shown);
        } else if (o->json) {
            json_error(shown, "error decoding packet", ntl_ipt_fault_str(t.evd.pkt.fault));
        } else {
            diag("error decoding packet", shown, ntl_ipt_fault_str(t.evd.pkt.fault));
        }
        if (ntl_ipt_evd_resync(&t.evd, &err) < 0)
            break;
        t.tsc = t.fcr = 0;
    }
    if (bar)
        progress_end(&prog);
    if (fflush(stdout) != 0)
        return cli_failf(cmd, "write error");
    return EXIT_OK;
}

static void usage(const char *cmd)
{
    printf("Usage: ntlens %s [OPTIONS] TRACE\n"
           "Print the Intel PT packets of TRACE (a raw trace, e.g. perf's AUX area or an\n"
           "ETW ProcessorTrace payload) in the format of libipt's ptdump.\n\n"
           "  --no-offset            do not print the offset column\n"
           "  --raw                  print the raw bytes of each packet\n"
           "  --lastip               print the reconstructed IP of IP packets\n"
           "  --exec-mode            print the execution mode of MODE.Exec packets\n"
           "  --no-pad               do not print PAD packets\n"
           "  --no-cyc               do not print CYC packets, nor use them for time\n"
           "  --no-sync              decode from offset 0 instead of the first PSB\n"
           "  --quiet                print diagnostics only\n"
           "  --wrapped POS          TRACE is a full circular buffer whose next write\n"
           "                         position is POS: decode from the first PSB after POS,\n"
           "                         across the end, up to POS\n"
           "  --time                 print the estimated TSC at timing packets\n"
           "  --time-delta           print time and calibration as deltas\n"
           "  --tcal                 print the CYC calibration at timing packets\n"
           "  --no-tcal              do not calibrate CYC\n"
           "  --no-wall-clock        print time relative to the first timing packet\n"
           "  --keep-tcal-on-ovf     keep the calibration across an overflow\n"
           "  --cpu F/M[/S]          decode for this CPU (applies its errata)\n"
           "  --mtc-freq N           IA32_RTIT_CTL.MTCFreq\n"
           "  --nom-freq N           nominal core:bus ratio\n"
           "  --cpuid-0x15.eax N     CPUID leaf 0x15 EAX (TSC:CTC denominator)\n"
           "  --cpuid-0x15.ebx N     CPUID leaf 0x15 EBX (TSC:CTC numerator)\n"
           "  --format table|json    table: ptdump's format (default); json: one object\n"
           "                         per packet\n"
           "  -h, --help             show this help\n",
           cmd);
}

enum {
    O_NO_OFFSET = 256, O_RAW, O_LASTIP, O_EXEC_MODE, O_NO_PAD, O_NO_CYC, O_NO_SYNC, O_QUIET,
    O_WRAPPED, O_TIME, O_TIME_DELTA, O_TCAL, O_NO_TCAL, O_NO_WALL, O_KEEP_TCAL, O_CPU,
    O_MTC_FREQ, O_NOM_FREQ, O_EAX, O_EBX, O_FORMAT,
};

int cmd_ipt_dump(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"no-offset", no_argument, NULL, O_NO_OFFSET},
        {"raw", no_argument, NULL, O_RAW},
        {"lastip", no_argument, NULL, O_LASTIP},
        {"exec-mode", no_argument, NULL, O_EXEC_MODE},
        {"no-pad", no_argument, NULL, O_NO_PAD},
        {"no-cyc", no_argument, NULL, O_NO_CYC},
        {"no-sync", no_argument, NULL, O_NO_SYNC},
        {"quiet", no_argument, NULL, O_QUIET},
        {"wrapped", required_argument, NULL, O_WRAPPED},
        {"time", no_argument, NULL, O_TIME},
        {"time-delta", no_argument, NULL, O_TIME_DELTA},
        {"tcal", no_argument, NULL, O_TCAL},
        {"no-tcal", no_argument, NULL, O_NO_TCAL},
        {"no-wall-clock", no_argument, NULL, O_NO_WALL},
        {"keep-tcal-on-ovf", no_argument, NULL, O_KEEP_TCAL},
        {"cpu", required_argument, NULL, O_CPU},
        {"mtc-freq", required_argument, NULL, O_MTC_FREQ},
        {"nom-freq", required_argument, NULL, O_NOM_FREQ},
        {"cpuid-0x15.eax", required_argument, NULL, O_EAX},
        {"cpuid-0x15.ebx", required_argument, NULL, O_EBX},
        {"format", required_argument, NULL, O_FORMAT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = argv[0];
    struct dump_opts o;
    memset(&o, 0, sizeof o);
    o.show_offset = true;
    bool wrapped = false;
    uint64_t wrap_pos = 0;
    struct ntl_ipt_cpu cpu;
    memset(&cpu, 0, sizeof cpu);
    enum out_format fmt = OUT_TABLE;
    int c;
    long v;
    uint64_t u;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(cmd);
            return EXIT_OK;
        case O_NO_OFFSET: o.show_offset = false; break;
        case O_RAW: o.show_raw = true; break;
        case O_LASTIP: o.show_lastip = true; break;
        case O_EXEC_MODE: o.show_exec_mode = true; break;
        case O_NO_PAD: o.no_pad = true; break;
        case O_NO_CYC: o.no_cyc = true; break;
        case O_NO_SYNC: o.no_sync = true; break;
        case O_QUIET: o.quiet = true; break;
        case O_TIME: o.show_time = o.track_time = true; break;
        case O_TIME_DELTA: o.time_delta = true; break;
        case O_TCAL: o.show_tcal = o.track_time = true; break;
        case O_NO_TCAL: o.no_tcal = true; break;
        case O_NO_WALL: o.no_wall_clock = true; break;
        case O_KEEP_TCAL: o.keep_tcal_on_ovf = true; break;
        case O_WRAPPED:
            if (!cli_parse_u64(optarg, &wrap_pos))
                return cli_usage_error(cmd, "--wrapped wants a byte position, not '%s'", optarg);
            wrapped = true;
            break;
        case O_CPU:
            if (strcmp(optarg, "none") != 0 && !ntl_ipt_cpu_parse(optarg, &cpu))
                return cli_usage_error(cmd, "--cpu wants FAMILY/MODEL[/STEPPING], not '%s'", optarg);
            break;
        case O_MTC_FREQ:
            if (!cli_parse_int(optarg, 0, 15, &v))
                return cli_usage_error(cmd, "--mtc-freq wants 0..15, not '%s'", optarg);
            o.tc.mtc_freq = (uint8_t)v;
            break;
        case O_NOM_FREQ:
            if (!cli_parse_int(optarg, 0, 255, &v))
                return cli_usage_error(cmd, "--nom-freq wants 0..255, not '%s'", optarg);
            o.tc.nom_freq = (uint8_t)v;
            break;
        case O_EAX:
        case O_EBX:
            if (!cli_parse_u64(optarg, &u) || u > UINT32_MAX)
                return cli_usage_error(cmd, "%s wants a 32-bit number, not '%s'",
                                       c == O_EAX ? "--cpuid-0x15.eax" : "--cpuid-0x15.ebx", optarg);
            if (c == O_EAX)
                o.tc.cpuid_15_eax = (uint32_t)u;
            else
                o.tc.cpuid_15_ebx = (uint32_t)u;
            break;
        case O_FORMAT:
            if (!out_format_parse(optarg, &fmt) || fmt == OUT_CSV)
                return cli_usage_error(cmd, "--format wants table or json, not '%s'", optarg);
            break;
        default:
            if (optopt)
                return cli_usage_error(cmd, "option needs an argument or is unknown: -%c", optopt);
            return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error(cmd, optind >= argc ? "missing TRACE" : "more than one TRACE");
    o.json = fmt == OUT_JSON;

    struct ntl_error err;
    ntl_error_clear(&err);
    struct ntl_ipt_trace in;
    int rc = ntl_ipt_trace_load(&in, argv[optind], wrapped, wrap_pos, &err);
    if (rc < 0) {
        ntl_ipt_trace_free(&in);
        return cli_fail(cmd, &err, argv[optind]);
    }
    static char obuf[1 << 16];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    if (ntl_ipt_cpu_errata(&cpu, &o.tc.errata) < 0)
        diag("failed to determine errata", 0, "unknown cpu");
    rc = dump(cmd, &in, &o);
    ntl_ipt_trace_free(&in);
    return rc;
}
