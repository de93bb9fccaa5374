/* The remote performance-data source (winreg over the SMB named pipe
 * \\HOST\PIPE\winreg: libsmbclient on Linux, the system's redirector on
 * Windows), and opening any source spec: this module
 * sits above lib/source, so the choice that includes remote producers is
 * made here (docs/architecture.md). */
#ifndef NTLENS_MSRPC_SOURCE_H
#define NTLENS_MSRPC_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/error.h"
#include "ntlens/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opens any spec: a remote one ("smb://[DOMAIN;]USER@HOST[:PORT]",
 * "\\HOST") with ntl_msrpc_smb_open, anything else with ntl_source_open.
 * Returns 0 or, with err set, what those return. */
int ntl_msrpc_source_open(const char *spec, const struct ntl_source_options *opt,
                          struct ntl_source **out, struct ntl_error *err);

/* Checks a remote spec without connecting, so a caller can refuse a
 * malformed one before asking for a password. Returns 0, or NTL_ERR_ARGUMENT
 * with err naming the problem ("the source names no host" for "smb://" and
 * "smb://user@"; a password in the spec; a path; a bad port). */
int ntl_msrpc_source_check_spec(const char *spec, struct ntl_error *err);

/* The remote producer. Returns 0, or with err set: NTL_ERR_ARGUMENT (a
 * malformed spec), NTL_ERR_CONNECT, NTL_ERR_AUTH, NTL_ERR_ACCESS,
 * NTL_ERR_NOT_FOUND (no winreg pipe after a few tries: RemoteRegistry is
 * not running), NTL_ERR_TIMEOUT, NTL_ERR_REMOTE, NTL_ERR_IO, NTL_ERR_NOMEM;
 * NTL_ERR_UNSUPPORTED on Windows for a port other than 445 or Kerberos
 * (the logon's own tickets are used there). */
int ntl_msrpc_smb_open(const char *spec, const struct ntl_source_options *opt,
                       struct ntl_source **out, struct ntl_error *err);

/* Bounds the calls that follow on a source from ntl_msrpc_smb_open (or a
 * remote spec through ntl_msrpc_source_open): each call ends within ms
 * (0: the open's call timeout again), as the exporter's scrape timeout
 * asks. A call that runs out of time leaves the source broken, as any
 * timeout does (Windows: later calls fail at once with NTL_ERR_IO, so the
 * caller reconnects). Returns 0. */
int ntl_msrpc_smb_set_call_timeout(struct ntl_source *s, unsigned ms, struct ntl_error *err);

/* One value ntl_msrpc_smb_read_key reads: name in; type (REG_*, 0 when
 * the key has no such value) and data out, the bytes as the registry holds
 * them (REG_SZ is UTF-16LE with its NUL). data is the caller's, initialised
 * with a limit that bounds the value. */
struct ntl_msrpc_reg_value {
    const char *name;
    uint32_t type;
    struct ntl_buf data;
};

/* Reads values of HKEY_LOCAL_MACHINE\key on the host of a source from
 * ntl_msrpc_smb_open, over that source's own connection: OpenHKLM, OpenKey,
 * a QueryValue per value, two CloseKeys (for facts a caller reads once per
 * connection, not per snapshot). Returns 0; NTL_ERR_NOT_FOUND when the key
 * does not exist; otherwise the errors ntl_msrpc_smb_open lists (a
 * transport failure leaves the source broken, as in a query). */
int ntl_msrpc_smb_read_key(struct ntl_source *s, const char *key,
                           struct ntl_msrpc_reg_value *values, size_t n,
                           struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
