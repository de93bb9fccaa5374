/* Loading an Intel PT trace file, whole or unwrapped (ntlens/ipt_trace.h). */
#include "ntlens/ipt_trace.h"

#include <string.h>

int ntl_ipt_trace_load(struct ntl_ipt_trace *t, const char *path, bool wrapped, uint64_t pos,
                       struct ntl_error *err)
{
    memset(t, 0, sizeof *t);
    ntl_buf_init(&t->file, NTL_IPT_MAX_TRACE);
    ntl_buf_init(&t->linear, NTL_IPT_MAX_TRACE);
    int rc = ntl_file_read(path, NTL_IPT_MAX_TRACE, &t->file, err);
    if (rc < 0)
        return rc;
    t->file_size = t->file.len;
    t->data = t->file.data;
    t->size = t->file.len;
    if (!wrapped)
        return NTL_OK;
    if (pos > t->file.len)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                             "write position %llu is past the end of the %zu-byte buffer",
                             (unsigned long long)pos, t->file.len);
    rc = ntl_ipt_unwrap(t->file.data, t->file.len, (size_t)pos, &t->linear, &t->wrap, err);
    if (rc < 0)
        return rc;
    t->wrapped = true;
    t->data = t->linear.data;
    t->size = t->linear.len;
    return NTL_OK;
}

uint64_t ntl_ipt_trace_file_offset(const struct ntl_ipt_trace *t, uint64_t off)
{
    if (!t->wrapped)
        return off;
    if (off < t->wrap.first_len)
        return t->wrap.first_off + off;
    return off - t->wrap.first_len;
}

void ntl_ipt_trace_free(struct ntl_ipt_trace *t)
{
    ntl_buf_free(&t->file);
    ntl_buf_free(&t->linear);
}
