#include "ntlens/error.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void copy_truncated(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

int ntl_error_setv(struct ntl_error *err, int status, const char *structure,
                   uint64_t offset, const char *fmt, va_list ap)
{
    if (!err)
        return status;
    err->status = status;
    err->offset = offset;
    copy_truncated(err->structure, sizeof err->structure, structure ? structure : "");
    if (fmt)
        vsnprintf(err->message, sizeof err->message, fmt, ap);
    else
        copy_truncated(err->message, sizeof err->message, ntl_status_name(status));
    return status;
}

int ntl_error_set(struct ntl_error *err, int status, const char *structure,
                  uint64_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ntl_error_setv(err, status, structure, offset, fmt, ap);
    va_end(ap);
    return status;
}

void ntl_error_clear(struct ntl_error *err)
{
    if (!err)
        return;
    memset(err, 0, sizeof *err);
    err->offset = NTL_NO_OFFSET;
}

void ntl_error_prefix(struct ntl_error *err, const char *fmt, ...)
{
    char prefix[128], old[sizeof err->message];
    va_list ap;

    if (!err)
        return;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof old);
    snprintf(err->message, sizeof err->message, "%s: %s", prefix, old);
}

const char *ntl_status_name(int status)
{
    switch (status) {
    case NTL_OK: return "success";
    case NTL_ERR_TRUNCATED: return "truncated input";
    case NTL_ERR_FORMAT: return "malformed input";
    case NTL_ERR_NOMEM: return "out of memory";
    case NTL_ERR_IO: return "I/O error";
    case NTL_ERR_UNSUPPORTED: return "unsupported";
    case NTL_ERR_LIMIT: return "limit exceeded";
    case NTL_ERR_NOT_FOUND: return "not found";
    case NTL_ERR_ARGUMENT: return "invalid argument";
    case NTL_ERR_REMOTE: return "remote error";
    case NTL_ERR_TIMEOUT: return "timed out";
    case NTL_ERR_AUTH: return "authentication failed";
    case NTL_ERR_ACCESS: return "access denied";
    case NTL_ERR_CONNECT: return "cannot connect";
    case NTL_ERR_EOF: return "end of input";
    case NTL_ERR_SYSTEM: return "system call failed";
    }
    return "unknown error";
}

char *ntl_error_format(const struct ntl_error *err, char *buf, size_t size)
{
    const char *msg;
    int n = 0;

    if (!buf || size == 0)
        return buf;
    buf[0] = '\0';
    if (!err)
        return buf;
    msg = err->message[0] ? err->message : ntl_status_name(err->status);
    if (err->structure[0] && err->offset != NTL_NO_OFFSET)
        n = snprintf(buf, size, "%s at offset 0x%" PRIx64 ": ", err->structure, err->offset);
    else if (err->structure[0])
        n = snprintf(buf, size, "%s: ", err->structure);
    else if (err->offset != NTL_NO_OFFSET)
        n = snprintf(buf, size, "at offset 0x%" PRIx64 ": ", err->offset);
    if (n < 0 || (size_t)n >= size)
        return buf;
    snprintf(buf + n, size - (size_t)n, "%s", msg);
    return buf;
}
