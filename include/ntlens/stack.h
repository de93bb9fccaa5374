/* Thread call stacks: one model for every producer (a live Linux process
 * through libdw and /proc, a live Windows process through dbghelp and the
 * ntlens.sys driver, a Windows minidump through the modules' unwind data).
 *
 * A process holds threads; a thread holds frames, innermost first, kernel
 * frames before user frames (as Process Explorer shows them). Each frame
 * says how it was found, so a user can tell a certain frame from a guess.
 * Every string a process hands out lives as long as the process does.
 *
 *     struct ntl_stack_process *p;
 *     struct ntl_stack_options o = { .kernel = true };
 *     if (ntl_stack_live(pid, &o, &p, &err) == 0) {
 *         for (size_t i = 0; i < p->nthreads; i++) ... p->threads[i]->frames ...
 *         ntl_stack_process_free(p);
 *     }
 *
 * Producers build the model with ntl_stack_thread_add, ntl_stack_frame_add
 * and ntl_stack_thread_note. A thread that cannot be walked (it exited, its
 * stack is outside the dump, ...) stays in the list with a note; only a
 * failure that concerns the whole process fails the call. */
#ifndef NTLENS_STACK_H
#define NTLENS_STACK_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Deepest stack kept per thread unless the options ask for fewer. */
#define NTL_STACK_MAX_FRAMES 1024u
/* A CPU time or address the producer does not know. */
#define NTL_STACK_UNKNOWN UINT64_MAX

enum ntl_stack_mode {
    NTL_STACK_USER,
    NTL_STACK_KERNEL,
};

/* How a frame was found, from certain to guessed. */
enum ntl_stack_how {
    NTL_STACK_CONTEXT,       /* the thread's own registers (the innermost frame) */
    NTL_STACK_CFI,           /* unwind data: .eh_frame/.debug_frame, .pdata/UNWIND_INFO */
    NTL_STACK_INLINE,        /* an inlined call at the same address as the frame below it */
    NTL_STACK_KERNEL_LIST,   /* the kernel's own list (/proc/TID/stack, RtlWalkFrameChain) */
    NTL_STACK_FRAME_POINTER, /* followed the saved frame pointer: likely, not certain */
    NTL_STACK_SCAN,          /* a stack word that points into code: a guess */
};

/* "context", "cfi", "inline", "kernel", "frame-pointer", "scan". */
const char *ntl_stack_how_name(enum ntl_stack_how how);
/* "user", "kernel". */
const char *ntl_stack_mode_name(enum ntl_stack_mode mode);

struct ntl_stack_frame {
    uint64_t pc;              /* the instruction: the current one for the innermost
                                 frame, the return address for the others */
    enum ntl_stack_mode mode;
    enum ntl_stack_how how;
    const char *module;       /* file name without directories; "" when unknown */
    uint64_t module_base;     /* 0 when unknown */
    const char *function;     /* "" when unknown */
    uint64_t function_offset; /* pc - the function's start; 0 when function is "" */
    const char *file;         /* source file; "" when no debug information */
    unsigned line;            /* 0 when none */
};

struct ntl_stack_thread {
    uint32_t tid;
    const char *name;         /* comm or thread description; "" */
    const char *state;        /* "S (sleeping)", "Waiting"; "" when unknown */
    const char *wait;         /* wchan or wait reason; "" when none or unknown */
    uint64_t start;           /* start address; NTL_STACK_UNKNOWN */
    uint64_t user_ns;         /* CPU time; NTL_STACK_UNKNOWN */
    uint64_t kernel_ns;
    struct ntl_stack_frame *frames;
    size_t nframes;
    const char *note;         /* why the walk stopped early or failed; "" when it did not */
};

struct ntl_stack_process {
    uint32_t pid;
    const char *name;         /* "" when unknown */
    uint64_t stopped_ns;      /* how long the producer kept the threads stopped
                                 (what the user's process paid); 0 for a dump */
    struct ntl_stack_thread **threads; /* in the producer's order (ascending tid
                                          for live processes, the dump's order) */
    size_t nthreads;
    struct ntl_stack_arena *arena;     /* the strings; private */
    size_t cap_threads;
    const char *note;         /* a warning about the whole walk ("no kernel frames:
                                 the driver could not be loaded ..."); "" when none */
};

