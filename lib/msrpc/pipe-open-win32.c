/* Opening \\HOST\PIPE\name on Windows within --timeout.
 *
 * CreateFileW on a remote pipe and WNetAddConnection2W to \\HOST\IPC$ are
 * synchronous calls into the SMB redirector (TCP connect, negotiation,
 * session setup, tree connect, then the pipe's create), and neither takes a
 * timeout: a host that accepts the connection and never answers holds them
 * for the redirector's own timeouts, a minute and more. WaitNamedPipeW does
 * take one, but it only waits for a free instance of a pipe already reached
 * (for a remote pipe it is FSCTL_PIPE_WAIT sent through the same
 * redirector), so a loop of it around CreateFileW bounds none of the steps
 * before. So the open runs on a worker thread: the opener waits for it until
 * the deadline, then cancels whatever step the worker is blocked in
 * (CancelSynchronousIo: the redirector cancels a pending create, and the
 * pipe file system a pending wait) and waits a moment for it to end. A step
 * that does not heed the cancellation (WNetAddConnection2W runs through the
 * workstation service) leaves the worker to finish by itself: the last of
 * the two to let go of the shared state closes what the worker opened and
 * frees it, so the open ends on time and nothing outlives the worker. */
#include "pipe-open-win32.h"

#include <winnetwk.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/utf16.h"

#define DEFAULT_CONNECT_MS 10000u
#define PIPE_OPEN_TRIES 5
#define PIPE_RETRY_MS 400
#define CANCEL_WAIT_MS 1000u  /* after the deadline, for the cancelled worker to end */
#define CANCEL_RETRY_MS 50u   /* cancel again: the worker may have been between steps */
/* The worker's own bound on one wait for a busy pipe, past the deadline: the
 * opener cancels the wait at the deadline, and this only ends the worker
 * should the cancellation not take. */
#define BUSY_BACKSTOP_MS 5000u

/* What the worker is doing, for the message when the deadline passes. */
enum open_step { STEP_IPC, STEP_CREATE, STEP_BUSY, STEP_MISSING };

struct opener {
    LONG refs;                /* the opener and the worker: the last one out frees */
    LONG stop;                /* the deadline passed: the worker starts no new step */
    LONG step;                /* enum open_step */
    HANDLE wake;              /* set with stop: ends a pause between tries at once */
    ULONGLONG end;            /* the open's deadline, GetTickCount64 */
    bool use_ipc;
    wchar_t path[300], account[300], password[300];
    struct ntl_win32_pipe_conn conn; /* the worker's until it ends */
    DWORD error;              /* the worker's result */
};

wchar_t *ntl_win32_widen(const char *s, wchar_t *dst, size_t units)
{
    size_t n = ntl_utf8_to_utf16(s, (uint8_t *)dst, units - 1);
    dst[n < units ? n : units - 1] = 0;
    return dst;
}

void ntl_win32_error_text(DWORD e, char *text, size_t size)
{
    text[0] = '\0';
    FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, e, 0, text,
                   (DWORD)size, NULL);
    text[strcspn(text, "\r\n")] = '\0';
}

void ntl_win32_pipe_disconnect(struct ntl_win32_pipe_conn *c)
{
    if (c->h != INVALID_HANDLE_VALUE)
        CloseHandle(c->h);
    c->h = INVALID_HANDLE_VALUE;
    if (c->ipc_connected)
        WNetCancelConnection2W(c->ipc, 0, TRUE);
    c->ipc_connected = false;
}

static void release(struct opener *o)
{
    if (InterlockedDecrement(&o->refs) > 0)
        return;
    ntl_win32_pipe_disconnect(&o->conn);
    SecureZeroMemory(o->password, sizeof o->password);
    CloseHandle(o->wake);
    free(o);
}

static void set_step(struct opener *o, enum open_step s)
{
    InterlockedExchange(&o->step, s);
}

/* CreateFileW, waiting while every instance is busy, and trying a pipe
 * that is not there a few times, as transport-linux.c does: Windows starts
 * RemoteRegistry on demand, and its pipe appears after a moment. */
static DWORD open_pipe(struct opener *o)
{
    int missing = 0;

    for (;;) {
        DWORD e;
        if (InterlockedCompareExchange(&o->stop, 0, 0))
            return ERROR_OPERATION_ABORTED;
        set_step(o, STEP_CREATE);
        o->conn.h = CreateFileW(o->path, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
                                FILE_FLAG_OVERLAPPED, NULL);
        if (o->conn.h != INVALID_HANDLE_VALUE)
            return NO_ERROR;
        e = GetLastError();
        if (e == ERROR_FILE_NOT_FOUND && ++missing < PIPE_OPEN_TRIES) {
            set_step(o, STEP_MISSING);
            WaitForSingleObject(o->wake, PIPE_RETRY_MS);
        } else if (e == ERROR_PIPE_BUSY) {
            ULONGLONG now = GetTickCount64();
            set_step(o, STEP_BUSY);
            /* A server that cannot wait for an instance (the wait fails at
             * once) is asked again after a pause, not in a tight loop. */
            if (!WaitNamedPipeW(o->path,
                                (DWORD)(o->end > now ? o->end - now : 0) + BUSY_BACKSTOP_MS) &&
                GetTickCount64() - now < PIPE_RETRY_MS)
                WaitForSingleObject(o->wake, PIPE_RETRY_MS);
        } else {
            return e;
        }
    }
}

