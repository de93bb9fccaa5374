/* Self-relative TOKEN_ACCESS_INFORMATION blobs (etl_token.h), from the
 * documented structures: TOKEN_ACCESS_INFORMATION, SID_AND_ATTRIBUTES_HASH,
 * SID_AND_ATTRIBUTES, TOKEN_PRIVILEGES and LUID_AND_ATTRIBUTES. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ntlens/etl_fields.h"
#include "ntlens/etl_token.h"
#include "ntlens/reader.h"

#define SID_HASH_SIZE 32

struct walk {
    const uint8_t *p;
    size_t n, psz;
    int (*cb)(void *, const struct ntl_token_item *);
    void *ctx;
    struct ntl_error *err;
};

static int bad(struct walk *w, int status, size_t at, const char *what, uint64_t v)
{
    return ntl_error_set(w->err, status, "TOKEN_ACCESS_INFORMATION", at, "%s 0x%" PRIx64
                         " (the blob has %zu bytes)", what, v, w->n);
}

static uint64_t ptr(const struct walk *w, size_t at)
{
    return w->psz == 8 ? ntl_le64(w->p + at) : ntl_le32(w->p + at);
}

static int emit(struct walk *w, const char *field, uint32_t index, bool has_attr, uint32_t attr,
                size_t offset, const char *value)
{
    struct ntl_token_item it = {field, index, has_attr, attr, (uint32_t)offset, ""};
    snprintf(it.value, sizeof it.value, "%s", value);
    return w->cb(w->ctx, &it);
}

/* The SID at offset off, as text. */
static int sid_at(struct walk *w, uint64_t off, size_t from, char *buf, size_t size)
{
    if (off >= w->n || w->n - off < 8)
        return bad(w, NTL_ERR_FORMAT, from, "SID offset", off);
    size_t len = 8 + 4u * w->p[off + 1];
    if (len > w->n - off || !ntl_sid_format(w->p + off, len, buf, size))
        return bad(w, NTL_ERR_FORMAT, (size_t)off, "malformed SID at", off);
    return 0;
}

/* A SID_AND_ATTRIBUTES_HASH at off: each SID and its attributes. */
static int sid_hash(struct walk *w, const char *field, uint64_t off, size_t from)
{
    size_t head = 2 * w->psz + SID_HASH_SIZE * w->psz, entry = 2 * w->psz;
    char sid[160];
    int rc;
    if (off > w->n || w->n - off < head)
        return bad(w, off > w->n ? NTL_ERR_FORMAT : NTL_ERR_TRUNCATED, from, field, off);
    uint32_t count = ntl_le32(w->p + off);
    uint64_t attrs = ptr(w, (size_t)off + w->psz);
    if (!count)
        return 0;
    if (attrs > w->n || (w->n - attrs) / entry < count)
        return bad(w, NTL_ERR_FORMAT, (size_t)off, "SidAttr array outside the blob at", attrs);
    for (uint32_t i = 0; i < count; i++) {
        size_t at = (size_t)attrs + i * entry;
        if ((rc = sid_at(w, ptr(w, at), at, sid, sizeof sid)) < 0 ||
            (rc = emit(w, field, i, true, ntl_le32(w->p + at + w->psz), at, sid)))
            return rc;
    }
    return 0;
}

static int privileges(struct walk *w, uint64_t off, size_t from)
{
    char text[96];
    int rc;
    if (off > w->n || w->n - off < 4)
        return bad(w, NTL_ERR_FORMAT, from, "Privileges", off);
    uint32_t count = ntl_le32(w->p + off);
    if ((w->n - off - 4) / 12 < count)
        return bad(w, NTL_ERR_FORMAT, (size_t)off, "more privileges than the blob holds:", count);
    for (uint32_t i = 0; i < count; i++) {
        size_t at = (size_t)off + 4 + 12 * i;
        uint64_t luid = ntl_le64(w->p + at);
        const char *name = ntl_privilege_name(luid);
        snprintf(text, sizeof text, "0x%" PRIx64 "%s%s", luid, name ? " " : "", name ? name : "");
        if ((rc = emit(w, "Privilege", i, true, ntl_le32(w->p + at + 8), at, text)))
            return rc;
    }
    return 0;
}

static const char *token_type(uint32_t v)
{
    return v == 1 ? "TokenPrimary" : v == 2 ? "TokenImpersonation" : NULL;
}

static const char *impersonation(uint32_t v)
{
    static const char *const names[] = {"SecurityAnonymous", "SecurityIdentification",
                                        "SecurityImpersonation", "SecurityDelegation"};
    return v < 4 ? names[v] : NULL;
}

