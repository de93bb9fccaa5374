/* Stopping one thread for as short a time as we can: PTRACE_SEIZE and
 * PTRACE_INTERRUPT (no signal the program could see), its registers, one
 * copy of its stack, PTRACE_DETACH. The unwinder then works on the copy
 * while the thread runs. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>

#include "live-linux.h"

/* A stack larger than this is read live beyond the copy. */
#define SNAPSHOT_MAX (8u << 20)
/* Below the stack pointer: the x86-64 red zone leaf functions use. */
#define RED_ZONE 128u
/* A thread that does not stop within this is in an uninterruptible wait. */
#define STOP_TIMEOUT_NS 1000000000ull
/* A stack_stop whose stop was requested and has not come yet. */
#define STOP_PENDING 1
/* Yielding, not sleeping, this long while threads stop (a sleep adds its
 * timer slack to every thread's stop). */
#define SPIN_NS 2000000ull
/* How long stack_snapshot_release waits for such threads at the end. */
#define RELEASE_WAIT_NS 100000000ull

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int stack_maps_read(pid_t pid, struct stack_maps *m)
{
    char path[64], line[4096];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    size_t cap = 0;
    int rc = 0;
    m->ranges = NULL;
    m->n = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long lo, hi;
        if (sscanf(line, "%llx-%llx", &lo, &hi) != 2)
            continue;
        if (m->n == cap) {
            cap = cap ? cap * 2 : 256;
            void *grown = realloc(m->ranges, cap * sizeof(*m->ranges));
            if (!grown) {
                rc = -ENOMEM;
                break;
            }
            m->ranges = grown;
        }
        m->ranges[m->n][0] = lo;
        m->ranges[m->n][1] = hi;
        m->n++;
    }
    fclose(f);
    if (rc)
        stack_maps_free(m);
    return rc;
}

void stack_maps_free(struct stack_maps *m)
{
    free(m->ranges);
    m->ranges = NULL;
    m->n = 0;
}

/* The end of the mapping that holds addr, or 0. The file lists mappings
 * in ascending order. */
static uint64_t mapping_end(const struct stack_maps *m, uint64_t addr)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (addr < m->ranges[mid][0])
            hi = mid;
        else if (addr >= m->ranges[mid][1])
            lo = mid + 1;
        else
            return m->ranges[mid][1];
    }
    return 0;
}

static void copy_regs(struct stack_snapshot *s, const struct user_regs_struct *r)
{
    const unsigned long long v[17] = {
        r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi, r->rbp, r->rsp,
        r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->rip,
    };
    for (int i = 0; i < 17; i++)
        s->regs[i] = v[i];
}

/* Copies [sp - RED_ZONE, end of sp's mapping) into s; what cannot be read
 * shortens the copy (the unwinder then reads live). */
static void copy_stack(pid_t tid, const struct stack_maps *maps, struct stack_snapshot *s)
{
    uint64_t sp = s->regs[7], end = mapping_end(maps, sp);
    s->len = 0;
    s->base = sp - RED_ZONE;
    if (!end || sp < RED_ZONE)
        return;
    size_t want = end - s->base > SNAPSHOT_MAX ? SNAPSHOT_MAX : (size_t)(end - s->base);
    if (want > s->cap) {
        uint8_t *grown = realloc(s->bytes, want);
        if (!grown)
            return;
        s->bytes = grown;
        s->cap = want;
    }
    struct iovec local = {s->bytes, want};
    struct iovec remote = {(void *)(uintptr_t)s->base, want};
    ssize_t n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
    s->len = n > 0 ? (size_t)n : 0;
}

/* The registers and stack of a thread that has stopped. */
static void capture(struct stack_stop *t, const struct stack_maps *maps)
{
    struct user_regs_struct regs;
    if (ptrace(PTRACE_GETREGS, t->tid, NULL, &regs) != 0) {
        t->rc = -ESRCH;
        snprintf(t->why, sizeof t->why, "cannot read the thread's registers (ptrace: %s)",
                 strerror(errno));
        return;
    }
    copy_regs(&t->snap, &regs);
    copy_stack(t->tid, maps, &t->snap);
    t->rc = 0;
}

