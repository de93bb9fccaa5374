/* Intel PT event layer: the packets of a trace with the state a reader needs
 * folded in, one event per packet, above the packet decoder (ipt_packet.h)
 * and below the flow decoder, as libipt's query decoder sits between its
 * packet and instruction-flow decoders.
 *
 * The event decoder embeds a packet decoder and keeps what packets alone do
 * not say: the last IP (so TIP, TIP.PGE, TIP.PGD and FUP carry the full
 * address, reset at each PSB as the SDM says), whether a packet lies inside
 * PSB+ (between PSB and PSBEND, where packets restate status rather than
 * report an event), and, with NTL_IPT_CFG_TIME, the estimated TSC and the
 * CYC calibration (ntl_ipt_time and ntl_ipt_tcal of ipt_time.h, reset on OVF
 * unless NTL_IPT_CFG_KEEP_TCAL_ON_OVF). After a decode error,
 * ntl_ipt_evd_resync moves to the next PSB and resets all of it.
 *
 * An event's kind is its packet's type, so a flow decoder reads: TNT bits
 * (pkt.payload, pkt.count) for conditional branches; TIP with ip for
 * indirect branches; TIP.PGE / TIP.PGD for tracing enabled / disabled at ip;
 * FUP with ip for the source of an asynchronous event; PSB and PSBEND for the
 * bounds of a status block (NTL_IPT_EV_IN_PSB on what lies between); OVF
 * (trace lost: the next FUP or TIP.PGE says where it resumes); PIP (CR3,
 * pkt.flags NR), VMCS, MODE.Exec (ntl_ipt_exec_mode) and MODE.TSX for
 * context; TSC, MTC, TMA, CYC, CBR for time. */
#ifndef NTLENS_IPT_EVENT_H
#define NTLENS_IPT_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"
#include "ntlens/ipt_config.h"
#include "ntlens/ipt_packet.h"
#include "ntlens/ipt_time.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Flags in ntl_ipt_event.flags. */
#define NTL_IPT_EV_IN_PSB 0x01   /* inside PSB+: a PSB, the packets after it and its PSBEND */
#define NTL_IPT_EV_RESYNCED 0x02 /* the first event after a resync: all state was reset */
#define NTL_IPT_EV_TIMED 0x04    /* a timing packet that updated time (the *_status below) */
#define NTL_IPT_EV_IP 0x08       /* ip is the full IP of a TIP, TIP.PGE, TIP.PGD or FUP */

struct ntl_ipt_event {
    struct ntl_ipt_packet pkt; /* the packet (fields by type: ipt_packet.h) */
    uint64_t offset;           /* of the packet in the configuration's buffer */
    uint64_t ip;               /* TIP, TIP.PGE, TIP.PGD, FUP: the full IP if ip_status is 0 */
    /* TIP, TIP.PGE, TIP.PGD, FUP: 0 (ip is the target) or NTL_IPT_IP_SUPPRESSED
     * (ip 0). An update-16/32/48 right after a reset builds on an IP of 0,
     * as in libipt, so NTL_IPT_NO_IP does not occur here, nor NTL_ERR_FORMAT
     * (the packet decoder refuses reserved compressions). 0 for the others. */
    int16_t ip_status;
    /* With NTL_IPT_EV_TIMED, ipt_time.h statuses (ntl_ipt_time_strerror words
     * them), else 0:
     *   fcr_status   CYC: the calibration the CYC was counted with, 0 or why
     *                there was none (NTL_ERR_NOT_FOUND);
     *   tcal_status  TSC, CBR, MTC, CYC: updating the calibration (0 with
     *                NTL_IPT_CFG_NO_TCAL);
     *   time_status  TSC, CBR, TMA, MTC, CYC: updating the time; for a CYC
     *                NTL_IPT_UNCALIBRATED when it was counted as lost. */
    int16_t fcr_status, tcal_status, time_status;
    uint8_t flags; /* NTL_IPT_EV_* */
};

