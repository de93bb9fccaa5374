/* The remote source: winreg over \PIPE\winreg (the SMB pipe transport:
 * libsmbclient on Linux, CreateFileW on Windows), HKEY_PERFORMANCE_DATA
 * answers with buffer growth, and the title databases cached per source
 * (one host) and language. The same calls, bounds checks, deadlines and
 * errors on both systems; only the transport differs. */
#include "ntlens/msrpc_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/msrpc.h"
#include "smb-spec.h"

#define TITLE_CACHE 4

struct title_entry {
    bool used;
    enum ntl_title_kind kind;
    unsigned langid;
    uint32_t type;
    struct ntl_buf data;
};

struct smb_source {
    struct ntl_smb_pipe *pipe;
    struct ntl_rpc_client rpc;
    struct ntl_winreg_handle hkpd;
    bool have_hkpd;
    bool broken;              /* a call failed in transport: no CloseKey */
    size_t max_block;
    uint32_t perf_size;       /* buffer size that last held a whole block */
    struct title_entry titles[TITLE_CACHE];
};

/* After a timeout or a dead connection, a CloseKey would only wait again;
 * a call that works again after a timeout (the transport dropped the late
 * reply) shows the connection is whole. */
static int note(struct smb_source *m, int rc)
{
    if (rc == NTL_ERR_IO || rc == NTL_ERR_EOF || rc == NTL_ERR_TIMEOUT)
        m->broken = true;
    else if (rc >= 0)
        m->broken = false;
    return rc;
}

static void free_impl(struct smb_source *m)
{
    if (m->have_hkpd && !m->broken) {
        struct ntl_error ignored;
        ntl_winreg_close_key(&m->rpc, &m->hkpd, &ignored);
    }
    ntl_rpc_client_free(&m->rpc);
    ntl_smb_pipe_close(m->pipe);
    for (int i = 0; i < TITLE_CACHE; i++)
        ntl_buf_free(&m->titles[i].data);
    free(m);
}

static void smb_close(struct ntl_source *s)
{
    free_impl(ntl_source_impl(s));
}

static int smb_query(struct ntl_source *s, const char *query, struct ntl_buf *block,
                     struct ntl_error *err)
{
    struct smb_source *m = ntl_source_impl(s);
    struct ntl_winreg_fetch f = {.initial_size = m->perf_size, .max_size = m->max_block};
    int rc = note(m, ntl_winreg_fetch_value(&m->rpc, &m->hkpd, query,
                                            NTL_WINREG_VALUE_PERF_DATA, &f, block, err));
    if (rc >= 0)
        m->perf_size = f.last_size;
    return rc;
}

static int fetch_titles(struct smb_source *m, enum ntl_title_kind kind, unsigned langid,
                        struct title_entry *e, struct ntl_error *err)
{
    struct ntl_winreg_fetch f = {.initial_size = 256 * 1024, .max_size = m->max_block};
    char name[32];
    int rc;

    snprintf(name, sizeof name, "%s %03x", kind == NTL_TITLES_COUNTER ? "Counter" : "Help",
             langid);
    rc = ntl_winreg_fetch_value(&m->rpc, &m->hkpd, name, NTL_WINREG_VALUE_PLAIN, &f, &e->data,
                                err);
    if (rc == NTL_ERR_NOT_FOUND && kind == NTL_TITLES_HELP) {
        /* Samba knows help texts only as "Explain <lang>". */
        snprintf(name, sizeof name, "Explain %03x", langid);
        rc = ntl_winreg_fetch_value(&m->rpc, &m->hkpd, name, NTL_WINREG_VALUE_PLAIN, &f,
                                    &e->data, err);
    }
    if (rc >= 0)
        e->type = f.type;
    return rc;
}

static int smb_titles(struct ntl_source *s, enum ntl_title_kind kind, unsigned langid,
                      struct ntl_buf *out, struct ntl_error *err)
{
    struct smb_source *m = ntl_source_impl(s);
    struct title_entry *e = NULL;
    int rc;

    for (int i = 0; i < TITLE_CACHE; i++) {
        struct title_entry *t = &m->titles[i];
        if (t->used && t->kind == kind && t->langid == langid) {
            e = t;
            break;
        }
        if (!t->used && !e)
            e = t;
    }
    if (!e) { /* cache full: reuse the last slot */
        e = &m->titles[TITLE_CACHE - 1];
        e->used = false;
    }
    if (!e->used) {
        e->data.len = 0;
        if ((rc = note(m, fetch_titles(m, kind, langid, e, err))) < 0)
            return rc;
        e->used = true;
        e->kind = kind;
        e->langid = langid;
    }
    out->len = 0;
    if (ntl_buf_append(out, e->data.data, e->data.len) < 0)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET,
                             "title database of %zu bytes does not fit", e->data.len);
    return NTL_OK;
}