/* PTRACE_SEIZE and PTRACE_INTERRUPT: true when the stop is on its way. */
static bool request_stop(struct stack_stop *t)
{
    if (ptrace(PTRACE_SEIZE, t->tid, NULL, NULL) != 0) {
        int e = errno;
        t->rc = e == ESRCH ? -ESRCH : -EPERM;
        snprintf(t->why, sizeof t->why, e == ESRCH ? "the thread exited before it could be "
                 "stopped" : "cannot trace the thread (ptrace: %s)", strerror(e));
        return false;
    }
    if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) != 0) {
        t->rc = -ESRCH;
        snprintf(t->why, sizeof t->why, "the thread exited before it could be stopped");
        ptrace(PTRACE_DETACH, t->tid, NULL, NULL);
        return false;
    }
    t->rc = STOP_PENDING;
    t->snap.stopped_ns = now_ns(); /* the start, until the detach */
    return true;
}

/* One look at a pending thread: once it has stopped (or exited), its
 * capture and its detach. False while it is still on its way. */
static bool poll_stop(struct stack_stop *t, const struct stack_maps *maps)
{
    int status;
    pid_t r = waitpid(t->tid, &status, __WALL | WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR))
        return false;
    if (r == t->tid && WIFSTOPPED(status)) {
        capture(t, maps);
    } else {
        t->rc = -ESRCH;
        snprintf(t->why, sizeof t->why, "the thread exited while it was being stopped");
    }
    ptrace(PTRACE_DETACH, t->tid, NULL, NULL);
    t->snap.stopped_ns = now_ns() - t->snap.stopped_ns;
    return true;
}

void stack_snapshot_batch(struct stack_stop *v, size_t n, const struct stack_maps *maps)
{
    size_t pending = 0;
    for (size_t i = 0; i < n; i++) {
        v[i].why[0] = 0;
        v[i].snap.len = 0;
        v[i].snap.stopped_ns = 0;
        pending += request_stop(&v[i]);
    }
    uint64_t start = now_ns();
    while (pending) {
        for (size_t i = 0; i < n; i++)
            if (v[i].rc == STOP_PENDING && poll_stop(&v[i], maps))
                pending--;
        uint64_t waited = now_ns() - start;
        if (!pending || waited > STOP_TIMEOUT_NS)
            break;
        if (waited < SPIN_NS) {
            sched_yield();
        } else {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
    /* Detaching a thread that never stopped fails: it stays ours until
     * stack_snapshot_release or our exit lets it go. */
    for (size_t i = 0; i < n; i++) {
        if (v[i].rc != STOP_PENDING)
            continue;
        v[i].rc = -ETIMEDOUT;
        v[i].snap.stopped_ns = 0;
        snprintf(v[i].why, sizeof v[i].why, "the thread did not stop within a second (an "
                 "uninterruptible wait): no user frames");
    }
}

void stack_snapshot_release(const pid_t *tids, size_t n)
{
    uint64_t start = now_ns();
    size_t left = n;
    char *done = calloc(n ? n : 1, 1);
    if (!done)
        return;
    while (left && now_ns() - start < RELEASE_WAIT_NS) {
        for (size_t i = 0; i < n; i++) {
            int status;
            if (done[i])
                continue;
            pid_t r = waitpid(tids[i], &status, __WALL | WNOHANG);
            if (r == tids[i] && WIFSTOPPED(status))
                ptrace(PTRACE_DETACH, tids[i], NULL, NULL);
            if (r != 0) {
                done[i] = 1;
                left--;
            }
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    free(done);
}

bool stack_snapshot_read(const struct stack_snapshot *s, pid_t pid, uint64_t addr,
                         uint64_t *value)
{
    if (addr >= s->base && addr - s->base + 8 <= s->len) {
        memcpy(value, s->bytes + (addr - s->base), 8);
        return true;
    }
    struct iovec local = {value, 8};
    struct iovec remote = {(void *)(uintptr_t)addr, 8};
    return process_vm_readv(pid, &local, 1, &remote, 1, 0) == 8;
}
