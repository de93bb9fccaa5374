/* The named-pipe transport on Windows: \\HOST\PIPE\name opened with
 * CreateFileW (Windows carries SMB and the logon's credentials; with a user,
 * WNetAddConnection2W to \\HOST\IPC$ first, which the pipe's open then
 * rides on), the same ntl_smb_pipe API as transport-linux.c. The open is
 * bounded by --timeout (pipe-open-win32.c).
 *
 * Every read and write is overlapped and waits only for what is left of the
 * current call, from its first write to its last read: a server that
 * dribbles a reply out, each fragment just inside any per-read bound, still
 * ends at the call's deadline. On expiry the I/O is cancelled (CancelIoEx)
 * and waited for, so no late completion writes into a buffer the caller has
 * freed.
 *
 * A call that runs out of time keeps the connection, as on Linux: before
 * the next call, what is left of the abandoned reply is read and dropped.
 * Where a reply ends takes DCE/RPC's fragment framing (frag_length,
 * PFC_LAST_FRAG), which ntl_dcerpc_stream follows over every byte read, so
 * a late reply is never taken for the next call's. */
#include "ntlens/dcerpc.h"
#include "ntlens/msrpc.h"
#include "pipe-open-win32.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_CALL_MS 30000u

struct ntl_smb_pipe {
    struct ntl_win32_pipe_conn conn;
    HANDLE event;             /* signalled when the pending I/O completes */
    unsigned call_ms;         /* the deadline of one call, from its first write */
    unsigned open_call_ms;    /* call_ms as the open set it */
    ULONGLONG deadline;       /* GetTickCount64 when the current call must end */
    bool replying;            /* the last operation was a read: a write starts a call */
    bool timed_out;           /* a call ran out of time: the server may still answer it */
    const char *broken;       /* why the pipe carries no more calls, or NULL */
    ULONGLONG late_until;     /* after a timeout: when a reply still owed means broken */
    struct ntl_dcerpc_stream reply; /* where the server's reply stream stands */
    char where[300];          /* \\HOST\PIPE\name, for messages */
};

enum io_result { IO_DONE, IO_EXPIRED, IO_FAILED };

static int system_error(struct ntl_smb_pipe *p, DWORD e, const char *what,
                        struct ntl_error *err)
{
    char text[200];

    if (e == ERROR_BROKEN_PIPE || e == ERROR_PIPE_NOT_CONNECTED || e == ERROR_HANDLE_EOF)
        return ntl_error_set(err, NTL_ERR_EOF, NULL, NTL_NO_OFFSET,
                             "%s %s: the server closed the pipe (error %lu)", what, p->where,
                             (unsigned long)e);
    if (e == ERROR_ACCESS_DENIED)
        return ntl_error_set(err, NTL_ERR_ACCESS, NULL, NTL_NO_OFFSET,
                             "%s %s: access denied (performance data needs an administrator "
                             "and the RemoteRegistry service)", what, p->where);
    ntl_win32_error_text(e, text, sizeof text);
    return ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET, "%s %s: error %lu%s%s", what,
                         p->where, (unsigned long)e, text[0] ? ": " : "", text);
}

static int deadline_passed(struct ntl_smb_pipe *p, const char *what, struct ntl_error *err)
{
    /* The abandoned reply may come late by one more call's time. */
    if (!p->timed_out)
        p->late_until = GetTickCount64() + p->open_call_ms;
    p->timed_out = true;
    return ntl_error_set(err, NTL_ERR_TIMEOUT, NULL, NTL_NO_OFFSET,
                         "%s %s: the server stopped answering (the call did not complete "
                         "within %u s; see --call-timeout)",
                         what, p->where, (p->call_ms + 999) / 1000);
}

/* The connection cannot be trusted any more: this pipe fails every call
 * from now on, and its owner opens a new one. */
static int gone(struct ntl_smb_pipe *p, const char *what, const char *why,
                struct ntl_error *err)
{
    p->broken = why;
    return ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET, "%s %s: %s", what, p->where,
                         why);
}