static int read_values(struct smb_source *m, const struct ntl_winreg_handle *key,
                       struct ntl_msrpc_reg_value *values, size_t n, struct ntl_error *err)
{
    for (size_t i = 0; i < n; i++) {
        struct ntl_winreg_fetch f = {.initial_size = 512, .max_size = values[i].data.limit};
        int rc = note(m, ntl_winreg_fetch_value(&m->rpc, key, values[i].name,
                                                NTL_WINREG_VALUE_PLAIN, &f, &values[i].data,
                                                err));
        values[i].type = rc >= 0 ? f.type : 0;
        if (rc < 0 && rc != NTL_ERR_NOT_FOUND)
            return rc;
    }
    return NTL_OK;
}

int ntl_msrpc_smb_read_key(struct ntl_source *s, const char *key,
                           struct ntl_msrpc_reg_value *values, size_t n, struct ntl_error *err)
{
    struct smb_source *m = ntl_source_impl(s);
    struct ntl_winreg_handle hklm, h;
    struct ntl_error ignored;
    int rc;

    if ((rc = note(m, ntl_winreg_open_hklm(&m->rpc, &hklm, err))) < 0)
        return rc;
    if ((rc = note(m, ntl_winreg_open_key(&m->rpc, &hklm, key, &h, err))) >= 0) {
        rc = read_values(m, &h, values, n, err);
        if (!m->broken)
            ntl_winreg_close_key(&m->rpc, &h, &ignored);
    }
    if (!m->broken)
        ntl_winreg_close_key(&m->rpc, &hklm, &ignored);
    return rc;
}

static const struct ntl_source_ops smb_ops = {
    .query = smb_query,
    .titles = smb_titles,
    .snapshot_count = NULL,
    .close = smb_close,
};

int ntl_msrpc_smb_set_call_timeout(struct ntl_source *s, unsigned ms, struct ntl_error *err)
{
    struct smb_source *m = ntl_source_impl(s);
    (void)err;
    ntl_smb_pipe_set_call_timeout(m->pipe, ms);
    return NTL_OK;
}

int ntl_msrpc_smb_open(const char *spec, const struct ntl_source_options *opt,
                       struct ntl_source **out, struct ntl_error *err)
{
    static const struct ntl_source_options defaults;
    struct ntl_smb_spec sp;
    struct ntl_smb_target t;
    struct smb_source *m;
    char desc[512];
    const char *user, *domain;
    int rc;

    *out = NULL;
    if (!opt)
        opt = &defaults;
    if ((rc = ntl_smb_spec_parse(spec, &sp, err)) < 0)
        return rc;
    user = sp.user[0] ? sp.user : opt->user;
    domain = sp.domain[0] ? sp.domain : opt->domain;
    if (opt->anonymous)
        user = NULL;
    ntl_smb_spec_describe(&sp, user, domain, desc, sizeof desc);

    m = calloc(1, sizeof *m);
    if (!m)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    m->max_block = opt->max_block ? opt->max_block : NTL_SOURCE_DEFAULT_MAX_BLOCK;
    for (int i = 0; i < TITLE_CACHE; i++)
        ntl_buf_init(&m->titles[i].data, m->max_block);
    memset(&t, 0, sizeof t);
    t.host = sp.host;
    t.port = sp.port;
    t.domain = domain;
    t.user = user;
    t.password = opt->anonymous ? NULL : opt->password;
    t.kerberos = opt->kerberos;
    t.krb5_ccache = opt->krb5_ccache;
    t.connect_timeout_ms = opt->connect_timeout_ms;
    t.call_timeout_ms = opt->call_timeout_ms;

    ntl_rpc_client_init(&m->rpc, &ntl_smb_pipe_ops, NULL, m->max_block + 4096);
    rc = ntl_smb_pipe_open(&t, opt->pipe_name ? opt->pipe_name : "winreg", &m->pipe, err);
    if (rc >= 0) {
        m->rpc.pipe = m->pipe;
        rc = ntl_rpc_bind(&m->rpc, &ntl_winreg_syntax, err);
    }
    if (rc >= 0) {
        rc = ntl_winreg_open_hkpd(&m->rpc, &m->hkpd, err);
        m->have_hkpd = rc >= 0;
    }
    if (rc >= 0 && !(*out = ntl_source_new(&smb_ops, m, desc)))
        rc = ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    if (rc < 0) {
        free_impl(m);
        return rc;
    }
    return NTL_OK;
}
