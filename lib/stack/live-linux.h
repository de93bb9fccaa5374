/* What the live Linux producer's files share: stopping one thread and
 * copying what its unwind needs (stop-linux.c), /proc facts and kernel
 * frames (proc-linux.c), and libdw's unwinder and names (unwind-linux.c).
 * live-linux.c ties them into ntl_stack_live. */
#ifndef NTLENS_STACK_LIVE_LINUX_H
#define NTLENS_STACK_LIVE_LINUX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ntlens/stack.h"

/* A thread's registers and a copy of its stack, taken while it was stopped:
 * the unwinder reads the copy after the thread runs again, so the thread is
 * stopped only for PTRACE_GETREGS and one process_vm_readv. */
struct stack_snapshot {
    uint64_t regs[17];       /* DWARF x86-64 order: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip */
    uint64_t base;           /* address of bytes[0] */
    uint8_t *bytes;
    size_t len, cap;
    uint64_t stopped_ns;     /* from the stop request to the detach */
};

/* Address ranges of the process's mappings, ascending, to find a stack's end. */
struct stack_maps {
    uint64_t (*ranges)[2];
    size_t n;
};

/* Reads /proc/PID/maps. 0, or a negative errno. */
int stack_maps_read(pid_t pid, struct stack_maps *m);
void stack_maps_free(struct stack_maps *m);

/* One thread of a batch. */
struct stack_stop {
    pid_t tid;
    int rc;                  /* 0, or -ESRCH (gone), -EPERM (not allowed),
                                -ETIMEDOUT (did not stop within a second) */
    char why[160];           /* for the thread's note when rc is not 0 */
    struct stack_snapshot snap;
};

/* Asks the n threads to stop (PTRACE_SEIZE + PTRACE_INTERRUPT, which the
 * program cannot see), then, as each one stops, takes its registers and its
 * stack from the stack pointer to the end of that mapping (at most a cap)
 * and lets it run again: the threads' stop latencies overlap, and one that
 * is slow to stop holds up no other. */
void stack_snapshot_batch(struct stack_stop *v, size_t n, const struct stack_maps *maps);

/* Threads that timed out are still ours: each stops once its wait ends,
 * and would stay stopped. Waits up to 100 ms for them and lets go of each
 * that stopped; the kernel lets go of the rest when this process exits
 * (a caller that lives on should walk them again later). */
void stack_snapshot_release(const pid_t *tids, size_t n);

/* 8 bytes at addr from the copy, else read from the process now. */
bool stack_snapshot_read(const struct stack_snapshot *s, pid_t pid, uint64_t addr,
                         uint64_t *value);

/* Whether thread tid of pid has exited (its /proc entry gone, or a zombie
 * or dead task): what PTRACE_SEIZE's EPERM means for a thread of a process
 * that dies while it is walked. */
bool stack_proc_thread_exited(pid_t pid, uint32_t tid);

/* Name, state, wait channel and CPU times of one thread from /proc; a
 * thread that is gone gets a note. Read before the thread is stopped, so
 * they show where it waits and not our stop. */
int stack_proc_thread(struct ntl_stack_process *p, struct ntl_stack_thread *t, pid_t pid,
                      struct ntl_error *err);

/* Kernel frames from /proc/PID/task/TID/stack, appended to t (at most
 * max_frames). A file that cannot be read (not root, a kernel without it)
 * gives a sentence in why and returns 0. */
int stack_proc_kernel_frames(struct ntl_stack_process *p, struct ntl_stack_thread *t,
                             pid_t pid, unsigned max_frames, char *why, size_t why_size,
                             struct ntl_error *err);

/* One line of /proc/.../stack ("[<0>] do_sys_poll+0x3ce/0x4f0 [mod]") as a
 * kernel frame whose strings point into line (which it edits). False when
 * the line is not one. */
bool stack_proc_parse_kernel_line(char *line, struct ntl_stack_frame *f);

/* Where a thread that is blocked (not running) entered the kernel, from
 * /proc/PID/task/TID/syscall: the system call's number (-1 when it is
 * blocked outside one, e.g. in a page fault), its stack pointer and the
 * user instruction it returns to. */
struct stack_syscall {
    long nr;
    uint64_t sp, pc;
};

/* Parses that file's text ("NR ARG1..ARG6 SP PC" or "-1 SP PC"). 0,
 * -EAGAIN when it says "running", or -EINVAL. */
int stack_proc_parse_syscall(const char *s, struct stack_syscall *sc);

/* Reads it for one thread: 0, or a negative errno (-EAGAIN: running, so
 * it says nothing; -EACCES: tracing the thread is not allowed). */
int stack_proc_syscall(pid_t pid, uint32_t tid, struct stack_syscall *sc);

/* The program's entry point (AT_ENTRY from /proc/PID/auxv): where the main
 * thread started. NTL_STACK_UNKNOWN when it cannot be read. The kernel
 * keeps no start address for other threads. */
uint64_t stack_proc_entry(pid_t pid);

/* The tids of pid, ascending. 0, or a negative errno. */
int stack_proc_tids(pid_t pid, uint32_t **tids, size_t *n);

/* How to say that tracing pid was refused: root, CAP_SYS_PTRACE, and what
 * kernel.yama.ptrace_scope allows. */
void stack_access_advice(pid_t pid, char *buf, size_t size);

struct stack_unwinder;

/* Threads stopped together (stack_unwinder_stop). */
#define STACK_BATCH 4

/* libdw for pid: its modules, and our thread callbacks. 0, or
 * NTL_ERR_NOT_FOUND, NTL_ERR_ACCESS, NTL_ERR_SYSTEM, NTL_ERR_NOMEM. */
int stack_unwinder_new(pid_t pid, struct stack_unwinder **out, struct ntl_error *err);
void stack_unwinder_free(struct stack_unwinder *u);

/* Takes the registers and stack of these threads (at most STACK_BATCH),
 * each stopped only for that (stack_snapshot_batch); none is stopped when
 * it returns. */
void stack_unwinder_stop(struct stack_unwinder *u, const uint32_t *tids, size_t n);

/* The innermost user frame of thread t without stopping it: pc, the
 * instruction it will run next (stack_proc_syscall), named as a walked
 * frame is and marked context. 0, or NTL_ERR_NOMEM. */
int stack_unwinder_context_frame(struct stack_unwinder *u, struct ntl_stack_process *p,
                                 struct ntl_stack_thread *t, uint64_t pc,
                                 const struct ntl_stack_options *o, struct ntl_error *err);

/* Walks thread t, one of the last stack_unwinder_stop, into t's frames:
 * user frames, innermost first, with inline frames, names and (o->lines)
 * source lines; *stopped_ns grows by the time the thread was stopped. Returns 0 (a walk that failed or
 * stopped early leaves a note), -EPERM when the thread could not be
 * traced, or NTL_ERR_NOMEM. */
int stack_unwinder_walk(struct stack_unwinder *u, struct ntl_stack_process *p,
                        struct ntl_stack_thread *t, const struct ntl_stack_options *o,
                        uint64_t *stopped_ns, struct ntl_error *err);

#endif
