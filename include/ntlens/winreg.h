/* MS-RRP (winreg) stubs for reading performance data: the request stubs a
 * client sends and the parsers of the response stubs, over ntlens/ndr.h.
 * No I/O here; ntlens/msrpc.h runs the calls. */
#ifndef NTLENS_WINREG_H
#define NTLENS_WINREG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/dcerpc.h"
#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* winreg 338cd001-2244-31f1-aaaa-900038001003 v1.0 */
extern const struct ntl_dcerpc_syntax ntl_winreg_syntax;

enum ntl_winreg_opnum {
    NTL_WINREG_OPEN_HKLM = 2,
    NTL_WINREG_OPEN_HKPD = 3,
    NTL_WINREG_CLOSE_KEY = 5,
    NTL_WINREG_OPEN_KEY = 15,
    NTL_WINREG_QUERY_VALUE = 17,
};

/* Win32 error codes the calls return (WERROR). */
enum {
    NTL_WERR_OK = 0,
    NTL_WERR_FILE_NOT_FOUND = 2,
    NTL_WERR_ACCESS_DENIED = 5,
    NTL_WERR_INVALID_HANDLE = 6,
    NTL_WERR_INVALID_PARAMETER = 87,
    NTL_WERR_INSUFFICIENT_BUFFER = 122,
    NTL_WERR_MORE_DATA = 234,
};

#define NTL_WINREG_MAXIMUM_ALLOWED 0x02000000u
#define NTL_WINREG_KEY_READ 0x00020019u

/* A context handle (policy handle): 20 opaque bytes. */
struct ntl_winreg_handle {
    uint8_t bytes[20];
};

/* Request stubs (appended to out). */
int ntl_winreg_build_open_root(struct ntl_buf *out, uint32_t access, struct ntl_error *err);
int ntl_winreg_build_open_key(struct ntl_buf *out, const struct ntl_winreg_handle *parent,
                              const char *subkey, uint32_t access, struct ntl_error *err);
int ntl_winreg_build_close_key(struct ntl_buf *out, const struct ntl_winreg_handle *h,
                               struct ntl_error *err);
/* BaseRegQueryValue with lpType, lpData (a conformant varying array of
 * max_count = buffer_size, offset 0, actual_count 0: nothing sent in),
 * lpcbData = buffer_size and lpcbLen = 0. buffer_size 0 sends lpData NULL. */
int ntl_winreg_build_query_value(struct ntl_buf *out, const struct ntl_winreg_handle *h,
                                 const char *value_name, uint32_t buffer_size,
                                 struct ntl_error *err);

/* Response parsers over a whole stub. *werror is the call's return code;
 * the functions succeed (>= 0) whenever the stub is well-formed, whatever
 * werror is. */
int ntl_winreg_parse_handle_reply(const void *stub, size_t size, struct ntl_winreg_handle *h,
                                  uint32_t *werror, struct ntl_error *err);
int ntl_winreg_parse_close_reply(const void *stub, size_t size, uint32_t *werror,
                                 struct ntl_error *err);

struct ntl_winreg_value {
    uint32_t type;            /* REG_* (0 when lpType was NULL) */
    const uint8_t *data;      /* points into the stub; NULL when lpData was NULL */
    uint32_t data_len;        /* bytes of data (actual_count) */
    uint32_t cb_data;         /* *lpcbData: size needed (or returned) */
    uint32_t cb_len;          /* *lpcbLen */
    uint32_t werror;
};
int ntl_winreg_parse_query_value_reply(const void *stub, size_t size,
                                       struct ntl_winreg_value *v, struct ntl_error *err);

/* "ERROR_MORE_DATA", "ERROR_ACCESS_DENIED", ... or NULL when unknown. */
const char *ntl_werror_name(uint32_t werror);

#ifdef __cplusplus
}
#endif
#endif
