/* Parsing a remote source's spec: smb://[DOMAIN;]USER@HOST[:PORT] or
 * \\HOST (internal to lib/msrpc). */
#ifndef NTLENS_MSRPC_SMB_SPEC_H
#define NTLENS_MSRPC_SMB_SPEC_H

#include <stdint.h>

#include "ntlens/error.h"

struct ntl_smb_spec {
    char domain[128];
    char user[128];
    char host[256];
    uint16_t port;            /* 0: not given */
};

/* NTL_ERR_ARGUMENT naming the problem for anything malformed. */
int ntl_smb_spec_parse(const char *spec, struct ntl_smb_spec *s, struct ntl_error *err);

/* "smb://DOMAIN;user@host:port" as far as known; no secrets. */
void ntl_smb_spec_describe(const struct ntl_smb_spec *s, const char *user, const char *domain,
                           char *buf, size_t size);

#endif
