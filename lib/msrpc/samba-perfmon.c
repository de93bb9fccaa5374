/* The records of Samba's perfmon store for one PERF_DATA_BLOCK (layout in
 * ntlens/msrpc.h). Portable: the tdb writing is samba-perfmon-linux.c. */
#include "ntlens/msrpc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/perf.h"
#include "ntlens/perf_value.h"
#include "ntlens/reader.h"

/* reg_perfcount.c copies names, help texts and counter values into 256-byte
 * stack buffers without a bound: stay well below. */
#define SAMBA_TEXT_MAX 200
#define BASE_SUBTYPE 0x00030000u

struct counter_slot {
    uint32_t samba_index;     /* 0: skipped */
};

struct plan {
    uint32_t *object_index;          /* per object: its Samba index (0: skipped) */
    struct counter_slot **counters;  /* per object, per counter */
    uint32_t last;                   /* highest index used */
    /* Owner of each kept index below `limit`: type and first object (for
     * sharing one counter index between objects, as Samba's c[a,b] allows). */
    uint32_t limit;
    uint8_t *used;                   /* 0 free, 1 object, 2 counter */
    uint32_t *used_type;
};

static bool servable(uint32_t type)
{
    uint32_t size = type & NTL_PERF_SIZE_MASK;
    return size == NTL_PERF_SIZE_DWORD || size == NTL_PERF_SIZE_LARGE;
}

/* Whether a counter may keep index `want`: even, above `floor` (its
 * object's index, or the previous counter's), and free or already the same
 * counter type of an earlier object. */
static bool keepable(const struct plan *p, uint32_t want, uint32_t type, uint32_t floor)
{
    return want > floor && !(want & 1) && want < p->limit &&
           (p->used[want] == 0 || (p->used[want] == 2 && p->used_type[want] == type));
}

static void plan_free(struct plan *p, size_t nobjects)
{
    if (p->counters)
        for (size_t i = 0; i < nobjects; i++)
            free(p->counters[i]);
    free(p->counters);
    free(p->object_index);
    free(p->used);
    free(p->used_type);
}

static int make_plan(const struct ntl_perf_block *b, struct plan *p,
                     struct ntl_samba_perfmon_stats *st, struct ntl_error *err)
{
    uint32_t max_orig = 2, next;

    memset(p, 0, sizeof *p);
    for (size_t i = 0; i < b->nobjects; i++) {
        const struct ntl_perf_object *o = &b->objects[i];
        if (o->name_index > max_orig)
            max_orig = o->name_index;
        for (size_t c = 0; c < o->ncounters; c++)
            if (o->counters[c].name_index > max_orig)
                max_orig = o->counters[c].name_index;
    }
    if (max_orig > NTL_PERF_TITLES_MAX_INDEX)
        max_orig = NTL_PERF_TITLES_MAX_INDEX;
    p->limit = max_orig + 2;
    p->object_index = calloc(b->nobjects + 1, sizeof *p->object_index);
    p->counters = calloc(b->nobjects + 1, sizeof *p->counters);
    p->used = calloc(p->limit, 1);
    p->used_type = calloc(p->limit, sizeof *p->used_type);
    if (!p->object_index || !p->counters || !p->used || !p->used_type)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    next = (max_orig + 2) & ~1u;

    /* Objects first: they keep their index when it is even and free. */
    for (size_t i = 0; i < b->nobjects; i++) {
        const struct ntl_perf_object *o = &b->objects[i];
        size_t kept = 0;
        p->counters[i] = calloc(o->ncounters + 1, sizeof **p->counters);
        if (!p->counters[i])
            return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
        for (size_t c = 0; c < o->ncounters; c++)
            kept += servable(o->counters[c].type);
        if (kept == 0)
            continue; /* Samba cannot serve an object without counters */
        if (o->name_index >= 2 && !(o->name_index & 1) && o->name_index < p->limit &&
            !p->used[o->name_index]) {
            p->object_index[i] = o->name_index;
        } else {
            p->object_index[i] = next;
            next += 2;
        }
        if (p->object_index[i] < p->limit)
            p->used[p->object_index[i]] = 1;
        st->objects++;
    }
    /* Then counters: a counter keeps its index when it lies above its
     * object's, is even, and is free or already the same counter type of an
     * earlier object. Objects with base counters (which must follow their
     * counter) keep all their indices or none: renumbered, they stay in
     * definition order. Process goes first, so
     * that a name moved for several objects ("% Processor Time") has its
     * lowest index, the one a lookup by name finds, in Process. */
    for (size_t pass = 0; pass < 2 * b->nobjects; pass++) {
        size_t i = pass % b->nobjects;
        const struct ntl_perf_object *o = &b->objects[i];
        bool has_base = false;
        if (!p->object_index[i] ||
            (pass < b->nobjects) != (o->name_index == NTL_PERF_IDX_PROCESS))
            continue;
        for (size_t c = 0; c < o->ncounters; c++)
            has_base = has_base || (o->counters[c].type & NTL_PERF_SUBTYPE_MASK) == BASE_SUBTYPE;
        /* With base counters, indices are kept only if all of them can be
         * and they already ascend in definition order (Samba's own data). */
        if (has_base) {
            uint32_t prev = p->object_index[i];
            bool all = true;
            for (size_t c = 0; c < o->ncounters && all; c++) {
                const struct ntl_perf_counter_def *d = &o->counters[c];
                if (!servable(d->type))
                    continue;
                all = keepable(p, d->name_index, d->type, prev);
                prev = d->name_index;
            }
            has_base = !all;
        }
        for (size_t c = 0; c < o->ncounters; c++) {
            const struct ntl_perf_counter_def *d = &o->counters[c];
            uint32_t want = d->name_index;
            bool dup = false;
            if (!servable(d->type)) {
                st->skipped_counters++;
                continue;
            }
            for (size_t k = 0; k < c; k++)
                dup = dup || p->counters[i][k].samba_index == want;
            if (!has_base && !dup && keepable(p, want, d->type, p->object_index[i])) {
                p->counters[i][c].samba_index = want;
                p->used[want] = 2;
                p->used_type[want] = d->type;
            } else {
                p->counters[i][c].samba_index = next;
                next += 2;
                st->moved_indices++;
            }
            st->counters++;
        }
    }
    p->last = next - 2;
    return NTL_OK;
}