/* One overlapped ReadFile or WriteFile of up to n bytes, waited for until
 * end. *done: the bytes moved, a message read in part (ERROR_MORE_DATA)
 * and what moved before a cancellation included. IO_FAILED sets *e. */
static enum io_result io_until(struct ntl_smb_pipe *p, bool write, void *data, DWORD n,
                               ULONGLONG end, DWORD *done, DWORD *e)
{
    OVERLAPPED ov = {.hEvent = p->event};
    ULONGLONG now = GetTickCount64();
    BOOL ok;

    *done = 0;
    *e = ERROR_SUCCESS;
    if (now >= end)
        return IO_EXPIRED;
    ok = write ? WriteFile(p->conn.h, data, n, NULL, &ov)
               : ReadFile(p->conn.h, data, n, NULL, &ov);
    if (!ok && (*e = GetLastError()) == ERROR_IO_PENDING &&
        WaitForSingleObject(p->event, (DWORD)(end - now)) == WAIT_TIMEOUT) {
        CancelIoEx(p->conn.h, &ov);
        GetOverlappedResult(p->conn.h, &ov, done, TRUE);
        return IO_EXPIRED;
    }
    if (ok || *e == ERROR_IO_PENDING || *e == ERROR_MORE_DATA)
        ok = GetOverlappedResult(p->conn.h, &ov, done, TRUE);
    if (!ok && (*e = GetLastError()) != ERROR_MORE_DATA)
        return IO_FAILED;
    return IO_DONE;
}

/* Follows the reply's framing over bytes read. A malformed header is the
 * RPC layer's to report; the stream is lost. */
static void follow(struct ntl_smb_pipe *p, const void *data, DWORD n)
{
    if (n && ntl_dcerpc_stream_feed(&p->reply, data, n) < 0)
        p->broken = "the server's replies cannot be followed (a malformed DCE/RPC header "
                    "earlier; reconnect)";
}

/* Before a call: reads and drops what is left of a reply nobody reads any
 * more (a call that ran out of time, or one its caller gave up), within
 * this call's time and the late bound, so the next reply read is this
 * call's own. */
static int settle(struct ntl_smb_pipe *p, const char *what, struct ntl_error *err)
{
    uint8_t chunk[4096];

    if (!p->timed_out)
        p->late_until = GetTickCount64() + p->open_call_ms;
    while (p->reply.open) {
        DWORD want = ntl_dcerpc_stream_want(&p->reply), done, e;
        ULONGLONG end = p->deadline < p->late_until ? p->deadline : p->late_until;
        enum io_result r = io_until(p, false, chunk, want < sizeof chunk ? want : sizeof chunk,
                                    end, &done, &e);
        if (done && ntl_dcerpc_stream_feed(&p->reply, chunk, done) < 0)
            return gone(p, what, "a late reply is not DCE/RPC (the connection is dropped)",
                        err);
        if (r == IO_EXPIRED)
            return GetTickCount64() >= p->late_until
                       ? gone(p, what, "the server never finished answering a call that ran "
                              "out of time (the connection is dropped)", err)
                       : deadline_passed(p, what, err);
        if (r == IO_FAILED)
            return system_error(p, e, what, err);
        if (done == 0)
            return ntl_error_set(err, NTL_ERR_EOF, NULL, NTL_NO_OFFSET,
                                 "%s %s: the server closed the pipe", what, p->where);
    }
    p->timed_out = false;
    return NTL_OK;
}

/* Moves exactly n bytes: a byte-mode pipe may return less than asked for,
 * a message-mode one a message in parts. */
static int transfer(struct ntl_smb_pipe *p, bool write, void *data, size_t n, const char *what,
                    struct ntl_error *err)
{
    uint8_t *at = data;
    int rc;

