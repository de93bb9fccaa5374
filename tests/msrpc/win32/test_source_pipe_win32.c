/* The Windows remote source (lib/msrpc/source-smb.c over
 * lib/msrpc/transport-win32.c) against a pipe server of our own in a
 * thread, under Wine (replay_server.h: a real smbd's recorded winreg
 * answers). The source opens "\\." with the test's pipe name in place of
 * winreg (ntl_source_options.pipe_name), so \\.\PIPE\<name> stands in for
 * \\HOST\PIPE\winreg.
 *   1. A full snapshot: bind, OpenHKPD, the Counter titles, Global parsed
 *      into a block whose Process object the titles name, CloseKey at close.
 *   2. Slow loris through the source: Global's 11 fragments one every
 *      700 ms (7.7 s), with the call deadline at 2 s given at the open
 *      (what --call-timeout sets) and after it (ntl_msrpc_smb_set_call_timeout):
 *      NTL_ERR_TIMEOUT at 2 s naming QueryValue("Global"), the pipe and the
 *      deadline. The next query first drains the late reply, which is still
 *      coming when the late bound (the open's call time) or its own deadline
 *      passes: NTL_ERR_IO or NTL_ERR_TIMEOUT; the close does not wait.
 *   3. A late reply (fragments 250 ms apart, 2.75 s in all, once): the
 *      query fails at 2 s, the next one drains the rest of the late reply
 *      and gets the whole Global on the same connection, CloseKey at close.
 *   4. A pipe that appears 600 ms late is tried again and opened; one that
 *      never appears is NTL_ERR_NOT_FOUND after five tries, or at an earlier
 *      --timeout.
 *   5. --timeout bounds the open: a pipe whose one instance another client
 *      holds fails at 2 s (NTL_ERR_TIMEOUT naming the pipe and the time),
 *      and the thread the open ran on is gone.
 *   6. What Windows refuses at the open: a port other than 445, -k.
 * argv[1]: the session file. */
#include <windows.h>
#include <tlhelp32.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ntlens/msrpc_source.h"
#include "ntlens/source_perf.h"
#include "replay_server.h"

#define SLOW_MS 700
#define LATE_MS 250
#define CALL_MS 2000
#define OPEN_MS 2000

/* Starts the server on a pipe of this test's own; *name receives its name. */
static void start(struct replay_server *s, char *name, size_t size)
{
    static unsigned seq;

    snprintf(name, size, "ntlens-source-%lu-%u", GetCurrentProcessId(), seq++);
    CHECK(replay_start(s, name));
}

static void stop(struct replay_server *s)
{
    CHECK(replay_wait(s));
}

static void full_snapshot(struct replay_server *s)
{
    char name[64];
    struct ntl_source_options opt = {.pipe_name = name, .call_timeout_ms = CALL_MS};
    struct ntl_perf_titles *titles = ntl_perf_titles_new();
    struct ntl_perf_block *block = NULL;
    const struct ntl_perf_object *process;
    struct ntl_source *src = NULL;
    struct ntl_error err;
    struct ntl_buf raw;
    uint32_t index = 0;
    bool missing = true;

    start(s, name, sizeof name);
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
    stop(s);
}

/* Global from a server that sends a fragment every SLOW_MS; the deadline
 * given at the open (at_open) or afterwards. */
