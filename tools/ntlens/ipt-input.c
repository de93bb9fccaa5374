#include "ipt-input.h"

#include <string.h>

int ipt_input_load(struct ipt_input *in, const char *path, bool wrapped, uint64_t pos,
                   struct ntl_error *err)
{
    memset(in, 0, sizeof *in);
    ntl_buf_init(&in->file, IPT_MAX_TRACE);
    ntl_buf_init(&in->linear, IPT_MAX_TRACE);
    int rc = ntl_file_read(path, IPT_MAX_TRACE, &in->file, err);
    if (rc < 0)
        return rc;
    in->file_size = in->file.len;
    in->data = in->file.data;
    in->size = in->file.len;
    if (!wrapped)
        return NTL_OK;
    if (pos > in->file.len)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                             "--wrapped position %llu is past the end of the %zu-byte trace",
                             (unsigned long long)pos, in->file.len);
    rc = ntl_ipt_unwrap(in->file.data, in->file.len, (size_t)pos, &in->linear, &in->wrap, err);
    if (rc < 0)
        return rc;
    in->wrapped = true;
    in->data = in->linear.data;
    in->size = in->linear.len;
    return NTL_OK;
}

uint64_t ipt_input_file_offset(const struct ipt_input *in, uint64_t off)
{
    if (!in->wrapped)
        return off;
    if (off < in->wrap.first_len)
        return in->wrap.first_off + off;
    return off - in->wrap.first_len;
}

void ipt_input_free(struct ipt_input *in)
{
    ntl_buf_free(&in->file);
    ntl_buf_free(&in->linear);
}
