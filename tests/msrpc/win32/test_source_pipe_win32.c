/* The Windows remote source (lib/msrpc/source-smb.c over
 * lib/msrpc/transport-win32.c) against a pipe server of our own in a
 * thread, under Wine. The source opens "\\." with the test's pipe name in
 * place of winreg (ntl_source_options.pipe_name), so \\.\PIPE\<name>
 * stands in for \\HOST\PIPE\winreg.
 *
 * The server answers each request with a real smbd's answer to the same
 * call, from tests/msrpc/data/smbd-hkpd-session.bin (bind_ack, OpenHKPD,
 * a fault, then "Global", "Counter 009" and "Explain 009" each at 512 bytes
 * and in full, CloseKey), its call_id set to the request's: the source
 * makes its calls in another order and with other buffer sizes than the
 * recording's client. A request it has no recorded answer for closes the
 * pipe, so a source that asks for anything else fails the test.
 *   1. A full snapshot: bind, OpenHKPD, the Counter titles, Global parsed
 *      into a block whose Process object the titles name, CloseKey at close.
 *   2. Slow loris through the source: Global's 11 fragments one every
 *      700 ms (7.7 s), with the call deadline at 2 s given at the open
 *      (what --call-timeout sets) and after it (what the exporter sets):
 *      NTL_ERR_TIMEOUT at 2 s naming QueryValue("Global"), the pipe and the
 *      deadline; the next query fails at once, and the close does not wait.
 *   3. What Windows refuses at the open: a port other than 445, -k.
 * argv[1]: the session file. */
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ntlens/msrpc.h"
#include "ntlens/msrpc_source.h"
#include "ntlens/reader.h"
#include "ntlens/source_perf.h"
#include "ntlens/winreg.h"

#define SLOW_MS 700
#define CALL_MS 2000
#define NANSWERS 10           /* answers in the recording */
#define GLOBAL_FULL 4         /* the recording's full answer to "Global" */
#define SHORT_BUFFER 512      /* the buffer the recording's first tries offered */

/* The recorded answers to each value: to a 512-byte buffer, and in full. */
static const struct recorded_value {
    const char *name;
    unsigned short_answer, full_answer;
} recorded_values[] = {{"Global", 3, 4}, {"Counter 009", 5, 6}, {"Explain 009", 7, 8}};
enum { BIND_ACK = 0, OPEN_HKPD = 1, CLOSE_KEY = 9 };

struct server {
    HANDLE pipe;
    const uint8_t *session;
    size_t off[NANSWERS + 1]; /* answer i: session bytes [off[i], off[i+1]) */
    unsigned delay_ms;        /* before each fragment of the full Global answer */
    bool closed_key;          /* the client sent CloseKey */
};

/* Splits the session into answers (fragments up to one with PFC_LAST_FRAG). */
static bool index_answers(struct server *s, size_t size)
{
    size_t pos = 0, n = 0;

    s->off[0] = 0;
    while (pos + NTL_DCERPC_HEADER_SIZE <= size && n < NANSWERS) {
        const uint8_t *f = s->session + pos;
        size_t len = ntl_le16(f + 8);
        if (len < NTL_DCERPC_HEADER_SIZE || len > size - pos)
            return false;
        pos += len;
        if (f[3] & NTL_DCERPC_PFC_LAST_FRAG)
            s->off[++n] = pos;
    }
    return n == NANSWERS && pos == size;
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
static int pick_answer(struct server *s, const uint8_t *req, size_t n)
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
static bool send_answer(struct server *s, unsigned a, uint32_t call_id)
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
    return true;
}

