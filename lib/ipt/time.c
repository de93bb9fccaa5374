/* Time estimation and CYC calibration (ntlens/ipt_time.h).
 *
 * The TSC advances with TSC packets (full value), with MTC packets (8 bits of
 * the crystal clock counter CTC, bits [mtc_freq + 7 : mtc_freq]; one CTC tick
 * is cpuid_15_ebx / cpuid_15_eax TSC ticks) and with CYC packets (core cycles
 * since the previous CYC, converted to TSC ticks with the calibrated FCR).
 * TMA, right after a TSC, gives the CTC and fast counter at that TSC so that
 * later MTCs can be placed relative to it. The behaviour mirrors what
 * libipt's ptdump prints for the same packets, including its estimates for
 * lost MTCs and the SKL168 workaround. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/error.h"
#include "ntlens/ipt_time.h"

#define MTC_BITS 8u
#define TMA_CTC_BITS 16u
#define TMA_CTC_MASK 0xffffu
#define TSC_BITS 56u

bool ntl_ipt_cpu_parse(const char *s, struct ntl_ipt_cpu *cpu)
{
    unsigned long v[3] = {0, 0, 0};
    int n = 0;
    const char *p = s;
    memset(cpu, 0, sizeof *cpu);
    while (n < 3) {
        char *end;
        if (*p < '0' || *p > '9')
            return false;
        errno = 0;
        v[n++] = strtoul(p, &end, 10);
        if (errno || v[n - 1] > 0xffff)
            return false;
        p = end;
        if (*p == '\0')
            break;
        if (*p != '/')
            return false;
        p++;
    }
    if (*p != '\0' || n < 2)
        return false;
    cpu->family = (unsigned)v[0];
    cpu->model = (unsigned)v[1];
    cpu->stepping = (unsigned)v[2];
    cpu->known = true;
    return true;
}

int ntl_ipt_cpu_errata(const struct ntl_ipt_cpu *cpu, struct ntl_ipt_errata *errata)
{
    memset(errata, 0, sizeof *errata);
    if (!cpu->known)
        return NTL_OK;
    if (cpu->family == 0)
        return NTL_ERR_UNSUPPORTED;
    /* libipt's table (pt_cpu_errata), for the errata ntlens applies. */
    unsigned fm = cpu->family << 8 | cpu->model;
    switch (fm) {
    case 0x63d: case 0x647: case 0x64f: case 0x656: /* Broadwell */
        errata->bdm70 = errata->bdm64 = true;
        break;
    case 0x64e: case 0x65e: case 0x68e: case 0x69e: case 0x6a5: case 0x6a6: /* Skylake client */
        errata->bdm70 = errata->skd022 = errata->skd010 = errata->skl168 = true;
        errata->skl014 = true;
        break;
    case 0x655: case 0x66a: case 0x66c:
    case 0x666: case 0x67d: case 0x67e: case 0x68c: case 0x68d: case 0x6a7: case 0x6a8:
        errata->bdm70 = errata->skd022 = errata->skl014 = true;
        break;
    case 0x68f: case 0x6cf: case 0x6ad: case 0x6ae: case 0x1301:
        errata->bdm70 = errata->skd022 = true;
        break;
    case 0x697: case 0x69a: case 0x6ba: case 0x6b7: case 0x6bf: case 0x6c5: case 0x6c6:
    case 0x6b5: case 0x6aa: case 0x6ac: case 0x6bd: case 0x6cc: case 0x6d5: case 0x1201:
    case 0x1203:
        errata->bdm70 = errata->skd022 = errata->apl11 = true;
        break;
    case 0x65c: case 0x65f: /* Apollo Lake */
        errata->apl12 = errata->apl11 = true;
        break;
    case 0x67a: case 0x686: case 0x696: case 0x69c: case 0x6b6: case 0x6af: case 0x6dd:
        errata->apl11 = true;
        break;
    default:
        break;
    }
    return NTL_OK;
}

const char *ntl_ipt_time_strerror(int status)
{
    switch (status) {
    case NTL_OK:
        return "OK";
    case NTL_ERR_NOT_FOUND:
        return "no timing information";
    case NTL_ERR_FORMAT:
        return "unknown packet";
    case NTL_ERR_UNSUPPORTED:
        return "unexpected packet context";
    case NTL_ERR_ARGUMENT:
        return "bad configuration";
    default:
        return "internal error";
    }
}

void ntl_ipt_time_init(struct ntl_ipt_time *t)
{
    memset(t, 0, sizeof *t);
}

int ntl_ipt_time_tsc(const struct ntl_ipt_time *t, uint64_t *tsc)
{
    *tsc = t->tsc;
    return t->have_tsc ? NTL_OK : NTL_ERR_NOT_FOUND;
}

