/* A winreg pipe server for tests under Wine: a thread serving one client on
 * \\.\pipe\<name> that answers each request with a real smbd's answer to
 * the same call, from tests/msrpc/data/smbd-hkpd-session.bin (bind_ack,
 * OpenHKPD, a fault, then "Global", "Counter 009" and "Explain 009" each
 * at 512 bytes and in full, CloseKey), its call_id set to the request's:
 * clients make their calls in other orders and with other buffer sizes
 * than the recording's. A request it has no recorded answer for closes the
 * pipe, so a client that asks for anything else fails. */
#ifndef NTLENS_TEST_REPLAY_SERVER_H
#define NTLENS_TEST_REPLAY_SERVER_H

#include <windows.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REPLAY_ANSWERS 10     /* answers in the recording */

struct replay_server {
    HANDLE pipe;
    HANDLE thread;
    uint8_t *session;
    size_t off[REPLAY_ANSWERS + 1]; /* answer i: session bytes [off[i], off[i+1]) */
    unsigned delay_ms;        /* before each fragment of the full Global answer */
    bool slow_once;           /* only the first full Global answer is slow */
    bool closed_key;          /* the client sent CloseKey */
};

/* Reads and indexes the session file. False when it is not the recording. */
bool replay_load(struct replay_server *s, const char *path);
/* Creates \\.\pipe\<name> and starts serving one client on it. */
bool replay_start(struct replay_server *s, const char *name);
/* Waits up to 20 s for the server thread to end (its client gone). */
bool replay_wait(struct replay_server *s);
void replay_free(struct replay_server *s);

#endif
