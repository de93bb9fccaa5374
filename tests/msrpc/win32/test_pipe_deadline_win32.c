/* The Windows named-pipe transport (lib/msrpc/transport-win32.c) against a
 * pipe server of our own in a thread, under Wine. The server replays a real
 * smbd winreg session (tests/msrpc/data/smbd-hkpd-session.bin: bind_ack,
 * OpenHKPD, a fault, QueryValue("Global") at 512 bytes and in full, 11
 * fragments), answer after answer, each answer when the client's request
 * has arrived.
 *   1. Prompt: the same calls as the recording succeed over the pipe.
 *   2. Slow loris: the full Global answer comes one fragment every 700 ms,
 *      each read answered well inside a second, 7.7 s for the whole reply.
 *      The call fails at its 2 s deadline, NTL_ERR_TIMEOUT naming the call
 *      and the deadline; the next call drains the late reply until the late
 *      bound (2 s after the timeout) and then fails (NTL_ERR_IO: reconnect).
 *   3. A server that closes the pipe in the middle of a reply: NTL_ERR_EOF.
 * argv[1]: the session file. */
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ntlens/msrpc.h"
#include "ntlens/reader.h"
#include "ntlens/winreg.h"

#define SLOW_FROM 4           /* answers from the full Global onwards are slow */
#define SLOW_MS 700
#define CALL_MS 2000

struct server {
    HANDLE pipe;
    const uint8_t *session;   /* the recorded replies, fragment after fragment */
    size_t size;
    unsigned delay_ms;        /* before each fragment of answers from SLOW_FROM on */
    int close_after;          /* >= 0: close the pipe after this many slow fragments */
};

/* Sends the next answer: fragments up to one with PFC_LAST_FRAG. */
static bool send_answer(struct server *s, size_t *pos, unsigned answer, int *sent_slow)
{
    for (;;) {
        const uint8_t *f = s->session + *pos;
        DWORD n, wrote;
        if (s->size - *pos < NTL_DCERPC_HEADER_SIZE)
            return false;
        n = ntl_le16(f + 8);
        if (n < NTL_DCERPC_HEADER_SIZE || n > s->size - *pos)
            return false;
        if (answer >= SLOW_FROM) {
            if (s->close_after >= 0 && (*sent_slow)++ == s->close_after)
                return false;
            Sleep(s->delay_ms);
        }
        if (!WriteFile(s->pipe, f, n, &wrote, NULL) || wrote != n)
            return false;
        *pos += n;
        if (f[3] & NTL_DCERPC_PFC_LAST_FRAG)
            return true;
    }
}

/* Answers each request (a bind, or a request's last fragment) in turn. */
static DWORD WINAPI serve(void *arg)
{
    struct server *s = arg;
    uint8_t req[65536];
    size_t pos = 0;
    unsigned answer = 0;
    int sent_slow = 0;
    DWORD got;

    if (!ConnectNamedPipe(s->pipe, NULL) && GetLastError() != ERROR_PIPE_CONNECTED)
        return 1;
    while (ReadFile(s->pipe, req, sizeof req, &got, NULL) && got >= NTL_DCERPC_HEADER_SIZE) {
        if (req[2] != NTL_DCERPC_BIND && !(req[3] & NTL_DCERPC_PFC_LAST_FRAG))
            continue;
        if (!send_answer(s, &pos, answer++, &sent_slow))
            break;
    }
    DisconnectNamedPipe(s->pipe);
    CloseHandle(s->pipe);
    return 0;
}

static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    uint8_t *data = malloc(1 << 20);
    *size = f && data ? fread(data, 1, 1 << 20, f) : 0;
    if (f)
        fclose(f);
    return data;
}

/* A pipe instance, its server thread, and our client end. */
static HANDLE start(struct server *s, struct ntl_smb_pipe **client, struct ntl_error *err)
{
    static unsigned seq;
    char name[64];
    wchar_t path[96];
    struct ntl_smb_target t = {.host = ".", .call_timeout_ms = CALL_MS};
    HANDLE thread;

    snprintf(name, sizeof name, "ntlens-deadline-%lu-%u", GetCurrentProcessId(), seq++);
    swprintf(path, 96, L"\\\\.\\pipe\\%hs", name);
    s->pipe = CreateNamedPipeW(path, PIPE_ACCESS_DUPLEX,
                               PIPE_TYPE_MESSAGE | PIPE_READMODE_MESSAGE | PIPE_WAIT, 1, 65536,
                               65536, 0, NULL);
    CHECK(s->pipe != INVALID_HANDLE_VALUE);
    thread = CreateThread(NULL, 0, serve, s, 0, NULL);
    CHECK(thread != NULL);
    CHECK_EQ_INT(ntl_smb_pipe_open(&t, name, client, err), NTL_OK);
    return thread;
}

