/* Any object and counter of a block as Prometheus metrics: the mapping of
 * PDH's raw counter types that include/ntlens/prom.h documents. Raw values
 * only: Prometheus computes rates from successive scrapes, so a scrape needs
 * one sample, as PDH's two-sample formulas would not. */
#include "ntlens/prom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/perf_value.h"
#include "seen.h"

/* How a raw counter becomes a number. */
enum how { RAW, PER_FREQ, PER_100NS, PER_OBJ_FREQ, RATIO, ELAPSED };

struct conv {
    enum ntl_prom_type type;
    const char *unit;  /* suffix after the name */
    enum how how;
    bool base_family;  /* also "<name>_base_total" from the base */
};

static bool classify(uint32_t t, struct conv *c)
{
    static const struct {
        uint32_t type;
        struct conv conv;
    } map[] = {
        {NTL_PERF_COUNTER_COUNTER, {NTL_PROM_COUNTER, "_total", RAW, false}},
        {NTL_PERF_COUNTER_BULK_COUNT, {NTL_PROM_COUNTER, "_total", RAW, false}},
        {NTL_PERF_SAMPLE_COUNTER, {NTL_PROM_COUNTER, "_total", RAW, false}},
        {NTL_PERF_COUNTER_DELTA, {NTL_PROM_COUNTER, "_total", RAW, false}},
        {NTL_PERF_COUNTER_LARGE_DELTA, {NTL_PROM_COUNTER, "_total", RAW, false}},
        {NTL_PERF_COUNTER_TIMER, {NTL_PROM_COUNTER, "_seconds_total", PER_FREQ, false}},
        {NTL_PERF_PRECISION_SYSTEM_TIMER, {NTL_PROM_COUNTER, "_seconds_total", PER_FREQ, false}},
        {NTL_PERF_COUNTER_MULTI_TIMER, {NTL_PROM_COUNTER, "_seconds_total", PER_FREQ, false}},
        {NTL_PERF_COUNTER_TIMER_INV, {NTL_PROM_COUNTER, "_inverse_seconds_total", PER_FREQ, false}},
        {NTL_PERF_COUNTER_MULTI_TIMER_INV,
         {NTL_PROM_COUNTER, "_inverse_seconds_total", PER_FREQ, false}},
        {NTL_PERF_100NSEC_TIMER, {NTL_PROM_COUNTER, "_seconds_total", PER_100NS, false}},
        {NTL_PERF_PRECISION_100NS_TIMER, {NTL_PROM_COUNTER, "_seconds_total", PER_100NS, false}},
        {NTL_PERF_100NSEC_MULTI_TIMER, {NTL_PROM_COUNTER, "_seconds_total", PER_100NS, false}},
        {NTL_PERF_100NSEC_TIMER_INV,
         {NTL_PROM_COUNTER, "_inverse_seconds_total", PER_100NS, false}},
        {NTL_PERF_100NSEC_MULTI_TIMER_INV,
         {NTL_PROM_COUNTER, "_inverse_seconds_total", PER_100NS, false}},
        {NTL_PERF_OBJ_TIME_TIMER, {NTL_PROM_COUNTER, "_seconds_total", PER_OBJ_FREQ, false}},
        {NTL_PERF_PRECISION_OBJECT_TIMER,
         {NTL_PROM_COUNTER, "_seconds_total", PER_OBJ_FREQ, false}},
        {NTL_PERF_COUNTER_QUEUELEN_TYPE, {NTL_PROM_COUNTER, "_seconds_total", PER_FREQ, false}},
        {NTL_PERF_COUNTER_LARGE_QUEUELEN_TYPE,
         {NTL_PROM_COUNTER, "_seconds_total", PER_FREQ, false}},
        {NTL_PERF_COUNTER_100NS_QUEUELEN_TYPE,
         {NTL_PROM_COUNTER, "_seconds_total", PER_100NS, false}},
        {NTL_PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE,
         {NTL_PROM_COUNTER, "_seconds_total", PER_OBJ_FREQ, false}},
        {NTL_PERF_RAW_FRACTION, {NTL_PROM_GAUGE, "_ratio", RATIO, false}},
        {NTL_PERF_LARGE_RAW_FRACTION, {NTL_PROM_GAUGE, "_ratio", RATIO, false}},
        {NTL_PERF_SAMPLE_FRACTION, {NTL_PROM_COUNTER, "_total", RAW, true}},
        {NTL_PERF_AVERAGE_BULK, {NTL_PROM_COUNTER, "_total", RAW, true}},
        {NTL_PERF_AVERAGE_TIMER, {NTL_PROM_COUNTER, "_seconds_total", PER_FREQ, true}},
        {NTL_PERF_ELAPSED_TIME, {NTL_PROM_GAUGE, "_seconds", ELAPSED, false}},
        {NTL_PERF_COUNTER_RAWCOUNT, {NTL_PROM_GAUGE, "", RAW, false}},
        {NTL_PERF_COUNTER_LARGE_RAWCOUNT, {NTL_PROM_GAUGE, "", RAW, false}},
        {NTL_PERF_COUNTER_RAWCOUNT_HEX, {NTL_PROM_GAUGE, "", RAW, false}},
        {NTL_PERF_COUNTER_LARGE_RAWCOUNT_HEX, {NTL_PROM_GAUGE, "", RAW, false}},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i].type == t) {
            *c = map[i].conv;
            return true;
        }
    return false;
}

