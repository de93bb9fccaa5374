/* The recorded-answer winreg pipe server: see replay_server.h. */
#include "replay_server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/dcerpc.h"
#include "ntlens/reader.h"
#include "ntlens/winreg.h"

#define GLOBAL_FULL 4         /* the recording's full answer to "Global" */
#define SHORT_BUFFER 512      /* the buffer the recording's first tries offered */
#define SESSION_MAX (1u << 20)

/* The recorded answers to each value: to a 512-byte buffer, and in full. */
static const struct recorded_value {
    const char *name;
    unsigned short_answer, full_answer;
} recorded_values[] = {{"Global", 3, 4}, {"Counter 009", 5, 6}, {"Explain 009", 7, 8}};
enum { BIND_ACK = 0, OPEN_HKPD = 1, CLOSE_KEY = 9 };

/* Splits the session into answers (fragments up to one with PFC_LAST_FRAG). */
static bool index_answers(struct replay_server *s, size_t size)
{
    size_t pos = 0, n = 0;

    s->off[0] = 0;
    while (pos + NTL_DCERPC_HEADER_SIZE <= size && n < REPLAY_ANSWERS) {
        const uint8_t *f = s->session + pos;
        size_t len = ntl_le16(f + 8);
        if (len < NTL_DCERPC_HEADER_SIZE || len > size - pos)
            return false;
        pos += len;
        if (f[3] & NTL_DCERPC_PFC_LAST_FRAG)
            s->off[++n] = pos;
    }
    return n == REPLAY_ANSWERS && pos == size;
}

/* True when the QueryValue request (n bytes, one fragment) names value. */
static bool names_value(const uint8_t *req, size_t n, const char *value)
{
    size_t units = strlen(value) + 1, at = NTL_DCERPC_HEADER_SIZE + 8 + 20 + 8 + 12;

    if (n < at + units * 2 || ntl_le32(req + at - 4) != units)
        return false;
    for (size_t i = 0; i < units; i++)
        if (ntl_le16(req + at + 2 * i) != (uint8_t)value[i])
            return false;
    return true;
}

/* The recorded answer to a request, or -1 when the recording has none. */
static int pick_answer(struct replay_server *s, const uint8_t *req, size_t n)
{
    uint16_t opnum = n >= 24 ? ntl_le16(req + 22) : 0xffff;

    if (req[2] == NTL_DCERPC_BIND)
        return BIND_ACK;
    if (req[2] != NTL_DCERPC_REQUEST)
        return -1;
    if (opnum == NTL_WINREG_OPEN_HKPD)
        return OPEN_HKPD;
    if (opnum == NTL_WINREG_CLOSE_KEY) {
        s->closed_key = true;
        return CLOSE_KEY;
    }
    for (size_t i = 0; opnum == NTL_WINREG_QUERY_VALUE && i < ARRAYSIZE(recorded_values); i++) {
        const struct recorded_value *v = &recorded_values[i];
        uint32_t buffer = ntl_le32(req + n - 12); /* lpcbData's value */
        unsigned full = v->full_answer;
        if (!names_value(req, n, v->name))
            continue;
        if (buffer >= s->off[full + 1] - s->off[full])
            return (int)full; /* the data fits: Samba's full answer */
        return buffer <= SHORT_BUFFER ? (int)v->short_answer : -1;
    }
    return -1;
}

/* Sends answer a, each fragment carrying the request's call_id. */
static bool send_answer(struct replay_server *s, unsigned a, uint32_t call_id)
{
    uint8_t frag[65536];

    for (size_t pos = s->off[a]; pos < s->off[a + 1];) {
        DWORD n = ntl_le16(s->session + pos + 8), wrote;
        memcpy(frag, s->session + pos, n);
        frag[12] = (uint8_t)call_id;
        frag[13] = (uint8_t)(call_id >> 8);
        frag[14] = (uint8_t)(call_id >> 16);
        frag[15] = (uint8_t)(call_id >> 24);
        if (a == GLOBAL_FULL && s->delay_ms)
            Sleep(s->delay_ms);
        if (!WriteFile(s->pipe, frag, n, &wrote, NULL) || wrote != n)
            return false;
        pos += n;
    }
    if (a == GLOBAL_FULL && s->slow_once)
        s->delay_ms = 0;
    return true;
}

static DWORD WINAPI serve(void *arg)
{
    struct replay_server *s = arg;
    uint8_t req[65536];
    DWORD got;

    if (!ConnectNamedPipe(s->pipe, NULL) && GetLastError() != ERROR_PIPE_CONNECTED)
        return 1;
    while (ReadFile(s->pipe, req, sizeof req, &got, NULL) && got >= NTL_DCERPC_HEADER_SIZE) {
        int a;
        if (req[2] == NTL_DCERPC_REQUEST && !(req[3] & NTL_DCERPC_PFC_LAST_FRAG))
            continue; /* the request goes on in the next fragment */
        a = pick_answer(s, req, got);
        if (a < 0 || !send_answer(s, (unsigned)a, ntl_le32(req + 12)))
            break;
    }
    DisconnectNamedPipe(s->pipe);
    CloseHandle(s->pipe);
    return 0;
}

bool replay_load(struct replay_server *s, const char *path)
{
    FILE *f = fopen(path, "rb");
    size_t size = 0;

    memset(s, 0, sizeof *s);
    s->session = malloc(SESSION_MAX);
    if (f && s->session)
        size = fread(s->session, 1, SESSION_MAX, f);
    if (f)
        fclose(f);
    return size > 0 && size < SESSION_MAX && index_answers(s, size);
}

bool replay_start(struct replay_server *s, const char *name)
{
    wchar_t path[128];

    swprintf(path, 128, L"\\\\.\\pipe\\%hs", name);
    s->closed_key = false;
    s->thread = NULL;
    s->pipe = CreateNamedPipeW(path, PIPE_ACCESS_DUPLEX,
                               PIPE_TYPE_MESSAGE | PIPE_READMODE_MESSAGE | PIPE_WAIT, 1, 65536,
                               65536, 0, NULL);
    if (s->pipe == INVALID_HANDLE_VALUE)
        return false;
    if (!(s->thread = CreateThread(NULL, 0, serve, s, 0, NULL))) {
        CloseHandle(s->pipe);
        return false;
    }
    return true;
}

bool replay_wait(struct replay_server *s)
{
    bool ended = s->thread && WaitForSingleObject(s->thread, 20000) == WAIT_OBJECT_0;
    if (s->thread)
        CloseHandle(s->thread);
    s->thread = NULL;
    return ended;
}

void replay_free(struct replay_server *s)
{
    free(s->session);
    s->session = NULL;
}