static DWORD WINAPI serve(void *arg)
{
    struct server *s = arg;
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

/* A pipe instance and its server thread; *name receives the pipe's name. */
static HANDLE start(struct server *s, char *name, size_t size)
{
    static unsigned seq;
    wchar_t path[96];
    HANDLE thread;

    snprintf(name, size, "ntlens-source-%lu-%u", GetCurrentProcessId(), seq++);
    swprintf(path, 96, L"\\\\.\\pipe\\%hs", name);
    s->closed_key = false;
    s->pipe = CreateNamedPipeW(path, PIPE_ACCESS_DUPLEX,
                               PIPE_TYPE_MESSAGE | PIPE_READMODE_MESSAGE | PIPE_WAIT, 1, 65536,
                               65536, 0, NULL);
    CHECK(s->pipe != INVALID_HANDLE_VALUE);
    thread = CreateThread(NULL, 0, serve, s, 0, NULL);
    CHECK(thread != NULL);
    return thread;
}

static void stop(HANDLE thread)
{
    CHECK_EQ_U64(WaitForSingleObject(thread, 20000), WAIT_OBJECT_0);
    CloseHandle(thread);
}

static void full_snapshot(struct server *s)
{
    char name[64];
    HANDLE thread = start(s, name, sizeof name);
    struct ntl_source_options opt = {.pipe_name = name, .call_timeout_ms = CALL_MS};
    struct ntl_perf_titles *titles = ntl_perf_titles_new();
    struct ntl_perf_block *block = NULL;
    const struct ntl_perf_object *process;
    struct ntl_source *src = NULL;
    struct ntl_error err;
    struct ntl_buf raw;
    uint32_t index = 0;
    bool missing = true;

    ntl_error_clear(&err);
    ntl_buf_init(&raw, 64u << 20);
    CHECK_EQ_INT(ntl_msrpc_source_open("\\\\.", &opt, &src, &err), NTL_OK);
    if (src) {
        CHECK_EQ_INT(ntl_source_load_titles(src, NTL_TITLES_COUNTER, 9, NTL_SOURCE_TITLES_OWN,
                                            titles, &missing, &err), NTL_OK);
        CHECK(!missing);
        CHECK_EQ_INT(ntl_source_snapshot(src, "Global", &raw, &block, &err), NTL_OK);
        ntl_source_close(src);
    }
    if (err.message[0])
        printf("snapshot: %s\n", err.message);
    CHECK(s->closed_key);
    CHECK_EQ_INT(ntl_perf_titles_find(titles, "Process", &index), 0);
    process = block ? ntl_perf_block_find_object(block, index) : NULL;
    CHECK(process != NULL && process->ninstances > 0);
    printf("snapshot: %zu bytes, %zu objects, Process (%u) with %zu instances\n", raw.len,
           block ? block->nobjects : 0, index, process ? process->ninstances : 0);
    ntl_perf_block_free(block);
    ntl_perf_titles_free(titles);
    ntl_buf_free(&raw);
    stop(thread);
}

/* Global from a server that sends a fragment every SLOW_MS; the deadline
 * given at the open (at_open) or afterwards, as the exporter does. */
static void slow_loris(struct server *s, bool at_open)
{
    char name[64], msg[512];
    HANDLE thread = start(s, name, sizeof name);
    struct ntl_source_options opt = {.pipe_name = name,
                                     .call_timeout_ms = at_open ? CALL_MS : 30000};
    struct ntl_source *src = NULL;
    struct ntl_error err;
    struct ntl_buf raw;
    ULONGLONG t0, ms;

    ntl_error_clear(&err);
    ntl_buf_init(&raw, 64u << 20);
    s->delay_ms = SLOW_MS;
    CHECK_EQ_INT(ntl_msrpc_source_open("\\\\.", &opt, &src, &err), NTL_OK);
    if (!src) {
        stop(thread);
        return;
    }
    if (!at_open)
        CHECK_EQ_INT(ntl_msrpc_smb_set_call_timeout(src, CALL_MS, &err), NTL_OK);
    t0 = GetTickCount64();
    CHECK_EQ_INT(ntl_source_query(src, "Global", &raw, &err), NTL_ERR_TIMEOUT);
    ms = GetTickCount64() - t0;
    ntl_error_format(&err, msg, sizeof msg);
    printf("slow loris, deadline set %s: %llu ms: %s\n", at_open ? "at the open" : "after it",
           (unsigned long long)ms, msg);
    CHECK(ms >= CALL_MS - 50 && ms < CALL_MS + 2000);
    CHECK(strstr(msg, "QueryValue(\"Global\")") != NULL);
    CHECK(strstr(msg, "within 2 s") != NULL);
    CHECK(strstr(msg, "\\\\.\\PIPE\\ntlens-source-") != NULL);
    t0 = GetTickCount64();
    CHECK_EQ_INT(ntl_source_query(src, "Global", &raw, &err), NTL_ERR_IO);
    ntl_source_close(src); /* no CloseKey on a broken connection */
    CHECK(GetTickCount64() - t0 < 500);
    CHECK(!s->closed_key);
    s->delay_ms = 0;
    ntl_buf_free(&raw);
    stop(thread);
}

static void refused_options(void)
{
    struct ntl_source_options kerberos = {.kerberos = true};
    struct ntl_source *src = NULL;
    struct ntl_error err;

    ntl_error_clear(&err);
    CHECK_EQ_INT(ntl_msrpc_source_open("smb://tester@host.invalid:1445", NULL, &src, &err),
                 NTL_ERR_UNSUPPORTED);
    CHECK(strstr(err.message, "port 445 only") != NULL);
    CHECK_EQ_INT(ntl_msrpc_source_open("\\\\host.invalid", &kerberos, &src, &err),
                 NTL_ERR_UNSUPPORTED);
    CHECK(strstr(err.message, "-k") != NULL);
    CHECK(src == NULL);
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

int main(int argc, char **argv)
{
    struct server s = {0};
    size_t size;

    if (argc < 2)
        return 2;
    s.session = read_file(argv[1], &size);
    CHECK(index_answers(&s, size));
    if (check_failures == 0) {
        full_snapshot(&s);
        slow_loris(&s, true);
        slow_loris(&s, false);
    }
    refused_options();
    free((void *)s.session);
    return check_exit();
}
