/* A self-relative TOKEN_ACCESS_INFORMATION (what the Windows Filtering
 * Platform logs as FWPM_CONDITION_ALE_USER_ID, and SeAccessCheck's callers
 * pass around): its pointers are offsets from the blob's start. Walked item
 * by item as seed 002 shows one formatted:
 *
 *   SidHash 0x00000000 S-1-5-19         (each SID with its attributes)
 *   RestrictedSidHash ...               (the same, when present)
 *   Privilege 0x00000003 0x17 SeChangeNotifyPrivilege
 *   AuthenticationId 0x3e5, TokenType TokenPrimary, ImpersonationLevel
 *   SecurityAnonymous, MandatoryPolicy NO_WRITE_UP|NEW_PROCESS_MIN, Flags,
 *   AppContainerNumber, PackageSid, CapabilitiesHash (SIDs), TrustLevelSid,
 *   SecurityAttributes (its offset: the opaque AUTHZ layout is not decoded)
 *
 * Every offset and count is checked against the blob's size. */
#ifndef NTLENS_ETL_TOKEN_H
#define NTLENS_ETL_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ntl_token_item {
    const char *field;     /* "SidHash", "Privilege", "TokenType", ... */
    uint32_t index;        /* position in its list (SIDs, privileges), else 0 */
    bool has_attributes;
    uint32_t attributes;   /* a SID's or privilege's attributes */
    uint32_t offset;       /* where the item is in the blob */
    char value[192];       /* "S-1-5-19", "0x17 SeChangeNotifyPrivilege", "TokenPrimary" */
};

/* Calls cb for every item in blob order of the structure (cb returning
 * nonzero stops the walk, which then returns that value). pointer_size is
 * 4 or 8: the layout of the system that wrote the blob. Returns 0,
 * NTL_ERR_TRUNCATED (the blob ends inside the structure or a list) or
 * NTL_ERR_FORMAT (an offset outside the blob, a malformed SID, a count
 * larger than the blob can hold), err at the offset of what is wrong; the
 * items before it have been given. */
int ntl_token_walk(const uint8_t *blob, size_t size, unsigned pointer_size,
                   int (*cb)(void *ctx, const struct ntl_token_item *it), void *ctx,
                   struct ntl_error *err);

/* "SeChangeNotifyPrivilege" for LUID 23; NULL when not a well-known privilege. */
const char *ntl_privilege_name(uint64_t luid);

#ifdef __cplusplus
}
#endif
#endif
