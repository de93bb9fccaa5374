/* Live stacks on x64 Windows: user frames through dbghelp (StackWalk64
 * over each thread's registers and a copy of its stack), kernel frames
 * through ntlens.sys (driver-win32.c) when the options ask for them.
 *
 * A thread is suspended only while its registers and stack are copied; the
 * unwinding, names and lines work on the copy after it runs again, so the
 * process pays for a copy, not for dbghelp. */
#include <windows.h>
#include <winternl.h>
#include <dbghelp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "win32.h"

/* Most threads' stacks are a few KiB deep; a deeper one is copied this far
 * and read live beyond. */
#define STACK_COPY_MAX (1u << 20)

struct raw_frame {
    uint64_t pc;
    enum ntl_stack_how how;
};

/* The thread's stack as it was while suspended: the walk reads it from
 * here after the thread runs again (code and unwind data do not change, so
 * they are read from the live process). */
struct stack_copy {
    uint64_t lo;
    size_t size;
    uint8_t *bytes; /* STACK_COPY_MAX */
};

struct walk {
    struct ntl_stack_process *p;
    const struct ntl_stack_options *o;
    HANDLE proc;
    struct win_driver *driver;
    unsigned max_frames;
    struct raw_frame *raw;    /* max_frames entries, reused by every thread */
    struct stack_copy copy;   /* reused by every thread */
    double ns_per_tick;
};

static bool stopped(const struct ntl_stack_options *o)
{
    return o->stop && *o->stop;
}

/* StackWalk64's read callback has no context argument. */
static _Thread_local const struct stack_copy *walk_copy;

static BOOL CALLBACK read_memory(HANDLE proc, DWORD64 addr, PVOID buf, DWORD size, LPDWORD got)
{
    const struct stack_copy *c = walk_copy;
    if (c && addr >= c->lo && addr - c->lo <= c->size && size <= c->size - (addr - c->lo)) {
        memcpy(buf, c->bytes + (addr - c->lo), size);
        *got = size;
        return TRUE;
    }
    SIZE_T n = 0;
    BOOL ok = ReadProcessMemory(proc, (LPCVOID)(uintptr_t)addr, buf, size, &n);
    *got = (DWORD)n;
    return ok;
}

/* The top of the thread's stack (NT_TIB.StackBase in its TEB); 0 unknown. */
static uint64_t stack_base(HANDLE proc, HANDLE th)
{
    struct {
        NTSTATUS exit_status;
        PVOID teb;
        PVOID client_id[2];
        ULONG_PTR affinity;
        LONG priority, base_priority;
    } tbi;
    uint64_t base = 0;
    SIZE_T n = 0;
    if (NtQueryInformationThread(th, (THREADINFOCLASS)0 /* ThreadBasicInformation */, &tbi,
                                 sizeof(tbi), NULL) < 0 ||
        !ReadProcessMemory(proc, (const uint8_t *)tbi.teb + 8, &base, sizeof(base), &n))
        return 0;
    return base;
}

/* Suspends the thread just long enough to read its registers and copy its
 * stack. false with *why set when it could not. */
static bool capture(struct walk *w, HANDLE th, uint64_t top, CONTEXT *ctx, struct stack_copy *c,
                    char *why, size_t why_size)
{
    LARGE_INTEGER t0, t1;
    bool ok = false;
    QueryPerformanceCounter(&t0);
    if (SuspendThread(th) == (DWORD)-1) {
        snprintf(why, why_size, "cannot suspend the thread (error %lu): it may have exited",
                 GetLastError());
        return false;
    }
    memset(ctx, 0, sizeof(*ctx));
    ctx->ContextFlags = CONTEXT_FULL;
    if (!GetThreadContext(th, ctx)) {
        snprintf(why, why_size, "cannot read the thread's registers (error %lu)",
                 GetLastError());
        goto resume;
    }
    c->lo = ctx->Rsp;
    c->size = 0;
    if (top > c->lo) {
        SIZE_T n = 0;
        size_t want = top - c->lo < STACK_COPY_MAX ? (size_t)(top - c->lo) : STACK_COPY_MAX;
        ReadProcessMemory(w->proc, (LPCVOID)(uintptr_t)c->lo, c->bytes, want, &n);
        c->size = n;
    }
    ok = true;
resume:
    ResumeThread(th);
    QueryPerformanceCounter(&t1);
    w->p->stopped_ns += (uint64_t)((double)(t1.QuadPart - t0.QuadPart) * w->ns_per_tick);
    return ok;
}

