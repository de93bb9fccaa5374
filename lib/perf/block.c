/* PERF_DATA_BLOCK parser. Two walks over the same code: the first validates
 * everything and counts objects, counters, instances and name bytes; the
 * second fills one allocation sized from those counts. A third step
 * resolves parent instances and numbers same-named instances ("#N").
 *
 * Layout (WinPerf.h; the same on 32- and 64-bit Windows):
 *   PERF_DATA_BLOCK 88 bytes, system name, then at HeaderLength the objects;
 *   PERF_OBJECT_TYPE 64 bytes, counter definitions (40 bytes each, walked
 *   by ByteLength) up to DefinitionLength, then either one
 *   PERF_COUNTER_BLOCK (NumInstances == -1) or NumInstances times a
 *   PERF_INSTANCE_DEFINITION (24 bytes + name) followed by its counter
 *   block; the next object is TotalByteLength further. */
#include "ntlens/perf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/reader.h"
#include "ntlens/utf16.h"

#define BLOCK_HEADER_MIN 88u
#define OBJECT_HEADER_MIN 48u   /* up to CodePage; PerfTime/PerfFreq need 64 */
#define OBJECT_HEADER_FULL 64u
#define COUNTER_DEF_SIZE 40u
#define INSTANCE_DEF_SIZE 24u
#define WINE_MISPLACEMENT 88u

struct walk {
    const uint8_t *p;
    size_t size;            /* bytes the walk may read */
    bool fill;
    /* counts (first walk) */
    size_t nobjects, ncounters, ninstances, name_bytes;
    unsigned quirks;
    size_t end;             /* offset just past the last object */
    /* storage (second walk) */
    struct ntl_perf_object *objects;
    struct ntl_perf_counter_def *counters;
    struct ntl_perf_instance *instances;
    char *names;
    size_t names_used;
};

static size_t align8(size_t v) { return (v + 7) & ~(size_t)7; }

/* UTF-16LE name (or code-page bytes) to UTF-8 in the arena, at most
 * 3 bytes per unit plus the terminator (what the first walk reserved). */
static const char *store_name(struct walk *w, const uint8_t *src, size_t bytes, uint32_t code_page)
{
    char *dst = w->names + w->names_used;
    size_t n = 0;
    if (code_page) {
        /* 8-bit names: ASCII as is, other bytes as Latin-1 */
        for (size_t i = 0; i < bytes && src[i]; i++) {
            if (src[i] < 0x80) {
                dst[n++] = (char)src[i];
            } else {
                dst[n++] = (char)(0xc0 | (src[i] >> 6));
                dst[n++] = (char)(0x80 | (src[i] & 0x3f));
            }
        }
        dst[n] = '\0';
    } else {
        size_t units = ntl_utf16_unit_len(src, bytes / 2), i;
        for (i = 0; i < units; i++) {
            if (src[2 * i + 1] || src[2 * i] >= 0x80)
                break;
            dst[n++] = (char)src[2 * i];
        }
        if (i < units)
            n += ntl_utf16_to_utf8(src + 2 * i, units - i, dst + n, 3 * (units - i) + 1);
        else
            dst[n] = '\0';
    }
    w->names_used += n + 1;
    return dst;
}

static size_t name_reserve(size_t bytes, uint32_t code_page)
{
    return code_page ? 2 * bytes + 1 : 3 * (bytes / 2) + 1;
}

