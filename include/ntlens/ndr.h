/* NDR 2.0 (C706 chapter 14) as MS-RPCE uses it: little-endian primitives
 * aligned to their size relative to the start of the stub, unique pointers
 * as 32-bit referent ids, and conformant / varying arrays. Writers append to
 * an ntl_buf whose offset 0 is the start of the stub; readers are bounded
 * ntl_readers whose position 0 is the start of the stub. */
#ifndef NTLENS_NDR_H
#define NTLENS_NDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/error.h"
#include "ntlens/reader.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writers. Each aligns first (padding with zeros). */
int ntl_ndr_put_u16(struct ntl_buf *b, uint16_t v);
int ntl_ndr_put_u32(struct ntl_buf *b, uint32_t v);
/* A unique pointer's referent id: 0 for NULL, otherwise a fresh non-zero id
 * taken from *next_ref. */
int ntl_ndr_put_ptr(struct ntl_buf *b, bool present, uint32_t *next_ref);
/* A conformant varying array header: max_count, offset 0, actual_count. */
int ntl_ndr_put_cv_header(struct ntl_buf *b, uint32_t max_count, uint32_t actual_count);
/* A counted UTF-16 string (RPC_UNICODE_STRING / RRP_UNICODE_STRING) with
 * its buffer deferred inline: Length, MaximumLength, pointer, then the
 * conformant varying array. The string is converted from UTF-8 and a
 * terminating NUL is sent and counted, as Windows' RegQueryValueExW does. */
int ntl_ndr_put_unicode_string(struct ntl_buf *b, const char *utf8, uint32_t *next_ref,
                               struct ntl_error *err);

/* Readers: each aligns the reader first and fails with NTL_ERR_TRUNCATED
 * naming `what` and the absolute offset when the stub is too short. */
int ntl_ndr_get_u32(struct ntl_reader *r, uint32_t *v, const char *what, struct ntl_error *err);
/* A unique pointer: *present = referent id != 0. */
int ntl_ndr_get_ptr(struct ntl_reader *r, bool *present, const char *what,
                    struct ntl_error *err);

/* A conformant varying byte array: max_count, offset, actual_count, then the
 * bytes. offset + actual_count must not exceed max_count, and the bytes
 * must be present. *data points into the reader. */
struct ntl_ndr_cv_array {
    uint32_t max_count;
    uint32_t offset;
    uint32_t actual_count;
    const uint8_t *data;     /* actual_count elements */
};
int ntl_ndr_get_cv_array(struct ntl_reader *r, size_t elem_size, struct ntl_ndr_cv_array *a,
                         const char *what, struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
