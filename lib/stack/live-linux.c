/* Live stacks on Linux: for each thread, first what /proc says without
 * stopping it (state, wait channel, CPU times, kernel frames), then its
 * user frames through libdw, the thread stopped only while its registers
 * and stack are copied. Threads are stopped a few at a time
 * (STACK_BATCH), so the process as a whole never stops; p->stopped_ns adds
 * up each thread's stop. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live-linux.h"

static bool has_tid(const uint32_t *tids, size_t n, uint32_t tid)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tids[mid] == tid)
            return true;
        if (tids[mid] < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* The kernel keeps where a thread started only for the main one: the
 * program's entry point. */
static void set_main_start(struct ntl_stack_process *p)
{
    for (size_t i = 0; i < p->nthreads; i++)
        if (p->threads[i]->tid == p->pid && !*p->threads[i]->note)
            p->threads[i]->start = stack_proc_entry((pid_t)p->pid);
}

/* The threads to walk: every one, or the requested ones (a requested tid
 * that is not a thread of pid gets a note and no walk), the main thread
 * with its start. */
static int add_threads(struct ntl_stack_process *p, const uint32_t *tids, size_t n,
                       const struct ntl_stack_options *o, struct ntl_error *err)
{
    size_t want = o->tids ? o->ntids : n;
    for (size_t i = 0; i < want; i++) {
        uint32_t tid = o->tids ? o->tids[i] : tids[i];
        bool seen = false;
        for (size_t k = 0; o->tids && k < p->nthreads && !seen; k++)
            seen = p->threads[k]->tid == tid;
        if (seen)
            continue;
        struct ntl_stack_thread *t = ntl_stack_thread_add(p, tid, err);
        if (!t)
            return NTL_ERR_NOMEM;
        if (!has_tid(tids, n, tid) &&
            ntl_stack_thread_note(p, t, err, "not a thread of process %" PRIu32, p->pid) < 0)
            return NTL_ERR_NOMEM;
    }
    ntl_stack_sort_threads(p);
    set_main_start(p);
    return 0;
}

/* Adds a second reason to the thread's note. */
static int add_note(struct ntl_stack_process *p, struct ntl_stack_thread *t, const char *why,
                    struct ntl_error *err)
{
    if (!*why)
        return 0;
    if (!*t->note)
        return ntl_stack_thread_note(p, t, err, "%s", why);
    return ntl_stack_thread_note(p, t, err, "%s; %s", t->note, why);
}

/* A thread in an uninterruptible wait would only stop once the wait ends
 * (a hung NFS server: never), so it is not asked to. /proc still says
 * where it entered the kernel: its innermost user frame. The frames above
 * need its other registers (the callee-saved ones the unwind data refers
 * to), which only a stop gives. A kernel thread (no u) has no user frames. */
static int uninterruptible(struct stack_unwinder *u, struct ntl_stack_process *p,
                           struct ntl_stack_thread *t, const struct ntl_stack_options *o,
                           struct ntl_error *err)
{
    const char *hint = o->kernel ? "" : " (--kernel shows where it waits)";
    struct stack_syscall sc;
    int rc = u ? stack_proc_syscall((pid_t)p->pid, t->tid, &sc) : -ENOENT;
    if (rc == -EAGAIN)
        return ntl_stack_thread_note(p, t, err, "in an uninterruptible wait, then running: "
                                     "not stopped, so no user frames%s", hint);
    if (rc < 0)
        return ntl_stack_thread_note(p, t, err, "in an uninterruptible wait: not stopped, so "
                                     "no user frames%s%s%s", hint,
                                     u ? "; its /proc syscall file: " : "",
                                     u ? strerror(-rc) : "");
    if ((rc = stack_unwinder_context_frame(u, p, t, sc.pc, o, err)) < 0)
        return rc;
    char call[48] = "", why[320];
    if (sc.nr >= 0)
        snprintf(call, sizeof call, " (system call %ld)", sc.nr);
    snprintf(why, sizeof why, "in an uninterruptible wait%s: not stopped, so only the "
             "innermost user frame (from /proc's syscall file); the rest cannot be unwound "
             "without stopping it%s", call, hint);
    return add_note(p, t, why, err);
}

/* What /proc says of t, read before any thread is stopped so that state,
 * wait channel and kernel frames show where it waits and not our stop.
 * 0 with *walk telling whether its user frames can be walked. */
static int read_proc(struct stack_unwinder *u, struct ntl_stack_process *p,
                     struct ntl_stack_thread *t, const struct ntl_stack_options *o,
                     char *kernel_why, size_t why_size, bool *walk, struct ntl_error *err)
{
    *walk = false;
    *kernel_why = 0;
    int rc = stack_proc_thread(p, t, (pid_t)p->pid, err);
    if (rc < 0 || *t->note)
        return rc;
    unsigned max = o->max_frames ? o->max_frames : NTL_STACK_MAX_FRAMES;
    if (o->kernel && (rc = stack_proc_kernel_frames(p, t, (pid_t)p->pid, max, kernel_why,
                                                    why_size, err)) < 0)
        return rc;
    if (t->state[0] == 'Z' || t->state[0] == 'X')
        return ntl_stack_thread_note(p, t, err, "the thread has exited: no stack");
    if (t->state[0] == 'D')
        return uninterruptible(u, p, t, o, err);
    *walk = true;
    return 0;
}

/* The next threads to stop together, from *next on: their /proc facts
 * read, those that can be walked in batch. Returns how many, or an error. */
