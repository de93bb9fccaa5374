/* A bounds-checked little-endian reader over an untrusted byte range.
 *
 * Every read checks the remaining length first; a failed read leaves the
 * position unchanged and returns false. `origin` is the offset of data[0] in
 * the whole input, so errors can name absolute file offsets even when a
 * reader covers only one structure. */
#ifndef NTLENS_READER_H
#define NTLENS_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ntl_reader {
    const uint8_t *data;
    size_t size;
    size_t pos;
    uint64_t origin;
};

/* True when [off, off+len) lies within size, without overflow. */
static inline bool ntl_range_ok(size_t size, uint64_t off, uint64_t len)
{
    return off <= size && len <= size - off;
}

static inline uint16_t ntl_le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t ntl_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t ntl_le64(const uint8_t *p) { return ntl_le32(p) | ((uint64_t)ntl_le32(p + 4) << 32); }
static inline void ntl_put_le16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void ntl_put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline void ntl_put_le64(uint8_t *p, uint64_t v) { ntl_put_le32(p, (uint32_t)v); ntl_put_le32(p + 4, (uint32_t)(v >> 32)); }

static inline void ntl_reader_init(struct ntl_reader *r, const void *data, size_t size, uint64_t origin)
{
    r->data = (const uint8_t *)data;
    r->size = size;
    r->pos = 0;
    r->origin = origin;
}

static inline size_t ntl_reader_left(const struct ntl_reader *r) { return r->size - r->pos; }
/* Absolute offset of the current position, for error messages. */
static inline uint64_t ntl_reader_offset(const struct ntl_reader *r) { return r->origin + r->pos; }

static inline bool ntl_reader_seek(struct ntl_reader *r, size_t pos)
{
    if (pos > r->size)
        return false;
    r->pos = pos;
    return true;
}

static inline bool ntl_reader_skip(struct ntl_reader *r, size_t n)
{
    if (n > ntl_reader_left(r))
        return false;
    r->pos += n;
    return true;
}

/* Points *out at the next n bytes and advances. */
static inline bool ntl_reader_bytes(struct ntl_reader *r, size_t n, const uint8_t **out)
{
    if (n > ntl_reader_left(r))
        return false;
    *out = r->data + r->pos;
    r->pos += n;
    return true;
}

static inline bool ntl_reader_u8(struct ntl_reader *r, uint8_t *v)
{
    if (ntl_reader_left(r) < 1)
        return false;
    *v = r->data[r->pos++];
    return true;
}

static inline bool ntl_reader_u16(struct ntl_reader *r, uint16_t *v)
{
    if (ntl_reader_left(r) < 2)
        return false;
    *v = ntl_le16(r->data + r->pos);
    r->pos += 2;
    return true;
}

static inline bool ntl_reader_u32(struct ntl_reader *r, uint32_t *v)
{
    if (ntl_reader_left(r) < 4)
        return false;
    *v = ntl_le32(r->data + r->pos);
    r->pos += 4;
    return true;
}

static inline bool ntl_reader_u64(struct ntl_reader *r, uint64_t *v)
{
    if (ntl_reader_left(r) < 8)
        return false;
    *v = ntl_le64(r->data + r->pos);
    r->pos += 8;
    return true;
}

/* A reader over [off, off+len) of r, with the origin carried along. */
static inline bool ntl_reader_sub(const struct ntl_reader *r, uint64_t off, uint64_t len,
                                  struct ntl_reader *sub)
{
    if (!ntl_range_ok(r->size, off, len))
        return false;
    ntl_reader_init(sub, r->data + off, (size_t)len, r->origin + off);
    return true;
}

#ifdef __cplusplus
}
#endif
#endif