static int walk_counter_defs(struct walk *w, size_t obj, uint32_t hdr, uint32_t deflen,
                             uint32_t ncounters, struct ntl_perf_object *o, uint32_t *max_end,
                             struct ntl_error *err)
{
    size_t pos = obj + hdr, def_end = obj + deflen;
    *max_end = 4;
    for (uint32_t i = 0; i < ncounters; i++) {
        if (pos + COUNTER_DEF_SIZE > def_end)
            return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_COUNTER_DEFINITION", pos,
                                 "counter %u of %u lies beyond the object's DefinitionLength %u",
                                 i, ncounters, deflen);
        const uint8_t *d = w->p + pos;
        uint32_t blen = ntl_le32(d);
        uint32_t type = ntl_le32(d + 28), size = ntl_le32(d + 32), off = ntl_le32(d + 36);
        if (blen < COUNTER_DEF_SIZE || blen > def_end - pos)
            return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_COUNTER_DEFINITION", pos,
                                 "ByteLength %u (needs %u to %zu)", blen, COUNTER_DEF_SIZE,
                                 def_end - pos);
        uint32_t size_kind = type & 0x300u;
        if (size_kind == 0x000u && size == 8) {
            w->quirks |= NTL_PERF_QUIRK_WIDE_DWORD;
        } else if ((size_kind == 0x000u || size_kind == 0x100u) && size != 4 && size != 8) {
            return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_COUNTER_DEFINITION", pos + 32,
                                 "CounterSize %u for a numeric counter type 0x%08x", size, type);
        } else if (size_kind == 0x100u && size == 4) {
            return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_COUNTER_DEFINITION", pos + 32,
                                 "CounterSize 4 for a 64-bit counter type 0x%08x", type);
        }
        if ((uint64_t)off + size > UINT32_MAX)
            return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_COUNTER_DEFINITION", pos + 36,
                                 "CounterOffset %u + CounterSize %u overflows", off, size);
        if (off + size > *max_end)
            *max_end = off + size;
        if (w->fill) {
            struct ntl_perf_counter_def *c = (struct ntl_perf_counter_def *)&o->counters[i];
            c->name_index = ntl_le32(d + 4);
            c->help_index = ntl_le32(d + 12);
            c->default_scale = (int32_t)ntl_le32(d + 20);
            c->detail_level = ntl_le32(d + 24);
            c->type = type;
            c->size = size;
            c->offset = off;
            c->file_offset = pos;
        }
        pos += blen;
    }
    return 0;
}

/* Validates the PERF_COUNTER_BLOCK at pos (within obj_end) against the
 * definitions' extent; returns its ByteLength through *len. */
static int check_counter_block(struct walk *w, size_t pos, size_t obj_end, uint32_t max_end,
                               uint32_t *len, struct ntl_error *err)
{
    if (pos + 4 > obj_end)
        return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_COUNTER_BLOCK", pos,
                             "lies beyond the end of its object (0x%zx)", obj_end);
    uint32_t blen = ntl_le32(w->p + pos);
    if (blen < 4 || blen > obj_end - pos)
        return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_COUNTER_BLOCK", pos,
                             "ByteLength %u (needs 4 to %zu)", blen, obj_end - pos);
    if (blen < max_end)
        return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_COUNTER_BLOCK", pos,
                             "ByteLength %u is shorter than its counters (%u bytes)", blen,
                             max_end);
    if (blen > align8(max_end))
        w->quirks |= NTL_PERF_QUIRK_COUNTER_BLOCK_PADDING;
    *len = blen;
    return 0;
}

static int walk_instances(struct walk *w, size_t pos, size_t obj_end, int32_t ninst,
                          uint32_t max_end, struct ntl_perf_object *o, struct ntl_error *err)
{
    for (int32_t i = 0; i < ninst; i++) {
        if (pos + INSTANCE_DEF_SIZE > obj_end)
            return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_INSTANCE_DEFINITION", pos,
                                 "instance %d of %d lies beyond the end of its object (0x%zx)",
                                 i, ninst, obj_end);
        const uint8_t *d = w->p + pos;
        uint32_t blen = ntl_le32(d), name_off = ntl_le32(d + 16), name_len = ntl_le32(d + 20);
        if (blen < INSTANCE_DEF_SIZE || blen > obj_end - pos)
            return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_INSTANCE_DEFINITION", pos,
                                 "ByteLength %u (needs %u to %zu)", blen, INSTANCE_DEF_SIZE,
                                 obj_end - pos);
        if (name_len && (name_off < INSTANCE_DEF_SIZE || name_off > blen ||
                         name_len > blen - name_off))
            return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_INSTANCE_DEFINITION", pos + 16,
                                 "name at NameOffset %u, NameLength %u lies outside the "
                                 "instance's ByteLength %u", name_off, name_len, blen);
        uint32_t cblen;
        int rc = check_counter_block(w, pos + blen, obj_end, max_end, &cblen, err);
        if (rc < 0)
            return rc;
        if (w->fill) {
            struct ntl_perf_instance *in = (struct ntl_perf_instance *)&o->instances[i];
            in->name = name_len ? store_name(w, d + name_off, name_len, o->code_page)
                                : store_name(w, d, 0, 0);
            in->dup_index = 0;
            in->parent = NULL;
            in->unique_id = (int32_t)ntl_le32(d + 12);
            in->parent_object_index = ntl_le32(d + 4);
            in->parent_instance_number = ntl_le32(d + 8);
            in->counters = w->p + pos + blen;
            in->counters_size = cblen;
            in->file_offset = pos;
        } else {
            w->name_bytes += name_reserve(name_len, 0) + name_len; /* either encoding */
        }
        pos += (size_t)blen + cblen;
    }
    return 0;
}

