/* The remote source on Windows: RegConnectRegistryW(\\HOST,
 * HKEY_PERFORMANCE_DATA) with the caller's logon, or after
 * WNetAddConnection2W to \\HOST\IPC$ when a user is given. Windows carries
 * SMB, authentication and winreg; the answers are the same bytes the Linux
 * source gets. */
#include "ntlens/msrpc_source.h"

#include <windows.h>
#include <winnetwk.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/utf16.h"
#include "smb-spec.h"

struct win_source {
    HKEY hkpd;
    bool connected;           /* WNetAddConnection2W succeeded */
    wchar_t ipc[300];
    wchar_t machine[300];     /* \\HOST, for HKEY_LOCAL_MACHINE */
    size_t max_block;
    DWORD perf_size;
};

static wchar_t *widen(const char *s, wchar_t *dst, size_t units)
{
    size_t n = ntl_utf8_to_utf16(s, (uint8_t *)dst, units - 1);
    dst[n < units ? n : units - 1] = 0;
    return dst;
}

static int win_error(DWORD e, const char *what, const char *host, struct ntl_error *err)
{
    char text[200] = "";
    int status = NTL_ERR_REMOTE;

    FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, e, 0,
                   text, sizeof text, NULL);
    text[strcspn(text, "\r\n")] = '\0';
    switch (e) {
    case ERROR_LOGON_FAILURE:
    case ERROR_ACCOUNT_RESTRICTION:
        status = NTL_ERR_AUTH;
        break;
    case ERROR_ACCESS_DENIED:
        return ntl_error_set(err, NTL_ERR_ACCESS, NULL, NTL_NO_OFFSET,
                             "%s on %s: access denied (performance data needs an "
                             "administrator and the RemoteRegistry service)", what, host);
    case ERROR_BAD_NETPATH:
    case ERROR_BAD_NET_NAME:
    case RPC_S_SERVER_UNAVAILABLE:
    case ERROR_NETNAME_DELETED:
    case ERROR_NO_NETWORK:
    case ERROR_NO_NET_OR_BAD_PATH:
    case ERROR_NETWORK_UNREACHABLE:
    case ERROR_HOST_UNREACHABLE:
    case ERROR_CONNECTION_REFUSED:
        status = NTL_ERR_CONNECT;
        break;
    case ERROR_SEM_TIMEOUT:
        status = NTL_ERR_TIMEOUT;
        break;
    }
    return ntl_error_set(err, status, NULL, NTL_NO_OFFSET, "%s on %s: error %lu%s%s", what,
                         host, (unsigned long)e, text[0] ? ": " : "", text);
}

static void free_impl(struct win_source *m)
{
    if (m->hkpd)
        RegCloseKey(m->hkpd);
    if (m->connected)
        WNetCancelConnection2W(m->ipc, 0, TRUE);
    free(m);
}

static void win_close(struct ntl_source *s)
{
    free_impl(ntl_source_impl(s));
}

/* RegQueryValueExW with the buffer doubled on ERROR_MORE_DATA up to the cap. */
static int query_value(struct win_source *m, const char *name, DWORD *size_hint,
                       struct ntl_buf *out, struct ntl_error *err)
{
    wchar_t wname[64];
    DWORD size = *size_hint ? *size_hint : 65536;

    widen(name, wname, 64);
    for (;;) {
        DWORD type = 0, got = size;
        LONG rc;
        out->len = 0;
        if (ntl_buf_reserve(out, size) < 0)
            return ntl_error_set(err, NTL_ERR_LIMIT, NULL, NTL_NO_OFFSET,
                                 "\"%s\" does not fit in %zu bytes (raise --max-block)", name,
                                 out->limit);
        rc = RegQueryValueExW(m->hkpd, wname, NULL, &type, out->data, &got);
        if (rc == ERROR_SUCCESS) {
            out->len = got;
            *size_hint = size;
            return NTL_OK;
        }
        if (rc != ERROR_MORE_DATA)
            return win_error((DWORD)rc, "QueryValue", name, err);
        if ((size_t)size >= m->max_block)
            return ntl_error_set(err, NTL_ERR_LIMIT, NULL, NTL_NO_OFFSET,
                                 "\"%s\" does not fit in %zu bytes (raise --max-block)", name,
                                 m->max_block);
        size = (size_t)size * 2 > m->max_block ? (DWORD)m->max_block : size * 2;
    }
}

static int win_query(struct ntl_source *s, const char *query, struct ntl_buf *block,
                     struct ntl_error *err)
{
    struct win_source *m = ntl_source_impl(s);
    return query_value(m, query, &m->perf_size, block, err);
}

static int win_titles(struct ntl_source *s, enum ntl_title_kind kind, unsigned langid,
                      struct ntl_buf *out, struct ntl_error *err)
{
    struct win_source *m = ntl_source_impl(s);
    DWORD hint = 256 * 1024;
    char name[32];

    snprintf(name, sizeof name, "%s %03x", kind == NTL_TITLES_COUNTER ? "Counter" : "Help",
             langid);
    return query_value(m, name, &hint, out, err);
}

static const struct ntl_source_ops win_ops = {
    .query = win_query,
    .titles = win_titles,
    .snapshot_count = NULL,
    .close = win_close,
};

int ntl_msrpc_smb_open(const char *spec, const struct ntl_source_options *opt,
                       struct ntl_source **out, struct ntl_error *err)
{
    static const struct ntl_source_options defaults;
    struct ntl_smb_spec sp;
    struct win_source *m;
    wchar_t machine[300];
    char desc[512], host[300];
    const char *user, *domain;
    LONG rc;
    int st;