static int put_str(ntl_samba_put_fn put, void *ctx, enum ntl_samba_db db, const char *key,
                   const char *value, struct ntl_error *err)
{
    return put(ctx, db, key, value, strlen(value), err);
}

/* Cuts s to at most SAMBA_TEXT_MAX bytes on a UTF-8 boundary. */
static const char *bounded(const char *s, char *buf)
{
    size_t n = strlen(s);
    if (n <= SAMBA_TEXT_MAX)
        return s;
    n = SAMBA_TEXT_MAX;
    while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
        n--;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return buf;
}

static int put_title(ntl_samba_put_fn put, void *ctx, uint32_t samba, const char *name,
                     const char *help, struct ntl_error *err)
{
    char key[24], buf[SAMBA_TEXT_MAX + 1];
    int rc;

    snprintf(key, sizeof key, "%" PRIu32, samba);
    if ((rc = put_str(put, ctx, NTL_SAMBA_NAMES_DB, key, bounded(name, buf), err)) < 0)
        return rc;
    snprintf(key, sizeof key, "%" PRIu32, samba + 1);
    return put_str(put, ctx, NTL_SAMBA_NAMES_DB, key, bounded(help ? help : "", buf), err);
}

/* A value as Samba's strtol/atof read it back. Zero is stored as one NUL
 * byte: Samba copies the text itself into the counter when the parsed
 * value is 0, so "0" would read back as 0x30. */
static int put_number(ntl_samba_put_fn put, void *ctx, const char *key, uint64_t v,
                      bool large, struct ntl_error *err)
{
    char text[32];
    if (v == 0)
        return put(ctx, NTL_SAMBA_DATA_DB, key, "", 1, err);
    if (large)
        snprintf(text, sizeof text, "%" PRIu64, v);
    else
        snprintf(text, sizeof text, "%" PRId64, (int64_t)v);
    return put_str(put, ctx, NTL_SAMBA_DATA_DB, key, text, err);
}

static const char *title_or(const struct ntl_perf_titles *t, uint32_t index, char *buf,
                            size_t size)
{
    const char *s = t ? ntl_perf_titles_name(t, index) : NULL;
    if (s)
        return s;
    snprintf(buf, size, "Counter %" PRIu32, index);
    return buf;
}

static int emit_object(const struct ntl_perf_block *b, size_t i, const struct plan *p,
                       const struct ntl_perf_titles *t, ntl_samba_put_fn put, void *ctx,
                       struct ntl_samba_perfmon_stats *st, struct ntl_error *err)
{
    const struct ntl_perf_object *o = &b->objects[i];
    const uint32_t oi = p->object_index[i];
    char key[64], fallback[32], rel[SAMBA_TEXT_MAX];
    size_t nkept = 0, *order;
    uint8_t *values;
    int rc;

    if ((rc = put_title(put, ctx, oi, title_or(t, o->name_index, fallback, sizeof fallback),
                        t ? ntl_perf_titles_help(t, o->help_index) : NULL, err)) < 0)
        return rc;
    snprintf(key, sizeof key, "%" PRIu32 "rel", oi);
    if ((rc = put_str(put, ctx, NTL_SAMBA_NAMES_DB, key, "p", err)) < 0)
        return rc;

