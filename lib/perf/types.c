/* Counter types: symbolic names and the properties that decide how a value
 * is computed and shown (WinPerf.h). */
#include "ntlens/perf_value.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

struct type_name {
    uint32_t type;
    const char *name;
};

static const struct type_name types[] = {
    {NTL_PERF_COUNTER_COUNTER, "PERF_COUNTER_COUNTER"},
    {NTL_PERF_COUNTER_TIMER, "PERF_COUNTER_TIMER"},
    {NTL_PERF_COUNTER_QUEUELEN_TYPE, "PERF_COUNTER_QUEUELEN_TYPE"},
    {NTL_PERF_COUNTER_LARGE_QUEUELEN_TYPE, "PERF_COUNTER_LARGE_QUEUELEN_TYPE"},
    {NTL_PERF_COUNTER_100NS_QUEUELEN_TYPE, "PERF_COUNTER_100NS_QUEUELEN_TYPE"},
    {NTL_PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE, "PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE"},
    {NTL_PERF_COUNTER_BULK_COUNT, "PERF_COUNTER_BULK_COUNT"},
    {NTL_PERF_COUNTER_TEXT, "PERF_COUNTER_TEXT"},
    {NTL_PERF_COUNTER_RAWCOUNT, "PERF_COUNTER_RAWCOUNT"},
    {NTL_PERF_COUNTER_LARGE_RAWCOUNT, "PERF_COUNTER_LARGE_RAWCOUNT"},
    {NTL_PERF_COUNTER_RAWCOUNT_HEX, "PERF_COUNTER_RAWCOUNT_HEX"},
    {NTL_PERF_COUNTER_LARGE_RAWCOUNT_HEX, "PERF_COUNTER_LARGE_RAWCOUNT_HEX"},
    {NTL_PERF_SAMPLE_FRACTION, "PERF_SAMPLE_FRACTION"},
    {NTL_PERF_SAMPLE_COUNTER, "PERF_SAMPLE_COUNTER"},
    {NTL_PERF_COUNTER_NODATA, "PERF_COUNTER_NODATA"},
    {NTL_PERF_COUNTER_TIMER_INV, "PERF_COUNTER_TIMER_INV"},
    {NTL_PERF_SAMPLE_BASE, "PERF_SAMPLE_BASE"},
    {NTL_PERF_AVERAGE_TIMER, "PERF_AVERAGE_TIMER"},
    {NTL_PERF_AVERAGE_BASE, "PERF_AVERAGE_BASE"},
    {NTL_PERF_AVERAGE_BULK, "PERF_AVERAGE_BULK"},
    {NTL_PERF_OBJ_TIME_TIMER, "PERF_OBJ_TIME_TIMER"},
    {NTL_PERF_100NSEC_TIMER, "PERF_100NSEC_TIMER"},
    {NTL_PERF_100NSEC_TIMER_INV, "PERF_100NSEC_TIMER_INV"},
    {NTL_PERF_COUNTER_MULTI_TIMER, "PERF_COUNTER_MULTI_TIMER"},
    {NTL_PERF_COUNTER_MULTI_TIMER_INV, "PERF_COUNTER_MULTI_TIMER_INV"},
    {NTL_PERF_COUNTER_MULTI_BASE, "PERF_COUNTER_MULTI_BASE"},
    {NTL_PERF_100NSEC_MULTI_TIMER, "PERF_100NSEC_MULTI_TIMER"},
    {NTL_PERF_100NSEC_MULTI_TIMER_INV, "PERF_100NSEC_MULTI_TIMER_INV"},
    {NTL_PERF_RAW_FRACTION, "PERF_RAW_FRACTION"},
    {NTL_PERF_LARGE_RAW_FRACTION, "PERF_LARGE_RAW_FRACTION"},
    {NTL_PERF_RAW_BASE, "PERF_RAW_BASE"},
    {NTL_PERF_LARGE_RAW_BASE, "PERF_LARGE_RAW_BASE"},
    {NTL_PERF_ELAPSED_TIME, "PERF_ELAPSED_TIME"},
    {NTL_PERF_COUNTER_HISTOGRAM_TYPE, "PERF_COUNTER_HISTOGRAM_TYPE"},
    {NTL_PERF_COUNTER_DELTA, "PERF_COUNTER_DELTA"},
    {NTL_PERF_COUNTER_LARGE_DELTA, "PERF_COUNTER_LARGE_DELTA"},
    {NTL_PERF_PRECISION_SYSTEM_TIMER, "PERF_PRECISION_SYSTEM_TIMER"},
    {NTL_PERF_PRECISION_100NS_TIMER, "PERF_PRECISION_100NS_TIMER"},
    {NTL_PERF_PRECISION_OBJECT_TIMER, "PERF_PRECISION_OBJECT_TIMER"},
};

const char *ntl_perf_type_name(uint32_t type)
{
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (types[i].type == type)
            return types[i].name;
    return NULL;
}

const char *ntl_perf_type_format(uint32_t type, char *buf, size_t size)
{
    const char *name = ntl_perf_type_name(type);
    if (name)
        snprintf(buf, size, "%s", name);
    else
        snprintf(buf, size, "0x%08x", type);
    return buf;
}

bool ntl_perf_type_parse(const char *name, uint32_t *type)
{
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (!strcasecmp(name, types[i].name) || !strcasecmp(name, types[i].name + 5)) {
            *type = types[i].type;
            return true;
        }
    }
    return false;
}

bool ntl_perf_type_is_base(uint32_t type)
{
    switch (type) {
    case NTL_PERF_SAMPLE_BASE:
    case NTL_PERF_AVERAGE_BASE:
    case NTL_PERF_COUNTER_MULTI_BASE:
    case NTL_PERF_RAW_BASE:
    case NTL_PERF_LARGE_RAW_BASE:
        return true;
    default:
        return false;
    }
}

bool ntl_perf_type_needs_base(uint32_t type)
{
    switch (type) {
    case NTL_PERF_SAMPLE_FRACTION:
    case NTL_PERF_AVERAGE_TIMER:
    case NTL_PERF_AVERAGE_BULK:
    case NTL_PERF_COUNTER_MULTI_TIMER:
    case NTL_PERF_COUNTER_MULTI_TIMER_INV:
    case NTL_PERF_100NSEC_MULTI_TIMER:
    case NTL_PERF_100NSEC_MULTI_TIMER_INV:
    case NTL_PERF_RAW_FRACTION:
    case NTL_PERF_LARGE_RAW_FRACTION:
    case NTL_PERF_PRECISION_SYSTEM_TIMER:
    case NTL_PERF_PRECISION_100NS_TIMER:
    case NTL_PERF_PRECISION_OBJECT_TIMER:
        return true;
    default:
        return false;
    }
}

bool ntl_perf_type_needs_two_samples(uint32_t type)
{
    if (ntl_perf_type_is_hidden(type))
        return false;
    return type == NTL_PERF_AVERAGE_TIMER || type == NTL_PERF_AVERAGE_BULK ||
           (type & NTL_PERF_DELTA_COUNTER);
}

bool ntl_perf_type_is_hidden(uint32_t type)
{
    return ntl_perf_type_is_base(type) || type == NTL_PERF_COUNTER_NODATA ||
           type == NTL_PERF_COUNTER_HISTOGRAM_TYPE ||
           (type & NTL_PERF_TYPE_MASK) == NTL_PERF_TYPE_TEXT ||
           (type & NTL_PERF_SIZE_MASK) == NTL_PERF_SIZE_ZERO;
}