    *out = NULL;
    if (!opt)
        opt = &defaults;
    if ((st = ntl_smb_spec_parse(spec, &sp, err)) < 0)
        return st;
    if (sp.port && sp.port != 445)
        return ntl_error_set(err, NTL_ERR_UNSUPPORTED, NULL, NTL_NO_OFFSET,
                             "Windows reaches remote registries on port 445 only, not %u",
                             sp.port);
    if (opt->kerberos)
        return ntl_error_set(err, NTL_ERR_UNSUPPORTED, NULL, NTL_NO_OFFSET,
                             "-k: on Windows the logon's own Kerberos tickets are used; "
                             "leave out -k and -U");
    user = sp.user[0] ? sp.user : opt->user;
    domain = sp.domain[0] ? sp.domain : opt->domain;
    if (opt->anonymous)
        user = NULL;
    ntl_smb_spec_describe(&sp, user, domain, desc, sizeof desc);
    snprintf(host, sizeof host, "\\\\%s", sp.host);

    m = calloc(1, sizeof *m);
    if (!m)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    m->max_block = opt->max_block ? opt->max_block : NTL_SOURCE_DEFAULT_MAX_BLOCK;
    widen(host, machine, 300);
    memcpy(m->machine, machine, sizeof m->machine);
    if (user && *user) {
        NETRESOURCEW nr;
        wchar_t wuser[300], wpass[300];
        char account[300];
        DWORD e;
        snprintf(account, sizeof account, "%s%s%s", domain && *domain ? domain : "",
                 domain && *domain ? "\\" : "", user);
        snprintf(host, sizeof host, "\\\\%s\\IPC$", sp.host);
        widen(host, m->ipc, 300);
        memset(&nr, 0, sizeof nr);
        nr.dwType = RESOURCETYPE_ANY;
        nr.lpRemoteName = m->ipc;
        e = WNetAddConnection2W(&nr, widen(opt->password ? opt->password : "", wpass, 300),
                                widen(account, wuser, 300), 0);
        SecureZeroMemory(wpass, sizeof wpass);
        if (e != NO_ERROR) {
            free_impl(m);
            return win_error(e, "connecting to IPC$", sp.host, err);
        }
        m->connected = true;
    }
    rc = RegConnectRegistryW(machine, HKEY_PERFORMANCE_DATA, &m->hkpd);
    if (rc != ERROR_SUCCESS) {
        m->hkpd = NULL;
        free_impl(m);
        return win_error((DWORD)rc, "RegConnectRegistry(HKEY_PERFORMANCE_DATA)", sp.host, err);
    }
    *out = ntl_source_new(&win_ops, m, desc);
    if (!*out) {
        free_impl(m);
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    }
    return NTL_OK;
}

/* RegQueryValueExW into v->data, growing the buffer to the size asked
 * for; a missing value leaves type 0. */
static int query_key_value(HKEY k, struct ntl_msrpc_reg_value *v, const char *host,
                       struct ntl_error *err)
{
    wchar_t name[300];
    DWORD type = 0, size = 512;
    LONG rc;

    widen(v->name, name, 300);
    for (;;) {
        int st;
        v->data.len = 0;
        if ((st = ntl_buf_reserve(&v->data, size)) < 0)
            return ntl_error_set(err, st, "RegQueryValueEx", NTL_NO_OFFSET,
                                 "%s: no room for a value of %lu bytes", v->name,
                                 (unsigned long)size);
        rc = RegQueryValueExW(k, name, NULL, &type, v->data.data, &size);
        if (rc != ERROR_MORE_DATA)
            break;
    }
    v->type = rc == ERROR_SUCCESS ? type : 0;
    if (rc == ERROR_SUCCESS)
        v->data.len = size;
    else if (rc != ERROR_FILE_NOT_FOUND)
        return win_error((DWORD)rc, "RegQueryValueEx", host, err);
    return NTL_OK;
}

int ntl_msrpc_smb_read_key(struct ntl_source *s, const char *key,
                           struct ntl_msrpc_reg_value *values, size_t n, struct ntl_error *err)
{
    struct win_source *m = ntl_source_impl(s);
    wchar_t wkey[512];
    HKEY hklm, k;
    LONG rc;
    int st = NTL_OK;
    char host[300];

    ntl_utf16_to_utf8((const uint8_t *)m->machine, ntl_utf16_unit_len(
                          (const uint8_t *)m->machine, 300), host, sizeof host);
    if ((rc = RegConnectRegistryW(m->machine, HKEY_LOCAL_MACHINE, &hklm)) != ERROR_SUCCESS)
        return win_error((DWORD)rc, "RegConnectRegistry(HKEY_LOCAL_MACHINE)", host, err);
    rc = RegOpenKeyExW(hklm, widen(key, wkey, 512), 0, KEY_READ, &k);
    if (rc == ERROR_FILE_NOT_FOUND)
        st = ntl_error_set(err, NTL_ERR_NOT_FOUND, "RegOpenKeyEx", NTL_NO_OFFSET,
                           "%s: not found", key);
    else if (rc != ERROR_SUCCESS)
        st = win_error((DWORD)rc, "RegOpenKeyEx", host, err);
    for (size_t i = 0; rc == ERROR_SUCCESS && i < n && st >= 0; i++)
        st = query_key_value(k, &values[i], host, err);
    if (rc == ERROR_SUCCESS)
        RegCloseKey(k);
    RegCloseKey(hklm);
    return st;
}

int ntl_msrpc_smb_set_call_timeout(struct ntl_source *s, unsigned ms, struct ntl_error *err)
{
    (void)s;
    (void)ms;
    return ntl_error_set(err, NTL_ERR_UNSUPPORTED, NULL, NTL_NO_OFFSET,
                         "a call deadline on Windows (RegQueryValueEx takes none)");
}
