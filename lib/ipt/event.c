/* The Intel PT event layer (ntlens/ipt_event.h): the packet decoder's
 * packets with the last IP, PSB+ and time state folded in. */
#include "ntlens/ipt_event.h"

static void reset_state(struct ntl_ipt_evd *d)
{
    ntl_ipt_last_ip_init(&d->last_ip);
    ntl_ipt_time_init(&d->time);
    ntl_ipt_tcal_init(&d->tcal);
    d->in_psb = false;
}

void ntl_ipt_evd_init(struct ntl_ipt_evd *d, const struct ntl_ipt_config *cfg)
{
    d->cfg = *cfg;
    ntl_ipt_decoder_init_config(&d->pkt, cfg);
    reset_state(d);
    d->pending = 0;
}

int ntl_ipt_evd_sync_first(struct ntl_ipt_evd *d, struct ntl_error *err)
{
    return ntl_ipt_sync_first(&d->pkt, err);
}

int ntl_ipt_evd_resync(struct ntl_ipt_evd *d, struct ntl_error *err)
{
    int rc = ntl_ipt_resync(&d->pkt, err);
    if (rc < 0)
        return rc;
    reset_state(d);
    d->pending = NTL_IPT_EV_RESYNCED;
    return NTL_OK;
}

int ntl_ipt_evd_seek(struct ntl_ipt_evd *d, size_t off)
{
    return ntl_ipt_seek(&d->pkt, off);
}

/* A CYC: counted with the calibration so far; without one it is lost, which
 * ptdump reports as "no calibration". */
static void time_cyc(struct ntl_ipt_evd *d, struct ntl_ipt_event *ev)
{
    uint64_t fcr = 0;
    if (!(d->cfg.flags & NTL_IPT_CFG_NO_TCAL)) {
        int rc = ntl_ipt_tcal_fcr(&d->tcal, &fcr);
        if (rc < 0) {
            fcr = 0;
            ev->fcr_status = (int16_t)rc;
        }
        ev->tcal_status = (int16_t)ntl_ipt_tcal_cyc_pkt(&d->tcal, ev->pkt.payload);
    }
    int rc = ntl_ipt_time_cyc_pkt(&d->time, ev->pkt.payload, &d->cfg.time, fcr);
    ev->time_status = (int16_t)(rc < 0 ? rc : fcr ? NTL_OK : NTL_IPT_UNCALIBRATED);
}

/* Time and calibration for a timing packet, in the order ptdump applies them
 * (calibration first: a TSC in PSB+ calibrates against the previous one). */
static void track_time(struct ntl_ipt_evd *d, struct ntl_ipt_event *ev)
{
    const struct ntl_ipt_time_config *c = &d->cfg.time;
    const struct ntl_ipt_packet *p = &ev->pkt;
    bool tcal = !(d->cfg.flags & NTL_IPT_CFG_NO_TCAL);
    switch (p->type) {
    case NTL_IPT_TSC:
        if (tcal)
            ev->tcal_status = (int16_t)ntl_ipt_tcal_tsc_pkt(&d->tcal, p->payload, d->in_psb);
        ev->time_status = (int16_t)ntl_ipt_time_tsc_pkt(&d->time, p->payload);
        break;
    case NTL_IPT_CBR:
        if (tcal)
            ev->tcal_status =
                (int16_t)ntl_ipt_tcal_cbr_pkt(&d->tcal, (uint8_t)p->payload, d->in_psb, c);
        ev->time_status = (int16_t)ntl_ipt_time_cbr_pkt(&d->time, (uint8_t)p->payload);
        break;
    case NTL_IPT_TMA:
        ev->time_status = (int16_t)ntl_ipt_time_tma_pkt(&d->time, (uint16_t)p->payload,
                                                        (uint16_t)p->aux, c);
        break;
    case NTL_IPT_MTC:
        if (tcal)
            ev->tcal_status = (int16_t)ntl_ipt_tcal_mtc_pkt(&d->tcal, (uint8_t)p->payload, c);
        ev->time_status = (int16_t)ntl_ipt_time_mtc_pkt(&d->time, (uint8_t)p->payload, c);
        break;
    case NTL_IPT_CYC:
        if (d->cfg.flags & NTL_IPT_CFG_NO_CYC)
            return;
        time_cyc(d, ev);
        break;
    default:
        return;
    }
    ev->flags |= NTL_IPT_EV_TIMED;
}

int ntl_ipt_evd_next(struct ntl_ipt_evd *d, struct ntl_ipt_event *ev, struct ntl_error *err)
{
    size_t off = ntl_ipt_offset(&d->pkt);
    int rc = ntl_ipt_next(&d->pkt, &ev->pkt, err);
    if (rc <= 0)
        return rc;
    ev->offset = off;
    ev->ip = 0;
    ev->ip_status = ev->fcr_status = ev->tcal_status = ev->time_status = 0;
    ev->flags = d->pending | (d->in_psb ? NTL_IPT_EV_IN_PSB : 0);
    d->pending = 0;
    bool timed = d->cfg.flags & NTL_IPT_CFG_TIME;
    switch (ev->pkt.type) {
    case NTL_IPT_PSB:
        /* The SDM: the last IP is 0 at a PSB; PSB+ restates the rest. */
        d->in_psb = true;
        ev->flags |= NTL_IPT_EV_IN_PSB;
        if (timed && !(d->cfg.flags & NTL_IPT_CFG_NO_TCAL))
            ntl_ipt_tcal_psb(&d->tcal, &d->cfg.time);
        ntl_ipt_last_ip_init(&d->last_ip);
        break;
    case NTL_IPT_PSBEND:
        d->in_psb = false; /* the PSBEND itself is flagged when it ends a PSB+ */
        break;
    case NTL_IPT_OVF:
        if (timed && !(d->cfg.flags & NTL_IPT_CFG_KEEP_TCAL_ON_OVF))
            ntl_ipt_tcal_init(&d->tcal);
        break;
    case NTL_IPT_TIP:
    case NTL_IPT_TIP_PGE:
    case NTL_IPT_TIP_PGD:
    case NTL_IPT_FUP:
        ntl_ipt_last_ip_update(&d->last_ip, ev->pkt.count, ev->pkt.payload);
        ev->ip_status = (int16_t)ntl_ipt_last_ip_query(&d->last_ip, &ev->ip);
        if (ev->ip_status == NTL_OK)
            ev->flags |= NTL_IPT_EV_IP;
        break;
    default:
        if (timed)
            track_time(d, ev);
        break;
    }
    return 1;
}

int ntl_ipt_evd_tsc(const struct ntl_ipt_evd *d, uint64_t *tsc)
{
    return ntl_ipt_time_tsc(&d->time, tsc);
}

int ntl_ipt_evd_fcr(const struct ntl_ipt_evd *d, uint64_t *fcr)
{
    int rc = ntl_ipt_tcal_fcr(&d->tcal, fcr);
    if (rc < 0)
        *fcr = 0;
    return rc;
}

enum ntl_ipt_exec_mode ntl_ipt_exec_mode(unsigned flags)
{
    bool csl = flags & NTL_IPT_F_CSL, csd = flags & NTL_IPT_F_CSD;
    if (csl)
        return csd ? NTL_IPT_MODE_UNKNOWN : NTL_IPT_MODE_64;
    return csd ? NTL_IPT_MODE_32 : NTL_IPT_MODE_16;
}