/* The number a raw sample gives; false when there is none (no time base). */
static bool convert(const struct ntl_perf_raw *r, enum how how, double scale, double *v)
{
    switch (how) {
    case RAW:
        *v = (double)r->value * scale;
        return true;
    case PER_100NS:
        *v = (double)r->value * 1e-7;
        return true;
    case PER_FREQ:
        *v = (double)r->value / (double)r->perf_freq;
        return r->perf_freq > 0;
    case PER_OBJ_FREQ:
        *v = (double)r->value / (double)r->object_freq;
        return r->object_freq > 0;
    case RATIO:
        *v = (double)r->value / (double)r->base;
        return r->base != 0;
    case ELAPSED:
        return ntl_perf_value_compute(r, NULL, v) == NTL_PERF_VALUE_OK;
    }
    return false;
}

struct ctx {
    const struct ntl_prom_page *page;
    const char *ilabel;
    struct ntl_buf *out;
    struct prom_seen seen;
    struct ntl_prom_label *labels; /* page labels, then the instance */
};

/* Replaces the token `from` of a sanitised name by "bytes"; false if absent. */
static bool bytes_token(char *name, size_t size, const char *from)
{
    size_t n = strlen(from), len = strlen(name);
    for (char *p = name; (p = strstr(p, from)) != NULL; p++) {
        bool start = p == name || p[-1] == '_', end = p[n] == '\0' || p[n] == '_';
        if (!start || !end)
            continue;
        if (len - n + 5 >= size)
            return false;
        memmove(p + 5, p + n, strlen(p + n) + 1);
        memcpy(p, "bytes", 5);
        return true;
    }
    return false;
}

/* Removes every token "sec" ("Disk Reads/sec", "Avg. Disk sec/Read"): the
 * unit suffix says seconds, and promtool rejects abbreviated units. */
static void drop_sec(char *buf)
{
    char *p = buf;
    while ((p = strstr(p, "sec")) != NULL) {
        bool start = p == buf || p[-1] == '_', end = p[3] == '\0' || p[3] == '_';
        if (!start || !end) {
            p++;
            continue;
        }
        char *from = p + 3, *to = p;
        if (*from == '_' && p == buf)
            from++;      /* leading "sec_" */
        else if (p != buf)
            to--;        /* "_sec" */
        memmove(to, from, strlen(from) + 1);
        p = to;
    }
}

/* "<counter>" sanitised, "sec" and a trailing "total" dropped, KBytes and
 * MBytes turned into bytes; *scale is what values are multiplied by. */
static void counter_part(const char *name, const struct conv *c, char *buf, size_t size,
                         double *scale)
{
    ntl_prom_sanitize(name, buf, size);
    drop_sec(buf);
    size_t len = strlen(buf);
    if (c->type == NTL_PROM_COUNTER && len >= 6 && strcmp(buf + len - 6, "_total") == 0)
        buf[len -= 6] = '\0';
    *scale = 1;
    if (bytes_token(buf, size, "kbytes"))
        *scale = 1024;
    else if (bytes_token(buf, size, "mbytes") || bytes_token(buf, size, "megabytes"))
        *scale = 1048576;
}

static const char *title(const struct ntl_perf_titles *t, uint32_t index, char *buf, size_t size)
{
    const char *s = t ? ntl_perf_titles_name(t, index) : NULL;
    if (s && *s)
        return s;
    snprintf(buf, size, "%u", index);
    return buf;
}

/* Writes one family: counter `c` of o for every instance, from the value
 * (base = false) or the base. Returns 0, 1 when the name was taken (nothing
 * written), or a negative status. */
static int write_family(struct ctx *x, const struct ntl_perf_object *o, size_t c,
                        const char *name, const char *help, const struct conv *conv,
                        bool base, double scale, struct ntl_error *err)
{
    const struct ntl_prom_page *pg = x->page;
    size_t ni = o->counters_block ? 1 : o->ninstances, nl = pg->nlabels;
    char inst[512];
    int rc = prom_seen_add(&x->seen, name, NULL);
    if (rc <= 0)
        return rc < 0 ? ntl_error_set(err, rc, "metrics page", NTL_NO_OFFSET, "out of memory")
                      : 1;
    if ((rc = ntl_prom_family(x->out, name, help, base ? NTL_PROM_COUNTER : conv->type, err)) < 0)
        return rc;
    for (size_t i = 0; i < ni; i++) {
        struct ntl_perf_raw r;
        double v;
        if (ntl_perf_raw_get(pg->block, o, c, i, &r, NULL) < 0)
            continue;
        if (base)
            v = (double)r.base;
        else if (!convert(&r, conv->how, scale, &v))
            continue;
        if (!o->counters_block) {
            if (pg->keep && !pg->keep(pg->keep_arg, o, &o->instances[i]))
                continue;
            ntl_perf_instance_path_name(&o->instances[i], inst, sizeof inst);
            if ((rc = prom_seen_add(&x->seen, name, inst)) <= 0) {
                if (rc < 0)
                    return ntl_error_set(err, rc, "metrics page", NTL_NO_OFFSET, "out of memory");
                continue;
            }
            x->labels[pg->nlabels] = (struct ntl_prom_label){x->ilabel, inst};
            nl = pg->nlabels + 1;
        }
        if ((rc = ntl_prom_sample(x->out, name, x->labels, nl, v, err)) < 0)
            return rc;
    }
    return 0;
}

