/* NDR 2.0 primitives (C706 14.2-14.3), little-endian. */
#include "ntlens/ndr.h"

#include <stdlib.h>
#include <string.h>

#include "ntlens/utf16.h"

static int align(struct ntl_buf *b, size_t n)
{
    return ntl_buf_align(b, n);
}

int ntl_ndr_put_u16(struct ntl_buf *b, uint16_t v)
{
    int rc = align(b, 2);
    return rc < 0 ? rc : ntl_buf_put_u16(b, v);
}

int ntl_ndr_put_u32(struct ntl_buf *b, uint32_t v)
{
    int rc = align(b, 4);
    return rc < 0 ? rc : ntl_buf_put_u32(b, v);
}

int ntl_ndr_put_ptr(struct ntl_buf *b, bool present, uint32_t *next_ref)
{
    uint32_t id = 0;
    if (present) {
        id = *next_ref;
        *next_ref += 4;
    }
    return ntl_ndr_put_u32(b, id);
}

int ntl_ndr_put_cv_header(struct ntl_buf *b, uint32_t max_count, uint32_t actual_count)
{
    int rc;
    if ((rc = ntl_ndr_put_u32(b, max_count)) < 0 || (rc = ntl_ndr_put_u32(b, 0)) < 0)
        return rc;
    return ntl_ndr_put_u32(b, actual_count);
}

int ntl_ndr_put_unicode_string(struct ntl_buf *b, const char *utf8, uint32_t *next_ref,
                               struct ntl_error *err)
{
    size_t units = ntl_utf8_to_utf16(utf8, NULL, 0) + 1; /* with the NUL */
    uint8_t *w;
    int rc;

    if (units * 2 > UINT16_MAX)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "RRP_UNICODE_STRING", NTL_NO_OFFSET,
                             "name of %zu characters is too long", units - 1);
    if ((rc = ntl_ndr_put_u16(b, (uint16_t)(units * 2))) < 0 ||
        (rc = ntl_ndr_put_u16(b, (uint16_t)(units * 2))) < 0 ||
        (rc = ntl_ndr_put_ptr(b, true, next_ref)) < 0 ||
        (rc = ntl_ndr_put_cv_header(b, (uint32_t)units, (uint32_t)units)) < 0 ||
        (rc = ntl_buf_grow_zero(b, units * 2, &w)) < 0)
        return ntl_error_set(err, rc, "RRP_UNICODE_STRING", NTL_NO_OFFSET,
                             "cannot encode the string");
    ntl_utf8_to_utf16(utf8, w, units - 1);
    return NTL_OK;
}

static bool reader_align(struct ntl_reader *r, size_t n)
{
    size_t pos = (r->pos + n - 1) & ~(n - 1);
    return ntl_reader_seek(r, pos);
}

int ntl_ndr_get_u32(struct ntl_reader *r, uint32_t *v, const char *what, struct ntl_error *err)
{
    if (!reader_align(r, 4) || !ntl_reader_u32(r, v))
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "NDR", ntl_reader_offset(r),
                             "stub ends before %s", what);
    return NTL_OK;
}

int ntl_ndr_get_ptr(struct ntl_reader *r, bool *present, const char *what,
                    struct ntl_error *err)
{
    uint32_t id = 0;
    int rc = ntl_ndr_get_u32(r, &id, what, err);
    if (rc < 0)
        return rc;
    *present = id != 0;
    return NTL_OK;
}

int ntl_ndr_get_cv_array(struct ntl_reader *r, size_t elem_size, struct ntl_ndr_cv_array *a,
                         const char *what, struct ntl_error *err)
{
    uint64_t at;
    int rc;

    if ((rc = ntl_ndr_get_u32(r, &a->max_count, what, err)) < 0 ||
        (rc = ntl_ndr_get_u32(r, &a->offset, what, err)) < 0 ||
        (rc = ntl_ndr_get_u32(r, &a->actual_count, what, err)) < 0)
        return rc;
    at = ntl_reader_offset(r);
    if ((uint64_t)a->offset + a->actual_count > a->max_count)
        return ntl_error_set(err, NTL_ERR_FORMAT, "NDR", at - 12,
                             "%s: offset %u + actual_count %u exceed max_count %u", what,
                             a->offset, a->actual_count, a->max_count);
    if ((uint64_t)a->actual_count * elem_size > ntl_reader_left(r) ||
        !ntl_reader_bytes(r, (size_t)a->actual_count * elem_size, &a->data))
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "NDR", at,
                             "%s: actual_count %u elements but only %zu bytes remain", what,
                             a->actual_count, ntl_reader_left(r));
    return NTL_OK;
}