static void slow_loris(struct replay_server *s, bool at_open)
{
    char name[64], msg[512];
    struct ntl_source_options opt = {.pipe_name = name,
                                     .call_timeout_ms = at_open ? CALL_MS : 30000};
    struct ntl_source *src = NULL;
    struct ntl_error err;
    struct ntl_buf raw;
    ULONGLONG t0, ms;
    int rc;

    start(s, name, sizeof name);
    ntl_error_clear(&err);
    ntl_buf_init(&raw, 64u << 20);
    s->delay_ms = SLOW_MS;
    CHECK_EQ_INT(ntl_msrpc_source_open("\\\\.", &opt, &src, &err), NTL_OK);
    if (!src) {
        stop(s);
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
    rc = ntl_source_query(src, "Global", &raw, &err);
    ms = GetTickCount64() - t0;
    printf("  the next query, draining: %llu ms: %s\n", (unsigned long long)ms, err.message);
    CHECK_EQ_INT(rc, at_open ? NTL_ERR_IO : NTL_ERR_TIMEOUT);
    CHECK(!at_open || strstr(err.message, "never finished answering a call") != NULL);
    CHECK(ms < CALL_MS + 1000);
    t0 = GetTickCount64();
    ntl_source_close(src); /* no CloseKey on a broken connection */
    CHECK(GetTickCount64() - t0 < 500);
    CHECK(!s->closed_key);
    s->delay_ms = 0;
    ntl_buf_free(&raw);
    stop(s);
}

/* Global's full answer once with fragments LATE_MS apart: it ends after
 * the call's deadline, and the next call drains it and succeeds. */
static void late_reply(struct replay_server *s)
{
    char name[64];
    struct ntl_source_options opt = {.pipe_name = name, .call_timeout_ms = CALL_MS};
    struct ntl_source *src = NULL;
    struct ntl_error err;
    struct ntl_buf raw;
    ULONGLONG t0, ms;

    s->delay_ms = LATE_MS;
    s->slow_once = true;
    start(s, name, sizeof name);
    ntl_error_clear(&err);
    ntl_buf_init(&raw, 64u << 20);
    CHECK_EQ_INT(ntl_msrpc_source_open("\\\\.", &opt, &src, &err), NTL_OK);
    if (src) {
        t0 = GetTickCount64();
        CHECK_EQ_INT(ntl_source_query(src, "Global", &raw, &err), NTL_ERR_TIMEOUT);
        ms = GetTickCount64() - t0;
        printf("late reply: the call fails after %llu ms: %s\n", (unsigned long long)ms,
               err.message);
        CHECK(ms >= CALL_MS - 50 && ms < CALL_MS + 700);
        t0 = GetTickCount64();
        ntl_error_clear(&err);
        CHECK_EQ_INT(ntl_source_query(src, "Global", &raw, &err), NTL_OK);
        ms = GetTickCount64() - t0;
        printf("  the next call drains it and succeeds after %llu ms: %zu bytes %s\n",
               (unsigned long long)ms, raw.len, err.message);
        CHECK(raw.len > 4096 && memcmp(raw.data, "P\0E\0R\0F\0", 8) == 0);
        ntl_source_close(src);
    }
    CHECK(s->closed_key); /* the connection is whole again */
    s->slow_once = false;
    s->delay_ms = 0;
    ntl_buf_free(&raw);
    stop(s);
}

static DWORD WINAPI start_late(void *arg)
{
    struct replay_server *s = arg;
    Sleep(600);
    return replay_start(s, "ntlens-source-late") ? 0 : 1;
}

/* A pipe that appears only after a moment (RemoteRegistry starting on
 * demand) is tried again; one that never appears is NTL_ERR_NOT_FOUND. */
static void late_pipe(struct replay_server *s)
{
    struct ntl_source_options opt = {.pipe_name = "ntlens-source-late"};
    struct ntl_source *src = NULL;
    struct ntl_error err;
    HANDLE later = CreateThread(NULL, 0, start_late, s, 0, NULL);
    ULONGLONG t0 = GetTickCount64(), ms;

    ntl_error_clear(&err);
    CHECK_EQ_INT(ntl_msrpc_source_open("\\\\.", &opt, &src, &err), NTL_OK);
    ms = GetTickCount64() - t0;
    printf("a pipe appearing after 600 ms: opened after %llu ms %s\n", (unsigned long long)ms,
           err.message);
    CHECK(ms >= 600);
    if (src)
        ntl_source_close(src);
    CHECK(s->closed_key);
    CHECK_EQ_U64(WaitForSingleObject(later, 5000), WAIT_OBJECT_0);
    CloseHandle(later);
    stop(s);

    opt.pipe_name = "ntlens-source-never";
    t0 = GetTickCount64();
    CHECK_EQ_INT(ntl_msrpc_source_open("\\\\.", &opt, &src, &err), NTL_ERR_NOT_FOUND);
    ms = GetTickCount64() - t0;
    printf("a pipe that never appears: %llu ms: %s\n", (unsigned long long)ms, err.message);
    CHECK(ms >= 1500 && ms < 5000);
    CHECK(strstr(err.message, "\\\\.\\PIPE\\ntlens-source-never is not available") != NULL);
    CHECK(src == NULL);

    /* The tries stop at --timeout (five take 1.6 s). */
    opt.connect_timeout_ms = 1000;
    t0 = GetTickCount64();
    CHECK_EQ_INT(ntl_msrpc_source_open("\\\\.", &opt, &src, &err), NTL_ERR_NOT_FOUND);
    ms = GetTickCount64() - t0;
    printf("a pipe that never appears, --timeout 1: %llu ms: %s\n", (unsigned long long)ms,
           err.message);
    CHECK(ms >= 950 && ms < 1400);
}

/* The threads of this process. */
static unsigned thread_count(void)
{
    HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
    THREADENTRY32 te = {.dwSize = sizeof te};
    unsigned n = 0;

    if (snap == INVALID_HANDLE_VALUE)
        return 0;
    for (BOOL ok = Thread32First(snap, &te); ok; ok = Thread32Next(snap, &te))
        n += te.th32OwnerProcessID == GetCurrentProcessId();
    CloseHandle(snap);
    return n;
}

/* A pipe whose only instance this test holds: the open waits for a free
 * one on a worker thread until --timeout, then cancels the wait. */
static void busy_pipe(void)
{
    char name[64];
    wchar_t path[96];
    struct ntl_source_options opt = {.pipe_name = name, .connect_timeout_ms = OPEN_MS};
    struct ntl_source *src = NULL;
    struct ntl_error err;
    HANDLE server, holder;
    ULONGLONG t0, ms;
    unsigned threads;

    snprintf(name, sizeof name, "ntlens-source-busy-%lu", GetCurrentProcessId());
    swprintf(path, 96, L"\\\\.\\pipe\\%hs", name);
    server = CreateNamedPipeW(path, PIPE_ACCESS_DUPLEX, PIPE_TYPE_MESSAGE | PIPE_WAIT, 1, 4096,
                              4096, 0, NULL);
    holder = CreateFileW(path, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING, 0, NULL);
    CHECK(server != INVALID_HANDLE_VALUE && holder != INVALID_HANDLE_VALUE);
    threads = thread_count();
    ntl_error_clear(&err);
    t0 = GetTickCount64();
    CHECK_EQ_INT(ntl_msrpc_source_open("\\\\.", &opt, &src, &err), NTL_ERR_TIMEOUT);
    ms = GetTickCount64() - t0;
    printf("a pipe that stays busy, --timeout 2: %llu ms: %s\n", (unsigned long long)ms,
           err.message);
    CHECK(ms >= OPEN_MS - 50 && ms < OPEN_MS + 800);
    CHECK(strstr(err.message, "opening \\\\.\\PIPE\\ntlens-source-busy-") != NULL);
    CHECK(strstr(err.message, "every instance stayed busy for 2 s (see --timeout)") != NULL);
    CHECK_EQ_INT(thread_count(), threads); /* the worker ended */
    CHECK(src == NULL);
    CloseHandle(holder);
    CloseHandle(server);
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

int main(int argc, char **argv)
{
    struct replay_server s;

    if (argc < 2)
        return 2;
    CHECK(replay_load(&s, argv[1]));
    if (check_failures == 0) {
        full_snapshot(&s);
        slow_loris(&s, true);
        slow_loris(&s, false);
        late_reply(&s);
        late_pipe(&s);
    }
    busy_pipe();
    refused_options();
    replay_free(&s);
    return check_exit();
}
