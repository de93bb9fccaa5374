/* MS-RRP request stubs and response parsers (MS-RRP 3.1.5). */
#include "ntlens/winreg.h"

#include <string.h>

#include "ntlens/ndr.h"
#include "ntlens/reader.h"

const struct ntl_dcerpc_syntax ntl_winreg_syntax = {
    {0x01, 0xd0, 0x8c, 0x33, 0x44, 0x22, 0xf1, 0x31, 0xaa, 0xaa, 0x90, 0x00, 0x38, 0x00, 0x10, 0x03},
    1, 0,
};

static int nomem(struct ntl_error *err, const char *what)
{
    return ntl_error_set(err, NTL_ERR_NOMEM, what, NTL_NO_OFFSET, "cannot encode the request");
}

/* OpenHKLM (2) and OpenHKPD (3) share one stub: a NULL ServerName and the
 * access mask. */
int ntl_winreg_build_open_root(struct ntl_buf *out, uint32_t access, struct ntl_error *err)
{
    uint32_t ref = 0x20000;
    if (ntl_ndr_put_ptr(out, false, &ref) < 0 || ntl_ndr_put_u32(out, access) < 0)
        return nomem(err, "OpenHKPD");
    return NTL_OK;
}

int ntl_winreg_build_open_key(struct ntl_buf *out, const struct ntl_winreg_handle *parent,
                              const char *subkey, uint32_t access, struct ntl_error *err)
{
    uint32_t ref = 0x20000;
    int rc;

    if (ntl_buf_append(out, parent->bytes, sizeof parent->bytes) < 0)
        return nomem(err, "BaseRegOpenKey");
    if ((rc = ntl_ndr_put_unicode_string(out, subkey, &ref, err)) < 0)
        return rc;
    if (ntl_ndr_put_u32(out, 0) < 0 || ntl_ndr_put_u32(out, access) < 0)
        return nomem(err, "BaseRegOpenKey");
    return NTL_OK;
}

int ntl_winreg_build_close_key(struct ntl_buf *out, const struct ntl_winreg_handle *h,
                               struct ntl_error *err)
{
    if (ntl_buf_append(out, h->bytes, sizeof h->bytes) < 0)
        return nomem(err, "BaseRegCloseKey");
    return NTL_OK;
}

int ntl_winreg_build_query_value(struct ntl_buf *out, const struct ntl_winreg_handle *h,
                                 const char *value_name, uint32_t buffer_size,
                                 struct ntl_error *err)
{
    uint32_t ref = 0x20000;
    int rc;

    if (ntl_buf_append(out, h->bytes, sizeof h->bytes) < 0)
        return nomem(err, "BaseRegQueryValue");
    if ((rc = ntl_ndr_put_unicode_string(out, value_name, &ref, err)) < 0)
        return rc;
    /* lpType: in 0 */
    if (ntl_ndr_put_ptr(out, true, &ref) < 0 || ntl_ndr_put_u32(out, 0) < 0)
        return nomem(err, "BaseRegQueryValue");
    /* lpData: [size_is(*lpcbData), length_is(*lpcbLen)] with lpcbLen 0, so a
     * conformant varying array with max_count = buffer size and no bytes.
     * Nmap left out actual_count here, which Samba faults with 0x6f7. */
    if (ntl_ndr_put_ptr(out, buffer_size > 0, &ref) < 0 ||
        (buffer_size > 0 && ntl_ndr_put_cv_header(out, buffer_size, 0) < 0))
        return nomem(err, "BaseRegQueryValue");
    /* lpcbData, lpcbLen */
    if (ntl_ndr_put_ptr(out, true, &ref) < 0 || ntl_ndr_put_u32(out, buffer_size) < 0 ||
        ntl_ndr_put_ptr(out, true, &ref) < 0 || ntl_ndr_put_u32(out, 0) < 0)
        return nomem(err, "BaseRegQueryValue");
    return NTL_OK;
}