/* The event decoder. Its fields are public so it can live on the stack;
 * read them only through the functions below (pkt through ntl_ipt_offset and
 * pkt.fault, which says why the last ntl_ipt_evd_next failed). */
struct ntl_ipt_evd {
    struct ntl_ipt_decoder pkt;
    struct ntl_ipt_config cfg;
    struct ntl_ipt_last_ip last_ip;
    struct ntl_ipt_time time;
    struct ntl_ipt_tcal tcal;
    bool in_psb;
    uint8_t pending; /* flags for the next event */
};

/* An event decoder over cfg (copied; cfg->buf is not) at offset 0, not
 * synchronised, with all state reset. Cannot fail. */
void ntl_ipt_evd_init(struct ntl_ipt_evd *d, const struct ntl_ipt_config *cfg);

/* Moves to the first PSB of the buffer. Returns 0, or NTL_ERR_NOT_FOUND (err
 * set) when there is none. */
int ntl_ipt_evd_sync_first(struct ntl_ipt_evd *d, struct ntl_error *err);

/* Moves to the next PSB after the current position and the last
 * synchronisation point, and resets the last IP, PSB+ and time state (the
 * next event carries NTL_IPT_EV_RESYNCED). Use after a decode error. Returns
 * 0, or NTL_ERR_NOT_FOUND (err set, nothing moved or reset) when there is no
 * further PSB. */
int ntl_ipt_evd_resync(struct ntl_ipt_evd *d, struct ntl_error *err);

/* Moves to offset off without synchronising (ptdump --no-sync); state is
 * kept. Returns 0, or NTL_ERR_ARGUMENT (nothing moved) when off is past the
 * end of the buffer. */
int ntl_ipt_evd_seek(struct ntl_ipt_evd *d, size_t off);

/* The next event into *ev. Returns:
 *   1                  an event is in *ev;
 *   0                  the end of the buffer (err untouched);
 *   NTL_ERR_TRUNCATED  the next packet runs past the end of the buffer;
 *   NTL_ERR_FORMAT     an unknown opcode or a reserved encoding.
 * On error err names the packet and its absolute offset, d->pkt.fault says
 * which fault it is (ntl_ipt_fault_str), and the decoder does not move:
 * ntl_ipt_evd_resync continues at the next PSB. */
int ntl_ipt_evd_next(struct ntl_ipt_evd *d, struct ntl_ipt_event *ev, struct ntl_error *err);

/* ntl_ipt_evd_next's inline path for the packets most of a trace is: PADs
 * (a run of any length skipped 8 bytes at a time) and a TNT-8 after them,
 * which carry no state the event layer keeps. Returns 1 with *ev the TNT-8
 * as ntl_ipt_evd_next gives it, or 0 when the next packet is another kind,
 * lies within 16 bytes of the end, or follows a resync or a PSB: the PADs
 * before it are passed over and ntl_ipt_evd_next reads it. */
static inline int ntl_ipt_evd_next_tnt(struct ntl_ipt_evd *d, struct ntl_ipt_event *ev)
{
    struct ntl_ipt_decoder *p = &d->pkt;
    if (d->pending || d->in_psb)
        return 0;
    while (p->cur < p->fast_end) {
        unsigned b = p->cur[0];
        if (b == 0) {
            uint64_t w = ntl_ipt_load64_(p->cur);
            p->cur += w ? (unsigned)__builtin_ctzll(w) >> 3 : 8;
            continue;
        }
        if ((b & 1) || b == 2)
            return 0;
        ev->pkt = ntl_ipt_fast_table_[b].pkt;
        ev->offset = ntl_ipt_offset(p);
        ev->ip = 0;
        ev->ip_status = ev->fcr_status = ev->tcal_status = ev->time_status = 0;
        ev->flags = 0;
        p->cur++;
        return 1;
    }
    return 0;
}