struct ntl_stack_options {
    const uint32_t *tids;     /* only these threads; NULL: every thread */
    size_t ntids;
    bool kernel;              /* kernel frames too (Linux: /proc as root; Windows: the driver) */
    bool lines;               /* source file and line where debug information has them */
    unsigned max_frames;      /* per thread; 0: NTL_STACK_MAX_FRAMES */
    const char *modules_dir;  /* a dump: a folder of module files to read unwind data
                                 and exports from; NULL: the dump's memory only */
    const volatile sig_atomic_t *stop; /* set from a signal handler: the walk ends,
                                          threads are resumed, what was walked is kept */
    const char *driver;       /* Windows with kernel: the ntlens.sys to load; NULL:
                                 ntlens.sys next to the running program */
};

/* --- the producers --- */

/* Every (or each requested) thread of the live process pid. Returns 0, or:
 *   NTL_ERR_NOT_FOUND    no such process (err set: the pid)
 *   NTL_ERR_ACCESS       not allowed to read it (err: what to do: root, ptrace_scope)
 *   NTL_ERR_UNSUPPORTED  this platform or build cannot walk live stacks
 *   NTL_ERR_SYSTEM, NTL_ERR_NOMEM
 * A requested tid that is not a thread of pid is a thread with a note. */
int ntl_stack_live(uint32_t pid, const struct ntl_stack_options *o,
                   struct ntl_stack_process **out, struct ntl_error *err);

/* Every (or each requested) thread of a Windows minidump (file bytes).
 * Returns 0, or the statuses of ntl_md_parse (NTL_ERR_FORMAT,
 * NTL_ERR_TRUNCATED with the offset), NTL_ERR_UNSUPPORTED (an architecture
 * without an unwinder: no thread list), NTL_ERR_NOMEM. */
int ntl_stack_from_dump(const void *data, size_t size, const struct ntl_stack_options *o,
                        struct ntl_stack_process **out, struct ntl_error *err);

void ntl_stack_process_free(struct ntl_stack_process *p);

/* --- building the model (for producers) --- */

/* An empty process. 0, or NTL_ERR_NOMEM. */
int ntl_stack_process_new(uint32_t pid, const char *name, struct ntl_stack_process **out,
                          struct ntl_error *err);

/* A copy of s that lives as long as p; NULL only when out of memory. */
const char *ntl_stack_strdup(struct ntl_stack_process *p, const char *s);

/* A new thread (every string "", every time and address unknown, no
 * frames), appended to p. NULL only when out of memory (err set). */
struct ntl_stack_thread *ntl_stack_thread_add(struct ntl_stack_process *p, uint32_t tid,
                                              struct ntl_error *err);

/* Appends a copy of f (its strings copied; NULL strings become "").
 * 0, or NTL_ERR_NOMEM, NTL_ERR_LIMIT (the thread has NTL_STACK_MAX_FRAMES). */
int ntl_stack_frame_add(struct ntl_stack_process *p, struct ntl_stack_thread *t,
                        const struct ntl_stack_frame *f, struct ntl_error *err);

/* Sets the thread's note (replacing one it had). 0, or NTL_ERR_NOMEM. */
int ntl_stack_thread_note(struct ntl_stack_process *p, struct ntl_stack_thread *t,
                          struct ntl_error *err, const char *fmt, ...) NTL_PRINTF(4, 5);

/* Sets the process's note (replacing one it had). 0, or NTL_ERR_NOMEM. */
int ntl_stack_process_note(struct ntl_stack_process *p, struct ntl_error *err,
                           const char *fmt, ...) NTL_PRINTF(3, 4);

/* Sorts the threads by ascending tid. */
void ntl_stack_sort_threads(struct ntl_stack_process *p);

#ifdef __cplusplus
}
#endif
#endif
