/* Unit tests for the Intel PT event layer (ntlens/ipt_event.h): last-IP
 * reset at PSB, PSB+ flags, resync, time and calibration state (OVF, CYC
 * without calibration), the end and errors, from hand-made bytes (Intel SDM
 * encodings). */
#include "check.h"

#include "ntlens/ipt_event.h"

#define PSB 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82
#define PSBEND 0x02, 0x23
#define FUP_FULL_401000 0xdd, 0x00, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00
#define TIP_16_1234 0x2d, 0x34, 0x12
#define TIP_PGD_SUPPRESSED 0x01
#define CBR_16 0x02, 0x03, 0x10, 0x00
#define TSC_1000 0x19, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00
#define CYC_1 0x0b
#define OVF 0x02, 0xf3

static void init(struct ntl_ipt_evd *d, const uint8_t *buf, size_t size, unsigned flags)
{
    struct ntl_ipt_config c = {.buf = buf, .size = size, .flags = flags};
    c.time.nom_freq = 32;
    ntl_ipt_evd_init(d, &c);
}

/* The next event, which must exist and be of type type. */
static void next(struct ntl_ipt_evd *d, struct ntl_ipt_event *ev, int type)
{
    struct ntl_error err;
    ntl_error_clear(&err);
    CHECK_EQ_INT(ntl_ipt_evd_next(d, ev, &err), 1);
    CHECK_EQ_INT(ev->pkt.type, type);
}

static void test_psb_resets_last_ip(void)
{
    /* An update-16 after a PSB builds on 0 (0x1234), not on the IP before
     * the PSB (0x401234): the SDM resets the last IP at every PSB. */
    static const uint8_t t[] = {PSB, FUP_FULL_401000, PSBEND, TIP_16_1234,
                                PSB, PSBEND, TIP_16_1234, TIP_PGD_SUPPRESSED, PSBEND};
    struct ntl_ipt_evd d;
    struct ntl_ipt_event ev;
    init(&d, t, sizeof t, 0);
    next(&d, &ev, NTL_IPT_PSB);
    CHECK_EQ_INT(ev.flags, NTL_IPT_EV_IN_PSB);
    CHECK_EQ_U64(ev.offset, 0);
    next(&d, &ev, NTL_IPT_FUP);
    CHECK_EQ_INT(ev.flags, NTL_IPT_EV_IN_PSB | NTL_IPT_EV_IP);
    CHECK_EQ_INT(ev.ip_status, 0);
    CHECK_EQ_U64(ev.ip, 0x401000);
    next(&d, &ev, NTL_IPT_PSBEND);
    CHECK_EQ_INT(ev.flags, NTL_IPT_EV_IN_PSB);
    next(&d, &ev, NTL_IPT_TIP);
    CHECK_EQ_INT(ev.flags, NTL_IPT_EV_IP);
    CHECK_EQ_U64(ev.ip, 0x401234);
    next(&d, &ev, NTL_IPT_PSB);
    next(&d, &ev, NTL_IPT_PSBEND);
    next(&d, &ev, NTL_IPT_TIP);
    CHECK_EQ_INT(ev.ip_status, 0);
    CHECK_EQ_U64(ev.ip, 0x1234);
    CHECK_EQ_U64(ev.offset, 16 + 9 + 2 + 3 + 16 + 2);
    next(&d, &ev, NTL_IPT_TIP_PGD);
    CHECK_EQ_INT(ev.flags, 0);
    CHECK_EQ_INT(ev.ip_status, NTL_IPT_IP_SUPPRESSED);
    CHECK_EQ_U64(ev.ip, 0);
    next(&d, &ev, NTL_IPT_PSBEND); /* a stray PSBEND is not in PSB+ */
    CHECK_EQ_INT(ev.flags, 0);
    /* The end: 0, and not an error. */
    struct ntl_error err;
    ntl_error_clear(&err);
    CHECK_EQ_INT(ntl_ipt_evd_next(&d, &ev, &err), 0);
    CHECK_EQ_INT(err.status, 0);
}

