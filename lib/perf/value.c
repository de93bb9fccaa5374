/* Counter values with PDH's formulas. The switch follows Microsoft's
 * "Calculating Counter Values" (Win32 PerfCtrs documentation) case by case;
 * docs/counter-formulas.md lists each formula and its source. */
#include "ntlens/perf_value.h"

int ntl_perf_raw_get(const struct ntl_perf_block *b, const struct ntl_perf_object *o,
                     size_t counter, size_t instance, struct ntl_perf_raw *out,
                     struct ntl_error *err)
{
    if (counter >= o->ncounters || (!o->counters_block && instance >= o->ninstances))
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "PERF_COUNTER_DEFINITION", NTL_NO_OFFSET,
                             "counter %zu / instance %zu out of range", counter, instance);
    const struct ntl_perf_counter_def *c = &o->counters[counter];
    out->type = c->type;
    out->value = ntl_perf_counter_u64(o, counter, instance);
    out->base = 0;
    if (ntl_perf_type_needs_base(c->type)) {
        if (counter + 1 >= o->ncounters)
            return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_COUNTER_DEFINITION", c->file_offset,
                                 "type 0x%08x needs a base counter after it, and it is the "
                                 "object's last counter", c->type);
        out->base = ntl_perf_counter_u64(o, counter + 1, instance);
    }
    out->perf_time = b->perf_time;
    out->perf_freq = b->perf_freq;
    out->perf_time_100ns = b->perf_time_100ns;
    /* Samba never fills an object's PerfTime/PerfFreq (reg_perfcount.c leaves
     * them 0). Windows' elapsed times are FILETIMEs against an object clock
     * that is the current FILETIME, which the block has too. */
    bool object_clock = o->perf_freq > 0;
    out->object_time = object_clock ? o->perf_time : b->perf_time_100ns;
    out->object_freq = object_clock ? o->perf_freq : 10000000;
    return 0;
}

/* Signed difference of two raw values, as PDH takes them (64-bit). */
static int delta(uint64_t now, uint64_t before, double *d)
{
    if (now < before) {
        *d = 0;
        return NTL_PERF_VALUE_NEGATIVE;
    }
    *d = (double)(now - before);
    return NTL_PERF_VALUE_OK;
}

static int time_delta(int64_t now, int64_t before, double *d)
{
    if (now < before) {
        *d = 0;
        return NTL_PERF_VALUE_NEGATIVE;
    }
    *d = (double)now - (double)before;
    return *d == 0 ? NTL_PERF_VALUE_ZERO_DELTA : NTL_PERF_VALUE_OK;
}

/* The denominator a two-sample type divides by: the block's tick clock, its
 * 100 ns clock, the object's clock, or the base counter. */
static int denominator(const struct ntl_perf_raw *cur, const struct ntl_perf_raw *prev, double *d)
{
    switch (cur->type) {
    case NTL_PERF_COUNTER_100NS_QUEUELEN_TYPE:
    case NTL_PERF_100NSEC_TIMER:
    case NTL_PERF_100NSEC_TIMER_INV:
    case NTL_PERF_100NSEC_MULTI_TIMER:
    case NTL_PERF_100NSEC_MULTI_TIMER_INV:
        return time_delta(cur->perf_time_100ns, prev->perf_time_100ns, d);
    case NTL_PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE:
    case NTL_PERF_OBJ_TIME_TIMER:
        return time_delta(cur->object_time, prev->object_time, d);
    case NTL_PERF_SAMPLE_FRACTION:
    case NTL_PERF_AVERAGE_TIMER:
    case NTL_PERF_AVERAGE_BULK:
    case NTL_PERF_PRECISION_SYSTEM_TIMER:
    case NTL_PERF_PRECISION_100NS_TIMER:
    case NTL_PERF_PRECISION_OBJECT_TIMER: {
        int rc = delta(cur->base, prev->base, d);
        if (rc == NTL_PERF_VALUE_OK && *d == 0)
            rc = NTL_PERF_VALUE_ZERO_DELTA;
        return rc;
    }
    default:
        return time_delta(cur->perf_time, prev->perf_time, d);
    }
}

