/* Performance-data sources: where PERF_DATA_BLOCKs and title databases come
 * from. A source hands out raw bytes exactly as Windows' RegQueryValueEx on
 * HKEY_PERFORMANCE_DATA would, so every source goes through the same parser
 * (ntlens/perf.h).
 *
 * Producers in this module: "local" (Windows: HKEY_PERFORMANCE_DATA; Linux: a
 * built-in provider over /proc) and a capture file path. Remote sources
 * ("smb://[DOMAIN;]USER@HOST[:PORT]", "\\HOST") are produced by lib/msrpc,
 * which sits above this module: ntl_msrpc_source_open (ntlens/msrpc_source.h)
 * opens any spec. Each producer fills a struct ntl_source_ops and calls
 * ntl_source_new. Reading parsed data from a source: ntlens/source_perf.h. */
#ifndef NTLENS_SOURCE_H
#define NTLENS_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NTL_SOURCE_DEFAULT_MAX_BLOCK (64u << 20)

struct ntl_source_options {
    size_t max_block;             /* cap on one answer; 0: NTL_SOURCE_DEFAULT_MAX_BLOCK */
    unsigned connect_timeout_ms;  /* remote only; 0: 10 s */
    unsigned call_timeout_ms;     /* remote only; 0: 30 s */
    const char *user;             /* remote only; NULL: from the spec, or anonymous */
    const char *domain;
    const char *password;         /* never copied into errors or descriptions */
    bool kerberos;
    bool anonymous;
    const char *krb5_ccache;      /* kerberos: the ticket cache ("FILE:..."); NULL: KRB5CCNAME */
    const char *pipe_name;        /* remote only: the pipe on the host; NULL: "winreg" (tests
                                   * name a pipe server of their own) */
};

enum ntl_title_kind {
    NTL_TITLES_COUNTER, /* "Counter <lang>" */
    NTL_TITLES_HELP,    /* "Help <lang>" (Samba: "Explain <lang>") */
};

struct ntl_source;

struct ntl_source_ops {
    /* Fills block with one PERF_DATA_BLOCK answer to QueryValue(query):
     * "Global", "Costly" or space-separated object indices ("230 232").
     * A capture returns its next snapshot and NTL_ERR_EOF after the last
     * (with err set: a caller that expected more words it from there). */
    int (*query)(struct ntl_source *s, const char *query, struct ntl_buf *block,
                 struct ntl_error *err);
    /* Fills out with the raw title-database answer: UTF-16LE MULTI_SZ bytes. */
    int (*titles)(struct ntl_source *s, enum ntl_title_kind kind, unsigned langid,
                  struct ntl_buf *out, struct ntl_error *err);
    /* Number of snapshots a capture holds; NULL for live sources. */
    size_t (*snapshot_count)(const struct ntl_source *s);
    void (*close)(struct ntl_source *s);
};

/* Opens "local" or a capture file. Returns 0, or with err set:
 * NTL_ERR_ARGUMENT (empty spec), NTL_ERR_UNSUPPORTED (a remote spec: open it
 * with ntl_msrpc_source_open), or what the producer returns (a capture:
 * NTL_ERR_IO, NTL_ERR_FORMAT, NTL_ERR_TRUNCATED, NTL_ERR_LIMIT,
 * NTL_ERR_NOMEM; local: NTL_ERR_SYSTEM, NTL_ERR_NOMEM). */
int ntl_source_open(const char *spec, const struct ntl_source_options *opt,
                    struct ntl_source **out, struct ntl_error *err);

/* True for a spec a remote producer serves: "smb://..." or "\\HOST". */
bool ntl_source_spec_is_remote(const char *spec);

/* True when name is this machine as a counter path's \\MACHINE or a
 * block's system name gives it: "", ".", "localhost", or this machine's
 * host name (case-insensitive; a DNS name counts by its first label, as
 * the local source's blocks carry the short name). */
bool ntl_source_is_this_machine(const char *name);

/* This machine's host name as the local source's blocks name it (Linux:
 * gethostname; Windows: the NetBIOS computer name). Returns 0, or
 * NTL_ERR_SYSTEM with err set. Platform code: local-linux.c, local-win32.c. */
int ntl_source_local_hostname(char *buf, size_t size, struct ntl_error *err);

/* For producers: wraps impl (owned, released by ops->close) in a source.
 * NULL when out of memory. */
struct ntl_source *ntl_source_new(const struct ntl_source_ops *ops, void *impl,
                                  const char *description);
void *ntl_source_impl(const struct ntl_source *s);

/* One raw answer (see ops->query): 0, NTL_ERR_EOF at the end of a capture,
 * or the producer's failure (NTL_ERR_LIMIT over max_block, NTL_ERR_IO,
 * NTL_ERR_TIMEOUT, NTL_ERR_REMOTE, NTL_ERR_ACCESS, NTL_ERR_SYSTEM,
 * NTL_ERR_NOMEM), always with err set. */
int ntl_source_query(struct ntl_source *s, const char *query, struct ntl_buf *block,
                     struct ntl_error *err);
/* The raw title database (see ops->titles): 0, NTL_ERR_NOT_FOUND when the
 * source has none for (kind, langid) (err set, naming what is missing), or
 * a failure as for ntl_source_query. */
int ntl_source_titles(struct ntl_source *s, enum ntl_title_kind kind, unsigned langid,
                      struct ntl_buf *out, struct ntl_error *err);
/* 0 for live sources. */
size_t ntl_source_snapshot_count(const struct ntl_source *s);
/* "local (Linux /proc)", "capture boot.ntlcap", "smb://admin@host" (no secrets). */
const char *ntl_source_describe(const struct ntl_source *s);
/* True for a live source a command may query repeatedly (not a capture). */
bool ntl_source_is_live(const struct ntl_source *s);
void ntl_source_close(struct ntl_source *s);

/* This module's producers, chosen by ntl_source_open from the spec; they
 * return what ntl_source_open lists for them. */
int ntl_source_local_open(const struct ntl_source_options *opt, struct ntl_source **out,
                          struct ntl_error *err);
int ntl_source_capture_open(const char *path, const struct ntl_source_options *opt,
                            struct ntl_source **out, struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