/* Unwinds the copy; returns the number of frames. A frame is found by
 * unwinding the one below it: through its function's unwind data when it
 * has some, else by dbghelp's guess. */
static unsigned unwind(struct walk *w, HANDLE th, CONTEXT *ctx, const struct stack_copy *c)
{
    STACKFRAME64 sf;
    memset(&sf, 0, sizeof(sf));
    sf.AddrPC.Offset = ctx->Rip;
    sf.AddrFrame.Offset = ctx->Rbp;
    sf.AddrStack.Offset = ctx->Rsp;
    sf.AddrPC.Mode = sf.AddrFrame.Mode = sf.AddrStack.Mode = AddrModeFlat;
    bool below_has_unwind = false;
    uint64_t last_sp = 0;
    unsigned n = 0;
    walk_copy = c;
    while (n < w->max_frames && !stopped(w->o)) {
        if (!StackWalk64(IMAGE_FILE_MACHINE_AMD64, w->proc, th, &sf, ctx, read_memory,
                         SymFunctionTableAccess64, SymGetModuleBase64, NULL))
            break;
        uint64_t pc = sf.AddrPC.Offset, sp = sf.AddrStack.Offset;
        /* A frame that repeats the one before it would repeat forever. */
        if (pc == 0 || (n > 0 && pc == w->raw[n - 1].pc && sp == last_sp))
            break;
        w->raw[n].pc = pc;
        w->raw[n].how = n == 0 ? NTL_STACK_CONTEXT
                        : below_has_unwind ? NTL_STACK_CFI : NTL_STACK_FRAME_POINTER;
        below_has_unwind = SymFunctionTableAccess64(w->proc, pc) != NULL;
        last_sp = sp;
        n++;
    }
    walk_copy = NULL;
    return n;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '\\');
    if (!slash)
        slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Names one frame. A return address points after its call, so a caller is
 * looked up one byte back: a call that ends its function names that function. */
static int add_user_frame(struct walk *w, struct ntl_stack_thread *t, const struct raw_frame *r,
                          struct ntl_error *err)
{
    DWORD64 at = r->how == NTL_STACK_CONTEXT ? r->pc : r->pc - 1;
    struct ntl_stack_frame f = {.pc = r->pc, .mode = NTL_STACK_USER, .how = r->how};
    union {
        SYMBOL_INFO s;
        char bytes[sizeof(SYMBOL_INFO) + 1024];
    } sym;
    memset(&sym, 0, sizeof(sym));
    sym.s.SizeOfStruct = sizeof(SYMBOL_INFO);
    sym.s.MaxNameLen = 1024;
    DWORD64 disp64;
    if (SymFromAddr(w->proc, at, &disp64, &sym.s) && sym.s.Name[0]) {
        f.function = sym.s.Name;
        f.function_offset = r->pc - sym.s.Address;
    }
    IMAGEHLP_MODULE64 mod;
    memset(&mod, 0, sizeof(mod));
    mod.SizeOfStruct = sizeof(mod);
    if (SymGetModuleInfo64(w->proc, at, &mod)) {
        f.module = mod.ImageName[0] ? base_name(mod.ImageName) : mod.ModuleName;
        f.module_base = mod.BaseOfImage;
    }
    IMAGEHLP_LINE64 line;
    memset(&line, 0, sizeof(line));
    line.SizeOfStruct = sizeof(line);
    DWORD disp32;
    if (w->o->lines && SymGetLineFromAddr64(w->proc, at, &disp32, &line) && line.FileName) {
        f.file = line.FileName;
        f.line = line.LineNumber;
    }
    return ntl_stack_frame_add(w->p, t, &f, err);
}