static int walk_object(struct walk *w, size_t obj, size_t limit, size_t index,
                       struct ntl_error *err)
{
    const uint8_t *h = w->p + obj;
    if (obj + OBJECT_HEADER_MIN > limit)
        return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_OBJECT_TYPE", obj,
                             "object %zu lies beyond the end of the block (0x%zx)", index, limit);
    uint32_t total = ntl_le32(h), deflen = ntl_le32(h + 4), hdr = ntl_le32(h + 8);
    uint32_t ncounters = ntl_le32(h + 32);
    int32_t ninst = (int32_t)ntl_le32(h + 40);
    uint32_t code_page = ntl_le32(h + 44);

    if (total == 0) {
        if (obj + WINE_MISPLACEMENT + 12 <= w->size &&
            ntl_le32(w->p + obj + WINE_MISPLACEMENT) != 0 &&
            ntl_le32(w->p + obj + WINE_MISPLACEMENT + 8) == OBJECT_HEADER_FULL)
            return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_OBJECT_TYPE", obj,
                                 "TotalByteLength 0, and an object starts 88 bytes later: "
                                 "provider data written past HeaderLength (a Wine 8.0 bug); "
                                 "refusing misplaced data");
        return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_OBJECT_TYPE", obj,
                             "TotalByteLength 0");
    }
    if (total > limit - obj)
        return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_OBJECT_TYPE", obj,
                             "TotalByteLength %u runs past the end of the block (%zu bytes left)",
                             total, limit - obj);
    if (hdr < OBJECT_HEADER_MIN || hdr > total)
        return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_OBJECT_TYPE", obj + 8,
                             "HeaderLength %u (needs %u to TotalByteLength %u)", hdr,
                             OBJECT_HEADER_MIN, total);
    if (deflen < hdr || deflen > total)
        return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_OBJECT_TYPE", obj + 4,
                             "DefinitionLength %u (needs HeaderLength %u to TotalByteLength %u)",
                             deflen, hdr, total);
    if (ncounters > (deflen - hdr) / COUNTER_DEF_SIZE)
        return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_OBJECT_TYPE", obj + 32,
                             "NumCounters %u do not fit in DefinitionLength %u", ncounters, deflen);
    if (ninst < NTL_PERF_NO_INSTANCES)
        return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_OBJECT_TYPE", obj + 40,
                             "NumInstances %d", ninst);
    size_t obj_end = obj + total;
    if (ninst > 0 && (size_t)ninst > (total - deflen) / (INSTANCE_DEF_SIZE + 4))
        return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_OBJECT_TYPE", obj + 40,
                             "NumInstances %d do not fit in the object's %u bytes", ninst, total);

    struct ntl_perf_object *o = NULL;
    if (w->fill) {
        o = &w->objects[index];
        o->name_index = ntl_le32(h + 12);
        o->help_index = ntl_le32(h + 20);
        o->detail_level = ntl_le32(h + 28);
        o->default_counter = (int32_t)ntl_le32(h + 36);
        o->num_instances = ninst;
        o->code_page = code_page;
        if (hdr >= OBJECT_HEADER_FULL) {
            o->perf_time = (int64_t)ntl_le64(h + 48);
            o->perf_freq = (int64_t)ntl_le64(h + 56);
        }
        o->ncounters = ncounters;
        o->counters = w->counters + w->ncounters;
        o->instances = w->instances + w->ninstances;
        o->file_offset = obj;
        o->total_byte_length = total;
    }
    uint32_t max_end;
    int rc = walk_counter_defs(w, obj, hdr, deflen, ncounters, o, &max_end, err);
    if (rc < 0)
        return rc;
    if (ninst == NTL_PERF_NO_INSTANCES) {
        uint32_t cblen;
        if ((rc = check_counter_block(w, obj + deflen, obj_end, max_end, &cblen, err)) < 0)
            return rc;
        if (o) {
            o->counters_block = w->p + obj + deflen;
            o->counters_block_size = cblen;
        }
    } else {
        if ((rc = walk_instances(w, obj + deflen, obj_end, ninst, max_end, o, err)) < 0)
            return rc;
        if (o)
            o->ninstances = (size_t)ninst;
        w->ninstances += (size_t)ninst;
    }
    w->ncounters += ncounters;
    return 0;
}