/* After a TNT-8 ntl_ipt_evd_next_tnt read, the TNT-8s right after it (PADs
 * between passed over), as that function would read them one by one, up
 * to max of them and while *count (the bits so far) is at most limit:
 * each one's bits appended to *payload (the oldest highest) and added to
 * *count, its offset into off[i] and *count then into end[i]. Returns how
 * many; the decoder stands where ntl_ipt_evd_next_tnt would have left it.
 * The cursor in a local: a run of TNT-8s without a store and reload of
 * the decoder's between them. */
static inline unsigned ntl_ipt_evd_more_tnt8(struct ntl_ipt_evd *d, uint64_t *payload,
                                             unsigned *count, unsigned limit, unsigned max,
                                             uint16_t *end, uint64_t *off)
{
    struct ntl_ipt_decoder *p = &d->pkt;
    const uint8_t *c = p->cur, *fast_end = p->fast_end;
    unsigned n = 0, k = *count;
    uint64_t bits = *payload;
    if (d->pending || d->in_psb)
        return 0;
    while (k <= limit && n < max && c < fast_end) {
        unsigned b = c[0];
        if (b == 0) {
            uint64_t w = ntl_ipt_load64_(c);
            c += w ? (unsigned)__builtin_ctzll(w) >> 3 : 8;
            continue;
        }
        if ((b & 1) || b == 2)
            break;
        const struct ntl_ipt_packet *t = &ntl_ipt_fast_table_[b].pkt;
        off[n] = (uint64_t)(c - p->buf);
        bits = bits << t->count | t->payload;
        k += t->count;
        end[n++] = (uint16_t)k;
        c++;
    }
    p->cur = c;
    *payload = bits;
    *count = k;
    return n;
}

/* ntl_ipt_evd_next's inline path for the IP packets (TIP, TIP.PGE,
 * TIP.PGD, FUP), the rest of most of a trace: returns 1 with *ev the
 * packet as ntl_ipt_evd_next gives it and the last IP updated, or 0 when
 * the next packet is another kind, lies within 16 bytes of the end, or
 * follows a resync or a PSB: then nothing moved. */
static inline int ntl_ipt_evd_next_ip(struct ntl_ipt_evd *d, struct ntl_ipt_event *ev)
{
    static const uint64_t masks[8] = NTL_IPT_FAST_MASKS_;
    /* Bits of the last IP each compression keeps (ntl_ipt_last_ip_update). */
    static const uint64_t keep[8] = {0, ~0xffffull, ~0xffffffffull, 0, ~0xffffffffffffull,
                                     0, 0, 0};
    struct ntl_ipt_decoder *p = &d->pkt;
    if (d->pending || d->in_psb || p->cur >= p->fast_end)
        return 0;
    const struct ntl_ipt_fast_ *e = &ntl_ipt_fast_table_[p->cur[0]];
    if (!e->ip_kind)
        return 0;
    unsigned ipc = e->pkt.count;
    struct ntl_ipt_last_ip *l = &d->last_ip;
    ev->pkt = e->pkt;
    ev->pkt.payload |= ntl_ipt_load64_(p->cur + 1) & masks[e->mask];
    ev->offset = ntl_ipt_offset(p);
    ev->fcr_status = ev->tcal_status = ev->time_status = 0;
    p->cur += e->pkt.size;
    if (ipc == NTL_IPT_IPC_SUPPRESSED) {
        l->suppressed = true;
        ev->ip = 0;
        ev->ip_status = NTL_IPT_IP_SUPPRESSED;
        ev->flags = 0;
        return 1;
    }
    uint64_t raw = ev->pkt.payload;
    if (ipc == NTL_IPT_IPC_SEXT_48)
        raw = (uint64_t)((int64_t)(raw << 16) >> 16);
    l->ip = (l->ip & keep[ipc]) | (raw & ~keep[ipc]);
    l->have_ip = true;
    l->suppressed = false;
    ev->ip = l->ip;
    ev->ip_status = 0;
    ev->flags = NTL_IPT_EV_IP;
    return 1;
}

