/* An MSRPC client over an SMB named pipe, and the remote performance-data
 * calls built on it (winreg OpenHKPD / QueryValue / CloseKey).
 *
 * Layers: ntlens/dcerpc.h (PDUs) and ntlens/ndr.h + ntlens/winreg.h (stubs)
 * parse bytes; this header adds the I/O. A pipe is any object with
 * write/read functions (struct ntl_rpc_pipe_ops); the SMB transport
 * (libsmbclient on Linux, named-pipe handles on Windows) is
 * ntl_smb_pipe_open. One client is used from one thread at a time;
 * separate clients share nothing. */
#ifndef NTLENS_MSRPC_H
#define NTLENS_MSRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/dcerpc.h"
#include "ntlens/error.h"
#include "ntlens/winreg.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A message-mode byte pipe. read fills exactly n bytes (or fails); write
 * sends all n bytes. Errors name what failed (timeouts: NTL_ERR_TIMEOUT,
 * a peer that closed: NTL_ERR_EOF or NTL_ERR_IO). */
struct ntl_rpc_pipe_ops {
    int (*write)(void *pipe, const void *data, size_t n, struct ntl_error *err);
    int (*read)(void *pipe, void *data, size_t n, struct ntl_error *err);
};

struct ntl_rpc_client {
    const struct ntl_rpc_pipe_ops *ops;
    void *pipe;
    uint32_t next_call_id;
    uint16_t max_xmit;        /* largest fragment we may send (from bind_ack) */
    uint16_t max_recv;        /* largest fragment we accept */
    size_t max_stub;          /* cap on one reassembled response stub */
    bool bound;
    struct ntl_buf tx;        /* reused between calls */
    struct ntl_buf frag;
    uint64_t rx_offset;       /* bytes read so far, for error offsets */
    unsigned round_trips;     /* request/response exchanges so far */
};

/* max_stub: 0 for 64 MiB + 4 KiB. */
void ntl_rpc_client_init(struct ntl_rpc_client *c, const struct ntl_rpc_pipe_ops *ops,
                         void *pipe, size_t max_stub);
void ntl_rpc_client_free(struct ntl_rpc_client *c);
/* Binds to iface; sizes fragments from the bind_ack. */
int ntl_rpc_bind(struct ntl_rpc_client *c, const struct ntl_dcerpc_syntax *iface,
                 struct ntl_error *err);
/* One call: sends the request stub (fragmented as needed) and reassembles
 * the response stub into out (cleared first). A fault is NTL_ERR_REMOTE
 * with the fault named; *fault (may be NULL) receives its status. */
int ntl_rpc_call(struct ntl_rpc_client *c, uint16_t opnum, const void *stub, size_t stub_len,
                 struct ntl_buf *out, uint32_t *fault, struct ntl_error *err);

/* winreg calls. Win32 errors other than those a caller handles become
 * NTL_ERR_REMOTE (NTL_ERR_ACCESS for access denied) naming the error. */
int ntl_winreg_open_hkpd(struct ntl_rpc_client *c, struct ntl_winreg_handle *h,
                         struct ntl_error *err);
int ntl_winreg_open_hklm(struct ntl_rpc_client *c, struct ntl_winreg_handle *h,
                         struct ntl_error *err);
int ntl_winreg_open_key(struct ntl_rpc_client *c, const struct ntl_winreg_handle *parent,
                        const char *subkey, struct ntl_winreg_handle *h, struct ntl_error *err);
int ntl_winreg_close_key(struct ntl_rpc_client *c, struct ntl_winreg_handle *h,
                         struct ntl_error *err);
/* One QueryValue with a buffer of buffer_size bytes. On success (>= 0) *v
 * describes the answer (v->data points into stub_out, v->werror may be
 * ERROR_MORE_DATA); errors are transport, RPC or format failures only. */
int ntl_winreg_query_value_once(struct ntl_rpc_client *c, const struct ntl_winreg_handle *h,
                                const char *name, uint32_t buffer_size,
                                struct ntl_buf *stub_out, struct ntl_winreg_value *v,
                                struct ntl_error *err);

/* How a whole value is judged complete: performance data goes through the
 * PERF_DATA_BLOCK classifier (Samba answers a short buffer with success and
 * a zero-filled block); other values are complete when the call succeeds
 * with cb_data <= buffer. */
enum ntl_winreg_value_kind { NTL_WINREG_VALUE_PLAIN, NTL_WINREG_VALUE_PERF_DATA };

struct ntl_winreg_fetch {
    uint32_t initial_size;    /* first buffer size; 0: 64 KiB */
    size_t max_size;          /* cap; 0: NTL_SOURCE_DEFAULT_MAX_BLOCK */
    uint32_t type;            /* out: REG_* type */
    unsigned attempts;        /* out: QueryValue calls made */
    uint32_t last_size;       /* out: buffer size of the successful call */
};

