/* Shared by the live Windows producer's files: the process's threads from
 * one system snapshot (threads-win32.c) and kernel frames from ntlens.sys
 * (driver-win32.c). */
#ifndef NTLENS_STACK_WIN32_H
#define NTLENS_STACK_WIN32_H

#include <stdint.h>

#include "ntlens/stack.h"

struct win_thread {
    uint32_t tid;
    uint32_t state, wait_reason; /* KTHREAD_STATE, KWAIT_REASON */
    uint64_t user_ns, kernel_ns;
};

struct win_process {
    char name[260];               /* UTF-8 image name; "" for the idle process */
    struct win_thread *threads;   /* ascending tid */
    size_t nthreads;
};

/* Process pid's threads from NtQuerySystemInformation(SystemProcessInformation).
 * 0, or NTL_ERR_NOT_FOUND (no such process), NTL_ERR_SYSTEM, NTL_ERR_NOMEM. */
int win_process_snapshot(uint32_t pid, struct win_process *out, struct ntl_error *err);
void win_process_free(struct win_process *p);

/* "Waiting", "Running", ...; "" for a value Windows may add later. */
const char *win_thread_state_name(uint32_t state);
/* "UserRequest", "DelayExecution", ...; "" likewise. */
const char *win_wait_reason_name(uint32_t reason);

/* --- ntlens.sys --- */
struct win_driver;

/* Opens the ntlens device; when no ntlens driver runs yet, first loads
 * ntlens.sys as a kernel service from path (NULL: ntlens.sys next to the
 * running program) and starts it. 0, or
 * NTL_ERR_ACCESS (not an administrator; test signing off), NTL_ERR_NOT_FOUND
 * (no driver file), NTL_ERR_SYSTEM, NTL_ERR_NOMEM; err says which step. */
int win_driver_open(const char *path, struct win_driver **out, struct ntl_error *err);

/* Appends thread tid's kernel frames to t (NTL_STACK_KERNEL, named from the
 * kernel's module list). 0, or a status with err set: the caller turns it
 * into the thread's note. */
int win_driver_add_frames(struct win_driver *d, struct ntl_stack_process *p,
                          struct ntl_stack_thread *t, unsigned max_frames,
                          struct ntl_error *err);

/* Closes the device, stops the service if it started it and deletes the
 * service if it created it: the system is left as it was. NULL is fine. */
void win_driver_close(struct win_driver *d);

#endif
