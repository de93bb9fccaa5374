/* A program whose threads sit in known functions (a wait, a sleep, a busy
 * loop, a 20-deep recursion, a frame in a DLL of its own). Each thread
 * records its own return addresses with RtlCaptureStackBackTrace; then the
 * program writes a minidump of itself with dbghelp and the recorded frames
 * to a text file, one line per thread:
 *     TID FUNCTION ADDR ADDR ...   (hex; the callers of FUNCTION, innermost first)
 * ntlens must find those return addresses in the dump's stacks.
 *
 *     stack_target.exe OUT.dmp OUT.frames [N [FULL.dmp]]
 * N more threads sit in the recursion (a bench); FULL.dmp is a second dump
 * of the same moment that holds the modules' images too, and so their
 * unwind data (dump_images.c says how). */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <dbghelp.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_RECORDED 62
#define NOINLINE __declspec(dllexport) __attribute__((noinline))

int dll_call_back(int (*fn)(int), int arg);
BOOL dump_add_images(const char *path);

struct record {
    DWORD tid;
    const char *function;
    USHORT n;
    void *frames[MAX_RECORDED];
};

static struct record *records;
static volatile LONG recorded;
static volatile LONG spin = 1;
static HANDLE never;

/* Called from the function a thread sits in: skips itself (frame 0 is
 * inside the sitting function, where it will not be when the dump is
 * written), so the rest are that function's callers. */
static __attribute__((noinline)) void record(const char *function, int slot)
{
    struct record *r = &records[slot];
    r->tid = GetCurrentThreadId();
    r->function = function;
    r->n = RtlCaptureStackBackTrace(2, MAX_RECORDED, r->frames, NULL);
    InterlockedIncrement(&recorded);
}

NOINLINE int wait_here(int slot)
{
    record("wait_here", slot);
    WaitForSingleObject(never, INFINITE);
    return slot;
}

NOINLINE int sleep_here(int slot)
{
    record("sleep_here", slot);
    Sleep(INFINITE);
    return slot;
}

NOINLINE int busy_here(int slot)
{
    record("busy_here", slot);
    volatile unsigned n = 0;
    while (spin)
        n++;
    return (int)n;
}

NOINLINE int recurse(int depth, int slot)
{
    volatile int keep = depth;
    if (depth == 0)
        return sleep_here(slot);
    int r = recurse(depth - 1, slot);
    return r + keep; /* not a tail call */
}

static DWORD WINAPI wait_thread(void *slot) { return (DWORD)wait_here((int)(INT_PTR)slot); }
static DWORD WINAPI sleep_thread(void *slot) { return (DWORD)sleep_here((int)(INT_PTR)slot); }
static DWORD WINAPI busy_thread(void *slot) { return (DWORD)busy_here((int)(INT_PTR)slot); }
static DWORD WINAPI deep_thread(void *slot) { return (DWORD)recurse(19, (int)(INT_PTR)slot); }
static DWORD WINAPI dll_thread(void *slot) { return (DWORD)dll_call_back(wait_here, (int)(INT_PTR)slot); }

static BOOL write_dump(const char *path, MINIDUMP_TYPE type)
{
    HANDLE f = CreateFileA(path, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, 0, NULL);
    if (f == INVALID_HANDLE_VALUE ||
        !MiniDumpWriteDump(GetCurrentProcess(), GetCurrentProcessId(), f, type, NULL, NULL, NULL)) {
        fprintf(stderr, "MiniDumpWriteDump %s failed: %lu\n", path, GetLastError());
        return FALSE;
    }
    CloseHandle(f);
    return TRUE;
}

int main(int argc, char **argv)
{
    LPTHREAD_START_ROUTINE kinds[] = {wait_thread, sleep_thread, busy_thread, deep_thread, dll_thread};
    int extra = argc > 3 ? atoi(argv[3]) : 0, count = 5 + extra;
    if (argc < 3 || extra < 0 || extra > 5000) {
        fprintf(stderr, "usage: stack_target OUT.dmp OUT.frames [N [FULL.dmp]]\n");
        return 2;
    }
    records = calloc((size_t)count, sizeof *records);
    never = CreateEventW(NULL, TRUE, FALSE, NULL);
    for (int i = 0; i < count; i++)
        if (!CreateThread(NULL, 64 * 1024, i < 5 ? kinds[i] : deep_thread, (void *)(INT_PTR)i,
                          STACK_SIZE_PARAM_IS_A_RESERVATION, NULL)) {
            fprintf(stderr, "CreateThread %d failed: %lu\n", i, GetLastError());
            return 1;
        }
    while (recorded < count)
        Sleep(10);
    Sleep(300); /* from record() into the wait each thread sits in */

    if (!write_dump(argv[1], MiniDumpNormal) ||
        (argc > 4 && !(write_dump(argv[4], MiniDumpNormal) && dump_add_images(argv[4]))))
        return 1;
    FILE *out = fopen(argv[2], "w");
    if (!out)
        return 1;
    for (int i = 0; i < count; i++) {
        fprintf(out, "%lu %s", records[i].tid, records[i].function);
        for (USHORT k = 0; k < records[i].n; k++)
            fprintf(out, " %llx", (unsigned long long)(UINT_PTR)records[i].frames[k]);
        fprintf(out, "\n");
    }
    fclose(out);
    ExitProcess(0);
}
