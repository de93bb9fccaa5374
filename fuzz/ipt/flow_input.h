/* The input layout fuzz_ipt_flow and fuzz_ipt_flow_split share: the first
 * byte says how many 16-byte units of code follow (mapped at 0x1000, and
 * again at 0x100000 so far jumps land somewhere); the rest is the trace. */
#ifndef FUZZ_IPT_FLOW_INPUT_H
#define FUZZ_IPT_FLOW_INPUT_H

#include <stdlib.h>
#include <string.h>

#include "ntlens/ipt_flow.h"
#include "ntlens/ipt_image.h"

/* The image the input's code makes, and cfg reading the input's trace from
 * it; NULL when there is no input or no memory. */
static inline struct ntl_ipt_image *flow_input(const uint8_t *data, size_t size,
                                               struct ntl_ipt_flow_config *cfg)
{
    struct ntl_ipt_image *img;
    struct ntl_error err;
    size_t code;
    if (size < 1 || ntl_ipt_image_new(&img, &err) < 0)
        return NULL;
    code = (size_t)data[0] * 16;
    if (code > size - 1)
        code = size - 1;
    if (code && (ntl_ipt_image_add(img, data + 1, code, 0x1000, &err) < 0 ||
                 ntl_ipt_image_add(img, data + 1, code, 0x100000, &err) < 0))
        abort();
    memset(cfg, 0, sizeof *cfg);
    cfg->trace.buf = data + 1 + code;
    cfg->trace.size = size - 1 - code;
    cfg->read = ntl_ipt_image_read;
    cfg->read_ctx = img;
    return img;
}

#endif