static int walk_objects(struct walk *w, size_t start, size_t limit, uint32_t nobj,
                        struct ntl_error *err)
{
    size_t pos = start;
    w->ncounters = w->ninstances = 0;
    for (uint32_t i = 0; i < nobj; i++) {
        int rc = walk_object(w, pos, limit, i, err);
        if (rc < 0)
            return rc;
        pos += ntl_le32(w->p + pos);
    }
    w->nobjects = nobj;
    w->end = pos;
    return 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

enum ntl_perf_answer ntl_perf_block_classify(const void *data, size_t size, size_t *needed)
{
    const uint8_t *p = data;
    if (needed)
        *needed = 0;
    if (size < BLOCK_HEADER_MIN || memcmp(p, "P\0E\0R\0F\0", 8))
        return NTL_PERF_ANSWER_INVALID;
    uint32_t total = ntl_le32(p + 20), hdr = ntl_le32(p + 24), nobj = ntl_le32(p + 28);
    if (hdr < BLOCK_HEADER_MIN)
        return NTL_PERF_ANSWER_INVALID;
    /* Samba leaves the header out of TotalByteLength; asking for both is a
     * safe upper bound either way. */
    uint64_t claim = total >= hdr ? (uint64_t)total + hdr : hdr;
    if (needed)
        *needed = claim > SIZE_MAX ? SIZE_MAX : (size_t)claim;
    if (hdr > size || (total > size))
        return NTL_PERF_ANSWER_SHORT;
    if (nobj > 0 && all_zero(p + hdr, size - hdr))
        return NTL_PERF_ANSWER_ZERO_FILLED;
    if (needed)
        *needed = total;
    return NTL_PERF_ANSWER_OK;
}

static int parse_header(const uint8_t *p, size_t size, struct ntl_perf_block *hb,
                        struct ntl_error *err)
{
    if (size < BLOCK_HEADER_MIN)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "PERF_DATA_BLOCK", 0,
                             "%zu bytes, the header alone needs %u", size, BLOCK_HEADER_MIN);
    if (memcmp(p, "P\0E\0R\0F\0", 8))
        return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_DATA_BLOCK", 0,
                             "Signature is not \"PERF\"");
    hb->little_endian = ntl_le32(p + 8);
    hb->version = ntl_le32(p + 12);
    hb->revision = ntl_le32(p + 16);
    hb->total_byte_length = ntl_le32(p + 20);
    hb->header_length = ntl_le32(p + 24);
    hb->num_object_types = ntl_le32(p + 28);
    hb->default_object = (int32_t)ntl_le32(p + 32);
    hb->system_time.year = ntl_le16(p + 36);
    hb->system_time.month = ntl_le16(p + 38);
    hb->system_time.day_of_week = ntl_le16(p + 40);
    hb->system_time.day = ntl_le16(p + 42);
    hb->system_time.hour = ntl_le16(p + 44);
    hb->system_time.minute = ntl_le16(p + 46);
    hb->system_time.second = ntl_le16(p + 48);
    hb->system_time.milliseconds = ntl_le16(p + 50);
    hb->perf_time = (int64_t)ntl_le64(p + 56);
    hb->perf_freq = (int64_t)ntl_le64(p + 64);
    hb->perf_time_100ns = (int64_t)ntl_le64(p + 72);
    if (hb->little_endian != 1)
        return ntl_error_set(err, NTL_ERR_UNSUPPORTED, "PERF_DATA_BLOCK", 8,
                             "LittleEndian is %u: big-endian data is not supported",
                             hb->little_endian);
    if (hb->header_length < BLOCK_HEADER_MIN)
        return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_DATA_BLOCK", 24,
                             "HeaderLength %u is shorter than the %u-byte header",
                             hb->header_length, BLOCK_HEADER_MIN);
    if (hb->header_length > size)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "PERF_DATA_BLOCK", 24,
                             "HeaderLength %u but only %zu bytes", hb->header_length, size);
    if (hb->total_byte_length == 0)
        return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_DATA_BLOCK", 20, "TotalByteLength 0");
    return 0;
}