int ntl_perf_value_compute(const struct ntl_perf_raw *cur, const struct ntl_perf_raw *prev,
                           double *value)
{
    uint32_t type = cur->type;
    double n, d;
    int rc;

    *value = 0;
    if (ntl_perf_type_is_hidden(type))
        return NTL_PERF_VALUE_HIDDEN;

    /* one-sample types */
    switch (type) {
    case NTL_PERF_COUNTER_RAWCOUNT:
    case NTL_PERF_COUNTER_LARGE_RAWCOUNT:
    case NTL_PERF_COUNTER_RAWCOUNT_HEX:
    case NTL_PERF_COUNTER_LARGE_RAWCOUNT_HEX:
        *value = (double)cur->value; /* N */
        return NTL_PERF_VALUE_OK;
    case NTL_PERF_RAW_FRACTION:
    case NTL_PERF_LARGE_RAW_FRACTION: /* 100 * N / B */
        if (cur->base == 0)
            return NTL_PERF_VALUE_ZERO_DELTA;
        *value = 100.0 * (double)cur->value / (double)cur->base;
        return NTL_PERF_VALUE_OK;
    case NTL_PERF_ELAPSED_TIME: /* (D0 - N0) / F, D and F of the object */
        if (cur->object_freq <= 0)
            return NTL_PERF_VALUE_ZERO_DELTA;
        if ((uint64_t)cur->object_time < cur->value)
            return NTL_PERF_VALUE_NEGATIVE;
        *value = (double)((uint64_t)cur->object_time - cur->value) / (double)cur->object_freq;
        return NTL_PERF_VALUE_OK;
    default:
        break;
    }

    if (!ntl_perf_type_needs_two_samples(type)) {
        *value = (double)cur->value;
        return NTL_PERF_VALUE_UNKNOWN_TYPE;
    }
    if (!prev)
        return NTL_PERF_VALUE_NEEDS_TWO;
    if ((rc = delta(cur->value, prev->value, &n)) != NTL_PERF_VALUE_OK)
        return rc;
    if (type == NTL_PERF_COUNTER_DELTA || type == NTL_PERF_COUNTER_LARGE_DELTA) {
        *value = n; /* N1 - N0 */
        return NTL_PERF_VALUE_OK;
    }
    if ((rc = denominator(cur, prev, &d)) != NTL_PERF_VALUE_OK)
        return rc;

    switch (type) {
    case NTL_PERF_COUNTER_COUNTER:
    case NTL_PERF_SAMPLE_COUNTER:
    case NTL_PERF_COUNTER_BULK_COUNT: /* (N1 - N0) / ((D1 - D0) / F) */
        if (cur->perf_freq <= 0)
            return NTL_PERF_VALUE_ZERO_DELTA;
        *value = n / (d / (double)cur->perf_freq);
        return NTL_PERF_VALUE_OK;
    case NTL_PERF_COUNTER_QUEUELEN_TYPE:
    case NTL_PERF_COUNTER_LARGE_QUEUELEN_TYPE:
    case NTL_PERF_COUNTER_100NS_QUEUELEN_TYPE:
    case NTL_PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE:
    case NTL_PERF_AVERAGE_BULK: /* (N1 - N0) / (D1 - D0) */
        *value = n / d;
        return NTL_PERF_VALUE_OK;
    case NTL_PERF_COUNTER_TIMER:
    case NTL_PERF_OBJ_TIME_TIMER:
    case NTL_PERF_100NSEC_TIMER:
    case NTL_PERF_PRECISION_SYSTEM_TIMER:
    case NTL_PERF_PRECISION_100NS_TIMER:
    case NTL_PERF_PRECISION_OBJECT_TIMER:
    case NTL_PERF_SAMPLE_FRACTION: /* 100 * (N1 - N0) / (D1 - D0) */
        *value = 100.0 * n / d;
        return NTL_PERF_VALUE_OK;
    case NTL_PERF_COUNTER_TIMER_INV:
    case NTL_PERF_100NSEC_TIMER_INV: /* 100 * (1 - (N1 - N0) / (D1 - D0)) */
        *value = 100.0 * (1.0 - n / d);
        return NTL_PERF_VALUE_OK;
    case NTL_PERF_COUNTER_MULTI_TIMER: /* 100 * ((N1 - N0) / ((D1 - D0) / F)) / B1 */
        if (cur->perf_freq <= 0 || cur->base == 0)
            return NTL_PERF_VALUE_ZERO_DELTA;
        *value = 100.0 * (n / (d / (double)cur->perf_freq)) / (double)cur->base;
        return NTL_PERF_VALUE_OK;
    case NTL_PERF_100NSEC_MULTI_TIMER: /* 100 * ((N1 - N0) / (D1 - D0)) / B1 */
        if (cur->base == 0)
            return NTL_PERF_VALUE_ZERO_DELTA;
        *value = 100.0 * (n / d) / (double)cur->base;
        return NTL_PERF_VALUE_OK;
    case NTL_PERF_COUNTER_MULTI_TIMER_INV:
    case NTL_PERF_100NSEC_MULTI_TIMER_INV: /* 100 * (B1 - (N1 - N0) / (D1 - D0)) */
        *value = 100.0 * ((double)cur->base - n / d);
        return NTL_PERF_VALUE_OK;
    case NTL_PERF_AVERAGE_TIMER: /* ((N1 - N0) / F) / (B1 - B0) */
        if (cur->perf_freq <= 0)
            return NTL_PERF_VALUE_ZERO_DELTA;
        *value = n / (double)cur->perf_freq / d;
        return NTL_PERF_VALUE_OK;
    default:
        *value = (double)cur->value;
        return NTL_PERF_VALUE_UNKNOWN_TYPE;
    }
}

const char *ntl_perf_value_status_name(int status)
{
    switch (status) {
    case NTL_PERF_VALUE_OK: return "ok";
    case NTL_PERF_VALUE_NEEDS_TWO: return "needs two samples";
    case NTL_PERF_VALUE_HIDDEN: return "not displayed";
    case NTL_PERF_VALUE_ZERO_DELTA: return "no time passed";
    case NTL_PERF_VALUE_NEGATIVE: return "counter went backwards";
    case NTL_PERF_VALUE_UNKNOWN_TYPE: return "unknown counter type";
    default: return "?";
    }
}

double ntl_perf_scale(int32_t scale)
{
    double v = 1;
    if (scale > 10)
        scale = 10;
    if (scale < -10)
        scale = -10;
    for (int32_t i = 0; i < scale; i++)
        v *= 10;
    for (int32_t i = 0; i > scale; i--)
        v /= 10;
    return v;
}
