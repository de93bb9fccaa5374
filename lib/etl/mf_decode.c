/* Manifest events decoded: the event's template walked over its payload
 * once, at ntl_etl_mf_begin, into a list of items that ntl_etl_mf_next then
 * hands out. Every read is bounded by the payload; counts come from the
 * payload and are bounded by the items it can hold. */
#include <stdlib.h>
#include <string.h>

#include "manifest-internal.h"
#include "ntlens/reader.h"

struct ntl_etl_mf {
    const struct ntl_etl_manifest *m;
    const struct mf_event *e;
    const struct ntl_etl_event *ev;
    struct ntl_etl_field *items;
    size_t *map_off;             /* bitmap text offsets, SIZE_MAX: none */
    size_t n, cap, next, limit;
    uint64_t *values;            /* the last value of each template item (lengths, counts) */
    size_t nvalues;
    char *text;                  /* bitmap texts */
    size_t text_len, text_cap;
    size_t pos;                  /* in the payload */
    int status;
    struct ntl_error err;
};

struct ntl_etl_mf *ntl_etl_mf_new(void)
{
    return calloc(1, sizeof(struct ntl_etl_mf));
}

void ntl_etl_mf_free(struct ntl_etl_mf *d)
{
    if (!d)
        return;
    free(d->items);
    free(d->map_off);
    free(d->values);
    free(d->text);
    free(d);
}

const char *ntl_etl_manifest_provider_name(const struct ntl_etl_manifest *m, const struct ntl_guid *g)
{
    for (size_t i = 0; m && i < m->nproviders; i++)
        if (ntl_guid_equal(&m->providers[i].guid, g))
            return m->providers[i].name;
    return NULL;
}

size_t ntl_etl_manifest_events(const struct ntl_etl_manifest *m)
{
    return m->nevents;
}

void ntl_etl_manifest_event_key(const struct ntl_etl_manifest *m, size_t i, struct ntl_guid *provider,
                                uint16_t *id, uint8_t *version)
{
    *provider = m->providers[m->events[i].provider].guid;
    *id = m->events[i].id;
    *version = m->events[i].version;
}

const char *ntl_etl_mf_provider_name(const struct ntl_etl_mf *d)
{
    return d->m->providers[d->e->provider].name;
}

const char *ntl_etl_mf_event_name(const struct ntl_etl_mf *d)
{
    return d->e->name;
}

static const struct mf_event *find(const struct ntl_etl_manifest *m, const struct ntl_etl_event *ev)
{
    for (size_t p = 0; p < m->nproviders; p++) {
        if (!ntl_guid_equal(&m->providers[p].guid, &ev->guid))
            continue;
        size_t lo = m->providers[p].first_event, hi = m->providers[p].end_event;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            const struct mf_event *e = &m->events[mid];
            if (e->id == ev->event_id && e->version == ev->version)
                return e;
            if (e->id < ev->event_id || (e->id == ev->event_id && e->version < ev->version))
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    return NULL;
}

static int fail(struct ntl_etl_mf *d, int status, const struct mf_item *it, const char *what)
{
    d->status = status;
    if (it)
        ntl_error_set(&d->err, status, "manifest event", d->ev->offset,
                      "field '%s': %s at payload offset %zu", it->name, what, d->pos);
    else
        ntl_error_set(&d->err, status, "manifest event", d->ev->offset,
                      "%s (template %s, payload offset %zu of %zu)", what,
                      d->e->tmpl_name ? d->e->tmpl_name : "none", d->pos, d->ev->payload_size);
    return status;
}

/* Cleared by copying a zero field (memset became `rep stos`, slow to start). */
static const struct ntl_etl_field zero_field;

static struct ntl_etl_field *add(struct ntl_etl_mf *d, const struct mf_item *it, enum ntl_etl_item kind,
                                 unsigned depth)
{
    if (d->n == d->limit) {
        fail(d, NTL_ERR_LIMIT, it, "more items than the payload can hold");
        return NULL;
    }
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 256;
        struct ntl_etl_field *p = realloc(d->items, cap * sizeof *p);
        size_t *o = p ? realloc(d->map_off, cap * sizeof *o) : NULL;
        if (p)
            d->items = p;
        if (!p || !o) {
            fail(d, NTL_ERR_NOMEM, it, "out of memory");
            return NULL;
        }
        d->map_off = o;
        d->cap = cap;
    }
    struct ntl_etl_field *f = &d->items[d->n];
    *f = zero_field;
    d->map_off[d->n++] = SIZE_MAX;
    f->item = kind;
    f->name = it->name;
    f->depth = depth;
    f->in_type = it->is_struct ? NTL_ETL_IN_STRUCT : it->in_type;
    f->out_type = it->out_type;
    f->payload_offset = d->pos;
    return f;
}

/* A length or count: the number, or the value of the field it names. */
static uint64_t amount(const struct ntl_etl_mf *d, uint32_t fixed, uint32_t ref)
{
    return ref == MF_NONE ? fixed : d->values[ref - d->m->templates[d->e->tmpl].first];
}

