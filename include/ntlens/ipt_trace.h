/* Loading an Intel PT trace from a file: the whole file, or the linear trace
 * of a full circular buffer given its next write position (ipt_sync.h says
 * how that is found), with the way back from an offset in the trace to an
 * offset in the file, so what a decoder reports can name the file's bytes. */
#ifndef NTLENS_IPT_TRACE_H
#define NTLENS_IPT_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/error.h"
#include "ntlens/ipt_sync.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest trace file read. */
#define NTL_IPT_MAX_TRACE ((size_t)4 << 30)

struct ntl_ipt_trace {
    const uint8_t *data;   /* the trace to decode (in file or linear) */
    size_t size;
    size_t file_size;
    bool wrapped;
    struct ntl_ipt_wrap wrap; /* when wrapped: where the linear trace lies in the file */
    struct ntl_buf file;      /* the file as read */
    struct ntl_buf linear;    /* the unwrapped trace when wrapped */
};

/* Reads path (at most NTL_IPT_MAX_TRACE bytes); when wrapped, the file is a
 * full circular buffer whose next write position is pos, and the trace is
 * its linear trace from the first PSB after pos. Returns 0, or:
 *   ntl_file_read's statuses (NTL_ERR_IO, NTL_ERR_LIMIT, NTL_ERR_NOMEM);
 *   NTL_ERR_ARGUMENT   pos is past the end of the file;
 *   NTL_ERR_NOT_FOUND  wrapped and the buffer holds no PSB;
 *   NTL_ERR_NOMEM      no memory for the linear copy.
 * err says which, naming the file's offsets. Call ntl_ipt_trace_free
 * afterwards whatever the result. */
int ntl_ipt_trace_load(struct ntl_ipt_trace *t, const char *path, bool wrapped, uint64_t pos,
                       struct ntl_error *err);

/* Offset in the file of offset off of t->data. Cannot fail. */
uint64_t ntl_ipt_trace_file_offset(const struct ntl_ipt_trace *t, uint64_t off);

void ntl_ipt_trace_free(struct ntl_ipt_trace *t);

#ifdef __cplusplus
}
#endif
#endif