/* Fetches a whole value into out (cleared first), growing the buffer: on
 * ERROR_MORE_DATA to max(2x, cb_data) and retry; a success with no bytes
 * or (perf data) a truncated/zero-filled block counts as too small. Past
 * f->max_size: NTL_ERR_LIMIT. f->initial_size is updated to the size that
 * worked, so the next fetch of the same value needs one round trip. */
int ntl_winreg_fetch_value(struct ntl_rpc_client *c, const struct ntl_winreg_handle *h,
                           const char *name, enum ntl_winreg_value_kind kind,
                           struct ntl_winreg_fetch *f, struct ntl_buf *out,
                           struct ntl_error *err);

/* ------------------------------------------------------------------------
 * SMB transport (Linux: libsmbclient; Windows: CreateFileW on
 * \\HOST\PIPE\name with the logon's credentials, or after WNetAddConnection2W
 * to \\HOST\IPC$ as user; port 445 only, no Kerberos option)
 * ------------------------------------------------------------------------ */

struct ntl_smb_target {
    const char *host;
    uint16_t port;            /* 0: 445 */
    const char *domain;       /* NULL: none */
    const char *user;         /* NULL or "": anonymous unless kerberos (Windows: the
                               * logon's credentials) */
    const char *password;     /* never copied into errors */
    bool kerberos;
    const char *krb5_ccache;  /* kerberos: the helper's KRB5CCNAME; NULL: inherited */
    unsigned connect_timeout_ms;  /* 0: 10 s */
    unsigned call_timeout_ms;     /* 0: 30 s */
};

struct ntl_smb_pipe;
extern const struct ntl_rpc_pipe_ops ntl_smb_pipe_ops;

/* Connects to \\host\IPC$ (SMB2 or later), authenticates and opens
 * \PIPE\<name>. Retries a few times while the pipe is not available yet. */
int ntl_smb_pipe_open(const struct ntl_smb_target *t, const char *name,
                      struct ntl_smb_pipe **out, struct ntl_error *err);
void ntl_smb_pipe_close(struct ntl_smb_pipe *p);
/* The deadline of each call from now on, from its first write to its last
 * read (0: the open's call_timeout_ms again). */
void ntl_smb_pipe_set_call_timeout(struct ntl_smb_pipe *p, unsigned ms);

/* ------------------------------------------------------------------------
 * Samba's perfmon store (<state dir>/perfmon/names.tdb and data.tdb), which
 * smbd's winreg server (source3/registry/reg_perfcount.c) turns into
 * HKEY_PERFORMANCE_DATA answers.
 *
 * reg_perfcount.c reads a fixed layout: names.tdb holds "1" = N (titles
 * run to index 2N+1), "<i>" = name and "<i+1>" = help for even i,
 * "<i>rel" = "p" for an object or "c[<obj>,...]" for a counter, "<i>type"
 * = the counter type, "<obj>inst" = instance count, "<obj>i<k>name" =
 * instance name, "0PerfFreq"; data.tdb holds "<i>" = a counter's value as
 * text (objects without instances), "<obj>i<k>" = an instance's counter
 * values, 8 bytes each in ascending counter index order, "0PerfTime" and
 * "0PerfTime100nSec". Samba assembles objects and counters in ascending
 * index order and needs an object's index below its counters', so
 * Windows' indices are kept where that allows (Process 230, ID Process
 * 784, ...) and the others move above the highest index.
 * ------------------------------------------------------------------------ */

struct ntl_perf_block;
struct ntl_perf_titles;

enum ntl_samba_db { NTL_SAMBA_NAMES_DB, NTL_SAMBA_DATA_DB };

typedef int (*ntl_samba_put_fn)(void *ctx, enum ntl_samba_db db, const char *key,
                                const void *value, size_t len, struct ntl_error *err);

struct ntl_samba_perfmon_stats {
    size_t objects, counters, instances;
    size_t skipped_counters;  /* text and zero-size counters Samba cannot serve */
    size_t moved_indices;     /* counters given a new index */
    uint32_t last_index;
};

/* Emits every record of the store for one block, through put. Names and
 * help texts come from titles (entries it lacks read "Counter <i>"). */
int ntl_samba_perfmon_records(const struct ntl_perf_block *b, const struct ntl_perf_titles *t,
                              ntl_samba_put_fn put, void *ctx,
                              struct ntl_samba_perfmon_stats *st, struct ntl_error *err);

/* Linux (libtdb): writes both databases under <state_dir>/perfmon as new
 * files, then renames them into place (data.tdb first), so smbd never
 * reads a half-written database. */
int ntl_samba_perfmon_write(const char *state_dir, const struct ntl_perf_block *b,
                            const struct ntl_perf_titles *t, struct ntl_samba_perfmon_stats *st,
                            struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
