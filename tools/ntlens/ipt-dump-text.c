/* ipt dump's packet lines, byte for byte as libipt's ptdump prints them:
 * the columns of each packet, the time tracking columns, and ptdump's
 * bracketed diagnostics. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ipt-dump.h"
#include "ntlens/ipt_packet.h"

void ipt_dump_diag(const struct ipt_dump_state *s, const char *what, uint64_t off, const char *why)
{
    if (s->o->fmt != IPT_FORMAT_PTDUMP) {
        /* Records hold packets only: what ptdump prints between them is a warning. */
        if (why)
            cli_warn(s->cmd, "offset 0x%" PRIx64 ": %s: %s", off, what, why);
        else
            cli_warn(s->cmd, "offset 0x%" PRIx64 ": %s", off, what);
    } else if (why) {
        printf("[%" PRIx64 ": %s: %s]\n", off, what, why);
    } else {
        printf("[%" PRIx64 ": %s]\n", off, what);
    }
}

void ipt_line_print(const struct ipt_line *l, const struct ipt_dump_opts *o)
{
    char out[256];
    int n = 0;
    const char *sep = "";
    if (l->skip || o->quiet)
        return;
    if (!o->no_offset) {
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

void ipt_line_raw(struct ipt_line *l, const uint8_t *bytes, unsigned size)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    for (unsigned i = 0; i < size && n + 2 < sizeof l->raw; i++) {
        l->raw[n++] = hex[bytes[i] >> 4];
        l->raw[n++] = hex[bytes[i] & 15];
    }
    l->raw[n] = '\0';
}

/* ---- time columns ---- */

static void print_time(struct ipt_line *l, struct ipt_dump_state *s, uint64_t off)
{
    uint64_t tsc;
    snprintf(l->id, sizeof l->id, "tsc");
    int rc = ntl_ipt_evd_tsc(&s->evd, &tsc);
    if (rc < 0 && !s->o->no_wall_clock) {
        ipt_dump_diag(s, "error printing time", off, ntl_ipt_time_strerror(rc));
        snprintf(l->track, sizeof l->track, "<unavailable>");
        return;
    }
    l->have_tsc = true;
    l->tsc = tsc;
    if (s->o->time_delta) {
        if (s->tsc <= tsc)
            snprintf(l->track, sizeof l->track, "+%" PRIx64, tsc - s->tsc);
        else
            snprintf(l->track, sizeof l->track, "-%" PRIx64, s->tsc - tsc);
        s->tsc = tsc;
    } else {
        snprintf(l->track, sizeof l->track, "%016" PRIx64, tsc);
    }
}

static void print_tcal(struct ipt_line *l, struct ipt_dump_state *s, uint64_t off)
{
    uint64_t fcr;
    snprintf(l->id, sizeof l->id, "fcr");
    int rc = ntl_ipt_evd_fcr(&s->evd, &fcr);
    if (rc < 0) {
        snprintf(l->track, sizeof l->track, "<unavailable>");
        ipt_dump_diag(s, "error printing time", off, ntl_ipt_time_strerror(rc));
        return;
    }
    double d = (double)fcr / (double)(1u << NTL_IPT_FCR_SHIFT);
    l->have_fcr = true;
    l->fcr = d;
    if (s->o->time_delta) {
        double old = (double)s->fcr / (double)(1u << NTL_IPT_FCR_SHIFT);
        snprintf(l->track, sizeof l->track, "%+.3f", d - old);
        s->fcr = fcr;
    } else {
        snprintf(l->track, sizeof l->track, "%.3f", d);
    }
}

static void status_diag(const struct ipt_dump_state *s, const char *what, int rc, uint64_t off)
{
    if (rc < 0)
        ipt_dump_diag(s, what, off, ntl_ipt_time_strerror(rc));
}

/* The event layer's diagnostics for a timing packet, in ptdump's order,
 * then the time columns. */
static void track(const struct ntl_ipt_event *ev, struct ipt_line *l, struct ipt_dump_state *s,
                  uint64_t off)
{
    if (!(ev->flags & NTL_IPT_EV_TIMED))
        return;
    status_diag(s, "calibration error", ev->fcr_status, off);
    status_diag(s, "error calibrating time", ev->tcal_status, off);
    if (ev->time_status == NTL_IPT_UNCALIBRATED)
        ipt_dump_diag(s, "error updating time: no calibration", off, NULL);
    else
        status_diag(s, "error updating time", ev->time_status, off);
    if (ev->pkt.type == NTL_IPT_CBR)
        l->skip_time = true;
    if (ev->pkt.type == NTL_IPT_CYC)
        l->skip_tcal = true;
    if (s->o->show == IPT_SHOW_TCAL && !l->skip_tcal)
        print_tcal(l, s, off);
    if (s->o->show == IPT_SHOW_TIME && !l->skip_time)
        print_time(l, s, off);
}

/* ---- payloads ---- */

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

static void format_ip(const struct ntl_ipt_event *ev, struct ipt_line *l, const struct ipt_dump_opts *o)
{
    fmt_ip(l->payload, sizeof l->payload, ev->pkt.count, ev->pkt.payload);
    if (!o->show_lastip)
        return;
    snprintf(l->id, sizeof l->id, "ip");
    if (ev->ip_status == NTL_OK)
        snprintf(l->track, sizeof l->track, "%016" PRIx64, ev->ip);
    else
        snprintf(l->track, sizeof l->track, "%s",
                 ev->ip_status == NTL_IPT_IP_SUPPRESSED ? "<suppressed>" : "<unavailable>");
}

static void join_flag(char *s, size_t n, unsigned flags, unsigned flag, const char *name)
{
    size_t len = strlen(s);
    if (flags & flag)
        snprintf(s + len, n - len, "%s%s", len ? ", " : "", name);
}

const char *ipt_exec_mode_name(unsigned flags)
{
    static const char *const names[] = {
        [NTL_IPT_MODE_UNKNOWN] = "unknown", [NTL_IPT_MODE_16] = "16-bit",
        [NTL_IPT_MODE_32] = "32-bit", [NTL_IPT_MODE_64] = "64-bit",
    };
    return names[ntl_ipt_exec_mode(flags)];
}

const char *ipt_event_type_name(const struct ntl_ipt_packet *p)
{
    static const char *const cfe[] = {
        "0", "intr", "iret", "smi", "rsm", "sipi", "init", "vmentry", "vmexit",
        "vmexit_intr", "shutdown", "11", "uintr", "uiret", "swintr", "15",
    };
    static const char *const evd[] = {"cr2", "vmxq", "vmxr"};
    unsigned type = p->aux & 0x1f;
    if (p->type == NTL_IPT_CFE)
        return type < 16 ? cfe[type] : "unknown";
    return p->aux < 3 ? evd[p->aux] : "unknown";
}

static void format_mode(const struct ntl_ipt_packet *p, struct ipt_line *l, const struct ipt_dump_opts *o)
{
    char *pl = l->payload;
    size_t pn = sizeof l->payload;
    pl[0] = '\0';
    if (p->type == NTL_IPT_MODE_TSX) {
        join_flag(pl, pn, p->flags, NTL_IPT_F_INTX, "intx");
        join_flag(pl, pn, p->flags, NTL_IPT_F_ABRT, "abrt");
        return;
    }
    join_flag(pl, pn, p->flags, NTL_IPT_F_CSL, "cs.l");
    join_flag(pl, pn, p->flags, NTL_IPT_F_CSD, "cs.d");
    join_flag(pl, pn, p->flags, NTL_IPT_F_IF, "if");
    if (o->show_exec_mode) {
        snprintf(l->id, sizeof l->id, "em");
        snprintf(l->track, sizeof l->track, "%s", ipt_exec_mode_name(p->flags));
    }
}

/* PWRE, PWRX, MWAIT, EXSTOP. */
static void format_power(const struct ntl_ipt_packet *p, char *pl, size_t pn)
{
    unsigned wr = p->aux >> 8;
    const char *why = (wr & 1) ? "int" : (wr & 4) ? "st" : (wr & 8) ? "hw" : "";
    switch (p->type) {
    case NTL_IPT_PWRE:
        snprintf(pl, pn, "c%u.%u%s", ((p->aux >> 4) + 1) & 0xf, ((p->aux & 0xf) + 1) & 0xf,
                 (p->flags & NTL_IPT_F_HW) ? ", hw" : "");
        break;
    case NTL_IPT_PWRX:
        snprintf(pl, pn, "%s%sc%u, c%u", why, *why ? ": " : "", (((p->aux >> 4) & 0xf) + 1) & 0xf,
                 ((p->aux & 0xf) + 1) & 0xf);
        break;
    case NTL_IPT_MWAIT:
        snprintf(pl, pn, "%08" PRIx64 ", %08" PRIx32, p->payload, p->aux);
        break;
    default: /* EXSTOP */
        snprintf(pl, pn, "%s", (p->flags & NTL_IPT_F_IP) ? "ip" : "");
        break;
    }
}

static void format_cfe(const struct ntl_ipt_packet *p, struct ipt_line *l)
{
    unsigned type = p->aux & 0x1f, vec = p->aux >> 8;
    const char *ip = (p->flags & NTL_IPT_F_IP) ? ", ip" : "";
    if (type == 5)
        snprintf(l->payload, sizeof l->payload, "%u: %x%s", type, vec, ip);
    else if (type == 1 || type == 9 || type == 12 || type == 14)
        snprintf(l->payload, sizeof l->payload, "%u: %u%s", type, vec, ip);
    else
        snprintf(l->payload, sizeof l->payload, "%u%s", type, ip);
    snprintf(l->id, sizeof l->id, "type");
    snprintf(l->track, sizeof l->track, "%s", ipt_event_type_name(p));
}

static void format_trig(const struct ntl_ipt_packet *p, char *pl, size_t pn)
{
    snprintf(pl, pn, "%02" PRIx32, p->aux & 0xff);
    if (p->flags & NTL_IPT_F_IP)
        snprintf(pl + strlen(pl), pn - strlen(pl), ", ip");
    if (p->flags & NTL_IPT_F_ICNTV)
        snprintf(pl + strlen(pl), pn - strlen(pl), ", icnt: %" PRIu32, p->aux >> 8);
    if (p->flags & NTL_IPT_F_MULT)
        snprintf(pl + strlen(pl), pn - strlen(pl), ", mult");
}

/* CFE, EVD, TRIG, PTW and the block packets BBP, BIP, BEP. */
static void format_event(const struct ntl_ipt_packet *p, struct ipt_line *l)
{
    char *pl = l->payload;
    size_t pn = sizeof l->payload;
    switch (p->type) {
    case NTL_IPT_CFE:
        format_cfe(p, l);
        break;
    case NTL_IPT_EVD:
        snprintf(pl, pn, "%" PRIu32 ": %" PRIx64, p->aux, p->payload);
        snprintf(l->id, sizeof l->id, "type");
        snprintf(l->track, sizeof l->track, "%s", ipt_event_type_name(p));
        break;
    case NTL_IPT_TRIG:
        format_trig(p, pl, pn);
        break;
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
    default: /* BEP */
        snprintf(pl, pn, "%s", (p->flags & NTL_IPT_F_IP) ? "ip" : "");
        break;
    }
}

/* TSC, MTC, CYC, CBR, TMA: ptdump's --no-timing hides their lines, --no-cyc
 * the CYC lines. */
static void format_timing(const struct ntl_ipt_packet *p, struct ipt_line *l,
                          const struct ipt_dump_opts *o)
{
    if (p->type == NTL_IPT_TMA)
        snprintf(l->payload, sizeof l->payload, "%" PRIx64 ", %" PRIx32, p->payload, p->aux);
    else
        snprintf(l->payload, sizeof l->payload, "%" PRIx64, p->payload);
    l->skip = o->no_timing || (p->type == NTL_IPT_CYC && o->no_cyc);
}

static void format_tnt(const struct ntl_ipt_packet *p, char *pl, size_t pn)
{
    unsigned i = 0;
    for (unsigned b = p->count; b-- > 0 && i + 1 < pn;)
        pl[i++] = (p->payload >> b) & 1 ? '!' : '.';
    pl[i] = '\0';
}

static void format_paging(const struct ntl_ipt_packet *p, struct ipt_line *l)
{
    if (p->type == NTL_IPT_PIP) {
        snprintf(l->payload, sizeof l->payload, "%" PRIx64 "%s", p->payload,
                 (p->flags & NTL_IPT_F_NR) ? ", nr" : "");
        snprintf(l->id, sizeof l->id, "cr3");
    } else {
        snprintf(l->payload, sizeof l->payload, "%" PRIx64, p->payload);
        snprintf(l->id, sizeof l->id, "vmcs");
    }
    snprintf(l->track, sizeof l->track, "%016" PRIx64, p->payload);
}

void ipt_line_format(const struct ntl_ipt_event *ev, struct ipt_line *l, struct ipt_dump_state *s,
                     uint64_t off)
{
    const struct ntl_ipt_packet *p = &ev->pkt;
    snprintf(l->opcode, sizeof l->opcode, "%s", ntl_ipt_type_name(p->type));
    switch (p->type) {
    case NTL_IPT_PAD:
        l->skip = s->o->no_pad;
        break;
    case NTL_IPT_TNT_8:
    case NTL_IPT_TNT_64:
        format_tnt(p, l->payload, sizeof l->payload);
        break;
    case NTL_IPT_TIP:
    case NTL_IPT_TIP_PGE:
    case NTL_IPT_TIP_PGD:
    case NTL_IPT_FUP:
        format_ip(ev, l, s->o);
        break;
    case NTL_IPT_MODE_EXEC:
    case NTL_IPT_MODE_TSX:
        format_mode(p, l, s->o);
        break;
    case NTL_IPT_PIP:
    case NTL_IPT_VMCS:
        format_paging(p, l);
        break;
    case NTL_IPT_MNT:
        snprintf(l->payload, sizeof l->payload, "%" PRIx64, p->payload);
        break;
    case NTL_IPT_TSC:
    case NTL_IPT_MTC:
    case NTL_IPT_CYC:
    case NTL_IPT_CBR:
    case NTL_IPT_TMA:
        format_timing(p, l, s->o);
        if (p->type == NTL_IPT_CYC && s->o->no_cyc)
            return;
        break;
    case NTL_IPT_EXSTOP:
    case NTL_IPT_MWAIT:
    case NTL_IPT_PWRE:
    case NTL_IPT_PWRX:
        format_power(p, l->payload, sizeof l->payload);
        break;
    case NTL_IPT_CFE:
    case NTL_IPT_EVD:
    case NTL_IPT_TRIG:
    case NTL_IPT_PTW:
    case NTL_IPT_BBP:
    case NTL_IPT_BIP:
    case NTL_IPT_BEP:
        format_event(p, l);
        break;
    default:
        break;
    }
    track(ev, l, s, off);
}