static void test_errors_and_resync(void)
{
    /* A bad opcode: the error names its offset and the decoder stays; resync
     * goes to the next PSB and resets time, which the next event says. */
    static const uint8_t t[] = {PSB, TSC_1000, PSBEND, TIP_16_1234, 0xc9, PSB, PSBEND};
    struct ntl_ipt_evd d;
    struct ntl_ipt_event ev;
    struct ntl_error err;
    uint64_t tsc;
    init(&d, t, sizeof t, NTL_IPT_CFG_TIME);
    ntl_error_clear(&err);
    CHECK_EQ_INT(ntl_ipt_evd_sync_first(&d, &err), 0);
    next(&d, &ev, NTL_IPT_PSB);
    next(&d, &ev, NTL_IPT_TSC);
    CHECK_EQ_INT(ev.flags, NTL_IPT_EV_IN_PSB | NTL_IPT_EV_TIMED);
    CHECK_EQ_INT(ntl_ipt_evd_tsc(&d, &tsc), 0);
    CHECK_EQ_U64(tsc, 0x1000);
    next(&d, &ev, NTL_IPT_PSBEND);
    next(&d, &ev, NTL_IPT_TIP);
    size_t bad = 16 + 8 + 2 + 3;
    CHECK_EQ_INT(ntl_ipt_evd_next(&d, &ev, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, bad);
    CHECK_EQ_INT(d.pkt.fault, NTL_IPT_FAULT_BAD_OPC);
    CHECK_EQ_U64(ntl_ipt_offset(&d.pkt), bad);
    CHECK_EQ_INT(ntl_ipt_evd_resync(&d, &err), 0);
    CHECK_EQ_INT(ntl_ipt_evd_tsc(&d, &tsc), NTL_ERR_NOT_FOUND);
    next(&d, &ev, NTL_IPT_PSB);
    CHECK_EQ_INT(ev.flags, NTL_IPT_EV_IN_PSB | NTL_IPT_EV_RESYNCED);
    CHECK_EQ_U64(ev.offset, bad + 1);
    next(&d, &ev, NTL_IPT_PSBEND);
    CHECK_EQ_INT(ev.flags, NTL_IPT_EV_IN_PSB);
    CHECK_EQ_INT(ntl_ipt_evd_resync(&d, &err), NTL_ERR_NOT_FOUND);

    /* A packet cut by the end of the buffer. */
    static const uint8_t cut[] = {PSB, 0x19, 0x00};
    init(&d, cut, sizeof cut, 0);
    next(&d, &ev, NTL_IPT_PSB);
    CHECK_EQ_INT(ntl_ipt_evd_next(&d, &ev, &err), NTL_ERR_TRUNCATED);
    CHECK_EQ_INT(d.pkt.fault, NTL_IPT_FAULT_EOS);
    /* No PSB: nothing to synchronise at; seek refuses a position past the end. */
    init(&d, cut + 1, sizeof cut - 1, 0);
    CHECK_EQ_INT(ntl_ipt_evd_sync_first(&d, &err), NTL_ERR_NOT_FOUND);
    CHECK_EQ_INT(ntl_ipt_evd_seek(&d, sizeof cut), NTL_ERR_ARGUMENT);
    CHECK_EQ_INT(ntl_ipt_evd_seek(&d, 0), 0);
}

static void test_time(void)
{
    /* CBR in PSB+ with a nominal ratio of 32 calibrates: 32/16 TSC ticks a
     * cycle. A CYC then counts; after an OVF the calibration is gone (the
     * CYC is lost) unless NTL_IPT_CFG_KEEP_TCAL_ON_OVF. */
    static const uint8_t t[] = {PSB, TSC_1000, CBR_16, PSBEND, CYC_1, OVF, CYC_1};
    for (int keep = 0; keep < 2; keep++) {
        struct ntl_ipt_evd d;
        struct ntl_ipt_event ev;
        uint64_t fcr, tsc;
        init(&d, t, sizeof t, NTL_IPT_CFG_TIME | (keep ? NTL_IPT_CFG_KEEP_TCAL_ON_OVF : 0));
        next(&d, &ev, NTL_IPT_PSB);
        next(&d, &ev, NTL_IPT_TSC);
        next(&d, &ev, NTL_IPT_CBR);
        CHECK_EQ_INT(ev.flags, NTL_IPT_EV_IN_PSB | NTL_IPT_EV_TIMED);
        CHECK_EQ_INT(ntl_ipt_evd_fcr(&d, &fcr), 0);
        CHECK_EQ_U64(fcr, 2u << NTL_IPT_FCR_SHIFT);
        next(&d, &ev, NTL_IPT_PSBEND);
        next(&d, &ev, NTL_IPT_CYC);
        CHECK_EQ_INT(ev.fcr_status, 0);
        CHECK_EQ_INT(ev.time_status, 0);
        CHECK_EQ_INT(ntl_ipt_evd_tsc(&d, &tsc), 0);
        CHECK_EQ_U64(tsc, 0x1002);
        next(&d, &ev, NTL_IPT_OVF);
        CHECK_EQ_INT(ntl_ipt_evd_fcr(&d, &fcr), keep ? 0 : NTL_ERR_NOT_FOUND);
        next(&d, &ev, NTL_IPT_CYC);
        CHECK_EQ_INT(ev.fcr_status, keep ? 0 : NTL_ERR_NOT_FOUND);
        CHECK_EQ_INT(ev.time_status, keep ? 0 : NTL_IPT_UNCALIBRATED);
        CHECK_EQ_INT(ntl_ipt_evd_tsc(&d, &tsc), 0);
        CHECK_EQ_U64(tsc, keep ? 0x1004 : 0x1002);
    }
    /* Without NTL_IPT_CFG_TIME timing packets change nothing. */
    struct ntl_ipt_evd d;
    struct ntl_ipt_event ev;
    uint64_t tsc;
    init(&d, t, sizeof t, 0);
    next(&d, &ev, NTL_IPT_PSB);
    next(&d, &ev, NTL_IPT_TSC);
    CHECK_EQ_INT(ev.flags, NTL_IPT_EV_IN_PSB);
    CHECK_EQ_INT(ntl_ipt_evd_tsc(&d, &tsc), NTL_ERR_NOT_FOUND);
    /* NTL_IPT_CFG_NO_CYC: a CYC is not counted. */
    init(&d, t, sizeof t, NTL_IPT_CFG_TIME | NTL_IPT_CFG_NO_CYC);
    next(&d, &ev, NTL_IPT_PSB);
    next(&d, &ev, NTL_IPT_TSC);
    next(&d, &ev, NTL_IPT_CBR);
    next(&d, &ev, NTL_IPT_PSBEND);
    next(&d, &ev, NTL_IPT_CYC);
    CHECK_EQ_INT(ev.flags, 0);
    CHECK_EQ_INT(ntl_ipt_evd_tsc(&d, &tsc), 0);
    CHECK_EQ_U64(tsc, 0x1000);
}

static void test_exec_mode(void)
{
    CHECK_EQ_INT(ntl_ipt_exec_mode(NTL_IPT_F_CSL), NTL_IPT_MODE_64);
    CHECK_EQ_INT(ntl_ipt_exec_mode(NTL_IPT_F_CSL | NTL_IPT_F_IF), NTL_IPT_MODE_64);
    CHECK_EQ_INT(ntl_ipt_exec_mode(NTL_IPT_F_CSD), NTL_IPT_MODE_32);
    CHECK_EQ_INT(ntl_ipt_exec_mode(0), NTL_IPT_MODE_16);
    CHECK_EQ_INT(ntl_ipt_exec_mode(NTL_IPT_F_CSL | NTL_IPT_F_CSD), NTL_IPT_MODE_UNKNOWN);
}

int main(void)
{
    test_psb_resets_last_ip();
    test_errors_and_resync();
    test_time();
    test_exec_mode();
    return check_exit();
}
