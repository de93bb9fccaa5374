/* Intel PT timing: folding TSC, TMA, MTC, CYC and CBR packets into an
 * estimated TSC, and calibrating CYC (core cycles) against MTC/TSC (wall
 * clock) the way libipt's ptdump does, so `ntlens ipt dump --time` prints the
 * same numbers.
 *
 * Two objects: ntl_ipt_time estimates the TSC at each timing packet;
 * ntl_ipt_tcal estimates the fast-counter ratio (FCR: TSC ticks per core
 * cycle, fixed point with NTL_IPT_FCR_SHIFT fraction bits) that CYC needs.
 *
 * Functions return 0 or a negative ntl_status; ntl_ipt_time_strerror words
 * each the way ptdump does: NTL_ERR_NOT_FOUND "no timing information",
 * NTL_ERR_FORMAT "unknown packet", NTL_ERR_UNSUPPORTED "unexpected packet
 * context", NTL_ERR_ARGUMENT "bad configuration", NTL_ERR_LIMIT "internal
 * error". */
#ifndef NTLENS_IPT_TIME_H
#define NTLENS_IPT_TIME_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NTL_IPT_FCR_SHIFT 8

/* CPU errata that change time tracking (skl168) and the flow decoder's
 * reading of the trace (the others), named and listed per CPU as libipt
 * does. */
struct ntl_ipt_errata {
    bool skl168; /* CYC packets can be dropped when immediately preceding PSB */
    bool bdm70;  /* a PSB+ before a TIP.PGE may hold a FUP although tracing is disabled */
    bool bdm64;  /* the branch before a TSX abort may lose its TNT or TIP */
    bool apl11;  /* an OVF may be followed by a TIP.PGD */
    bool apl12;  /* an OVF may be followed by a FUP although tracing is disabled */
    bool skd010; /* the FUP after an OVF may be missing (a TIP follows instead) */
    bool skd022; /* a VM entry may be reported as an asynchronous disable (FUP, TIP.PGD) */
    bool skl014; /* a direct branch out of the filtered range sends TIP.PGD without its IP */
};

struct ntl_ipt_cpu {
    unsigned family, model, stepping;
    bool known; /* false: no --cpu given */
};

/* Parses "FAMILY/MODEL[/STEPPING]" (decimal). */
bool ntl_ipt_cpu_parse(const char *s, struct ntl_ipt_cpu *cpu);
/* The errata of a CPU. NTL_ERR_UNSUPPORTED for a CPU we cannot identify
 * (family 0), with *errata cleared. */
int ntl_ipt_cpu_errata(const struct ntl_ipt_cpu *cpu, struct ntl_ipt_errata *errata);

struct ntl_ipt_time_config {
    uint8_t mtc_freq;       /* IA32_RTIT_CTL.MTCFreq */
    uint8_t nom_freq;       /* nominal core:bus ratio (P1); 0: unknown */
    uint32_t cpuid_15_eax;  /* TSC:CTC ratio denominator */
    uint32_t cpuid_15_ebx;  /* TSC:CTC ratio numerator */
    struct ntl_ipt_errata errata;
};

struct ntl_ipt_time {
    uint64_t tsc;     /* estimated TSC at the last update */
    uint64_t base;    /* TSC at the last TSC/MTC, minus TMA's fast counter */
    uint64_t fc;      /* fast-counter ticks (TSC units) since base */
    uint32_t ctc;     /* CTC at the last MTC (or TMA) */
    uint32_t ctc_cyc; /* CTC where the current CYC period started */
    uint32_t lost_mtc, lost_cyc;
    uint8_t cbr;
    bool have_tsc, have_cbr, have_tma, have_mtc;
};

struct ntl_ipt_tcal {
    uint64_t fcr, min_fcr, max_fcr;
    uint64_t tsc;     /* last TSC */
    uint64_t cyc_tsc; /* cycles since that TSC */
    uint64_t cyc_mtc; /* cycles since the last MTC */
    uint32_t ctc;     /* CTC of the last MTC */
    uint32_t lost_mtc;
    bool have_mtc, check_skl168;
};

void ntl_ipt_time_init(struct ntl_ipt_time *t);
/* 0 and the TSC, or NTL_ERR_NOT_FOUND before the first TSC (*tsc is then
 * the estimate so far, 0 without any). */
int ntl_ipt_time_tsc(const struct ntl_ipt_time *t, uint64_t *tsc);
int ntl_ipt_time_tsc_pkt(struct ntl_ipt_time *t, uint64_t tsc);
int ntl_ipt_time_cbr_pkt(struct ntl_ipt_time *t, uint8_t cbr);
int ntl_ipt_time_tma_pkt(struct ntl_ipt_time *t, uint16_t ctc, uint16_t fc,
                         const struct ntl_ipt_time_config *c);
int ntl_ipt_time_mtc_pkt(struct ntl_ipt_time *t, uint8_t ctc, const struct ntl_ipt_time_config *c);
/* fcr 0 (uncalibrated) counts the CYC as lost. */
int ntl_ipt_time_cyc_pkt(struct ntl_ipt_time *t, uint64_t cyc, const struct ntl_ipt_time_config *c,
                         uint64_t fcr);

void ntl_ipt_tcal_init(struct ntl_ipt_tcal *k);
/* 0 and the FCR, or NTL_ERR_NOT_FOUND before any calibration. */
int ntl_ipt_tcal_fcr(const struct ntl_ipt_tcal *k, uint64_t *fcr);
int ntl_ipt_tcal_psb(struct ntl_ipt_tcal *k, const struct ntl_ipt_time_config *c);
/* in_header: the packet is inside PSB+ (between PSB and PSBEND). */
int ntl_ipt_tcal_tsc_pkt(struct ntl_ipt_tcal *k, uint64_t tsc, bool in_header);
int ntl_ipt_tcal_cbr_pkt(struct ntl_ipt_tcal *k, uint8_t cbr, bool in_header,
                         const struct ntl_ipt_time_config *c);
int ntl_ipt_tcal_mtc_pkt(struct ntl_ipt_tcal *k, uint8_t ctc, const struct ntl_ipt_time_config *c);
int ntl_ipt_tcal_cyc_pkt(struct ntl_ipt_tcal *k, uint64_t cyc);

const char *ntl_ipt_time_strerror(int status);

#ifdef __cplusplus
}
#endif
#endif