/* The fixed part after the three list pointers. */
static int scalars(struct walk *w, size_t at)
{
    char text[96];
    uint32_t v;
    int rc;
    snprintf(text, sizeof text, "0x%" PRIx64, ntl_le64(w->p + at));
    if ((rc = emit(w, "AuthenticationId", 0, false, 0, at, text)))
        return rc;
    v = ntl_le32(w->p + at + 8);
    snprintf(text, sizeof text, "%s", token_type(v) ? token_type(v) : "");
    if (!*text)
        snprintf(text, sizeof text, "%" PRIu32, v);
    if ((rc = emit(w, "TokenType", 0, false, 0, at + 8, text)))
        return rc;
    v = ntl_le32(w->p + at + 12);
    snprintf(text, sizeof text, "%s", impersonation(v) ? impersonation(v) : "");
    if (!*text)
        snprintf(text, sizeof text, "%" PRIu32, v);
    if ((rc = emit(w, "ImpersonationLevel", 0, false, 0, at + 12, text)))
        return rc;
    v = ntl_le32(w->p + at + 16); /* TOKEN_MANDATORY_POLICY */
    snprintf(text, sizeof text, "%s%s%s", v & 1 ? "NO_WRITE_UP" : "", (v & 3) == 3 ? "|" : "",
             v & 2 ? "NEW_PROCESS_MIN" : "");
    if (v & ~3u || !v)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s0x%" PRIx32, *text ? "|" : "",
                 v & ~3u);
    if ((rc = emit(w, "MandatoryPolicy", 0, false, 0, at + 16, text)))
        return rc;
    snprintf(text, sizeof text, "0x%" PRIx32, ntl_le32(w->p + at + 20));
    if ((rc = emit(w, "Flags", 0, false, 0, at + 20, text)))
        return rc;
    snprintf(text, sizeof text, "%" PRIu32, ntl_le32(w->p + at + 24));
    return emit(w, "AppContainerNumber", 0, false, 0, at + 24, text);
}

/* A PSID member: the SID when the offset is not 0. */
static int sid_member(struct walk *w, const char *field, size_t at)
{
    char sid[160];
    uint64_t off = ptr(w, at);
    int rc;
    if (!off)
        return 0;
    if ((rc = sid_at(w, off, at, sid, sizeof sid)) < 0)
        return rc;
    return emit(w, field, 0, false, 0, (size_t)off, sid);
}

int ntl_token_walk(const uint8_t *blob, size_t size, unsigned pointer_size,
                   int (*cb)(void *, const struct ntl_token_item *), void *ctx, struct ntl_error *err)
{
    struct walk w = {blob, size, pointer_size, cb, ctx, err};
    size_t psz = pointer_size, fixed = 3 * psz + 28 + (psz == 8 ? 4 : 0), tail = fixed;
    char text[64];
    int rc;
    if (psz != 4 && psz != 8)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "TOKEN_ACCESS_INFORMATION", NTL_NO_OFFSET,
                             "pointer size %u (4 or 8)", pointer_size);
    if (size < fixed + 4 * psz)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "TOKEN_ACCESS_INFORMATION", 0,
                             "%zu bytes, the structure needs %zu", size, fixed + 4 * psz);
    if ((ptr(&w, 0) && (rc = sid_hash(&w, "SidHash", ptr(&w, 0), 0))) ||
        (ptr(&w, psz) && (rc = sid_hash(&w, "RestrictedSidHash", ptr(&w, psz), psz))) ||
        (ptr(&w, 2 * psz) && (rc = privileges(&w, ptr(&w, 2 * psz), 2 * psz))) ||
        (rc = scalars(&w, 3 * psz)) || (rc = sid_member(&w, "PackageSid", tail)) ||
        (ptr(&w, tail + psz) && (rc = sid_hash(&w, "CapabilitiesHash", ptr(&w, tail + psz), tail + psz))) ||
        (rc = sid_member(&w, "TrustLevelSid", tail + 2 * psz)))
        return rc;
    if (!ptr(&w, tail + 3 * psz))
        return 0;
    if (ptr(&w, tail + 3 * psz) >= size)
        return bad(&w, NTL_ERR_FORMAT, tail + 3 * psz, "SecurityAttributes", ptr(&w, tail + 3 * psz));
    snprintf(text, sizeof text, "offset 0x%" PRIx64 " (opaque, not decoded)", ptr(&w, tail + 3 * psz));
    return emit(&w, "SecurityAttributes", 0, false, 0, tail + 3 * psz, text);
}

const char *ntl_privilege_name(uint64_t luid)
{
    static const char *const names[] = {
        [2] = "SeCreateTokenPrivilege", [3] = "SeAssignPrimaryTokenPrivilege",
        [4] = "SeLockMemoryPrivilege", [5] = "SeIncreaseQuotaPrivilege",
        [6] = "SeMachineAccountPrivilege", [7] = "SeTcbPrivilege", [8] = "SeSecurityPrivilege",
        [9] = "SeTakeOwnershipPrivilege", [10] = "SeLoadDriverPrivilege",
        [11] = "SeSystemProfilePrivilege", [12] = "SeSystemtimePrivilege",
        [13] = "SeProfileSingleProcessPrivilege", [14] = "SeIncreaseBasePriorityPrivilege",
        [15] = "SeCreatePagefilePrivilege", [16] = "SeCreatePermanentPrivilege",
        [17] = "SeBackupPrivilege", [18] = "SeRestorePrivilege", [19] = "SeShutdownPrivilege",
        [20] = "SeDebugPrivilege", [21] = "SeAuditPrivilege", [22] = "SeSystemEnvironmentPrivilege",
        [23] = "SeChangeNotifyPrivilege", [24] = "SeRemoteShutdownPrivilege",
        [25] = "SeUndockPrivilege", [26] = "SeSyncAgentPrivilege",
        [27] = "SeEnableDelegationPrivilege", [28] = "SeManageVolumePrivilege",
        [29] = "SeImpersonatePrivilege", [30] = "SeCreateGlobalPrivilege",
        [31] = "SeTrustedCredManAccessPrivilege", [32] = "SeRelabelPrivilege",
        [33] = "SeIncreaseWorkingSetPrivilege", [34] = "SeTimeZonePrivilege",
        [35] = "SeCreateSymbolicLinkPrivilege", [36] = "SeDelegateSessionUserImpersonatePrivilege",
    };
    return luid < sizeof names / sizeof names[0] ? names[luid] : NULL;
}