    /* Kept counters in ascending Samba index: the order Samba lays them out
     * in each instance's counter block. */
    order = malloc((o->ncounters + 1) * sizeof *order);
    values = malloc((o->ncounters + 1) * 8);
    if (!order || !values) {
        free(order);
        free(values);
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    }
    for (size_t c = 0; c < o->ncounters; c++) {
        size_t j = nkept;
        if (!p->counters[i][c].samba_index)
            continue;
        while (j > 0 && p->counters[i][order[j - 1]].samba_index > p->counters[i][c].samba_index) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = c;
        nkept++;
    }
    for (size_t k = 0; k < nkept && rc >= 0; k++) {
        const struct ntl_perf_counter_def *d = &o->counters[order[k]];
        uint32_t ci = p->counters[i][order[k]].samba_index;
        char text[24];
        /* A counter shared by several objects lists them all. */
        snprintf(rel, sizeof rel, "c[%" PRIu32, oi);
        for (size_t j = i + 1; j < b->nobjects; j++)
            for (size_t c = 0; c < b->objects[j].ncounters; c++)
                if (p->object_index[j] && p->counters[j][c].samba_index == ci) {
                    char one[16];
                    int n = snprintf(one, sizeof one, ",%" PRIu32, p->object_index[j]);
                    /* Samba reads at most 255 bytes of it; whole entries only. */
                    if (strlen(rel) + (size_t)n + 2 <= sizeof rel)
                        strcat(rel, one);
                }
        strcat(rel, "]");
        /* Shared counters are written once, by their first object. */
        {
            bool first = true;
            for (size_t j = 0; j < i && first; j++)
                for (size_t c = 0; c < b->objects[j].ncounters; c++)
                    if (p->object_index[j] && p->counters[j][c].samba_index == ci)
                        first = false;
            if (!first)
                continue;
        }
        if ((rc = put_title(put, ctx, ci, title_or(t, d->name_index, fallback, sizeof fallback),
                            t ? ntl_perf_titles_help(t, d->help_index) : NULL, err)) < 0)
            break;
        snprintf(key, sizeof key, "%" PRIu32 "rel", ci);
        if ((rc = put_str(put, ctx, NTL_SAMBA_NAMES_DB, key, rel, err)) < 0)
            break;
        snprintf(key, sizeof key, "%" PRIu32 "type", ci);
        snprintf(text, sizeof text, "%" PRIu32, d->type);
        if ((rc = put_str(put, ctx, NTL_SAMBA_NAMES_DB, key, text, err)) < 0)
            break;
        /* Samba wants a value for every counter, with or without instances. */
        snprintf(key, sizeof key, "%" PRIu32, ci);
        rc = put_number(put, ctx, key,
                        o->ninstances || o->num_instances >= 0
                            ? 0
                            : ntl_perf_counter_u64(o, order[k], 0),
                        (d->type & NTL_PERF_SIZE_MASK) == NTL_PERF_SIZE_LARGE, err);
    }
    if (rc >= 0 && o->num_instances >= 0) {
        char count[24];
        snprintf(key, sizeof key, "%" PRIu32 "inst", oi);
        snprintf(count, sizeof count, "%zu", o->ninstances);
        rc = put_str(put, ctx, NTL_SAMBA_NAMES_DB, key, count, err);
        for (size_t n = 0; n < o->ninstances && rc >= 0; n++) {
            char buf[SAMBA_TEXT_MAX + 1];
            snprintf(key, sizeof key, "%" PRIu32 "i%zuname", oi, n);
            if ((rc = put_str(put, ctx, NTL_SAMBA_NAMES_DB, key,
                              bounded(o->instances[n].name, buf), err)) < 0)
                break;
            for (size_t k = 0; k < nkept; k++)
                ntl_put_le64(values + 8 * k, ntl_perf_counter_u64(o, order[k], n));
            snprintf(key, sizeof key, "%" PRIu32 "i%zu", oi, n);
            rc = put(ctx, NTL_SAMBA_DATA_DB, key, values, 8 * nkept, err);
            st->instances++;
        }
    }
    free(order);
    free(values);
    return rc;
}

int ntl_samba_perfmon_records(const struct ntl_perf_block *b, const struct ntl_perf_titles *t,
                              ntl_samba_put_fn put, void *ctx,
                              struct ntl_samba_perfmon_stats *st, struct ntl_error *err)
{
    struct ntl_samba_perfmon_stats local;
    struct plan p;
    char text[32];
    int rc;

    if (!st)
        st = &local;
    memset(st, 0, sizeof *st);
    if ((rc = make_plan(b, &p, st, err)) < 0)
        goto out;
    st->last_index = p.last;
    snprintf(text, sizeof text, "%" PRIu32, p.last / 2);
    if ((rc = put_str(put, ctx, NTL_SAMBA_NAMES_DB, "1", text, err)) < 0)
        goto out;
    snprintf(text, sizeof text, "%" PRId64, b->perf_freq);
    if ((rc = put_str(put, ctx, NTL_SAMBA_NAMES_DB, "0PerfFreq", text, err)) < 0)
        goto out;
    snprintf(text, sizeof text, "%" PRId64, b->perf_time);
    if ((rc = put_str(put, ctx, NTL_SAMBA_DATA_DB, "0PerfTime", text, err)) < 0)
        goto out;
    snprintf(text, sizeof text, "%" PRId64, b->perf_time_100ns);
    if ((rc = put_str(put, ctx, NTL_SAMBA_DATA_DB, "0PerfTime100nSec", text, err)) < 0)
        goto out;
    for (size_t i = 0; i < b->nobjects && rc >= 0; i++)
        if (p.object_index[i])
            rc = emit_object(b, i, &p, t, put, ctx, st, err);
out:
    plan_free(&p, b->nobjects);
    return rc < 0 ? rc : NTL_OK;
}
