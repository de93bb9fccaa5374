/* Loading an Intel PT trace for the ipt commands: the whole file, or the
 * linear trace of a circular buffer (--wrapped POS). */
#ifndef NTLENS_TOOL_IPT_INPUT_H
#define NTLENS_TOOL_IPT_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/error.h"
#include "ntlens/ipt_sync.h"

#define IPT_MAX_TRACE ((size_t)4 << 30)

struct ipt_input {
    struct ntl_buf file;     /* the file as read */
    struct ntl_buf linear;   /* the unwrapped trace when wrapped */
    const uint8_t *data;     /* the trace to decode */
    size_t size;
    bool wrapped;
    struct ntl_ipt_wrap wrap;
    size_t file_size;
};

/* Reads path; when wrapped, unwraps the circular buffer at write position pos. */
int ipt_input_load(struct ipt_input *in, const char *path, bool wrapped, uint64_t pos,
                   struct ntl_error *err);
/* Offset in the file of offset off of the trace being decoded. */
uint64_t ipt_input_file_offset(const struct ipt_input *in, uint64_t off);
void ipt_input_free(struct ipt_input *in);

#endif