/* Whether the next packet, PADs passed over, is a TIP with an IP that
 * ntl_ipt_evd_next_tnt (returning 0) then ntl_ipt_evd_next_ip would read:
 * a look ahead, nothing moves. */
static inline bool ntl_ipt_evd_tip_ahead(const struct ntl_ipt_evd *d)
{
    const struct ntl_ipt_decoder *p = &d->pkt;
    const uint8_t *c = p->cur;
    if (d->pending || d->in_psb)
        return false;
    while (c < p->fast_end && *c == 0)
        c++;
    if (c >= p->fast_end)
        return false;
    const struct ntl_ipt_fast_ *e = &ntl_ipt_fast_table_[*c];
    return e->ip_kind && e->pkt.type == NTL_IPT_TIP && e->pkt.count != NTL_IPT_IPC_SUPPRESSED;
}

/* As ntl_ipt_evd_tip_ahead, for a TIP.PGD: 0 when the next packet is no
 * TIP.PGD, 1 for one without an IP, 2 for one with *ip its IP as
 * ntl_ipt_evd_next_ip would give it (nothing moves). */
static inline int ntl_ipt_evd_pgd_ahead(const struct ntl_ipt_evd *d, uint64_t *ip)
{
    static const uint64_t masks[8] = NTL_IPT_FAST_MASKS_;
    static const uint64_t keep[8] = {0, ~0xffffull, ~0xffffffffull, 0, ~0xffffffffffffull,
                                     0, 0, 0};
    const struct ntl_ipt_decoder *p = &d->pkt;
    const uint8_t *c = p->cur;
    if (d->pending || d->in_psb)
        return 0;
    while (c < p->fast_end && *c == 0)
        c++;
    if (c >= p->fast_end)
        return 0;
    const struct ntl_ipt_fast_ *e = &ntl_ipt_fast_table_[*c];
    if (!e->ip_kind || e->pkt.type != NTL_IPT_TIP_PGD)
        return 0;
    unsigned ipc = e->pkt.count;
    if (ipc == NTL_IPT_IPC_SUPPRESSED)
        return 1;
    uint64_t raw = e->pkt.payload | (ntl_ipt_load64_(c + 1) & masks[e->mask]);
    if (ipc == NTL_IPT_IPC_SEXT_48)
        raw = (uint64_t)((int64_t)(raw << 16) >> 16);
    *ip = (d->last_ip.ip & keep[ipc]) | (raw & ~keep[ipc]);
    return 2;
}

/* The estimated TSC now. Returns 0, or NTL_ERR_NOT_FOUND before the first
 * TSC packet (or without NTL_IPT_CFG_TIME); *tsc is then the estimate so far
 * (from MTC and CYC alone, ptdump --no-wall-clock), 0 without any. */
int ntl_ipt_evd_tsc(const struct ntl_ipt_evd *d, uint64_t *tsc);

/* The CYC calibration now (TSC ticks per core cycle, NTL_IPT_FCR_SHIFT
 * fraction bits). Returns 0, or NTL_ERR_NOT_FOUND (*fcr = 0) before any
 * calibration. */
int ntl_ipt_evd_fcr(const struct ntl_ipt_evd *d, uint64_t *fcr);

/* Execution mode of a MODE.Exec packet's flags. */
enum ntl_ipt_exec_mode {
    NTL_IPT_MODE_UNKNOWN = 0, /* CS.L and CS.D both set: reserved */
    NTL_IPT_MODE_16,
    NTL_IPT_MODE_32,
    NTL_IPT_MODE_64,
};
enum ntl_ipt_exec_mode ntl_ipt_exec_mode(unsigned flags);

#ifdef __cplusplus
}
#endif
#endif