/* CTC ticks from last to now, allowing one wrap of the bits MTC carries. */
static int ctc_delta(uint32_t now, uint32_t last, const struct ntl_ipt_time_config *c,
                     uint32_t *delta)
{
    if (now < last) {
        now += 1u << (c->mtc_freq + MTC_BITS);
        if (now < last)
            return NTL_ERR_FORMAT;
    }
    *delta = now - last;
    return NTL_OK;
}

/* CTC ticks to TSC ticks. */
static int ctc_to_tsc(uint64_t ctc, const struct ntl_ipt_time_config *c, uint64_t *tsc)
{
    if (!c->cpuid_15_eax || !c->cpuid_15_ebx)
        return NTL_ERR_ARGUMENT;
    *tsc = ctc * c->cpuid_15_ebx / c->cpuid_15_eax;
    return NTL_OK;
}

int ntl_ipt_time_tsc_pkt(struct ntl_ipt_time *t, uint64_t tsc)
{
    t->have_tsc = true;
    t->have_tma = false;
    t->have_mtc = false;
    t->tsc = t->base = tsc;
    t->ctc = 0;
    t->fc = 0;
    t->lost_mtc = t->lost_cyc = 0;
    return NTL_OK;
}

int ntl_ipt_time_cbr_pkt(struct ntl_ipt_time *t, uint8_t cbr)
{
    if (!cbr)
        return NTL_ERR_FORMAT;
    t->have_cbr = true;
    t->cbr = cbr;
    return NTL_OK;
}

int ntl_ipt_time_tma_pkt(struct ntl_ipt_time *t, uint16_t ctc, uint16_t fc,
                         const struct ntl_ipt_time_config *c)
{
    if (!t->have_tsc || t->have_tma)
        return NTL_ERR_UNSUPPORTED;
    if (t->have_mtc)
        return NTL_ERR_LIMIT;
    unsigned hi = c->mtc_freq + MTC_BITS;
    t->have_tma = true;
    t->base -= fc;
    t->fc += fc;
    /* When TMA carries every CTC bit MTC does, it serves as the first MTC;
     * otherwise the next MTC fills in the missing high bits. */
    if (hi <= TMA_CTC_BITS)
        t->have_mtc = true;
    t->ctc = t->ctc_cyc = ctc & ((1u << hi) - 1u);
    return NTL_OK;
}

int ntl_ipt_time_mtc_pkt(struct ntl_ipt_time *t, uint8_t pkt_ctc, const struct ntl_ipt_time_config *c)
{
    bool had_tsc = t->have_tsc, had_tma = t->have_tma, had_mtc = t->have_mtc;
    /* MTCs between TSC and its TMA would look like CTC overflows. */
    if (had_tsc && !had_tma)
        return NTL_OK;
    uint64_t base = t->base;
    uint32_t last = t->ctc;
    uint32_t ctc = (uint32_t)pkt_ctc << c->mtc_freq;
    if (t->fc || t->lost_cyc || !had_mtc)
        t->ctc_cyc = ctc;
    t->have_mtc = true;
    t->fc = 0;
    t->ctc = ctc;
    t->lost_cyc = 0;
    if (!had_mtc) {
        /* Without a TMA we cannot tell where in its period this first MTC
         * falls: it only sets the reference. */
        if (!had_tma)
            return NTL_OK;
        if (last & ~TMA_CTC_MASK)
            return NTL_ERR_LIMIT;
        /* Borrow the high CTC bits TMA lacks from this MTC, one period
         * back when the low bits wrapped in between. */
        uint32_t lo = ctc & TMA_CTC_MASK, hi = ctc & ~TMA_CTC_MASK;
        if (lo < last) {
            hi -= 1u << TMA_CTC_BITS;
            hi &= 0xffu << c->mtc_freq;
        }
        last |= hi;
    }
    uint32_t delta;
    int rc = ctc_delta(ctc, last, c, &delta);
    if (rc < 0) {
        t->lost_mtc++;
        return rc;
    }
    uint64_t ticks;
    rc = ctc_to_tsc(delta, c, &ticks);
    if (rc < 0)
        return rc;
    t->tsc = t->base = base + ticks;
    return NTL_OK;
}

int ntl_ipt_time_cyc_pkt(struct ntl_ipt_time *t, uint64_t cyc, const struct ntl_ipt_time_config *c,
                         uint64_t fcr)
{
    if (!fcr) {
        t->lost_cyc++;
        return NTL_OK;
    }
    uint64_t fc = t->fc;
    if (!fc && t->ctc != t->ctc_cyc) {
        /* The first CYC after one or more MTCs covers cycles from before
         * the last MTC too: take out the estimate for those periods. */
        uint32_t delta;
        uint64_t ticks;
        int rc = ctc_delta(t->ctc, t->ctc_cyc, c, &delta);
        if (rc < 0)
            return rc;
        rc = ctc_to_tsc(delta, c, &ticks);
        if (rc < 0)
            return rc;
        uint64_t adj = (ticks << NTL_IPT_FCR_SHIFT) / fcr;
        cyc = adj <= cyc ? cyc - adj : 0;
    }
    fc += (cyc * fcr) >> NTL_IPT_FCR_SHIFT;
    t->fc = fc;
    t->tsc = t->base + fc;
    return NTL_OK;
}

