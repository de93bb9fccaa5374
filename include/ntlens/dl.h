/* A shared library's functions loaded by name when first needed
 * (lib/base/dl-linux.c): a library only one command uses (libsmbclient for
 * the SMB transport, libmicrohttpd for the exporter) then costs the other
 * commands nothing at start-up. Linux only. */
#ifndef NTLENS_DL_H
#define NTLENS_DL_H

#include <stdbool.h>
#include <stddef.h>

#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A function's symbol name and the offset of its pointer in the caller's
 * table of function pointers. */
struct ntl_dl_function {
    const char *name;
    size_t at;
};

/* Opens soname (global: its symbols visible to libraries loaded after it,
 * as when the program links it) and stores the address of each of the n
 * functions at table + at. Returns 0, or
 *   NTL_ERR_UNSUPPORTED  the library cannot be loaded, or lacks a function
 *                        (err names which); the library is closed again.
 * Not serialised: callers load once (pthread_once). */
int ntl_dl_load(const char *soname, bool global, const struct ntl_dl_function *fns, size_t n,
                void *table, struct ntl_error *err);

#ifdef __cplusplus
}
#endif

#endif
