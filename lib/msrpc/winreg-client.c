/* winreg calls over an RPC client, and whole-value fetches with buffer
 * growth. */
#include "ntlens/msrpc.h"

#include <string.h>

#include "ntlens/perf.h"
#include "ntlens/source.h"

static int werror_failure(uint32_t werror, const char *call, const char *what,
                          struct ntl_error *err)
{
    const char *name = ntl_werror_name(werror);
    if (werror == NTL_WERR_ACCESS_DENIED)
        return ntl_error_set(err, NTL_ERR_ACCESS, call, NTL_NO_OFFSET,
                             "access denied%s%s (on Windows, performance data needs an "
                             "administrator and the RemoteRegistry service)",
                             what ? " to " : "", what ? what : "");
    if (werror == NTL_WERR_FILE_NOT_FOUND)
        return ntl_error_set(err, NTL_ERR_NOT_FOUND, call, NTL_NO_OFFSET,
                             "%s: not found (ERROR_FILE_NOT_FOUND)", what ? what : "value");
    return ntl_error_set(err, NTL_ERR_REMOTE, call, NTL_NO_OFFSET,
                         "%s%sthe server answered Win32 error %u (%s)", what ? what : "",
                         what ? ": " : "", werror, name ? name : "unknown");
}

/* Runs one call whose request stub is in req and whose reply is a handle
 * and a WERROR. */
static int handle_call(struct ntl_rpc_client *c, uint16_t opnum, struct ntl_buf *req,
                       const char *call, const char *what, struct ntl_winreg_handle *h,
                       struct ntl_error *err)
{
    struct ntl_buf out;
    uint32_t werror = 0;
    int rc;

    ntl_buf_init(&out, 1u << 16);
    rc = ntl_rpc_call(c, opnum, req->data, req->len, &out, NULL, err);
    if (rc >= 0)
        rc = ntl_winreg_parse_handle_reply(out.data, out.len, h, &werror, err);
    ntl_buf_free(&out);
    if (rc < 0) {
        ntl_error_prefix(err, "%s", call);
        return rc;
    }
    if (werror != NTL_WERR_OK)
        return werror_failure(werror, call, what, err);
    return NTL_OK;
}

/* OpenHKPD and OpenHKLM take the same request; only the opnum and the names differ. */
static int open_root(struct ntl_rpc_client *c, uint16_t opnum, const char *call,
                     const char *what, struct ntl_winreg_handle *h, struct ntl_error *err)
{
    struct ntl_buf req;
    int rc;

    ntl_buf_init(&req, 0);
    rc = ntl_winreg_build_open_root(&req, NTL_WINREG_MAXIMUM_ALLOWED, err);
    if (rc >= 0)
        rc = handle_call(c, opnum, &req, call, what, h, err);
    ntl_buf_free(&req);
    return rc;
}

int ntl_winreg_open_hkpd(struct ntl_rpc_client *c, struct ntl_winreg_handle *h,
                         struct ntl_error *err)
{
    return open_root(c, NTL_WINREG_OPEN_HKPD, "OpenHKPD", "HKEY_PERFORMANCE_DATA", h, err);
}

int ntl_winreg_open_hklm(struct ntl_rpc_client *c, struct ntl_winreg_handle *h,
                         struct ntl_error *err)
{
    return open_root(c, NTL_WINREG_OPEN_HKLM, "OpenHKLM", "HKEY_LOCAL_MACHINE", h, err);
}

int ntl_winreg_open_key(struct ntl_rpc_client *c, const struct ntl_winreg_handle *parent,
                        const char *subkey, struct ntl_winreg_handle *h, struct ntl_error *err)
{
    struct ntl_buf req;
    int rc;

    ntl_buf_init(&req, 0);
    rc = ntl_winreg_build_open_key(&req, parent, subkey, NTL_WINREG_KEY_READ, err);
    if (rc >= 0)
        rc = handle_call(c, NTL_WINREG_OPEN_KEY, &req, "BaseRegOpenKey", subkey, h, err);
    ntl_buf_free(&req);
    return rc;
}

int ntl_winreg_close_key(struct ntl_rpc_client *c, struct ntl_winreg_handle *h,
                         struct ntl_error *err)
{
    struct ntl_buf req;
    struct ntl_winreg_handle closed;
    int rc;

    ntl_buf_init(&req, 0);
    rc = ntl_winreg_build_close_key(&req, h, err);
    if (rc >= 0)
        rc = handle_call(c, NTL_WINREG_CLOSE_KEY, &req, "BaseRegCloseKey", NULL, &closed, err);
    ntl_buf_free(&req);
    if (rc >= 0)
        memset(h, 0, sizeof *h);
    return rc;
}

int ntl_winreg_query_value_once(struct ntl_rpc_client *c, const struct ntl_winreg_handle *h,
                                const char *name, uint32_t buffer_size,
                                struct ntl_buf *stub_out, struct ntl_winreg_value *v,
                                struct ntl_error *err)
{
    struct ntl_buf req;
    int rc;

