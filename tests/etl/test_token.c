/* TOKEN_ACCESS_INFORMATION blobs built here by a writer that follows the
 * documented structures (64- and 32-bit), then blobs that lie. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "ntlens/etl_token.h"
#include "ntlens/reader.h"

struct blob {
    uint8_t b[2048];
    size_t n, psz;
};

static void put_ptr(struct blob *w, size_t at, uint64_t v)
{
    if (w->psz == 8)
        ntl_put_le64(w->b + at, v);
    else
        ntl_put_le32(w->b + at, (uint32_t)v);
}

/* Appends a SID S-1-auth-subs...; returns its offset. */
static size_t put_sid(struct blob *w, uint8_t auth, const uint32_t *subs, uint8_t count)
{
    size_t at = w->n;
    w->b[at] = 1;
    w->b[at + 1] = count;
    memset(w->b + at + 2, 0, 5);
    w->b[at + 7] = auth;
    for (uint8_t i = 0; i < count; i++)
        ntl_put_le32(w->b + at + 8 + 4 * i, subs[i]);
    w->n += 8 + 4u * count;
    w->n = (w->n + 7) & ~(size_t)7;
    return at;
}

/* A SID_AND_ATTRIBUTES_HASH of the SIDs at offs with attrs; returns its offset. */
static size_t put_hash(struct blob *w, const size_t *offs, const uint32_t *attrs, uint32_t count)
{
    size_t at = w->n, arr = at + 2 * w->psz + 32 * w->psz;
    memset(w->b + at, 0, arr - at);
    ntl_put_le32(w->b + at, count);
    put_ptr(w, at + w->psz, arr);
    for (uint32_t i = 0; i < count; i++) {
        put_ptr(w, arr + 2 * w->psz * i, offs[i]);
        memset(w->b + arr + 2 * w->psz * i + w->psz, 0, w->psz);
        ntl_put_le32(w->b + arr + 2 * w->psz * i + w->psz, attrs[i]);
    }
    w->n = arr + 2 * w->psz * count;
    return at;
}

/* The token of seed 002 in part: LocalService with two groups, two privileges. */
static void build(struct blob *w, size_t psz)
{
    static const uint32_t local_service[] = {19}, high[] = {16384}, users[] = {32, 545};
    size_t fixed = 3 * psz + 28 + (psz == 8 ? 4 : 0), tail = fixed, sids[3], priv;
    memset(w, 0, sizeof *w);
    w->psz = psz;
    w->n = tail + 4 * psz;
    sids[0] = put_sid(w, 5, local_service, 1);
    sids[1] = put_sid(w, 16, high, 1);
    sids[2] = put_sid(w, 5, users, 2);
    put_ptr(w, 0, put_hash(w, sids, (const uint32_t[]){0, 0x60, 7}, 3));
    priv = w->n;
    ntl_put_le32(w->b + priv, 2);
    ntl_put_le64(w->b + priv + 4, 0x17), ntl_put_le32(w->b + priv + 12, 3);
    ntl_put_le64(w->b + priv + 16, 0x1d), ntl_put_le32(w->b + priv + 24, 3);
    w->n += 28;
    put_ptr(w, 2 * psz, priv);
    ntl_put_le64(w->b + 3 * psz, 0x3e5);
    ntl_put_le32(w->b + 3 * psz + 8, 1);   /* TokenPrimary */
    ntl_put_le32(w->b + 3 * psz + 12, 0);  /* SecurityAnonymous */
    ntl_put_le32(w->b + 3 * psz + 16, 3);  /* NO_WRITE_UP | NEW_PROCESS_MIN */
    ntl_put_le32(w->b + 3 * psz + 20, 0x1002800);
    put_ptr(w, tail + 2 * psz, sids[1]);   /* TrustLevelSid */
    put_ptr(w, tail + 3 * psz, w->n);      /* SecurityAttributes: opaque */
    w->n += 16;
}

static int collect(void *ctx, const struct ntl_token_item *it)
{
    char *out = ctx;
    size_t n = strlen(out);
    if (it->has_attributes)
        snprintf(out + n, 4096 - n, "%s[%u] 0x%08x %s\n", it->field, it->index, it->attributes, it->value);
    else
        snprintf(out + n, 4096 - n, "%s %s\n", it->field, it->value);
    return 0;
}

static int walk(const struct blob *w, char *out, struct ntl_error *err)
{
    out[0] = '\0';
    return ntl_token_walk(w->b, w->n, (unsigned)w->psz, collect, out, err);
}

int main(void)
{
    static char out[4096];
    struct ntl_error err = {0};
    struct blob w;
    for (size_t psz = 4; psz <= 8; psz += 4) {
        build(&w, psz);
        CHECK_EQ_INT(walk(&w, out, &err), 0);
        CHECK(strstr(out, "SidHash[0] 0x00000000 S-1-5-19\n"
                          "SidHash[1] 0x00000060 S-1-16-16384\n"
                          "SidHash[2] 0x00000007 S-1-5-32-545\n"
                          "Privilege[0] 0x00000003 0x17 SeChangeNotifyPrivilege\n"
                          "Privilege[1] 0x00000003 0x1d SeImpersonatePrivilege\n"
                          "AuthenticationId 0x3e5\n"
                          "TokenType TokenPrimary\n"
                          "ImpersonationLevel SecurityAnonymous\n"
                          "MandatoryPolicy NO_WRITE_UP|NEW_PROCESS_MIN\n"
                          "Flags 0x1002800\n"
                          "AppContainerNumber 0\n"
                          "TrustLevelSid S-1-16-16384\n"
                          "SecurityAttributes offset 0x") == out);
    }
    /* Lies: every one reported with its offset, the items before it given. */
    build(&w, 8);
    put_ptr(&w, 0, w.n + 100); /* SidHash past the end */
    CHECK_EQ_INT(walk(&w, out, &err), NTL_ERR_FORMAT);
    CHECK(strstr(err.message, "SidHash") != NULL && out[0] == '\0');
    build(&w, 8);
    ntl_put_le32(w.b + ntl_le64(w.b), 0x7fffffff); /* a SID count no blob holds */
    CHECK_EQ_INT(walk(&w, out, &err), NTL_ERR_FORMAT);
    CHECK(strstr(err.message, "SidAttr array outside") != NULL);
    build(&w, 8);
    w.b[88 + 1] = 200; /* the first SID claims 200 sub-authorities */
    CHECK_EQ_INT(walk(&w, out, &err), NTL_ERR_FORMAT);
    CHECK(strstr(err.message, "malformed SID") != NULL && err.offset == 88);
    build(&w, 8);
    ntl_put_le32(w.b + ntl_le64(w.b + 16), 1000); /* privileges past the end */
    CHECK_EQ_INT(walk(&w, out, &err), NTL_ERR_FORMAT);
    CHECK(strstr(out, "SidHash[2]") != NULL && strstr(err.message, "privileges") != NULL);
    build(&w, 8);
    CHECK_EQ_INT(ntl_token_walk(w.b, 60, 8, collect, out, &err), NTL_ERR_TRUNCATED);
    CHECK_EQ_INT(ntl_token_walk(w.b, w.n, 6, collect, out, &err), NTL_ERR_ARGUMENT);
    return check_exit();
}