/* Where the thread began (the function CreateThread was given). */
static uint64_t start_address(HANDLE th)
{
    PVOID start = NULL;
    NTSTATUS st = NtQueryInformationThread(th, (THREADINFOCLASS)9 /* ThreadQuerySetWin32StartAddress */,
                                           &start, sizeof(start), NULL);
    return st >= 0 ? (uint64_t)(uintptr_t)start : NTL_STACK_UNKNOWN;
}

/* One thread: kernel frames (innermost) first, then user frames. Only out
 * of memory fails; every other trouble becomes the thread's note. */
static int walk_thread(struct walk *w, struct ntl_stack_thread *t, struct ntl_error *err)
{
    if (t->tid == GetCurrentThreadId())
        return ntl_stack_thread_note(w->p, t, err, "the calling thread is not walked");
    HANDLE th = OpenThread(THREAD_SUSPEND_RESUME | THREAD_GET_CONTEXT |
                           THREAD_QUERY_INFORMATION, FALSE, t->tid);
    if (!th) {
        DWORD e = GetLastError();
        return ntl_stack_thread_note(w->p, t, err, "%s (error %lu)",
                                     e == ERROR_ACCESS_DENIED ? "access denied opening the thread"
                                                              : "the thread exited before it was walked",
                                     e);
    }
    t->start = start_address(th);
    char why[256] = "";
    if (w->driver) {
        struct ntl_error kerr = {0};
        int rc = win_driver_add_frames(w->driver, w->p, t, w->max_frames, &kerr);
        if (rc == NTL_ERR_NOMEM) {
            CloseHandle(th);
            *err = kerr;
            return rc;
        }
        if (rc < 0)
            snprintf(why, sizeof(why), "kernel frames: %s", kerr.message);
    }
    char user_why[256] = "";
    CONTEXT ctx;
    uint64_t top = stack_base(w->proc, th);
    unsigned n = capture(w, th, top, &ctx, &w->copy, user_why, sizeof(user_why))
                     ? unwind(w, th, &ctx, &w->copy) : 0;
    CloseHandle(th);
    int rc = 0;
    for (unsigned i = 0; i < n && rc == 0; i++)
        rc = add_user_frame(w, t, &w->raw[i], err);
    if (rc == NTL_ERR_LIMIT) /* kernel and user frames together past the model's cap */
        rc = ntl_stack_thread_note(w->p, t, err, "%s", err->message);
    if (rc == 0 && (why[0] || user_why[0]))
        rc = ntl_stack_thread_note(w->p, t, err, "%s%s%s", why, why[0] && user_why[0] ? "; " : "",
                                   user_why);
    return rc;
}

static const struct win_thread *find_thread(const struct win_process *wp, uint32_t tid)
{
    for (size_t i = 0; i < wp->nthreads; i++)
        if (wp->threads[i].tid == tid)
            return &wp->threads[i];
    return NULL;
}

static int add_thread(struct walk *w, const struct win_process *wp, uint32_t tid,
                      struct ntl_error *err)
{
    struct ntl_stack_thread *t = ntl_stack_thread_add(w->p, tid, err);
    if (!t)
        return NTL_ERR_NOMEM;
    const struct win_thread *wt = find_thread(wp, tid);
    if (!wt)
        return ntl_stack_thread_note(w->p, t, err, "not a thread of process %u", w->p->pid);
    t->state = win_thread_state_name(wt->state);
    t->wait = wt->state == 5 /* Waiting */ ? win_wait_reason_name(wt->wait_reason) : "";
    t->user_ns = wt->user_ns;
    t->kernel_ns = wt->kernel_ns;
    return walk_thread(w, t, err);
}

