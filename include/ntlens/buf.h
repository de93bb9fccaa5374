/* A growable byte buffer with a hard size cap, so that no input can make a
 * builder allocate without bound. */
#ifndef NTLENS_BUF_H
#define NTLENS_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ntl_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
    size_t limit; /* 0: SIZE_MAX/2 */
};

void ntl_buf_init(struct ntl_buf *b, size_t limit);
void ntl_buf_free(struct ntl_buf *b);
/* Makes room for n more bytes. NTL_ERR_LIMIT past the limit, NTL_ERR_NOMEM. */
int ntl_buf_reserve(struct ntl_buf *b, size_t n);
int ntl_buf_append(struct ntl_buf *b, const void *p, size_t n);
/* Appends n zero bytes and returns a pointer to them through *out. */
int ntl_buf_grow_zero(struct ntl_buf *b, size_t n, uint8_t **out);
int ntl_buf_put_u16(struct ntl_buf *b, uint16_t v);
int ntl_buf_put_u32(struct ntl_buf *b, uint32_t v);
int ntl_buf_put_u64(struct ntl_buf *b, uint64_t v);
/* Pads with zeros to a multiple of align (a power of two). */
int ntl_buf_align(struct ntl_buf *b, size_t align);

/* Reads a whole file, refusing files larger than limit bytes. Returns 0;
 * NTL_ERR_IO when it cannot be opened or read (the system's reason in the
 * message); NTL_ERR_LIMIT when larger than limit; NTL_ERR_NOMEM. The message
 * does not name the file: the caller, who knows how the user named it, does
 * (so an error names it once). out is initialised here, so it must not hold
 * memory (free it first to reuse it); on an error it is left empty. */
int ntl_file_read(const char *path, size_t limit, struct ntl_buf *out, struct ntl_error *err);
/* Writes a whole file (through a temporary name, then rename). */
int ntl_file_write(const char *path, const void *data, size_t len, struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
