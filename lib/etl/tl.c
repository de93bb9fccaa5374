/* TraceLogging payloads: the schema in the EVENT_SCHEMA_TL extended item
 * (TraceLoggingProvider.h's encoding) walked beside the payload. Both are
 * untrusted: every read is bounded, nesting is capped, and so is the number
 * of items an event may yield (empty structs in huge arrays cost no bytes). */
#include <string.h>

#include "ntlens/etl_fields.h"
#include "ntlens/reader.h"
#include "ntlens/utf16.h"

#define TLG_IN_TYPE_MASK 0x1fu
#define TLG_IN_FLAG_MASK 0x60u
#define TLG_IN_CCOUNT 0x20u
#define TLG_IN_VCOUNT 0x40u
#define TLG_IN_CUSTOM 0x60u
#define TLG_CHAIN 0x80u

static int fail(struct ntl_etl_tl *d, struct ntl_error *err, int status, const char *fmt,
                const char *name, size_t pos)
{
    d->status = status; /* later calls repeat the error */
    return ntl_error_set(err, status, "TraceLogging event", d->ev->offset, fmt, name ? name : "",
                         pos);
}

/* A NUL-terminated string in the schema at *pos. */
static const char *meta_string(const uint8_t *m, size_t size, size_t *pos)
{
    const uint8_t *nul = *pos < size ? memchr(m + *pos, 0, size - *pos) : NULL;
    if (!nul)
        return NULL;
    const char *s = (const char *)m + *pos;
    *pos = (size_t)(nul - m) + 1;
    return s;
}

/* Cleared by copying a zero field (memset became `rep stos`, slow to start). */
static const struct ntl_etl_field zero_field;

/* One field's descriptor at schema offset pos into *f (*vcount: its
 * element count is in the payload); *after: where the next
 * descriptor (or a struct's first member) starts. */
static int parse_desc(struct ntl_etl_tl *d, size_t pos, struct ntl_etl_field *f, size_t *after,
                      bool *vcount, struct ntl_error *err)
{
    const uint8_t *m = d->meta;
    uint8_t in, b;
    *f = zero_field;
    if (!(f->name = meta_string(m, d->meta_size, &pos)) || pos >= d->meta_size)
        return fail(d, err, NTL_ERR_TRUNCATED, "field '%s': schema ends at %zu", f->name, pos);
    in = m[pos++];
    f->in_type = in & TLG_IN_TYPE_MASK;
    if (in & TLG_CHAIN) {
        if (pos >= d->meta_size)
            return fail(d, err, NTL_ERR_TRUNCATED, "field '%s': out-type past schema end %zu",
                        f->name, pos);
        b = m[pos++];
        f->out_type = b & 0x7f;
        for (int n = 0; b & TLG_CHAIN; n++) { /* the tag: up to 4 bytes of 7 bits */
            if (n == 4 || pos >= d->meta_size)
                return fail(d, err, NTL_ERR_FORMAT, "field '%s': bad tag at schema offset %zu",
                            f->name, pos);
            b = m[pos++];
            f->tag = (f->tag << 7) | (b & 0x7fu);
        }
    }
    if ((in & TLG_IN_FLAG_MASK) == TLG_IN_CCOUNT) {
        if (!ntl_range_ok(d->meta_size, pos, 2))
            return fail(d, err, NTL_ERR_TRUNCATED, "field '%s': count past schema end %zu",
                        f->name, pos);
        f->count = ntl_le16(m + pos);
        pos += 2;
    } else if ((in & TLG_IN_FLAG_MASK) == TLG_IN_CUSTOM) {
        if (!ntl_range_ok(d->meta_size, pos, 2) ||
            !ntl_range_ok(d->meta_size, pos + 2, ntl_le16(m + pos)))
            return fail(d, err, NTL_ERR_TRUNCATED, "field '%s': custom schema past end %zu",
                        f->name, pos);
        f->custom = true;
        f->schema_size = ntl_le16(m + pos);
        f->schema = m + pos + 2;
        pos += 2 + f->schema_size;
    }
    *vcount = (in & TLG_IN_FLAG_MASK) == TLG_IN_VCOUNT;
    f->in_array = *vcount || (in & TLG_IN_FLAG_MASK) == TLG_IN_CCOUNT;
    if (f->in_type >= NTL_ETL_IN_COUNT)
        return fail(d, err, NTL_ERR_FORMAT, "field '%s': unknown in-type at schema offset %zu",
                    f->name, pos);
    *after = pos;
    return 0;
}