static int resolve_instances(struct ntl_perf_block *b, struct ntl_error *err);

int ntl_perf_block_parse(const void *data, size_t size, struct ntl_perf_block **out,
                         struct ntl_error *err)
{
    const uint8_t *p = data;
    struct ntl_perf_block hb = {0};
    int rc;

    *out = NULL;
    if ((rc = parse_header(p, size, &hb, err)) < 0)
        return rc;
    uint32_t total = hb.total_byte_length, hdr = hb.header_length;

    size_t needed;
    switch (ntl_perf_block_classify(p, size, &needed)) {
    case NTL_PERF_ANSWER_ZERO_FILLED:
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "PERF_DATA_BLOCK", hdr,
                             "NumObjectTypes %u but every byte after the header is zero: an "
                             "answer to a too-small buffer (Samba); retry with a larger one",
                             hb.num_object_types);
    case NTL_PERF_ANSWER_SHORT:
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "PERF_DATA_BLOCK", 20,
                             "TotalByteLength %u but only %zu bytes were received", total, size);
    default:
        break;
    }

    /* The objects may run to TotalByteLength, or (Samba) to TotalByteLength
     * plus the header. */
    struct walk w = {.p = p, .size = size};
    size_t limit = size;
    if ((uint64_t)total + hdr < limit)
        limit = (size_t)total + hdr;
    if ((rc = walk_objects(&w, hdr, limit, hb.num_object_types, err)) < 0)
        return rc;
    size_t used;
    if (w.end <= total) {
        used = total;
    } else {
        /* Objects past TotalByteLength: only Samba's header-less count
         * explains that (walk_objects already kept them within it). */
        w.quirks |= NTL_PERF_QUIRK_TOTAL_EXCLUDES_HEADER;
        used = (size_t)total + hdr;
    }

    uint32_t name_off = ntl_le32(p + 84), name_len = ntl_le32(p + 80);
    if (name_len && (name_off > size || name_len > size - name_off))
        return ntl_error_set(err, NTL_ERR_FORMAT, "PERF_DATA_BLOCK", 80,
                             "SystemName (offset %u, %u bytes) lies outside the block",
                             name_off, name_len);

    /* One allocation for everything. */
    size_t off_objects = align8(sizeof(struct ntl_perf_block));
    size_t off_counters = off_objects + align8(w.nobjects * sizeof(struct ntl_perf_object));
    size_t off_instances = off_counters + align8(w.ncounters * sizeof(struct ntl_perf_counter_def));
    size_t off_names = off_instances + align8(w.ninstances * sizeof(struct ntl_perf_instance));
    size_t total_alloc = off_names + w.name_bytes + name_reserve(name_len, 0) + 1;
    /* malloc, not calloc: the walk sets every instance and counter field
     * (zeroing megabytes first would cost a fifth of the parse) */
    uint8_t *mem = malloc(total_alloc);
    if (!mem)
        return ntl_error_set(err, NTL_ERR_NOMEM, "PERF_DATA_BLOCK", NTL_NO_OFFSET,
                             "%zu bytes for the index", total_alloc);
    struct ntl_perf_block *b = (struct ntl_perf_block *)mem;
    *b = hb;
    w.fill = true;
    w.objects = (struct ntl_perf_object *)(mem + off_objects);
    memset(w.objects, 0, w.nobjects * sizeof *w.objects);
    w.counters = (struct ntl_perf_counter_def *)(mem + off_counters);
    w.instances = (struct ntl_perf_instance *)(mem + off_instances);
    w.names = (char *)(mem + off_names);
    if ((rc = walk_objects(&w, hdr, limit, hb.num_object_types, err)) < 0) {
        free(mem);
        return rc; /* cannot differ from the first walk; kept for safety */
    }
    b->system_name = store_name(&w, p + name_off, name_len, 0);
    b->quirks = w.quirks;
    b->nobjects = w.nobjects;
    b->objects = w.objects;
    b->data = p;
    b->size = used;
    if ((rc = resolve_instances(b, err)) < 0) {
        free(mem);
        return rc;
    }
    *out = b;
    return 0;
}