/* Bytes of a NUL-terminated string of unit-byte characters at pos; SIZE_MAX without NUL. */
static size_t terminated(const struct ntl_etl_mf *d, size_t unit)
{
    const uint8_t *p = d->ev->payload;
    for (size_t i = d->pos; i + unit <= d->ev->payload_size; i += unit)
        if (!p[i] && (unit == 1 || !p[i + 1]))
            return i - d->pos;
    return SIZE_MAX;
}

/* The value's extent: *size its data, *skip what precedes it (a count),
 * *after what follows (a NUL). */
static int extent(struct ntl_etl_mf *d, const struct mf_item *it, size_t *skip, size_t *size,
                  size_t *after)
{
    static const uint8_t fixed[NTL_ETL_IN_COUNT] = {
        [NTL_ETL_IN_INT8] = 1, [NTL_ETL_IN_UINT8] = 1, [NTL_ETL_IN_INT16] = 2,
        [NTL_ETL_IN_UINT16] = 2, [NTL_ETL_IN_INT32] = 4, [NTL_ETL_IN_UINT32] = 4,
        [NTL_ETL_IN_INT64] = 8, [NTL_ETL_IN_UINT64] = 8, [NTL_ETL_IN_FLOAT] = 4,
        [NTL_ETL_IN_DOUBLE] = 8, [NTL_ETL_IN_BOOL32] = 4, [NTL_ETL_IN_GUID] = 16,
        [NTL_ETL_IN_FILETIME] = 8, [NTL_ETL_IN_SYSTEMTIME] = 16, [NTL_ETL_IN_HEXINT32] = 4,
        [NTL_ETL_IN_HEXINT64] = 8,
    };
    const uint8_t *p = d->ev->payload;
    size_t left = d->ev->payload_size - d->pos, unit = 1;
    *skip = *after = 0;
    switch (it->in_type) {
    case NTL_ETL_IN_POINTER:
        *size = d->ev->is64 ? 8 : 4;
        break;
    case NTL_ETL_IN_UNICODESTRING:
        unit = 2;
        /* fall through */
    case NTL_ETL_IN_ANSISTRING:
        if (it->has_length) {
            *size = (size_t)amount(d, it->length, it->length_ref) * unit;
        } else if ((*size = terminated(d, unit)) == SIZE_MAX) {
            return fail(d, left ? NTL_ERR_FORMAT : NTL_ERR_TRUNCATED, it,
                        left ? "string without its NUL" : "string past the end");
        } else {
            *after = unit;
        }
        break;
    case NTL_ETL_IN_BINARY:
        if (!it->has_length)
            return fail(d, NTL_ERR_FORMAT, it, "binary field without a length");
        *size = (size_t)amount(d, it->length, it->length_ref);
        break;
    case NTL_ETL_IN_SID:
        if (left < 8)
            return fail(d, NTL_ERR_TRUNCATED, it, "SID past the end");
        *size = 8 + 4u * p[d->pos + 1];
        break;
    case NTL_ETL_IN_COUNTEDSTRING:
    case NTL_ETL_IN_COUNTEDANSISTRING:
        if (left < 2)
            return fail(d, NTL_ERR_TRUNCATED, it, "count past the end");
        *skip = 2;
        *size = ntl_le16(p + d->pos);
        break;
    default:
        *size = it->in_type < NTL_ETL_IN_COUNT ? fixed[it->in_type] : 0;
        break;
    }
    if (!ntl_range_ok(left, 0, (uint64_t)*skip + *size + *after))
        return fail(d, NTL_ERR_TRUNCATED, it, "value past the end");
    return 0;
}

/* "A|B" of a bitmap, or the value map's message. */
static void map_value(struct ntl_etl_mf *d, const struct mf_item *it, struct ntl_etl_field *f)
{
    const struct mf_map *mp = &d->m->maps[it->map];
    uint64_t v = ntl_etl_field_u64(f);
    if (!mp->n) /* a map without entries: entries may be NULL */
        return;
    const struct mf_entry *e = &d->m->entries[mp->first];
    if (!mp->bitmap) {
        for (uint32_t i = 0; i < mp->n; i++)
            if (e[i].value == v)
                f->map_text = e[i].text;
        return;
    }
    size_t start = d->text_len;
    for (uint32_t i = 0; i < mp->n; i++) {
        if (!e[i].value || (v & e[i].value) != e[i].value)
            continue;
        size_t n = strlen(e[i].text) + 1;
        if (d->text_len + n + 1 > d->text_cap) {
            size_t cap = (d->text_cap + n + 1) * 2;
            char *t = realloc(d->text, cap);
            if (!t)
                return; /* the number shows instead */
            d->text = t;
            d->text_cap = cap;
        }
        if (d->text_len > start)
            d->text[d->text_len - 1] = '|';
        memcpy(d->text + d->text_len, e[i].text, n);
        d->text_len += n;
    }
    if (d->text_len > start)
        d->map_off[d->n - 1] = start;
}