static DWORD WINAPI open_worker(void *arg)
{
    struct opener *o = arg;

    if (o->use_ipc) {
        NETRESOURCEW nr = {.dwType = RESOURCETYPE_ANY, .lpRemoteName = o->conn.ipc};
        set_step(o, STEP_IPC);
        o->error = WNetAddConnection2W(&nr, o->password, o->account, 0);
        SecureZeroMemory(o->password, sizeof o->password);
        o->conn.ipc_connected = o->error == NO_ERROR;
    }
    if (o->error == NO_ERROR)
        o->error = open_pipe(o);
    release(o);
    return 0;
}

/* After the deadline: stops the worker and cancels its blocked step, again
 * and again for a moment (it may have been between two steps). */
static void stop_worker(struct opener *o, HANDLE thread)
{
    ULONGLONG until = GetTickCount64() + CANCEL_WAIT_MS;

    InterlockedExchange(&o->stop, 1);
    SetEvent(o->wake);
    do {
        CancelSynchronousIo(thread);
        if (WaitForSingleObject(thread, CANCEL_RETRY_MS) == WAIT_OBJECT_0)
            return;
    } while (GetTickCount64() < until);
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

static int not_available(const char *where, struct ntl_error *err)
{
    return ntl_error_set(err, NTL_ERR_NOT_FOUND, NULL, NTL_NO_OFFSET,
                         "%s is not available (on Windows, start the RemoteRegistry service)",
                         where);
}

/* The worker's error e in the step that failed. */
static int failed(const struct opener *o, DWORD e, const char *where, struct ntl_error *err)
{
    const char *what = o->conn.ipc_connected || !o->use_ipc ? "opening" : "connecting to IPC$ for";
    char text[200];

    if (e == ERROR_FILE_NOT_FOUND)
        return not_available(where, err);
    if (e == ERROR_ACCESS_DENIED)
        return ntl_error_set(err, NTL_ERR_ACCESS, NULL, NTL_NO_OFFSET,
                             "%s %s: access denied (performance data needs an administrator "
                             "and the RemoteRegistry service)", what, where);
    ntl_win32_error_text(e, text, sizeof text);
    return ntl_error_set(err, open_status(e), NULL, NTL_NO_OFFSET, "%s %s: error %lu%s%s", what,
                         where, (unsigned long)e, text[0] ? ": " : "", text);
}

/* The deadline passed in the worker's step. */
static int timed_out(struct opener *o, const char *where, unsigned ms,
                     struct ntl_error *err)
{
    unsigned s = (ms + 999) / 1000;

    switch (InterlockedCompareExchange(&o->step, 0, 0)) {
    case STEP_MISSING:
        return not_available(where, err);
    case STEP_BUSY:
        return ntl_error_set(err, NTL_ERR_TIMEOUT, NULL, NTL_NO_OFFSET,
                             "opening %s: every instance stayed busy for %u s (see --timeout)",
                             where, s);
    case STEP_IPC:
        return ntl_error_set(err, NTL_ERR_TIMEOUT, NULL, NTL_NO_OFFSET,
                             "connecting to IPC$ for %s: no answer within %u s (host down, "
                             "filtered or not answering SMB; see --timeout)", where, s);
    }
    return ntl_error_set(err, NTL_ERR_TIMEOUT, NULL, NTL_NO_OFFSET,
                         "opening %s: no answer within %u s (host down, filtered or not "
                         "answering SMB; see --timeout)", where, s);
}

static struct opener *new_opener(const struct ntl_smb_target *t, const char *where)
{
    struct opener *o = calloc(1, sizeof *o);
    bool domain = t->domain && *t->domain;
    char text[300];

    if (!o || !(o->wake = CreateEventW(NULL, TRUE, FALSE, NULL))) {
        free(o);
        return NULL;
    }
    o->refs = 2;
    o->conn.h = INVALID_HANDLE_VALUE;
    ntl_win32_widen(where, o->path, 300);
    snprintf(text, sizeof text, "\\\\%s\\IPC$", t->host);
    ntl_win32_widen(text, o->conn.ipc, 300);
    if ((o->use_ipc = t->user && *t->user)) {
        snprintf(text, sizeof text, "%s%s%s", domain ? t->domain : "", domain ? "\\" : "",
                 t->user);
        ntl_win32_widen(text, o->account, 300);
        ntl_win32_widen(t->password ? t->password : "", o->password, 300);
    }
    return o;
}

int ntl_win32_pipe_connect(const struct ntl_smb_target *t, const char *where,
                           struct ntl_win32_pipe_conn *c, struct ntl_error *err)
{
    unsigned ms = t->connect_timeout_ms ? t->connect_timeout_ms : DEFAULT_CONNECT_MS;
    struct opener *o = new_opener(t, where);
    HANDLE thread;
    int rc;

    if (!o)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    o->end = GetTickCount64() + ms;
    if (!(thread = CreateThread(NULL, 0, open_worker, o, 0, NULL))) {
        rc = ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET,
                           "no thread to open %s in: error %lu", where,
                           (unsigned long)GetLastError());
        release(o);
        release(o);
        return rc;
    }
    if (WaitForSingleObject(thread, ms) == WAIT_OBJECT_0) {
        if ((rc = o->error == NO_ERROR ? NTL_OK : failed(o, o->error, where, err)) >= 0) {
            *c = o->conn; /* the pipe and its IPC$ connection are the caller's now */
            o->conn.h = INVALID_HANDLE_VALUE;
            o->conn.ipc_connected = false;
        }
    } else {
        stop_worker(o, thread);
        rc = timed_out(o, where, ms, err);
    }
    CloseHandle(thread);
    release(o);
    return rc;
}