int ntl_winreg_parse_handle_reply(const void *stub, size_t size, struct ntl_winreg_handle *h,
                                  uint32_t *werror, struct ntl_error *err)
{
    struct ntl_reader r;
    const uint8_t *p;

    ntl_reader_init(&r, stub, size, 0);
    if (!ntl_reader_bytes(&r, 20, &p))
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "winreg reply", size,
                             "%zu-byte stub cannot hold a 20-byte key handle", size);
    memcpy(h->bytes, p, 20);
    return ntl_ndr_get_u32(&r, werror, "the return code", err);
}

int ntl_winreg_parse_close_reply(const void *stub, size_t size, uint32_t *werror,
                                 struct ntl_error *err)
{
    struct ntl_winreg_handle h;
    return ntl_winreg_parse_handle_reply(stub, size, &h, werror, err);
}

static int get_optional_u32(struct ntl_reader *r, uint32_t *v, const char *what,
                            struct ntl_error *err)
{
    bool present;
    int rc = ntl_ndr_get_ptr(r, &present, what, err);
    *v = 0;
    if (rc < 0 || !present)
        return rc;
    return ntl_ndr_get_u32(r, v, what, err);
}

int ntl_winreg_parse_query_value_reply(const void *stub, size_t size,
                                       struct ntl_winreg_value *v, struct ntl_error *err)
{
    struct ntl_reader r;
    bool present;
    int rc;

    memset(v, 0, sizeof *v);
    ntl_reader_init(&r, stub, size, 0);
    if ((rc = get_optional_u32(&r, &v->type, "lpType", err)) < 0 ||
        (rc = ntl_ndr_get_ptr(&r, &present, "lpData", err)) < 0)
        return rc;
    if (present) {
        struct ntl_ndr_cv_array a;
        if ((rc = ntl_ndr_get_cv_array(&r, 1, &a, "lpData", err)) < 0)
            return rc;
        if (a.offset != 0)
            return ntl_error_set(err, NTL_ERR_FORMAT, "BaseRegQueryValue reply",
                                 ntl_reader_offset(&r) - a.actual_count - 8,
                                 "lpData offset %u, expected 0", a.offset);
        v->data = a.data;
        v->data_len = a.actual_count;
    }
    if ((rc = get_optional_u32(&r, &v->cb_data, "lpcbData", err)) < 0 ||
        (rc = get_optional_u32(&r, &v->cb_len, "lpcbLen", err)) < 0 ||
        (rc = ntl_ndr_get_u32(&r, &v->werror, "the return code", err)) < 0)
        return rc;
    if (v->werror == NTL_WERR_OK && v->data && v->cb_len != v->data_len)
        return ntl_error_set(err, NTL_ERR_FORMAT, "BaseRegQueryValue reply", NTL_NO_OFFSET,
                             "lpcbLen %u disagrees with the %u data bytes sent", v->cb_len,
                             v->data_len);
    return NTL_OK;
}

const char *ntl_werror_name(uint32_t werror)
{
    switch (werror) {
    case 0: return "ERROR_SUCCESS";
    case 1: return "ERROR_INVALID_FUNCTION";
    case 2: return "ERROR_FILE_NOT_FOUND";
    case 5: return "ERROR_ACCESS_DENIED";
    case 6: return "ERROR_INVALID_HANDLE";
    case 8: return "ERROR_NOT_ENOUGH_MEMORY";
    case 14: return "ERROR_OUTOFMEMORY";
    case 50: return "ERROR_NOT_SUPPORTED";
    case 87: return "ERROR_INVALID_PARAMETER";
    case 122: return "ERROR_INSUFFICIENT_BUFFER";
    case 234: return "ERROR_MORE_DATA";
    case 1010: return "ERROR_BADKEY";
    case 1015: return "ERROR_REGISTRY_CORRUPT";
    case 1021: return "ERROR_KEY_HAS_CHILDREN";
    case 1717: return "RPC_S_UNKNOWN_IF";
    case 1722: return "RPC_S_SERVER_UNAVAILABLE";
    }
    return NULL;
}
