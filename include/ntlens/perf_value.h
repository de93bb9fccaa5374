/* Counter values: turning raw counters into what Windows tools display.
 *
 * Every counter type of WinPerf.h, with the formulas PDH uses (Microsoft
 * "Counter Types" and "Calculating Counter Values"); docs/counter-formulas.md
 * lists each formula and its source. A value is computed from one raw sample
 * (raw counts, fractions, ELAPSED_TIME) or from two (rates, timers, averages,
 * deltas). A raw sample carries the counter's value, its base (the next
 * counter definition, PDH's rule, for fractions, averages, multi-timers and
 * precision timers) and the block's and object's time stamps. */
#ifndef NTLENS_PERF_VALUE_H
#define NTLENS_PERF_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"
#include "ntlens/perf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Counter type fields (WinPerf.h). */
#define NTL_PERF_SIZE_MASK 0x00000300u
#define NTL_PERF_SIZE_DWORD 0x00000000u
#define NTL_PERF_SIZE_LARGE 0x00000100u
#define NTL_PERF_SIZE_ZERO 0x00000200u
#define NTL_PERF_SIZE_VARIABLE_LEN 0x00000300u
#define NTL_PERF_TYPE_MASK 0x00000c00u
#define NTL_PERF_TYPE_NUMBER 0x00000000u
#define NTL_PERF_TYPE_COUNTER 0x00000400u
#define NTL_PERF_TYPE_TEXT 0x00000800u
#define NTL_PERF_TYPE_ZERO 0x00000c00u
#define NTL_PERF_SUBTYPE_MASK 0x000f0000u
#define NTL_PERF_TIMER_MASK 0x00300000u
#define NTL_PERF_TIMER_TICK 0x00000000u
#define NTL_PERF_TIMER_100NS 0x00100000u
#define NTL_PERF_OBJECT_TIMER 0x00200000u
#define NTL_PERF_DELTA_COUNTER 0x00400000u
#define NTL_PERF_DELTA_BASE 0x00800000u
#define NTL_PERF_INVERSE_COUNTER 0x01000000u
#define NTL_PERF_MULTI_COUNTER 0x02000000u
#define NTL_PERF_DISPLAY_MASK 0xf0000000u
#define NTL_PERF_DISPLAY_NO_SUFFIX 0x00000000u
#define NTL_PERF_DISPLAY_PER_SEC 0x10000000u
#define NTL_PERF_DISPLAY_PERCENT 0x20000000u
#define NTL_PERF_DISPLAY_SECONDS 0x30000000u
#define NTL_PERF_DISPLAY_NOSHOW 0x40000000u

/* The counter types of WinPerf.h. */
#define NTL_PERF_COUNTER_COUNTER 0x10410400u
#define NTL_PERF_COUNTER_TIMER 0x20410500u
#define NTL_PERF_COUNTER_QUEUELEN_TYPE 0x00450400u
#define NTL_PERF_COUNTER_LARGE_QUEUELEN_TYPE 0x00450500u
#define NTL_PERF_COUNTER_100NS_QUEUELEN_TYPE 0x00550500u
#define NTL_PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE 0x00650500u
#define NTL_PERF_COUNTER_BULK_COUNT 0x10410500u
#define NTL_PERF_COUNTER_TEXT 0x00000b00u
#define NTL_PERF_COUNTER_RAWCOUNT 0x00010000u
#define NTL_PERF_COUNTER_LARGE_RAWCOUNT 0x00010100u
#define NTL_PERF_COUNTER_RAWCOUNT_HEX 0x00000000u
#define NTL_PERF_COUNTER_LARGE_RAWCOUNT_HEX 0x00000100u
#define NTL_PERF_SAMPLE_FRACTION 0x20c20400u
#define NTL_PERF_SAMPLE_COUNTER 0x00410400u
#define NTL_PERF_COUNTER_NODATA 0x40000200u
#define NTL_PERF_COUNTER_TIMER_INV 0x21410500u
#define NTL_PERF_SAMPLE_BASE 0x40030401u
#define NTL_PERF_AVERAGE_TIMER 0x30020400u
#define NTL_PERF_AVERAGE_BASE 0x40030402u
#define NTL_PERF_AVERAGE_BULK 0x40020500u
#define NTL_PERF_OBJ_TIME_TIMER 0x20610500u
#define NTL_PERF_100NSEC_TIMER 0x20510500u
#define NTL_PERF_100NSEC_TIMER_INV 0x21510500u
#define NTL_PERF_COUNTER_MULTI_TIMER 0x22410500u
#define NTL_PERF_COUNTER_MULTI_TIMER_INV 0x23410500u
#define NTL_PERF_COUNTER_MULTI_BASE 0x42030500u
#define NTL_PERF_100NSEC_MULTI_TIMER 0x22510500u
#define NTL_PERF_100NSEC_MULTI_TIMER_INV 0x23510500u
#define NTL_PERF_RAW_FRACTION 0x20020400u
#define NTL_PERF_LARGE_RAW_FRACTION 0x20020500u
#define NTL_PERF_RAW_BASE 0x40030403u
#define NTL_PERF_LARGE_RAW_BASE 0x40030500u
#define NTL_PERF_ELAPSED_TIME 0x30240500u
#define NTL_PERF_COUNTER_HISTOGRAM_TYPE 0x80000000u
#define NTL_PERF_COUNTER_DELTA 0x00400400u
#define NTL_PERF_COUNTER_LARGE_DELTA 0x00400500u
#define NTL_PERF_PRECISION_SYSTEM_TIMER 0x20470500u
#define NTL_PERF_PRECISION_100NS_TIMER 0x20570500u
#define NTL_PERF_PRECISION_OBJECT_TIMER 0x20670500u