/* Where the metadata of n fields starting at pos ends. */
static int skip_fields(struct ntl_etl_tl *d, size_t pos, uint32_t n, unsigned depth,
                       size_t *end, struct ntl_error *err)
{
    struct ntl_etl_field f;
    bool vcount;
    int rc;
    if (depth >= NTL_ETL_TL_MAX_DEPTH)
        return fail(d, err, NTL_ERR_LIMIT, "structs nest too deep%s at schema offset %zu", NULL,
                    pos);
    for (uint32_t i = 0; i < n; i++) {
        if ((rc = parse_desc(d, pos, &f, &pos, &vcount, err)) < 0)
            return rc;
        if (f.in_type == NTL_ETL_IN_STRUCT &&
            (rc = skip_fields(d, pos, f.out_type, depth + 1, &pos, err)) < 0)
            return rc;
    }
    *end = pos;
    return 0;
}

/* A counted value: UINT16 byte count, then the bytes. */
static bool counted(const uint8_t *p, size_t size, size_t pos, size_t *len, size_t *skip)
{
    if (!ntl_range_ok(size, pos, 2) || !ntl_range_ok(size, pos + 2, ntl_le16(p + pos)))
        return false;
    *len = ntl_le16(p + pos);
    *skip = 2;
    return true;
}

/* The value's bytes at d->pay_pos: *len of them after *skip prefix bytes,
 * *total consumed. */
static bool value_extent(const struct ntl_etl_tl *d, const struct ntl_etl_field *f, size_t *skip,
                         size_t *len, size_t *total)
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
    size_t size = d->ev->payload_size, pos = d->pay_pos, n = size - pos, term = 0;
    *skip = 0;
    if (f->custom)
        return counted(p, size, pos, len, skip) && (*total = *skip + *len, true);
    switch (f->in_type) {
    case NTL_ETL_IN_NULL:
        *len = 0;
        break;
    case NTL_ETL_IN_UNICODESTRING:
        *len = 2 * ntl_utf16_unit_len(p + pos, n / 2);
        if (*len + 2 > n)
            return false;
        term = 2;
        break;
    case NTL_ETL_IN_ANSISTRING: {
        const uint8_t *nul = memchr(p + pos, 0, n);
        if (!nul)
            return false;
        *len = (size_t)(nul - (p + pos));
        term = 1;
        break;
    }
    case NTL_ETL_IN_POINTER:
        *len = d->ev->is64 ? 8 : 4;
        break;
    case NTL_ETL_IN_SID:
        if (n < 8)
            return false;
        *len = 8 + 4u * p[pos + 1];
        break;
    case NTL_ETL_IN_BINARY:
    case NTL_ETL_IN_COUNTEDSTRING:
    case NTL_ETL_IN_COUNTEDANSISTRING:
    case NTL_ETL_IN_COUNTEDBINARY:
        if (!counted(p, size, pos, len, skip))
            return false;
        break;
    default:
        *len = fixed[f->in_type];
    }
    *total = *skip + *len + term;
    return *total <= n;
}

