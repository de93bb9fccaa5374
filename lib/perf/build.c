/* The PERF_DATA_BLOCK writer (see ntlens/perf_build.h for the layout). Sizes
 * are fixed up in place once an object or the block is complete, so the
 * writer never needs to know the instance count in advance. */
#include "ntlens/perf_build.h"

#include <stdio.h>
#include <string.h>

#include "ntlens/reader.h"
#include "ntlens/utf16.h"

#define BUILD "PERF_DATA_BLOCK writer"

static int buf_status(struct ntl_error *err, int rc, const char *what)
{
    if (rc == NTL_ERR_LIMIT)
        return ntl_error_set(err, rc, BUILD, NTL_NO_OFFSET,
                             "%s: the block would exceed its size limit", what);
    return ntl_error_set(err, rc, BUILD, NTL_NO_OFFSET, "%s: out of memory", what);
}

static uint8_t *at(const struct ntl_perf_builder *b, size_t off)
{
    return b->out->data + off;
}

/* Offset from the start of the block, which must fit a DWORD. */
static int block_len(const struct ntl_perf_builder *b, size_t end, uint32_t *len, struct ntl_error *err)
{
    size_t n = end - b->block_start;
    if (n > UINT32_MAX)
        return ntl_error_set(err, NTL_ERR_LIMIT, BUILD, NTL_NO_OFFSET, "block larger than 4 GiB");
    *len = (uint32_t)n;
    return 0;
}

/* Appends a UTF-8 string as NUL-terminated UTF-16LE padded with zeros to a
 * multiple of 8 bytes; *name_bytes gets the length including the NUL. */
static int put_name(struct ntl_buf *out, const char *s, uint32_t *name_bytes, struct ntl_error *err)
{
    size_t ascii = 0, units, bytes, padded;
    uint8_t *p;
    int rc;

    /* Instance names are mostly ASCII ("svchost", "0"): one pass for those. */
    while (s[ascii] && !((unsigned char)s[ascii] & 0x80))
        ascii++;
    units = s[ascii] ? ntl_utf8_to_utf16(s, NULL, 0) : ascii;
    bytes = (units + 1) * 2;
    padded = (bytes + 7) & ~(size_t)7;
    if (units > NTL_PERF_BUILD_MAX_NAME)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, BUILD, NTL_NO_OFFSET,
                             "name of %zu UTF-16 units is longer than %u", units,
                             NTL_PERF_BUILD_MAX_NAME);
    if ((rc = ntl_buf_grow_zero(out, padded, &p)) < 0)
        return buf_status(err, rc, "name");
    if (s[ascii])
        ntl_utf8_to_utf16(s, p, units);
    else
        for (size_t i = 0; i < ascii; i++)
            p[2 * i] = (uint8_t)s[i];
    *name_bytes = (uint32_t)bytes;
    return 0;
}

void ntl_perf_build_systemtime(uint16_t st[8], int64_t unix_seconds, unsigned millis)
{
    /* Civil date from days since 1970 (Howard Hinnant's algorithm). */
    int64_t days = unix_seconds / 86400, secs = unix_seconds % 86400;
    int64_t z, era, doe, yoe, doy, mp, d, m, y;

    if (secs < 0) {
        secs += 86400;
        days--;
    }
    z = days + 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    d = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    y = yoe + era * 400 + (m <= 2);
    st[0] = (uint16_t)y;
    st[1] = (uint16_t)m;
    st[2] = (uint16_t)(((days % 7) + 11) % 7); /* 1970-01-01 was a Thursday (4) */
    st[3] = (uint16_t)d;
    st[4] = (uint16_t)(secs / 3600);
    st[5] = (uint16_t)(secs / 60 % 60);
    st[6] = (uint16_t)(secs % 60);
    st[7] = (uint16_t)millis;
}

int ntl_perf_build_begin(struct ntl_perf_builder *b, struct ntl_buf *out,
                         const struct ntl_perf_build_header *h, struct ntl_error *err)
{
    uint8_t *p;
    uint32_t name_bytes = 0;
    int rc;

    memset(b, 0, sizeof *b);
    b->out = out;
    if ((rc = ntl_buf_align(out, 8)) < 0)
        return buf_status(err, rc, "block header");
    b->block_start = out->len;
    if ((rc = ntl_buf_grow_zero(out, NTL_PERF_BUILD_BLOCK_SIZE, NULL)) < 0)
        return buf_status(err, rc, "block header");
    if (h->system_name && (rc = put_name(out, h->system_name, &name_bytes, err)) < 0)
        return rc;
    p = at(b, b->block_start);
    ntl_put_le16(p + 0, 'P');
    ntl_put_le16(p + 2, 'E');
    ntl_put_le16(p + 4, 'R');
    ntl_put_le16(p + 6, 'F');
    ntl_put_le32(p + 8, 1); /* LittleEndian */
    ntl_put_le32(p + 12, h->version ? h->version : 1);
    ntl_put_le32(p + 16, h->revision ? h->revision : 1);
    /* TotalByteLength (20) and NumObjectTypes (28) are set by finish. */
    ntl_put_le32(p + 24, (uint32_t)(out->len - b->block_start)); /* HeaderLength */
    ntl_put_le32(p + 32, (uint32_t)h->default_object);
    for (int i = 0; i < 8; i++)
        ntl_put_le16(p + 36 + 2 * i, h->system_time[i]);
    ntl_put_le64(p + 56, (uint64_t)h->perf_time);
    ntl_put_le64(p + 64, (uint64_t)h->perf_freq);
    ntl_put_le64(p + 72, (uint64_t)h->perf_time_100ns);
    ntl_put_le32(p + 80, name_bytes);
    ntl_put_le32(p + 84, name_bytes ? NTL_PERF_BUILD_BLOCK_SIZE : 0);
    return 0;
}