/* bind, OpenHKPD and the fault, as the recording's client made them. */
static void open_session(struct ntl_rpc_client *rpc, struct ntl_winreg_handle *hkpd,
                         struct ntl_error *err)
{
    struct ntl_buf out;
    uint32_t fault = 0;

    CHECK_EQ_INT(ntl_rpc_bind(rpc, &ntl_winreg_syntax, err), NTL_OK);
    CHECK_EQ_INT(ntl_winreg_open_hkpd(rpc, hkpd, err), NTL_OK);
    ntl_buf_init(&out, 1u << 20);
    CHECK(ntl_rpc_call(rpc, 200, "", 0, &out, &fault, err) < 0);
    CHECK_EQ_U64(fault, 0x1c010002u); /* nca_s_op_rng_error */
    ntl_buf_free(&out);
}

/* Fetches Global as the recording did; returns the status, *ms the time it took. */
static int fetch_global(struct server *s, struct ntl_buf *value, ULONGLONG *ms, char *msg,
                        size_t msg_size)
{
    struct ntl_smb_pipe *pipe = NULL;
    struct ntl_rpc_client rpc;
    struct ntl_winreg_handle hkpd;
    struct ntl_winreg_fetch f = {.initial_size = 512};
    struct ntl_error err;
    ULONGLONG t0;
    HANDLE thread;
    int rc;

    ntl_error_clear(&err);
    thread = start(s, &pipe, &err);
    if (!pipe)
        return -1;
    ntl_rpc_client_init(&rpc, &ntl_smb_pipe_ops, pipe, 0);
    open_session(&rpc, &hkpd, &err);
    t0 = GetTickCount64();
    rc = ntl_winreg_fetch_value(&rpc, &hkpd, "Global", NTL_WINREG_VALUE_PERF_DATA, &f, value,
                                &err);
    *ms = GetTickCount64() - t0;
    ntl_error_format(&err, msg, msg_size);
    if (rc == NTL_ERR_TIMEOUT) {
        /* The abandoned call's late answer must not be taken for the next
         * one's: the next call reads and drops it first, and this one is
         * still coming when the late bound (the open's call time after the
         * timeout) passes: a broken connection (the caller reconnects). */
        struct ntl_error late;
        ULONGLONG late_ms;
        t0 = GetTickCount64();
        CHECK_EQ_INT(ntl_winreg_close_key(&rpc, &hkpd, &late), NTL_ERR_IO);
        late_ms = GetTickCount64() - t0;
        printf("  CloseKey after it, draining: %llu ms: %s\n", (unsigned long long)late_ms,
               late.message);
        CHECK(late_ms < CALL_MS + 500);
        CHECK(strstr(late.message, "never finished answering a call that ran out of time") !=
              NULL);
    }
    ntl_rpc_client_free(&rpc);
    ntl_smb_pipe_close(pipe);
    CHECK_EQ_U64(WaitForSingleObject(thread, 20000), WAIT_OBJECT_0);
    CloseHandle(thread);
    return rc;
}

int main(int argc, char **argv)
{
    struct server s = {.close_after = -1};
    struct ntl_buf value;
    ULONGLONG ms;
    char msg[512];
    int rc;

    if (argc < 2)
        return 2;
    s.session = read_file(argv[1], &s.size);
    CHECK(s.size > 4096);
    ntl_buf_init(&value, 64u << 20);

    rc = fetch_global(&s, &value, &ms, msg, sizeof msg);
    CHECK_EQ_INT(rc, NTL_OK);
    CHECK(value.len > 4096 && memcmp(value.data, "P\0E\0R\0F\0", 8) == 0);
    printf("prompt: Global, %zu bytes in %llu ms\n", value.len, (unsigned long long)ms);

    s.delay_ms = SLOW_MS;
    rc = fetch_global(&s, &value, &ms, msg, sizeof msg);
    printf("slow loris (a fragment every %u ms): %llu ms: %s\n", SLOW_MS,
           (unsigned long long)ms, msg);
    CHECK_EQ_INT(rc, NTL_ERR_TIMEOUT);
    /* The first QueryValue is prompt; the second ends at its deadline, long
     * before the 11 fragments' 7.7 s. */
    CHECK(ms >= CALL_MS && ms < CALL_MS + 3000);
    CHECK(strstr(msg, "QueryValue(\"Global\")") != NULL);
    CHECK(strstr(msg, "within 2 s") != NULL);
    CHECK(strstr(msg, "\\\\.\\PIPE\\ntlens-deadline-") != NULL);

    s.delay_ms = 0;
    s.close_after = 3;
    rc = fetch_global(&s, &value, &ms, msg, sizeof msg);
    printf("closed after 3 fragments: %s\n", msg);
    CHECK_EQ_INT(rc, NTL_ERR_EOF);
    CHECK(strstr(msg, "the server closed the pipe") != NULL);

    ntl_buf_free(&value);
    free((void *)s.session);
    return check_exit();
}
