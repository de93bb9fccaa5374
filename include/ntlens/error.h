/* Status codes and error records shared by every libntlens module.
 *
 * Functions return an int: 0 (or a non-negative count) on success, a negative
 * ntl_status on failure. Those that can fail also take a struct ntl_error that
 * says what failed and where, so the CLI can print "PERF_OBJECT_TYPE at offset
 * 0x1a0: TotalByteLength 0 ..." without the library printing anything. */
#ifndef NTLENS_ERROR_H
#define NTLENS_ERROR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ntl_status {
    NTL_OK = 0,
    NTL_ERR_TRUNCATED = -1,   /* input ends before a structure does */
    NTL_ERR_FORMAT = -2,      /* input violates its format */
    NTL_ERR_NOMEM = -3,
    NTL_ERR_IO = -4,
    NTL_ERR_UNSUPPORTED = -5, /* valid input we do not handle */
    NTL_ERR_LIMIT = -6,       /* a configured bound was hit */
    NTL_ERR_NOT_FOUND = -7,
    NTL_ERR_ARGUMENT = -8,    /* the caller passed something invalid */
    NTL_ERR_REMOTE = -9,      /* a peer answered with an error */
    NTL_ERR_TIMEOUT = -10,
    NTL_ERR_AUTH = -11,
    NTL_ERR_ACCESS = -12,
    NTL_ERR_CONNECT = -13,
    NTL_ERR_EOF = -14,        /* a stream ended where that is not an error */
    NTL_ERR_SYSTEM = -15,     /* an operating-system call failed */
};

#define NTL_NO_OFFSET UINT64_MAX

/* printf-style checking; mingw's printf is C99 (__USE_MINGW_ANSI_STDIO), so
 * it is checked as gnu_printf there. */
#if defined(__MINGW32__)
#define NTL_PRINTF(fmt, args) __attribute__((format(gnu_printf, fmt, args)))
#elif defined(__GNUC__)
#define NTL_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define NTL_PRINTF(fmt, args)
#endif

struct ntl_error {
    int status;               /* enum ntl_status, 0 when no error */
    uint64_t offset;          /* byte offset in the input, or NTL_NO_OFFSET */
    char structure[48];       /* what was being read: "PERF_DATA_BLOCK", "TIP packet" */
    char message[256];
};

/* Records an error and returns status, so callers can write
 *     return ntl_error_set(err, NTL_ERR_FORMAT, "PSB", off, "bad byte %u", b);
 * err may be NULL. structure may be NULL. */
int ntl_error_set(struct ntl_error *err, int status, const char *structure,
                  uint64_t offset, const char *fmt, ...) NTL_PRINTF(5, 6);
int ntl_error_setv(struct ntl_error *err, int status, const char *structure,
                   uint64_t offset, const char *fmt, va_list ap);

void ntl_error_clear(struct ntl_error *err);

/* Adds context in front of an existing message: "capture snapshot 3: <old>". */
void ntl_error_prefix(struct ntl_error *err, const char *fmt, ...) NTL_PRINTF(2, 3);

/* "truncated", "bad format", ... */
const char *ntl_status_name(int status);

/* Renders "STRUCTURE at offset 0xOFF: MESSAGE" (parts that are unset are left
 * out) into buf and returns buf. */
char *ntl_error_format(const struct ntl_error *err, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