static int open_process(uint32_t pid, const char *name, HANDLE *out, struct ntl_error *err)
{
    *out = OpenProcess(PROCESS_QUERY_INFORMATION | PROCESS_VM_READ, FALSE, pid);
    if (*out)
        return 0;
    DWORD e = GetLastError();
    if (e == ERROR_ACCESS_DENIED)
        return ntl_error_set(err, NTL_ERR_ACCESS, NULL, NTL_NO_OFFSET,
                             "process %u (%s): access denied: run ntlens as the process's user "
                             "or as an administrator", pid, name);
    if (e == ERROR_INVALID_PARAMETER)
        return ntl_error_set(err, NTL_ERR_NOT_FOUND, NULL, NTL_NO_OFFSET,
                             "process %u exited", pid);
    return ntl_error_set(err, NTL_ERR_SYSTEM, NULL, NTL_NO_OFFSET,
                         "cannot open process %u (error %lu)", pid, e);
}

/* dbghelp over the process, then every (or each requested) thread. */
static int walk_process(struct walk *w, const struct win_process *wp, struct ntl_error *err)
{
    /* Every module's symbols are loaded here, before any thread is
     * suspended: deferred loads would happen inside the walk, and the
     * process would wait for them (hundreds of ms for DWARF under Wine). */
    SymSetOptions(SYMOPT_UNDNAME | SYMOPT_FAIL_CRITICAL_ERRORS |
                  (w->o->lines ? SYMOPT_LOAD_LINES : 0));
    if (!SymInitialize(w->proc, NULL, TRUE))
        return ntl_error_set(err, NTL_ERR_SYSTEM, NULL, NTL_NO_OFFSET,
                             "SymInitialize on process %u failed (error %lu)", w->p->pid,
                             GetLastError());
    int rc = 0;
    size_t n = w->o->tids ? w->o->ntids : wp->nthreads;
    for (size_t i = 0; i < n && rc == 0 && !stopped(w->o); i++)
        rc = add_thread(w, wp, w->o->tids ? w->o->tids[i] : wp->threads[i].tid, err);
    SymCleanup(w->proc);
    ntl_stack_sort_threads(w->p);
    return rc;
}

int ntl_stack_live(uint32_t pid, const struct ntl_stack_options *o,
                   struct ntl_stack_process **out, struct ntl_error *err)
{
    struct win_process wp;
    int rc = win_process_snapshot(pid, &wp, err);
    if (rc < 0)
        return rc;
    LARGE_INTEGER freq;
    QueryPerformanceFrequency(&freq);
    struct walk w = {
        .o = o,
        .max_frames = o->max_frames && o->max_frames < NTL_STACK_MAX_FRAMES ? o->max_frames
                                                                           : NTL_STACK_MAX_FRAMES,
        .ns_per_tick = 1e9 / (double)freq.QuadPart,
    };
    rc = open_process(pid, wp.name, &w.proc, err);
    if (rc == 0)
        rc = ntl_stack_process_new(pid, wp.name, &w.p, err);
    if (rc == 0 && (!(w.raw = malloc(w.max_frames * sizeof(*w.raw))) ||
                    !(w.copy.bytes = malloc(STACK_COPY_MAX))))
        rc = ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    if (rc == 0 && o->kernel) {
        struct ntl_error derr = {0};
        if (win_driver_open(o->driver, &w.driver, &derr) < 0)
            rc = ntl_stack_process_note(w.p, err, "no kernel frames: %s", derr.message);
    }
    if (rc == 0)
        rc = walk_process(&w, &wp, err);
    win_driver_close(w.driver);
    free(w.raw);
    free(w.copy.bytes);
    if (w.proc)
        CloseHandle(w.proc);
    win_process_free(&wp);
    if (rc < 0) {
        ntl_stack_process_free(w.p);
        return rc;
    }
    *out = w.p;
    return 0;
}
