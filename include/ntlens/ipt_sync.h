/* Intel PT synchronisation: finding Packet Stream Boundaries (PSB, the
 * 16-byte pattern 02 82 repeated eight times) forward and backward in a
 * linear trace, and unwrapping a circular trace buffer.
 *
 * A circular buffer (ETW's ProcessorTrace event: TraceSize == the configured
 * BufferSize, TracePosition = next write position; ipt.sys's RingBufferOffset)
 * holds the newest bytes just before POS and the oldest from POS on, the
 * oldest possibly starting in the middle of a packet. Decoding starts at the
 * first PSB found searching circularly from POS (a PSB may itself straddle the
 * end of the buffer) and runs, across the wrap, up to POS. */
#ifndef NTLENS_IPT_SYNC_H
#define NTLENS_IPT_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NTL_IPT_PSB_SIZE 16

/* True when a whole PSB starts at buf[off]. */
bool ntl_ipt_is_psb(const uint8_t *buf, size_t size, size_t off);

/* Offset of the first PSB starting at or after `from`: 0, or NTL_ERR_NOT_FOUND. */
int ntl_ipt_sync_forward(const uint8_t *buf, size_t size, size_t from, size_t *psb);

/* Offset of the last PSB starting before `before` (so repeated calls walk
 * backwards through a trace): 0, or NTL_ERR_NOT_FOUND. */
int ntl_ipt_sync_backward(const uint8_t *buf, size_t size, size_t before, size_t *psb);

/* Where the linear trace of a circular buffer lies. The trace is
 * buf[first_off, first_off + first_len) followed by buf[0, second_len). */
struct ntl_ipt_wrap {
    size_t psb;        /* offset in buf of the PSB decoding starts at */
    size_t first_off;  /* == psb */
    size_t first_len;
    size_t second_len; /* 0 when the trace does not cross the end of buf */
    size_t skipped;    /* bytes from pos to the PSB (the partial oldest data) */
};

/* Finds the linear trace in a circular buffer of `size` bytes whose next
 * write position is `pos` (0 <= pos <= size; pos == size is the same as 0,
 * a buffer that has not wrapped). No copying. NTL_ERR_NOT_FOUND (with err
 * set) when the buffer holds no PSB, NTL_ERR_ARGUMENT when pos > size. */
int ntl_ipt_wrap_find(const uint8_t *buf, size_t size, size_t pos, struct ntl_ipt_wrap *wrap,
                      struct ntl_error *err);

/* The same, appending the linear trace (first_len + second_len bytes, at
 * most `size`) to out. info may be NULL. Returns 0 or a negative status. */
int ntl_ipt_unwrap(const uint8_t *buf, size_t size, size_t pos, struct ntl_buf *out,
                   struct ntl_ipt_wrap *info, struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