static int read_value(struct ntl_etl_tl *d, struct ntl_etl_field *f, struct ntl_error *err)
{
    size_t skip, len, total;
    if (!value_extent(d, f, &skip, &len, &total))
        return fail(d, err, NTL_ERR_TRUNCATED, "field '%s': value runs past the payload at %zu",
                    f->name, d->pay_pos);
    f->item = NTL_ETL_ITEM_VALUE;
    f->data = d->ev->payload + d->pay_pos + skip;
    f->size = len;
    f->payload_offset = d->pay_pos;
    d->pay_pos += total;
    return 1;
}

int ntl_etl_tl_traits_name(const struct ntl_etl_ext_item *item, const char **name,
                           struct ntl_error *err)
{
    size_t pos = 2;
    if (item->size < 2 || ntl_le16(item->data) > item->size || ntl_le16(item->data) < 2)
        return ntl_error_set(err, NTL_ERR_FORMAT, "provider traits", NTL_NO_OFFSET,
                             "size %u in an item of %u bytes",
                             item->size >= 2 ? ntl_le16(item->data) : 0, item->size);
    if (ntl_le16(item->data) == 2)
        return 0;
    if (!(*name = meta_string(item->data, ntl_le16(item->data), &pos)))
        return ntl_error_set(err, NTL_ERR_FORMAT, "provider traits", NTL_NO_OFFSET,
                             "provider name without its NUL");
    return 1;
}

/* The schema's header: size, extension bytes, event name. */
static int schema_header(struct ntl_etl_tl *d, const struct ntl_etl_ext_item *it,
                         struct ntl_error *err)
{
    size_t pos = 2;
    if (it->size < 2 || ntl_le16(it->data) > it->size || ntl_le16(it->data) < 3)
        return ntl_error_set(err, NTL_ERR_FORMAT, "TraceLogging event", d->ev->offset,
                             "schema size %u in an item of %u bytes",
                             it->size >= 2 ? ntl_le16(it->data) : 0, it->size);
    d->meta = it->data;
    d->meta_size = ntl_le16(it->data);
    while (pos < d->meta_size && (d->meta[pos] & TLG_CHAIN))
        pos++;
    pos++;
    if (!(d->event_name = meta_string(d->meta, d->meta_size, &pos)))
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "TraceLogging event", d->ev->offset,
                             "event name without its NUL");
    d->meta_pos = pos;
    return 1;
}

int ntl_etl_tl_begin(struct ntl_etl_tl *d, const struct ntl_etl_event *ev, struct ntl_error *err)
{
    struct ntl_etl_ext_item it;
    size_t pos = 0;
    int rc, found = 0;
    /* The frames above the first are cleared as fields enter them: all 16
     * (2.4 KB) per event were most of this call for events with no schema. */
    memset(d, 0, offsetof(struct ntl_etl_tl, stack) + sizeof d->stack[0]);
    d->ev = ev;
    d->items_left = 2 * (uint64_t)ev->payload_size + 4096;
    while ((rc = ntl_etl_ext_next(ev, &pos, &it, err)) > 0) {
        if (it.type == NTL_ETL_EXT_EVENT_SCHEMA_TL && !found) {
            if ((found = schema_header(d, &it, err)) < 0)
                return found;
        } else if (it.type == NTL_ETL_EXT_PROV_TRAITS && !d->provider_name) {
            if ((rc = ntl_etl_tl_traits_name(&it, &d->provider_name, err)) < 0)
                return rc;
        }
    }
    return rc < 0 ? rc : found;
}