/* "PERF_COUNTER_COUNTER" etc., or NULL for a type WinPerf.h does not name. */
const char *ntl_perf_type_name(uint32_t type);
/* The symbolic name, or "0xXXXXXXXX" for other types, into buf. */
const char *ntl_perf_type_format(uint32_t type, char *buf, size_t size);
/* The type whose symbolic name is `name` (with or without "PERF_"),
 * case-insensitive; false when unknown. */
bool ntl_perf_type_parse(const char *name, uint32_t *type);

/* A base counter (never displayed; consumed by the counter before it). */
bool ntl_perf_type_is_base(uint32_t type);
/* The type's value is computed with the next counter definition as base
 * (fractions, averages, multi-timers, precision timers). */
bool ntl_perf_type_needs_base(uint32_t type);
/* The value needs two samples (rates, timers, averages, deltas). */
bool ntl_perf_type_needs_two_samples(uint32_t type);
/* Not a displayable number: bases, NODATA, TEXT, HISTOGRAM, NOSHOW. */
bool ntl_perf_type_is_hidden(uint32_t type);

/* Everything one counter contributes to a value at one moment. */
struct ntl_perf_raw {
    uint32_t type;
    uint64_t value;          /* the counter (PDH FirstValue) */
    uint64_t base;           /* the next definition's value when needs_base, else 0 */
    int64_t perf_time;       /* block PerfTime (system high-resolution ticks) */
    int64_t perf_freq;       /* block PerfFreq */
    int64_t perf_time_100ns; /* block PerfTime100nSec */
    int64_t object_time;     /* object PerfTime (PERF_OBJECT_TIMER types), or the
                              * block's PerfTime100nSec when the object's
                              * PerfFreq is 0 (Samba) */
    int64_t object_freq;     /* object PerfFreq, or 10^7 likewise */
};

/* Reads the raw sample of definition `counter` for `instance` (ignored for
 * objects without instances). A type that needs a base whose next
 * definition is missing is NTL_ERR_FORMAT naming the definition's offset. */
int ntl_perf_raw_get(const struct ntl_perf_block *b, const struct ntl_perf_object *o,
                     size_t counter, size_t instance, struct ntl_perf_raw *out,
                     struct ntl_error *err);

/* Outcome of a computation (>= 0; not an error: PDH reports these as
 * counter status, not failures). */
enum ntl_perf_value_status {
    NTL_PERF_VALUE_OK = 0,
    NTL_PERF_VALUE_NEEDS_TWO,   /* a rate and only one sample: no value yet */
    NTL_PERF_VALUE_HIDDEN,      /* base, NODATA, TEXT, HISTOGRAM: nothing to show */
    NTL_PERF_VALUE_ZERO_DELTA,  /* no time (or base) passed: value set to 0 */
    NTL_PERF_VALUE_NEGATIVE,    /* the counter or time went backwards (reset/wrap) */
    NTL_PERF_VALUE_UNKNOWN_TYPE,/* a type WinPerf.h does not define */
};

/* Computes the displayed value from `cur` and, for two-sample types, the
 * earlier sample `prev` (may be NULL). Unscaled (PDH's default display);
 * multiply by ntl_perf_scale(default_scale) to apply DefaultScale. Returns an
 * enum ntl_perf_value_status; *value is set (0 when there is none). */
int ntl_perf_value_compute(const struct ntl_perf_raw *cur, const struct ntl_perf_raw *prev,
                           double *value);
const char *ntl_perf_value_status_name(int status);

/* 10^scale for scale in [-10, 10] (clamped). */
double ntl_perf_scale(int32_t scale);

#ifdef __cplusplus
}
#endif
#endif
