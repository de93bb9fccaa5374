/* The named-pipe transport on Windows: \\HOST\PIPE\name opened with
 * CreateFileW (Windows carries SMB and the logon's credentials; with a user,
 * WNetAddConnection2W to \\HOST\IPC$ first, which the pipe's open then
 * rides on), the same ntl_smb_pipe API as transport-linux.c.
 *
 * Every read and write is overlapped and waits only for what is left of the
 * current call, from its first write to its last read: a server that
 * dribbles a reply out, each fragment just inside any per-read bound, still
 * ends at the call's deadline. On expiry the I/O is cancelled (CancelIoEx)
 * and waited for, so no late completion writes into a buffer the caller has
 * freed; the pipe then refuses further calls (NTL_ERR_IO: reconnect),
 * since a late answer to the abandoned call would be taken for the next
 * one's. */
#include "ntlens/msrpc.h"

#include <windows.h>
#include <winnetwk.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/utf16.h"

#define DEFAULT_CONNECT_MS 10000u
#define DEFAULT_CALL_MS 30000u
#define PIPE_OPEN_TRIES 5
#define PIPE_RETRY_MS 400

struct ntl_smb_pipe {
    HANDLE h;
    HANDLE event;             /* signalled when the pending I/O completes */
    unsigned call_ms;         /* the deadline of one call, from its first write */
    unsigned open_call_ms;    /* call_ms as the open set it */
    ULONGLONG deadline;       /* GetTickCount64 when the current call must end */
    bool replying;            /* the last operation was a read: a write starts a call */
    bool timed_out;           /* a call ran out of time */
    bool ipc_connected;       /* WNetAddConnection2W to ipc succeeded */
    wchar_t ipc[300];         /* \\HOST\IPC$ */
    char where[300];          /* \\HOST\PIPE\name, for messages */
};

static wchar_t *widen(const char *s, wchar_t *dst, size_t units)
{
    size_t n = ntl_utf8_to_utf16(s, (uint8_t *)dst, units - 1);
    dst[n < units ? n : units - 1] = 0;
    return dst;
}

/* What an error opening a pipe (or its IPC$) means to a caller. */
static enum ntl_status open_status(DWORD e)
{
    switch (e) {
    case ERROR_LOGON_FAILURE:
    case ERROR_ACCOUNT_RESTRICTION:
        return NTL_ERR_AUTH;
    case ERROR_ACCESS_DENIED:
        return NTL_ERR_ACCESS;
    case ERROR_BAD_NETPATH:
    case ERROR_BAD_NET_NAME:
    case ERROR_NETNAME_DELETED:
    case ERROR_NO_NETWORK:
    case ERROR_NO_NET_OR_BAD_PATH:
    case ERROR_NETWORK_UNREACHABLE:
    case ERROR_HOST_UNREACHABLE:
    case ERROR_CONNECTION_REFUSED:
        return NTL_ERR_CONNECT;
    case ERROR_SEM_TIMEOUT:
        return NTL_ERR_TIMEOUT;
    }
    return NTL_ERR_IO;
}

/* opening: the status open_status gives; otherwise NTL_ERR_EOF for a pipe
 * the server closed, NTL_ERR_ACCESS or NTL_ERR_IO. */
static int system_error(struct ntl_smb_pipe *p, DWORD e, const char *what, bool opening,
                        struct ntl_error *err)
{
    char text[200] = "";
    enum ntl_status st = opening ? open_status(e) : NTL_ERR_IO;

    FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, e, 0,
                   text, sizeof text, NULL);
    text[strcspn(text, "\r\n")] = '\0';
    if (!opening &&
        (e == ERROR_BROKEN_PIPE || e == ERROR_PIPE_NOT_CONNECTED || e == ERROR_HANDLE_EOF))
        return ntl_error_set(err, NTL_ERR_EOF, NULL, NTL_NO_OFFSET,
                             "%s %s: the server closed the pipe (error %lu)", what, p->where,
                             (unsigned long)e);
    if (e == ERROR_ACCESS_DENIED)
        return ntl_error_set(err, NTL_ERR_ACCESS, NULL, NTL_NO_OFFSET,
                             "%s %s: access denied (performance data needs an administrator "
                             "and the RemoteRegistry service)", what, p->where);
    return ntl_error_set(err, st, NULL, NTL_NO_OFFSET, "%s %s: error %lu%s%s", what, p->where,
                         (unsigned long)e, text[0] ? ": " : "", text);
}

static int deadline_passed(struct ntl_smb_pipe *p, const char *what, struct ntl_error *err)
{
    p->timed_out = true;
    return ntl_error_set(err, NTL_ERR_TIMEOUT, NULL, NTL_NO_OFFSET,
                         "%s %s: the server stopped answering (the call did not complete "
                         "within %u s; see --call-timeout)",
                         what, p->where, (p->call_ms + 999) / 1000);
}

/* One overlapped ReadFile or WriteFile of up to n bytes, waited for until
 * the call's deadline. *done: the bytes moved (a message read in part, with
 * ERROR_MORE_DATA, counts as moved). */
static int overlapped_io(struct ntl_smb_pipe *p, bool write, void *data, DWORD n, DWORD *done,
                         const char *what, struct ntl_error *err)
{
    OVERLAPPED ov = {.hEvent = p->event};
    ULONGLONG now = GetTickCount64();
    DWORD e = ERROR_SUCCESS;
    BOOL ok;

    if (now >= p->deadline)
        return deadline_passed(p, what, err);
    ok = write ? WriteFile(p->h, data, n, NULL, &ov) : ReadFile(p->h, data, n, NULL, &ov);
    if (!ok && (e = GetLastError()) == ERROR_IO_PENDING &&
        WaitForSingleObject(p->event, (DWORD)(p->deadline - now)) == WAIT_TIMEOUT) {
        CancelIoEx(p->h, &ov);
        GetOverlappedResult(p->h, &ov, done, TRUE);
        return deadline_passed(p, what, err);
    }
    if (ok || e == ERROR_IO_PENDING || e == ERROR_MORE_DATA)
        ok = GetOverlappedResult(p->h, &ov, done, TRUE);
    if (!ok && (e = GetLastError()) != ERROR_MORE_DATA)
        return system_error(p, e, what, false, err);
    return NTL_OK;
}

/* Moves exactly n bytes: a byte-mode pipe may return less than asked for,
 * a message-mode one a message in parts. */
static int transfer(struct ntl_smb_pipe *p, bool write, void *data, size_t n, const char *what,
                    struct ntl_error *err)
{
    uint8_t *at = data;
    int rc;