/* Descends into a field just parsed: an array or a struct gets a frame. */
static int enter(struct ntl_etl_tl *d, struct ntl_etl_field *f, size_t after,
                 struct ntl_error *err)
{
    struct ntl_etl_tl_frame *fr;
    bool is_struct = f->in_type == NTL_ETL_IN_STRUCT && !f->custom;
    size_t end = after;
    int rc;
    if (is_struct && (rc = skip_fields(d, after, f->out_type, d->depth + 1, &end, err)) < 0)
        return rc;
    if (d->depth + 1 >= NTL_ETL_TL_MAX_DEPTH)
        return fail(d, err, NTL_ERR_LIMIT, "field '%s': nests too deep at payload offset %zu",
                    f->name, d->pay_pos);
    fr = &d->stack[++d->depth];
    memset(fr, 0, sizeof *fr);
    fr->desc = *f;
    fr->meta_begin = after;
    fr->meta_end = end;
    if (f->in_array) {
        fr->array = true;
        fr->count = f->count;
        fr->elem_struct = is_struct;
        f->item = NTL_ETL_ITEM_ARRAY_BEGIN;
        f->in_array = false;
    } else {
        fr->left = f->out_type;
        f->item = NTL_ETL_ITEM_STRUCT_BEGIN;
    }
    f->depth = d->depth - 1;
    f->payload_offset = d->pay_pos;
    d->meta_pos = after;
    return 1;
}

/* The next field of the event or of the struct on top of the stack. */
static int next_field(struct ntl_etl_tl *d, struct ntl_etl_field *f, struct ntl_error *err)
{
    size_t after = 0;
    bool vcount = false;
    int rc;
    if ((rc = parse_desc(d, d->meta_pos, f, &after, &vcount, err)) < 0)
        return rc;
    if (d->depth)
        d->stack[d->depth].left--;
    if (vcount) { /* the element count precedes the elements in the payload */
        if (!ntl_range_ok(d->ev->payload_size, d->pay_pos, 2))
            return fail(d, err, NTL_ERR_TRUNCATED, "array '%s': count past the payload at %zu",
                        f->name, d->pay_pos);
        f->count = ntl_le16(d->ev->payload + d->pay_pos);
        d->pay_pos += 2;
    }
    if (f->in_array || (f->in_type == NTL_ETL_IN_STRUCT && !f->custom))
        return enter(d, f, after, err);
    d->meta_pos = after;
    f->depth = d->depth;
    return read_value(d, f, err);
}

/* The next element of the array on top of the stack, or its end. */
static int next_element(struct ntl_etl_tl *d, struct ntl_etl_field *f, struct ntl_error *err)
{
    struct ntl_etl_tl_frame *fr = &d->stack[d->depth];
    *f = fr->desc;
    f->depth = d->depth;
    if (fr->index >= fr->count) {
        d->meta_pos = fr->meta_end;
        d->depth--;
        f->item = NTL_ETL_ITEM_ARRAY_END;
        f->in_array = false;
        f->depth = d->depth;
        f->payload_offset = d->pay_pos;
        return 1;
    }
    f->index = fr->index++;
    if (!fr->elem_struct)
        return read_value(d, f, err);
    f->in_array = false; /* enter() reads it as "an array field" */
    int rc = enter(d, f, fr->meta_begin, err);
    if (rc > 0) {
        d->stack[d->depth].desc.in_array = true;
        f->in_array = true;
    }
    return rc;
}

int ntl_etl_tl_next(struct ntl_etl_tl *d, struct ntl_etl_field *f, struct ntl_error *err)
{
    struct ntl_etl_tl_frame *fr = &d->stack[d->depth];
    if (d->status < 0)
        return d->status;
    if (d->items_left-- == 0)
        return fail(d, err, NTL_ERR_LIMIT, "more items than the payload can hold%s (%zu bytes)",
                    NULL, d->ev->payload_size);
    if (d->depth == 0) {
        if (d->meta_pos < d->meta_size)
            return next_field(d, f, err);
        if (d->pay_pos != d->ev->payload_size)
            return fail(d, err, NTL_ERR_FORMAT, "payload bytes left%s after the last field at %zu",
                        NULL, d->pay_pos);
        return 0;
    }
    if (fr->array)
        return next_element(d, f, err);
    if (fr->left)
        return next_field(d, f, err);
    *f = fr->desc;
    d->meta_pos = fr->meta_end;
    d->depth--;
    f->item = NTL_ETL_ITEM_STRUCT_END;
    f->depth = d->depth;
    f->payload_offset = d->pay_pos;
    return 1;
}