    if (p->broken)
        return ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET, "%s %s: %s", what, p->where,
                             p->broken);
    /* A call starts with a write after a read, or after a call that ran
     * out of time (in its writes, maybe: its caller gave it up). */
    if (write && (p->replying || p->timed_out)) {
        p->deadline = GetTickCount64() + p->call_ms;
        if ((p->timed_out || p->reply.open) && (rc = settle(p, what, err)) < 0)
            return rc;
        ntl_dcerpc_stream_expect(&p->reply);
    }
    if (p->timed_out) /* within a call that ran out of time */
        return deadline_passed(p, what, err);
    p->replying = !write;
    while (n > 0) {
        DWORD chunk = n > 0x10000 ? 0x10000 : (DWORD)n, done, e;
        enum io_result r = io_until(p, write, at, chunk, p->deadline, &done, &e);
        if (!write)
            follow(p, at, done);
        if (r == IO_EXPIRED) {
            if (write && done < chunk) /* the server holds part of a request */
                p->broken = "a request was cut off when its call ran out of time (reconnect)";
            return deadline_passed(p, what, err);
        }
        if (r == IO_FAILED)
            return system_error(p, e, what, err);
        if (done == 0)
            return ntl_error_set(err, NTL_ERR_EOF, NULL, NTL_NO_OFFSET,
                                 "%s %s: the server closed the pipe", what, p->where);
        at += done;
        n -= done;
    }
    return NTL_OK;
}

static int pipe_write(void *pipe, const void *data, size_t n, struct ntl_error *err)
{
    return transfer(pipe, true, (void *)data, n, "writing to the pipe", err);
}

static int pipe_read(void *pipe, void *data, size_t n, struct ntl_error *err)
{
    return transfer(pipe, false, data, n, "reading a reply from", err);
}

const struct ntl_rpc_pipe_ops ntl_smb_pipe_ops = {pipe_write, pipe_read};

int ntl_smb_pipe_open(const struct ntl_smb_target *t, const char *name,
                      struct ntl_smb_pipe **out, struct ntl_error *err)
{
    DWORD mode = PIPE_READMODE_MESSAGE;
    struct ntl_smb_pipe *p;
    int rc;

    *out = NULL;
    if (t->port && t->port != 445)
        return ntl_error_set(err, NTL_ERR_UNSUPPORTED, NULL, NTL_NO_OFFSET,
                             "Windows reaches remote registries on port 445 only, not %u",
                             t->port);
    if (t->kerberos)
        return ntl_error_set(err, NTL_ERR_UNSUPPORTED, NULL, NTL_NO_OFFSET,
                             "-k: on Windows the logon's own Kerberos tickets are used; "
                             "leave out -k and -U");
    if (!(p = calloc(1, sizeof *p)))
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    p->conn.h = INVALID_HANDLE_VALUE;
    p->call_ms = p->open_call_ms = t->call_timeout_ms ? t->call_timeout_ms : DEFAULT_CALL_MS;
    p->replying = true;
    snprintf(p->where, sizeof p->where, "\\\\%s\\PIPE\\%s", t->host, name);
    if (!(p->event = CreateEventW(NULL, TRUE, FALSE, NULL))) {
        rc = system_error(p, GetLastError(), "CreateEvent for", err);
        goto fail;
    }
    if ((rc = ntl_win32_pipe_connect(t, p->where, &p->conn, err)) < 0)
        goto fail;
    /* MSRPC over SMB pipes is message mode: one write, one PDU. */
    if (!SetNamedPipeHandleState(p->conn.h, &mode, NULL, NULL)) {
        rc = system_error(p, GetLastError(), "setting message mode on", err);
        goto fail;
    }
    *out = p;
    return NTL_OK;
fail:
    ntl_smb_pipe_close(p);
    return rc;
}

void ntl_smb_pipe_close(struct ntl_smb_pipe *p)
{
    if (!p)
        return;
    ntl_win32_pipe_disconnect(&p->conn);
    if (p->event)
        CloseHandle(p->event);
    free(p);
}

void ntl_smb_pipe_set_call_timeout(struct ntl_smb_pipe *p, unsigned ms)
{
    p->call_ms = ms ? ms : p->open_call_ms;
}