int ntl_perf_build_object(struct ntl_perf_builder *b, const struct ntl_perf_build_object *o,
                          struct ntl_error *err)
{
    uint32_t off = 8; /* values follow the 4-byte ByteLength, 8-aligned */
    uint8_t *p;
    int rc;

    if (!b->out || b->in_object)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, BUILD, NTL_NO_OFFSET,
                             "object started while another is open");
    if (o->num_counters > NTL_PERF_BUILD_MAX_COUNTERS)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, BUILD, NTL_NO_OFFSET,
                             "object %u has %u counters, more than %u", o->name_index,
                             o->num_counters, NTL_PERF_BUILD_MAX_COUNTERS);
    for (uint32_t i = 0; i < o->num_counters; i++) {
        uint32_t size = o->counters[i].size;
        if (size != 4 && size != 8)
            return ntl_error_set(err, NTL_ERR_ARGUMENT, BUILD, NTL_NO_OFFSET,
                                 "counter %u of object %u: CounterSize %u is not 4 or 8",
                                 o->counters[i].name_index, o->name_index, size);
        off = (off + size - 1) & ~(size - 1);
        b->offsets[i] = off;
        b->sizes[i] = (uint8_t)size;
        off += size;
    }
    b->data_size = (off + 7) & ~7u;
    b->num_counters = o->num_counters;
    b->num_instances = 0;
    b->object_has_instances = o->has_instances;
    b->object_has_data = false;

    b->object_start = b->out->len;
    rc = ntl_buf_grow_zero(b->out, NTL_PERF_BUILD_OBJECT_SIZE +
                                       (size_t)o->num_counters * NTL_PERF_BUILD_COUNTER_SIZE, &p);
    if (rc < 0)
        return buf_status(err, rc, "object definition");
    /* TotalByteLength (0) and NumInstances (40) are set by end_object. */
    ntl_put_le32(p + 4, NTL_PERF_BUILD_OBJECT_SIZE + o->num_counters * NTL_PERF_BUILD_COUNTER_SIZE);
    ntl_put_le32(p + 8, NTL_PERF_BUILD_OBJECT_SIZE);
    ntl_put_le32(p + 12, o->name_index);
    ntl_put_le32(p + 20, o->help_index);
    ntl_put_le32(p + 28, o->detail_level);
    ntl_put_le32(p + 32, o->num_counters);
    ntl_put_le32(p + 36, (uint32_t)o->default_counter);
    ntl_put_le32(p + 40, o->has_instances ? 0 : UINT32_MAX);
    ntl_put_le32(p + 44, o->code_page);
    ntl_put_le64(p + 48, (uint64_t)o->perf_time);
    ntl_put_le64(p + 56, (uint64_t)o->perf_freq);
    p += NTL_PERF_BUILD_OBJECT_SIZE;
    for (uint32_t i = 0; i < o->num_counters; i++, p += NTL_PERF_BUILD_COUNTER_SIZE) {
        const struct ntl_perf_build_counter *c = &o->counters[i];
        ntl_put_le32(p + 0, NTL_PERF_BUILD_COUNTER_SIZE);
        ntl_put_le32(p + 4, c->name_index);
        ntl_put_le32(p + 12, c->help_index);
        ntl_put_le32(p + 20, (uint32_t)c->default_scale);
        ntl_put_le32(p + 24, c->detail_level);
        ntl_put_le32(p + 28, c->type);
        ntl_put_le32(p + 32, c->size);
        ntl_put_le32(p + 36, b->offsets[i]);
    }
    b->in_object = true;
    return 0;
}

static int put_counter_block(struct ntl_perf_builder *b, const uint64_t *values, struct ntl_error *err)
{
    uint8_t *p;
    int rc = ntl_buf_grow_zero(b->out, b->data_size, &p);
    if (rc < 0)
        return buf_status(err, rc, "counter block");
    ntl_put_le32(p, b->data_size);
    for (uint32_t i = 0; i < b->num_counters; i++) {
        if (b->sizes[i] == 8)
            ntl_put_le64(p + b->offsets[i], values[i]);
        else
            ntl_put_le32(p + b->offsets[i], (uint32_t)values[i]);
    }
    return 0;
}

