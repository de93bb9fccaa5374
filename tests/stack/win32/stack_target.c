/* A process whose threads sit in known functions, for test_live_win32.c:
 * a wait, a sleep, a busy loop and the bottom of a 20-deep recursion. Each
 * thread records its own return addresses with RtlCaptureStackBackTrace
 * just before it settles, then the program writes one line per thread to
 * the file argv[1] ("start ADDR pid PID", ADDR the threads' function, then "NAME TID
 * ADDR ADDR ...", hex) and lives until killed.
 *
 * Built with -gdwarf-4 (Wine's dbghelp does not read DWARF 5) and without
 * inlining or sibling calls, so each function is a frame of its own. */
#include <windows.h>
#include <stdio.h>

#define THREADS 4
#define DEPTH 20
#define MAX_RECORDED 62 /* RtlCaptureStackBackTrace's limit on older Windows */

struct record {
    const char *name;
    DWORD tid;
    void *frames[MAX_RECORDED];
    USHORT n;
};

static struct record records[THREADS];
static HANDLE recorded[THREADS];
static HANDLE never; /* an event nobody sets */
static volatile LONG spin = 1;

static void record(int i, const char *name)
{
    records[i].name = name;
    records[i].tid = GetCurrentThreadId();
    records[i].n = RtlCaptureStackBackTrace(0, MAX_RECORDED, records[i].frames, NULL);
    SetEvent(recorded[i]);
}

__attribute__((noinline)) static void in_wait(void)
{
    record(0, "in_wait");
    WaitForSingleObject(never, INFINITE);
}

__attribute__((noinline)) static void in_sleep(void)
{
    record(1, "in_sleep");
    for (;;)
        Sleep(100000);
}

__attribute__((noinline)) static void in_busy(void)
{
    record(2, "in_busy");
    while (spin)
        ;
}

__attribute__((noinline)) static void recurse(int depth)
{
    if (depth == 0) {
        record(3, "recurse");
        WaitForSingleObject(never, INFINITE);
    } else {
        recurse(depth - 1);
    }
    spin = 0; /* unreachable in practice; keeps the call from being a tail call */
}

static DWORD WINAPI thread_main(void *arg)
{
    switch ((int)(INT_PTR)arg) {
    case 0: in_wait(); break;
    case 1: in_sleep(); break;
    case 2: in_busy(); break;
    default: recurse(DEPTH - 1); break;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: stack_target FILE\n");
        return 2;
    }
    never = CreateEventA(NULL, TRUE, FALSE, NULL);
    for (int i = 0; i < THREADS; i++) {
        recorded[i] = CreateEventA(NULL, TRUE, FALSE, NULL);
        if (!CreateThread(NULL, 0, thread_main, (void *)(INT_PTR)i, 0, NULL))
            return 1;
    }
    WaitForMultipleObjects(THREADS, recorded, TRUE, INFINITE);
    /* Written whole under another name, then renamed: a reader never sees
     * half a file. */
    char tmp[MAX_PATH];
    snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return 1;
    fprintf(f, "start %llx pid %lu\n", (unsigned long long)(uintptr_t)thread_main,
            GetCurrentProcessId());
    for (int i = 0; i < THREADS; i++) {
        fprintf(f, "%s %lu", records[i].name, records[i].tid);
        for (USHORT k = 0; k < records[i].n; k++)
            fprintf(f, " %llx", (unsigned long long)(uintptr_t)records[i].frames[k]);
        fprintf(f, "\n");
    }
    fclose(f);
    if (!MoveFileExA(tmp, argv[1], MOVEFILE_REPLACE_EXISTING))
        return 1;
    WaitForSingleObject(never, INFINITE);
    return 0;
}