static int value(struct ntl_etl_mf *d, uint32_t i, unsigned depth, bool in_array, uint32_t index)
{
    const struct mf_item *it = &d->m->items[i];
    size_t skip = 0, size = 0, after = 0;
    int rc;
    if ((rc = extent(d, it, &skip, &size, &after)) < 0)
        return rc;
    struct ntl_etl_field *f = add(d, it, NTL_ETL_ITEM_VALUE, depth);
    if (!f)
        return d->status;
    f->in_array = in_array;
    f->index = index;
    f->data = d->ev->payload + d->pos + skip;
    f->size = size;
    f->payload_offset = d->pos;
    d->pos += skip + size + after;
    d->values[i - d->m->templates[d->e->tmpl].first] = ntl_etl_field_u64(f);
    if (it->map != MF_NONE)
        map_value(d, it, f);
    return 0;
}

static int items(struct ntl_etl_mf *d, uint32_t first, uint32_t end, unsigned depth);

/* One element (or the only instance) of item i: a value or a struct. */
static int element(struct ntl_etl_mf *d, uint32_t i, unsigned depth, bool in_array, uint32_t index)
{
    const struct mf_item *it = &d->m->items[i];
    struct ntl_etl_field *f;
    int rc;
    if (!it->is_struct)
        return value(d, i, depth, in_array, index);
    if (!(f = add(d, it, NTL_ETL_ITEM_STRUCT_BEGIN, depth)))
        return d->status;
    f->in_array = in_array;
    f->index = index;
    f->out_type = (uint8_t)(it->end - i - 1);
    if ((rc = items(d, i + 1, it->end, depth + 1)) < 0)
        return rc;
    return add(d, it, NTL_ETL_ITEM_STRUCT_END, depth) ? 0 : d->status;
}

static int items(struct ntl_etl_mf *d, uint32_t first, uint32_t end, unsigned depth)
{
    int rc;
    for (uint32_t i = first; i < end; i = d->m->items[i].end) {
        const struct mf_item *it = &d->m->items[i];
        if (!it->has_count) {
            if ((rc = element(d, i, depth, false, 0)) < 0)
                return rc;
            continue;
        }
        uint64_t count = amount(d, it->count, it->count_ref);
        struct ntl_etl_field *f = add(d, it, NTL_ETL_ITEM_ARRAY_BEGIN, depth);
        if (!f)
            return d->status;
        if (count > d->limit)
            return fail(d, NTL_ERR_LIMIT, it, "count larger than the payload can hold");
        f->count = (uint32_t)count;
        for (uint32_t k = 0; k < count; k++)
            if ((rc = element(d, i, depth + 1, true, k)) < 0)
                return rc;
        if (!add(d, it, NTL_ETL_ITEM_ARRAY_END, depth))
            return d->status;
    }
    return 0;
}

int ntl_etl_mf_begin(struct ntl_etl_mf *d, const struct ntl_etl_manifest *m,
                     const struct ntl_etl_event *ev, struct ntl_error *err)
{
    const struct mf_event *e = ev->has_guid ? find(m, ev) : NULL;
    if (!e)
        return 0;
    d->m = m;
    d->e = e;
    d->ev = ev;
    d->n = d->next = d->pos = d->text_len = 0;
    d->status = 0;
    /* Each item takes a payload byte or is a struct or array mark around them. */
    d->limit = 4 * ev->payload_size + 256;
    if (e->tmpl != MF_NONE) {
        const struct mf_template *t = &m->templates[e->tmpl];
        size_t nv = t->end - t->first;
        if (nv > d->nvalues) {
            uint64_t *v = realloc(d->values, nv * sizeof *v);
            if (!v)
                return ntl_error_set(err, NTL_ERR_NOMEM, "manifest event", ev->offset, "out of memory");
            d->values = v;
            d->nvalues = nv;
        }
        if (nv) /* an empty template may come before any buffer */
            memset(d->values, 0, nv * sizeof *d->values);
        if (items(d, t->first, t->end, 0) == 0 && d->pos != ev->payload_size)
            fail(d, NTL_ERR_FORMAT, NULL, "payload bytes left after the last field");
    } else if (ev->payload_size) {
        fail(d, NTL_ERR_FORMAT, NULL, "payload for an event without a template");
    }
    if (d->status == NTL_ERR_NOMEM) {
        *err = d->err;
        return NTL_ERR_NOMEM;
    }
    for (size_t i = 0; i < d->n; i++)
        if (d->map_off[i] != SIZE_MAX)
            d->items[i].map_text = d->text + d->map_off[i];
    return 1;
}

int ntl_etl_mf_next(struct ntl_etl_mf *d, struct ntl_etl_field *f, struct ntl_error *err)
{
    if (d->next < d->n) {
        *f = d->items[d->next++];
        return 1;
    }
    if (d->status < 0 && err)
        *err = d->err;
    return d->status;
}