void ntl_ipt_tcal_init(struct ntl_ipt_tcal *k)
{
    memset(k, 0, sizeof *k);
    k->min_fcr = UINT64_MAX;
}

static bool tcal_have(const struct ntl_ipt_tcal *k)
{
    return k->min_fcr <= k->max_fcr;
}

int ntl_ipt_tcal_fcr(const struct ntl_ipt_tcal *k, uint64_t *fcr)
{
    if (!tcal_have(k))
        return NTL_ERR_NOT_FOUND;
    *fcr = k->fcr;
    return NTL_OK;
}

static void tcal_set(struct ntl_ipt_tcal *k, uint64_t fcr)
{
    k->fcr = fcr;
    if (fcr < k->min_fcr)
        k->min_fcr = fcr;
    if (fcr > k->max_fcr)
        k->max_fcr = fcr;
}

int ntl_ipt_tcal_psb(struct ntl_ipt_tcal *k, const struct ntl_ipt_time_config *c)
{
    if (c->errata.skl168)
        k->check_skl168 = true;
    return NTL_OK;
}

int ntl_ipt_tcal_tsc_pkt(struct ntl_ipt_tcal *k, uint64_t tsc, bool in_header)
{
    uint64_t last = k->tsc, cyc = k->cyc_tsc;
    k->tsc = tsc;
    k->cyc_tsc = 0;
    /* Only TSCs in PSB+ are regular enough to calibrate with; MTC, when
     * there is one, is the better reference. */
    if (!in_header || !last || !cyc || k->have_mtc)
        return NTL_OK;
    if (tsc < last) {
        tsc += 1ull << TSC_BITS;
        if (tsc < last)
            return NTL_ERR_FORMAT;
    }
    uint64_t delta = tsc - last;
    if (delta >> (64 - NTL_IPT_FCR_SHIFT))
        return NTL_ERR_LIMIT;
    tcal_set(k, (delta << NTL_IPT_FCR_SHIFT) / cyc);
    return NTL_OK;
}

int ntl_ipt_tcal_cbr_pkt(struct ntl_ipt_tcal *k, uint8_t cbr, bool in_header,
                         const struct ntl_ipt_time_config *c)
{
    /* A CBR outside PSB+ is a frequency change: start calibrating anew. */
    if (!in_header)
        ntl_ipt_tcal_init(k);
    if (!c->nom_freq)
        return NTL_OK;
    if (!cbr)
        return NTL_ERR_FORMAT;
    tcal_set(k, ((uint64_t)c->nom_freq << NTL_IPT_FCR_SHIFT) / cbr);
    return NTL_OK;
}

int ntl_ipt_tcal_mtc_pkt(struct ntl_ipt_tcal *k, uint8_t pkt_ctc, const struct ntl_ipt_time_config *c)
{
    uint32_t last = k->ctc;
    uint64_t cyc = k->cyc_mtc;
    bool check_skl168 = k->check_skl168;
    k->check_skl168 = false;
    uint32_t ctc = (uint32_t)pkt_ctc << c->mtc_freq;
    if (!k->have_mtc) {
        k->cyc_mtc = 0;
        k->ctc = ctc;
        k->have_mtc = true;
        return NTL_OK;
    }
    /* No cycles yet: spread the next ones over both periods. */
    if (!cyc)
        return NTL_OK;
    k->cyc_mtc = 0;
    k->ctc = ctc;
    k->lost_mtc++;
    uint32_t delta;
    uint64_t fc;
    int rc = ctc_delta(ctc, last, c, &delta);
    if (rc < 0)
        return rc;
    rc = ctc_to_tsc(delta, c, &fc);
    if (rc < 0)
        return rc;
    if (fc >> (64 - NTL_IPT_FCR_SHIFT))
        return NTL_ERR_LIMIT;
    uint64_t fcr = (fc << NTL_IPT_FCR_SHIFT) / cyc;
    if (check_skl168) {
        /* SKL168: the CYC before a PSB may be lost. Skip this MTC when MTCs
         * were lost since the PSB, or when the cycles fall well short of
         * what the current calibration predicts (a lost 4096-cycle wrap). */
        if ((1u << c->mtc_freq) < delta)
            return NTL_OK;
        if (c->mtc_freq < 10 && tcal_have(k)) {
            uint64_t expect = (k->fcr * (cyc + 0xf00)) >> NTL_IPT_FCR_SHIFT;
            if (expect < fc)
                return NTL_OK;
        }
    }
    tcal_set(k, fcr);
    k->lost_mtc = 0;
    return NTL_OK;
}

int ntl_ipt_tcal_cyc_pkt(struct ntl_ipt_tcal *k, uint64_t cyc)
{
    k->cyc_mtc += cyc;
    k->cyc_tsc += cyc;
    return NTL_OK;
}