    ntl_buf_init(&req, 0);
    rc = ntl_winreg_build_query_value(&req, h, name, buffer_size, err);
    if (rc >= 0)
        rc = ntl_rpc_call(c, NTL_WINREG_QUERY_VALUE, req.data, req.len, stub_out, NULL, err);
    ntl_buf_free(&req);
    if (rc >= 0)
        rc = ntl_winreg_parse_query_value_reply(stub_out->data, stub_out->len, v, err);
    if (rc < 0)
        ntl_error_prefix(err, "QueryValue(\"%s\")", name);
    return rc;
}

/* Successes without bytes or a size hint, at growing buffers, after which
 * the value is taken to be empty. */
#define EMPTY_ANSWERS_BELIEVED 3

/* Next buffer size after an answer that did not fit in `size`. */
static uint64_t grow(uint32_t size, uint64_t hint)
{
    uint64_t next = size ? (uint64_t)size * 2 : 65536;
    /* ERROR_MORE_DATA's lpcbData says what is needed now; data changes
     * between calls, so leave room. */
    if (hint + hint / 8 + 4096 > next)
        next = hint + hint / 8 + 4096;
    return next;
}

int ntl_winreg_fetch_value(struct ntl_rpc_client *c, const struct ntl_winreg_handle *h,
                           const char *name, enum ntl_winreg_value_kind kind,
                           struct ntl_winreg_fetch *f, struct ntl_buf *out,
                           struct ntl_error *err)
{
    size_t max = f->max_size ? f->max_size : NTL_SOURCE_DEFAULT_MAX_BLOCK;
    unsigned empty_answers = 0;
    uint64_t size = f->initial_size ? f->initial_size : 65536;
    struct ntl_buf stub;
    int rc = NTL_OK;

    if (size > max)
        size = max;
    f->attempts = 0;
    ntl_buf_init(&stub, max + 4096);
    for (;;) {
        struct ntl_winreg_value v;
        uint64_t hint = 0;
        bool fits;

        f->attempts++;
        if ((rc = ntl_winreg_query_value_once(c, h, name, (uint32_t)size, &stub, &v, err)) < 0)
            break;
        if (v.werror == NTL_WERR_MORE_DATA || v.werror == NTL_WERR_INSUFFICIENT_BUFFER) {
            fits = false;
            hint = v.cb_data;
        } else if (v.werror != NTL_WERR_OK) {
            rc = werror_failure(v.werror, "QueryValue", name, err);
            break;
        } else if (v.data_len == 0) {
            /* Samba answers a buffer too small for a title database with
             * success, no bytes and the size needed in lpcbData; an empty
             * perfmon store gives success, no bytes and no size at any
             * buffer. Retry larger a few times, then believe it. */
            hint = v.cb_data;
            fits = false;
            if (hint <= size && ++empty_answers >= EMPTY_ANSWERS_BELIEVED) {
                if (kind == NTL_WINREG_VALUE_PERF_DATA) {
                    rc = ntl_error_set(err, NTL_ERR_FORMAT, "QueryValue", NTL_NO_OFFSET,
                                       "\"%s\": the server returned no performance data (a "
                                       "Samba server needs ntlens samba-provider)", name);
                    break;
                }
                fits = true;
            }
        } else if (kind == NTL_WINREG_VALUE_PERF_DATA) {
            size_t needed = 0;
            enum ntl_perf_answer a = ntl_perf_block_classify(v.data, v.data_len, &needed);
            if (a == NTL_PERF_ANSWER_INVALID) {
                rc = ntl_error_set(err, NTL_ERR_FORMAT, "QueryValue", NTL_NO_OFFSET,
                                   "\"%s\": the answer is not a PERF_DATA_BLOCK", name);
                break;
            }
            fits = a == NTL_PERF_ANSWER_OK;
            hint = a == NTL_PERF_ANSWER_SHORT ? needed : 0;
        } else {
            fits = v.cb_data <= v.data_len;
            hint = v.cb_data;
        }
        if (fits) {
            out->len = 0;
            if (ntl_buf_append(out, v.data, v.data_len) < 0) {
                rc = ntl_error_set(err, NTL_ERR_LIMIT, "QueryValue", NTL_NO_OFFSET,
                                   "\"%s\": %u bytes exceed the output buffer", name,
                                   v.data_len);
                break;
            }
            f->type = v.type;
            f->last_size = (uint32_t)size;
            f->initial_size = (uint32_t)size;
            rc = NTL_OK;
            break;
        }
        if (hint > max) {
            rc = ntl_error_set(err, NTL_ERR_LIMIT, "QueryValue", NTL_NO_OFFSET,
                               "\"%s\" does not fit in %zu bytes (the cap; raise it with "
                               "--max-block): the server says it needs %llu bytes", name, max,
                               (unsigned long long)hint);
            break;
        }
        if (size >= max) {
            rc = ntl_error_set(err, NTL_ERR_LIMIT, "QueryValue", NTL_NO_OFFSET,
                               "\"%s\" does not fit in %zu bytes (the cap; raise it with "
                               "--max-block)", name, max);
            break;
        }
        size = grow((uint32_t)size, hint);
        if (size > max)
            size = max;
    }
    ntl_buf_free(&stub);
    return rc;
}