    if (p->timed_out)
        return ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET,
                             "%s %s: an earlier call ran out of time, and its late answer "
                             "could be taken for this one's (reconnect)", what, p->where);
    if (write && p->replying)
        p->deadline = GetTickCount64() + p->call_ms;
    p->replying = !write;
    while (n > 0) {
        DWORD chunk = n > 0x10000 ? 0x10000 : (DWORD)n, done = 0;
        if ((rc = overlapped_io(p, write, at, chunk, &done, what, err)) < 0)
            return rc;
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

/* CreateFileW, waiting up to connect_ms while every instance is busy, and
 * trying a pipe that is not there a few times, as transport-linux.c does:
 * Windows starts RemoteRegistry on demand, and its pipe appears after a
 * moment. */
static int open_handle(struct ntl_smb_pipe *p, const wchar_t *path, unsigned connect_ms,
                       struct ntl_error *err)
{
    ULONGLONG end = GetTickCount64() + connect_ms;
    int missing = 0;
    DWORD e;

    for (;;) {
        ULONGLONG now = GetTickCount64();
        p->h = CreateFileW(path, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
                           FILE_FLAG_OVERLAPPED, NULL);
        if (p->h != INVALID_HANDLE_VALUE)
            return NTL_OK;
        e = GetLastError();
        if (e == ERROR_FILE_NOT_FOUND && ++missing < PIPE_OPEN_TRIES) {
            Sleep(PIPE_RETRY_MS);
            continue;
        }
        if (e != ERROR_PIPE_BUSY || now >= end)
            break;
        WaitNamedPipeW(path, (DWORD)(end - now));
    }
    if (e == ERROR_PIPE_BUSY)
        return ntl_error_set(err, NTL_ERR_TIMEOUT, NULL, NTL_NO_OFFSET,
                             "opening %s: every instance stayed busy for %u s", p->where,
                             (connect_ms + 999) / 1000);
    if (e == ERROR_FILE_NOT_FOUND)
        return ntl_error_set(err, NTL_ERR_NOT_FOUND, NULL, NTL_NO_OFFSET,
                             "%s is not available (on Windows, start the RemoteRegistry "
                             "service)", p->where);
    return system_error(p, e, "opening", true, err);
}

/* -U on Windows: an SMB session to the host as that user, which the
 * redirector then uses for the pipe (as `net use \\HOST\IPC$` would). */
static int connect_ipc(struct ntl_smb_pipe *p, const struct ntl_smb_target *t,
                       struct ntl_error *err)
{
    NETRESOURCEW nr = {.dwType = RESOURCETYPE_ANY, .lpRemoteName = p->ipc};
    wchar_t wuser[300], wpass[300];
    char account[300], ipc[300];
    bool domain = t->domain && *t->domain;
    DWORD e;

    snprintf(ipc, sizeof ipc, "\\\\%s\\IPC$", t->host);
    widen(ipc, p->ipc, 300);
    snprintf(account, sizeof account, "%s%s%s", domain ? t->domain : "", domain ? "\\" : "",
             t->user);
    e = WNetAddConnection2W(&nr, widen(t->password ? t->password : "", wpass, 300),
                            widen(account, wuser, 300), 0);
    SecureZeroMemory(wpass, sizeof wpass);
    if (e != NO_ERROR)
        return system_error(p, e, "connecting to IPC$ for", true, err);
    p->ipc_connected = true;
    return NTL_OK;
}

int ntl_smb_pipe_open(const struct ntl_smb_target *t, const char *name,
                      struct ntl_smb_pipe **out, struct ntl_error *err)
{
    DWORD mode = PIPE_READMODE_MESSAGE;
    wchar_t path[300];
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
    p->h = INVALID_HANDLE_VALUE;
    p->call_ms = p->open_call_ms = t->call_timeout_ms ? t->call_timeout_ms : DEFAULT_CALL_MS;
    p->replying = true;
    snprintf(p->where, sizeof p->where, "\\\\%s\\PIPE\\%s", t->host, name);
    widen(p->where, path, 300);
    if (!(p->event = CreateEventW(NULL, TRUE, FALSE, NULL))) {
        rc = system_error(p, GetLastError(), "CreateEvent for", false, err);
        goto fail;
    }
    if (t->user && *t->user && (rc = connect_ipc(p, t, err)) < 0)
        goto fail;
    rc = open_handle(p, path, t->connect_timeout_ms ? t->connect_timeout_ms : DEFAULT_CONNECT_MS,
                     err);
    if (rc < 0)
        goto fail;
    /* MSRPC over SMB pipes is message mode: one write, one PDU. */
    if (!SetNamedPipeHandleState(p->h, &mode, NULL, NULL)) {
        rc = system_error(p, GetLastError(), "setting message mode on", false, err);
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
    if (p->h != INVALID_HANDLE_VALUE)
        CloseHandle(p->h);
    if (p->event)
        CloseHandle(p->event);
    if (p->ipc_connected)
        WNetCancelConnection2W(p->ipc, 0, TRUE);
    free(p);
}

void ntl_smb_pipe_set_call_timeout(struct ntl_smb_pipe *p, unsigned ms)
{
    p->call_ms = ms ? ms : p->open_call_ms;
}