void ntl_perf_block_free(struct ntl_perf_block *b)
{
    free(b);
}

/* ---- parents and "#N" ---- */

/* FNV-1a over "parent/name". Threads come grouped by process, so the
 * parent's part is remembered between calls. */
struct key_memo {
    const struct ntl_perf_instance *parent;
    uint32_t h;
};

static uint32_t key_hash(const struct ntl_perf_instance *in, struct key_memo *m)
{
    uint32_t h = 2166136261u;
    if (in->parent) {
        if (in->parent != m->parent) {
            for (const char *s = in->parent->name; *s; s++)
                h = (h ^ (unsigned char)*s) * 16777619u;
            m->parent = in->parent;
            m->h = (h ^ '/') * 16777619u;
        }
        h = m->h;
    }
    for (const char *s = in->name; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static bool key_equal(const struct ntl_perf_instance *a, const struct ntl_perf_instance *b)
{
    if (a->parent != b->parent) {
        if (!a->parent || !b->parent || strcmp(a->parent->name, b->parent->name))
            return false;
    }
    return !strcmp(a->name, b->name);
}

struct dup_slot {
    uint32_t first; /* instance index + 1; 0: empty */
    uint32_t count;
};

static int resolve_instances(struct ntl_perf_block *b, struct ntl_error *err)
{
    size_t most = 0;
    for (size_t i = 0; i < b->nobjects; i++)
        if (b->objects[i].ninstances > most)
            most = b->objects[i].ninstances;
    if (most == 0)
        return 0;
    size_t nslots = 16;
    while (nslots < 2 * most)
        nslots *= 2;
    struct dup_slot *slots = malloc(nslots * sizeof *slots);
    if (!slots)
        return ntl_error_set(err, NTL_ERR_NOMEM, "PERF_DATA_BLOCK", NTL_NO_OFFSET, NULL);

    for (size_t i = 0; i < b->nobjects; i++) {
        const struct ntl_perf_object *o = &b->objects[i];
        struct ntl_perf_instance *ins = (struct ntl_perf_instance *)o->instances;
        const struct ntl_perf_object *parent_obj = NULL;
        uint32_t parent_idx = 0;
        for (size_t j = 0; j < o->ninstances; j++) {
            struct ntl_perf_instance *in = &ins[j];
            if (!in->parent_object_index)
                continue;
            if (in->parent_object_index != parent_idx) {
                parent_idx = in->parent_object_index;
                parent_obj = ntl_perf_block_find_object(b, parent_idx);
            }
            if (parent_obj && parent_obj != o &&
                in->parent_instance_number < parent_obj->ninstances)
                in->parent = &parent_obj->instances[in->parent_instance_number];
        }
        if (o->ninstances < 2)
            continue;
        size_t clear = 16;
        while (clear < 2 * o->ninstances)
            clear *= 2;
        memset(slots, 0, clear * sizeof *slots);
        size_t mask = clear - 1;
        struct key_memo memo = {NULL, 0};
        for (size_t j = 0; j < o->ninstances; j++) {
            struct ntl_perf_instance *in = &ins[j];
            size_t s = key_hash(in, &memo) & mask;
            while (slots[s].first && !key_equal(&ins[slots[s].first - 1], in))
                s = (s + 1) & mask;
            if (slots[s].first) {
                in->dup_index = slots[s].count++;
            } else {
                slots[s].first = (uint32_t)j + 1;
                slots[s].count = 1;
            }
        }
    }
    free(slots);
    return 0;
}

/* ---- lookups ---- */

const struct ntl_perf_object *ntl_perf_block_find_object(const struct ntl_perf_block *b,
                                                         uint32_t name_index)
{
    for (size_t i = 0; i < b->nobjects; i++)
        if (b->objects[i].name_index == name_index)
            return &b->objects[i];
    return NULL;
}

int ntl_perf_object_find_counter(const struct ntl_perf_object *o, uint32_t name_index)
{
    for (size_t i = 0; i < o->ncounters; i++)
        if (o->counters[i].name_index == name_index)
            return (int)i;
    return -1;
}

const uint8_t *ntl_perf_object_counter_block(const struct ntl_perf_object *o, size_t instance,
                                             uint32_t *size)
{
    if (o->counters_block) {
        if (size)
            *size = o->counters_block_size;
        return o->counters_block;
    }
    if (instance >= o->ninstances)
        return NULL;
    if (size)
        *size = o->instances[instance].counters_size;
    return o->instances[instance].counters;
}

static inline const uint8_t *block_of(const struct ntl_perf_object *o, size_t instance)
{
    if (o->counters_block)
        return o->counters_block;
    return instance < o->ninstances ? o->instances[instance].counters : NULL;
}

const uint8_t *ntl_perf_counter_data(const struct ntl_perf_object *o, size_t counter,
                                     size_t instance)
{
    const uint8_t *cb = counter < o->ncounters ? block_of(o, instance) : NULL;
    return cb ? cb + o->counters[counter].offset : NULL;
}

uint64_t ntl_perf_counter_u64(const struct ntl_perf_object *o, size_t counter, size_t instance)
{
    const uint8_t *cb = counter < o->ncounters ? block_of(o, instance) : NULL;
    if (!cb)
        return 0;
    const struct ntl_perf_counter_def *c = &o->counters[counter];
    /* The type decides the width, as PDH reads it: Samba sends DWORD
     * counters with CounterSize 8 and leaves the upper half uninitialised. */
    switch (c->type & 0x300u) {
    case 0x000u: return ntl_le32(cb + c->offset);
    case 0x100u: return ntl_le64(cb + c->offset);
    default: return 0; /* zero-size and text counters */
    }
}

size_t ntl_perf_instance_path_name(const struct ntl_perf_instance *in, char *buf, size_t size)
{
    char dup[16] = "";
    if (in->dup_index)
        snprintf(dup, sizeof dup, "#%u", in->dup_index);
    int n = in->parent ? snprintf(buf, size, "%s/%s%s", in->parent->name, in->name, dup)
                       : snprintf(buf, size, "%s%s", in->name, dup);
    return n < 0 ? 0 : (size_t)n;
}

bool ntl_perf_systemtime_to_unix(const struct ntl_perf_systemtime *st, int64_t *seconds)
{
    if (st->year < 1601 || st->month < 1 || st->month > 12 || st->day < 1 || st->day > 31 ||
        st->hour > 23 || st->minute > 59 || st->second > 60)
        return false;
    /* days from civil (Howard Hinnant's algorithm) */
    int64_t y = st->year - (st->month <= 2);
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t mp = (st->month + 9) % 12;
    int64_t doy = (153 * mp + 2) / 5 + st->day - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t days = era * 146097 + doe - 719468;
    *seconds = days * 86400 + st->hour * 3600 + st->minute * 60 + st->second;
    return true;
}
