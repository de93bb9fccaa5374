/* Private to the Windows named-pipe transport (transport-win32.c): opening
 * \\HOST\PIPE\name within --timeout (pipe-open-win32.c). */
#ifndef NTLENS_MSRPC_PIPE_OPEN_WIN32_H
#define NTLENS_MSRPC_PIPE_OPEN_WIN32_H

#include <windows.h>

#include <stdbool.h>
#include <stddef.h>

#include "ntlens/msrpc.h"

/* An open pipe, and the IPC$ connection it rides on when -U made one. */
struct ntl_win32_pipe_conn {
    HANDLE h;                 /* overlapped; INVALID_HANDLE_VALUE when not open */
    bool ipc_connected;
    wchar_t ipc[300];         /* \\HOST\IPC$ */
};

/* Opens \\HOST\PIPE\name (where, as the messages name it), first
 * connecting \\HOST\IPC$ as t->user when one is given, all of it within
 * t->connect_timeout_ms (0: 10 s). A step still waiting at the deadline
 * fails as NTL_ERR_TIMEOUT naming it and the time. */
int ntl_win32_pipe_connect(const struct ntl_smb_target *t, const char *where,
                           struct ntl_win32_pipe_conn *c, struct ntl_error *err);
/* Closes the pipe and cancels the IPC$ connection. */
void ntl_win32_pipe_disconnect(struct ntl_win32_pipe_conn *c);

/* The system's text for error e, one line ("" when it has none). */
void ntl_win32_error_text(DWORD e, char *text, size_t size);
/* UTF-8 to a terminated UTF-16 string of at most units - 1 units. */
wchar_t *ntl_win32_widen(const char *s, wchar_t *dst, size_t units);

#endif