/* The family of counter c and, for averages and sample fractions, the
 * family of its base; a name another counter took gets the counter's index. */
static int write_counter(struct ctx *x, const struct ntl_perf_object *o, size_t c,
                         const char *prefix, const char *oname, struct ntl_error *err)
{
    const struct ntl_perf_counter_def *d = &o->counters[c];
    const struct ntl_perf_titles *t = x->page->titles;
    struct conv conv;
    char num[16], part[160], name[400], help[600];
    double scale;
    if (ntl_perf_type_is_hidden(d->type) || !classify(d->type, &conv))
        return 0;
    const char *cname = title(t, d->name_index, num, sizeof num);
    counter_part(cname, &conv, part, sizeof part, &scale);
    if (!*part)
        snprintf(part, sizeof part, "%u", d->name_index);
    const char *h = t ? ntl_perf_titles_help(t, d->help_index) : NULL;
    snprintf(help, sizeof help, "%s: %s", cname, h ? h : "");
    snprintf(name, sizeof name, "%s_%s_%s%s", prefix, oname, part, conv.unit);
    int rc = write_family(x, o, c, name, help, &conv, false, scale, err);
    if (rc == 1) {
        size_t n = strlen(part);
        snprintf(part + n, sizeof part - n, "_%u", d->name_index);
        snprintf(name, sizeof name, "%s_%s_%s%s", prefix, oname, part, conv.unit);
        rc = write_family(x, o, c, name, help, &conv, false, scale, err);
    }
    if (rc != 0 || !conv.base_family)
        return rc < 0 ? rc : 0;
    snprintf(name, sizeof name, "%s_%s_%s_base_total", prefix, oname, part);
    rc = write_family(x, o, c, name, help, &conv, true, 1, err);
    return rc < 0 ? rc : 0;
}

static bool wanted(const struct ntl_prom_generic *opt, const struct ntl_perf_object *o)
{
    uint32_t detail = opt->detail ? opt->detail : NTL_PERF_DETAIL_WIZARD;
    if (!ntl_perf_detail_visible(o->detail_level, detail))
        return false;
    if (!opt->objects)
        return true;
    for (size_t i = 0; i < opt->nobjects; i++)
        if (opt->objects[i] == o->name_index)
            return true;
    return false;
}

static int write_objects(struct ctx *x, const struct ntl_prom_generic *opt, const char *prefix,
                         struct ntl_error *err)
{
    const struct ntl_perf_block *b = x->page->block;
    uint32_t detail = opt->detail ? opt->detail : NTL_PERF_DETAIL_WIZARD;
    char num[16], oname[160];
    for (size_t i = 0; i < b->nobjects; i++) {
        const struct ntl_perf_object *o = &b->objects[i];
        if (!wanted(opt, o))
            continue;
        ntl_prom_sanitize(title(x->page->titles, o->name_index, num, sizeof num), oname,
                          sizeof oname);
        if (!*oname)
            snprintf(oname, sizeof oname, "%u", o->name_index);
        for (size_t c = 0; c < o->ncounters; c++) {
            if (!ntl_perf_detail_visible(o->counters[c].detail_level, detail))
                continue;
            int rc = write_counter(x, o, c, prefix, oname, err);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

int ntl_prom_write_generic(const struct ntl_prom_page *page, const struct ntl_prom_generic *opt,
                           struct ntl_buf *out, struct ntl_error *err)
{
    static const struct ntl_prom_generic defaults;
    struct ctx x = {.page = page, .out = out};
    const char *prefix;
    if (!opt)
        opt = &defaults;
    prefix = opt->prefix ? opt->prefix : "windows_perf";
    x.ilabel = opt->instance_label ? opt->instance_label : "perf_instance";
    if (!ntl_prom_name_valid(prefix) || !ntl_prom_label_name_valid(x.ilabel))
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "metrics page", NTL_NO_OFFSET,
                             "invalid metric prefix or instance label name");
    x.labels = malloc((page->nlabels + 1) * sizeof *x.labels);
    if (!x.labels)
        return ntl_error_set(err, NTL_ERR_NOMEM, "metrics page", NTL_NO_OFFSET, "out of memory");
    if (page->nlabels)
        memcpy(x.labels, page->labels, page->nlabels * sizeof *x.labels);
    prom_seen_init(&x.seen);
    int rc = write_objects(&x, opt, prefix, err);
    prom_seen_free(&x.seen);
    free(x.labels);
    return rc;
}
