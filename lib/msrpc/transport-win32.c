/* The named-pipe transport on Windows: \\HOST\PIPE\name opened with
 * CreateFileW (Windows carries SMB and the logon's credentials), the same
 * ntl_smb_pipe API as transport-linux.c.
 *
 * Every read and write is overlapped and waits only for what is left of the
 * current call, from its first write to its last read: a server that
 * dribbles a reply out, each fragment just inside any per-read bound, still
 * ends at the call's deadline. On expiry the I/O is cancelled (CancelIoEx)
 * and waited for, so no late completion writes into a buffer the caller has
 * freed; the pipe then refuses further calls, since a late answer to the
 * abandoned call would be taken for the next one's. */
#include "ntlens/msrpc.h"

#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/utf16.h"

#define DEFAULT_CONNECT_MS 10000u
#define DEFAULT_CALL_MS 30000u

struct ntl_smb_pipe {
    HANDLE h;
    HANDLE event;             /* signalled when the pending I/O completes */
    unsigned call_ms;         /* the deadline of one call, from its first write */
    unsigned open_call_ms;    /* call_ms as the open set it */
    ULONGLONG deadline;       /* GetTickCount64 when the current call must end */
    bool replying;            /* the last operation was a read: a write starts a call */
    bool timed_out;           /* a call ran out of time */
    char where[300];          /* \\HOST\PIPE\name, for messages */
};

static int system_error(struct ntl_smb_pipe *p, DWORD e, const char *what,
                        struct ntl_error *err)
{
    char text[200] = "";
    enum ntl_status st = NTL_ERR_IO;

    FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, e, 0,
                   text, sizeof text, NULL);
    text[strcspn(text, "\r\n")] = '\0';
    if (e == ERROR_BROKEN_PIPE || e == ERROR_PIPE_NOT_CONNECTED || e == ERROR_HANDLE_EOF)
        return ntl_error_set(err, NTL_ERR_EOF, NULL, NTL_NO_OFFSET,
                             "%s %s: the server closed the pipe (error %lu)", what, p->where,
                             (unsigned long)e);
    if (e == ERROR_ACCESS_DENIED)
        st = NTL_ERR_ACCESS;
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
        return system_error(p, e, what, err);
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
        return deadline_passed(p, what, err);
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

/* CreateFileW, waiting up to connect_ms while every instance is busy. */
static int open_handle(struct ntl_smb_pipe *p, const wchar_t *path, unsigned connect_ms,
                       struct ntl_error *err)
{
    ULONGLONG end = GetTickCount64() + connect_ms;

    for (;;) {
        ULONGLONG now = GetTickCount64();
        p->h = CreateFileW(path, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
                           FILE_FLAG_OVERLAPPED, NULL);
        if (p->h != INVALID_HANDLE_VALUE)
            return NTL_OK;
        if (GetLastError() != ERROR_PIPE_BUSY || now >= end)
            break;
        WaitNamedPipeW(path, (DWORD)(end - now));
    }
    if (GetLastError() == ERROR_PIPE_BUSY)
        return ntl_error_set(err, NTL_ERR_TIMEOUT, NULL, NTL_NO_OFFSET,
                             "opening %s: every instance stayed busy for %u s", p->where,
                             (connect_ms + 999) / 1000);
    return system_error(p, GetLastError(), "opening", err);
}

int ntl_smb_pipe_open(const struct ntl_smb_target *t, const char *name,
                      struct ntl_smb_pipe **out, struct ntl_error *err)
{
    DWORD mode = PIPE_READMODE_MESSAGE;
    wchar_t path[300];
    struct ntl_smb_pipe *p;
    size_t units;
    int rc;

    *out = NULL;
    if ((t->user && *t->user) || t->kerberos || (t->port && t->port != 445))
        return ntl_error_set(err, NTL_ERR_UNSUPPORTED, NULL, NTL_NO_OFFSET,
                             "the Windows pipe transport uses the logon's credentials on "
                             "port 445 (no -U, -k or port)");
    if (!(p = calloc(1, sizeof *p)))
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    p->h = INVALID_HANDLE_VALUE;
    p->call_ms = p->open_call_ms = t->call_timeout_ms ? t->call_timeout_ms : DEFAULT_CALL_MS;
    p->replying = true;
    snprintf(p->where, sizeof p->where, "\\\\%s\\PIPE\\%s", t->host, name);
    units = ntl_utf8_to_utf16(p->where, (uint8_t *)path, 299);
    path[units < 300 ? units : 299] = 0;
    if (!(p->event = CreateEventW(NULL, TRUE, FALSE, NULL))) {
        rc = system_error(p, GetLastError(), "CreateEvent for", err);
        goto fail;
    }
    rc = open_handle(p, path, t->connect_timeout_ms ? t->connect_timeout_ms : DEFAULT_CONNECT_MS,
                     err);
    if (rc < 0)
        goto fail;
    /* MSRPC over SMB pipes is message mode: one write, one PDU. */
    if (!SetNamedPipeHandleState(p->h, &mode, NULL, NULL)) {
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
    if (p->h != INVALID_HANDLE_VALUE)
        CloseHandle(p->h);
    if (p->event)
        CloseHandle(p->event);
    free(p);
}

void ntl_smb_pipe_set_call_timeout(struct ntl_smb_pipe *p, unsigned ms)
{
    p->call_ms = ms ? ms : p->open_call_ms;
}
