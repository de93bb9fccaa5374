/* Differential: a kernel layout's fixed prefix and the decoder resumed after
 * it (ntl_etl_mof_prefix, ntl_etl_mof_resume; what `etl events` writes
 * kernel events from) against the whole walk (ntl_etl_mof_begin, _next),
 * item by item and error by error, for the payload cut at every length.
 * Input: kind, group, opcode, version (UINT16), flags (bit 0: 64-bit
 * pointers), then the payload. Aborts on the first difference. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/etl.h"
#include "ntlens/etl_fields.h"
#include "ntlens/reader.h"

#define HEAD 6

static void same_field(const struct ntl_etl_field *a, const struct ntl_etl_field *b)
{
    if (a->item != b->item || a->name != b->name || a->depth != b->depth ||
        a->in_type != b->in_type || a->out_type != b->out_type || a->tag != b->tag ||
        a->in_array != b->in_array || a->index != b->index || a->count != b->count ||
        a->custom != b->custom || a->schema != b->schema || a->schema_size != b->schema_size ||
        a->data != b->data || a->size != b->size || a->payload_offset != b->payload_offset ||
        a->map_text != b->map_text)
        abort();
}

static void same_error(const struct ntl_error *a, const struct ntl_error *b)
{
    if (a->status != b->status || a->offset != b->offset ||
        strcmp(a->structure, b->structure) || strcmp(a->message, b->message))
        abort();
}

/* The next item the prefix path gives: a prefix field, then the resumed
 * decoder's. */
static int prefix_next(const struct ntl_etl_mof_prefix *p, size_t *i, struct ntl_etl_mof *d,
                       const struct ntl_etl_event *ev, struct ntl_etl_field *f,
                       struct ntl_error *err)
{
    if (*i < p->n) {
        *f = p->f[(*i)++];
        if (f->data || f->payload_offset + f->size > ev->payload_size)
            abort();
        f->data = ev->payload + f->payload_offset;
        return 1;
    }
    return ntl_etl_mof_next(d, f, err);
}

static void compare(const struct ntl_etl_event *ev)
{
    struct ntl_etl_mof walk, rest;
    struct ntl_etl_mof_prefix p;
    struct ntl_etl_field a, b;
    struct ntl_error ea = {0}, eb = {0};
    int has = ntl_etl_mof_begin(&walk, ev);
    if (ntl_etl_mof_prefix(&p, ev) != has)
        abort();
    if (!has || ev->payload_size < p.total)
        return; /* no layout, or the prefix does not apply: callers walk */
    if (strcmp(p.class_name, walk.class_name) || p.n > NTL_ETL_MOF_PREFIX_MAX)
        abort();
    ntl_etl_mof_resume(&rest, &p, ev);
    size_t i = 0;
    for (;;) {
        int ra = ntl_etl_mof_next(&walk, &a, &ea);
        int rb = prefix_next(&p, &i, &rest, ev, &b, &eb);
        if (ra != rb)
            abort();
        if (ra <= 0) {
            if (ra < 0)
                same_error(&ea, &eb);
            break;
        }
        same_field(&a, &b);
    }
    if (i != p.n)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_etl_event ev = {0};
    if (size < HEAD)
        return 0;
    ev.kind = (enum ntl_etl_kind)(data[0] % NTL_ETL_KIND_COUNT);
    ev.group = data[1];
    ev.opcode = data[2];
    ev.version = ntl_le16(data + 3);
    ev.is64 = data[5] & 1;
    ev.offset = 0x1000;
    size_t n = size - HEAD;
    /* Every cut of the payload, each in its own allocation so ASan sees a
     * read past it: where the decoder picks a layout by what is left. */
    for (size_t len = 0; len <= n; len++) {
        uint8_t *payload = malloc(len ? len : 1);
        if (!payload)
            return 0;
        memcpy(payload, data + HEAD, len);
        ev.payload = payload;
        ev.payload_size = len;
        compare(&ev);
        free(payload);
    }
    return 0;
}