int ntl_perf_build_instance(struct ntl_perf_builder *b, const struct ntl_perf_build_instance *inst,
                            const uint64_t *values, struct ntl_error *err)
{
    size_t start = b->out ? b->out->len : 0;
    uint32_t name_bytes;
    uint8_t *p;
    int rc;

    if (!b->in_object || !b->object_has_instances)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, BUILD, NTL_NO_OFFSET,
                             "instance outside an object with instances");
    if (b->num_instances == INT32_MAX)
        return ntl_error_set(err, NTL_ERR_LIMIT, BUILD, NTL_NO_OFFSET, "too many instances");
    if ((rc = ntl_buf_grow_zero(b->out, NTL_PERF_BUILD_INSTANCE_SIZE, NULL)) < 0)
        return buf_status(err, rc, "instance definition");
    if ((rc = put_name(b->out, inst->name ? inst->name : "", &name_bytes, err)) < 0) {
        b->out->len = start; /* a rejected instance leaves the object as it was */
        return rc;
    }
    p = at(b, start);
    ntl_put_le32(p + 0, (uint32_t)(b->out->len - start));
    ntl_put_le32(p + 4, inst->parent_object);
    ntl_put_le32(p + 8, inst->parent_instance);
    ntl_put_le32(p + 12, (uint32_t)inst->unique_id);
    ntl_put_le32(p + 16, NTL_PERF_BUILD_INSTANCE_SIZE);
    ntl_put_le32(p + 20, name_bytes);
    if ((rc = put_counter_block(b, values, err)) < 0) {
        b->out->len = start;
        return rc;
    }
    b->num_instances++;
    return 0;
}

int ntl_perf_build_counters(struct ntl_perf_builder *b, const uint64_t *values, struct ntl_error *err)
{
    int rc;
    if (!b->in_object || b->object_has_instances || b->object_has_data)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, BUILD, NTL_NO_OFFSET,
                             "counter block outside an object without instances, or twice");
    if ((rc = put_counter_block(b, values, err)) < 0)
        return rc;
    b->object_has_data = true;
    return 0;
}

int ntl_perf_build_end_object(struct ntl_perf_builder *b, struct ntl_error *err)
{
    size_t len;
    uint8_t *p;
    int rc;

    if (!b->in_object)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, BUILD, NTL_NO_OFFSET, "no object is open");
    /* An object without instances always carries its counter block. */
    if (!b->object_has_instances && !b->object_has_data) {
        static const uint64_t zeros[NTL_PERF_BUILD_MAX_COUNTERS];
        if ((rc = put_counter_block(b, zeros, err)) < 0)
            return rc;
    }
    len = b->out->len - b->object_start;
    if (len > UINT32_MAX)
        return ntl_error_set(err, NTL_ERR_LIMIT, BUILD, NTL_NO_OFFSET, "object larger than 4 GiB");
    p = at(b, b->object_start);
    ntl_put_le32(p + 0, (uint32_t)len);
    if (b->object_has_instances)
        ntl_put_le32(p + 40, b->num_instances);
    b->in_object = false;
    b->num_objects++;
    return 0;
}

int ntl_perf_build_finish(struct ntl_perf_builder *b, struct ntl_error *err)
{
    uint32_t len = 0;
    int rc;

    if (!b->out || b->in_object)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, BUILD, NTL_NO_OFFSET,
                             "block finished with an object open");
    if ((rc = block_len(b, b->out->len, &len, err)) < 0)
        return rc;
    if (len > INT32_MAX)
        return ntl_error_set(err, NTL_ERR_LIMIT, BUILD, NTL_NO_OFFSET, "block larger than 2 GiB");
    ntl_put_le32(at(b, b->block_start) + 20, len);
    ntl_put_le32(at(b, b->block_start) + 28, b->num_objects);
    return (int)len;
}

static int put_utf16_string(struct ntl_buf *out, const char *s, struct ntl_error *err)
{
    size_t units = ntl_utf8_to_utf16(s, NULL, 0);
    uint8_t *p;
    int rc = ntl_buf_grow_zero(out, (units + 1) * 2, &p);
    if (rc < 0)
        return buf_status(err, rc, "title database");
    ntl_utf8_to_utf16(s, p, units);
    return 0;
}

int ntl_perf_build_titles(struct ntl_buf *out, const struct ntl_perf_title *titles, size_t n,
                          uint32_t last_index, struct ntl_error *err)
{
    char num[16];
    int rc;

    if (last_index) {
        snprintf(num, sizeof num, "%u", last_index);
        if ((rc = put_utf16_string(out, "1", err)) < 0 || (rc = put_utf16_string(out, num, err)) < 0)
            return rc;
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(num, sizeof num, "%u", titles[i].index);
        if ((rc = put_utf16_string(out, num, err)) < 0 ||
            (rc = put_utf16_string(out, titles[i].text ? titles[i].text : "", err)) < 0)
            return rc;
    }
    if ((rc = ntl_buf_put_u16(out, 0)) < 0)
        return buf_status(err, rc, "title database");
    return 0;
}