static int next_batch(struct stack_unwinder *u, struct ntl_stack_process *p, size_t *next,
                      const struct ntl_stack_options *o, struct ntl_stack_thread **batch,
                      char (*kernel_why)[256], struct ntl_error *err)
{
    int n = 0;
    while (n < STACK_BATCH && *next < p->nthreads) {
        struct ntl_stack_thread *t = p->threads[(*next)++];
        bool walk;
        if (*t->note)
            continue;
        if (o->stop && *o->stop) {
            if (ntl_stack_thread_note(p, t, err, "not walked: interrupted") < 0)
                return NTL_ERR_NOMEM;
            continue;
        }
        int rc = read_proc(u, p, t, o, kernel_why[n], sizeof kernel_why[n], &walk, err);
        if (rc < 0)
            return rc;
        if (walk)
            batch[n++] = t;
        else if (add_note(p, t, kernel_why[n], err) < 0)
            return NTL_ERR_NOMEM;
    }
    return n;
}

static int read_name(uint32_t pid, char *name, size_t size, struct ntl_error *err)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%" PRIu32 "/comm", pid);
    FILE *f = fopen(path, "re");
    if (!f && errno == ENOENT)
        return ntl_error_set(err, NTL_ERR_NOT_FOUND, NULL, NTL_NO_OFFSET,
                             "no process %" PRIu32, pid);
    if (!f)
        return ntl_error_set(err, NTL_ERR_SYSTEM, NULL, NTL_NO_OFFSET, "%s: %s", path,
                             strerror(errno));
    if (!fgets(name, (int)size, f))
        *name = 0;
    fclose(f);
    name[strcspn(name, "\n")] = 0;
    return 0;
}

/* A kernel thread (kthreadd and its children) has no memory map: only its
 * /proc facts and kernel frames. */
static bool kernel_thread(uint32_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%" PRIu32 "/maps", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false; /* the unwinder reports why */
    bool empty = fgetc(f) == EOF;
    fclose(f);
    return empty;
}

/* Batch after batch: /proc read, threads stopped together and let go,
 * then unwound from their copies. Without an unwinder (a kernel thread),
 * only what /proc tells. */
static int walk_all(struct stack_unwinder *u, struct ntl_stack_process *p,
                    const struct ntl_stack_options *o, struct ntl_error *err)
{
    struct ntl_stack_thread *batch[STACK_BATCH];
    char kernel_why[STACK_BATCH][256];
    uint32_t tids[STACK_BATCH];
    bool traced_one = false;
    size_t next = 0;
    int n;
    while ((n = next_batch(u, p, &next, o, batch, kernel_why, err)) > 0) {
        for (int i = 0; !u && i < n; i++) {
            int rc = ntl_stack_thread_note(p, batch[i], err, "a kernel thread: no user frames");
            if (rc < 0 || (rc = add_note(p, batch[i], kernel_why[i], err)) < 0)
                return rc;
        }
        if (!u)
            continue;
        for (int i = 0; i < n; i++)
            tids[i] = batch[i]->tid;
        stack_unwinder_stop(u, tids, (size_t)n);
        for (int i = 0; i < n; i++) {
            int rc = stack_unwinder_walk(u, p, batch[i], o, &p->stopped_ns, err);
            /* The kernel refuses to trace a thread that has exited: that is
             * no lack of permission (the process is being killed). */
            if (rc == -EPERM && stack_proc_thread_exited((pid_t)p->pid, batch[i]->tid))
                rc = ntl_stack_thread_note(p, batch[i], err, "the thread has exited: no stack");
            if (rc == -EPERM && !traced_one) {
                char advice[512];
                stack_access_advice((pid_t)p->pid, advice, sizeof advice);
                return ntl_error_set(err, NTL_ERR_ACCESS, NULL, NTL_NO_OFFSET, "%s", advice);
            }
            if (rc == -EPERM)
                rc = ntl_stack_thread_note(p, batch[i], err, "not allowed to trace this thread");
            if (rc < 0 || (rc = add_note(p, batch[i], kernel_why[i], err)) < 0)
                return rc;
            traced_one = true;
        }
    }
    return n;
}

int ntl_stack_live(uint32_t pid, const struct ntl_stack_options *o,
                   struct ntl_stack_process **out, struct ntl_error *err)
{
    if (pid == 0 || pid > INT32_MAX)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                             "%" PRIu32 " is not a process id", pid);
    if ((pid_t)pid == getpid())
        return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                             "process %" PRIu32 " is the caller itself: a process cannot "
                             "stop its own threads", pid);
#if !defined(__x86_64__)
    (void)o, (void)out;
    return ntl_error_set(err, NTL_ERR_UNSUPPORTED, NULL, NTL_NO_OFFSET,
                         "live stacks are walked on x86-64 only");
#else
    char name[64];
    uint32_t *tids = NULL;
    size_t ntids = 0;
    struct ntl_stack_process *p = NULL;
    struct stack_unwinder *u = NULL;
    int rc = read_name(pid, name, sizeof name, err);
    if (rc < 0)
        return rc;
    if ((rc = stack_proc_tids((pid_t)pid, &tids, &ntids)) < 0)
        return ntl_error_set(err, rc == -ENOENT ? NTL_ERR_NOT_FOUND : NTL_ERR_SYSTEM, NULL,
                             NTL_NO_OFFSET, "threads of process %" PRIu32 ": %s", pid,
                             strerror(-rc));
    if ((rc = ntl_stack_process_new(pid, name, &p, err)) < 0 ||
        (rc = add_threads(p, tids, ntids, o, err)) < 0 ||
        (!kernel_thread(pid) && (rc = stack_unwinder_new((pid_t)pid, &u, err)) < 0) ||
        (rc = walk_all(u, p, o, err)) < 0) {
        stack_unwinder_free(u);
        ntl_stack_process_free(p);
        free(tids);
        return rc;
    }
    stack_unwinder_free(u);
    free(tids);
    *out = p;
    return 0;
#endif
}
