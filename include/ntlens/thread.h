/* The little of threads the library needs (decompressing ahead in lib/etl,
 * the split flow decoder in lib/ipt): a lock with one condition, threads
 * started and joined together, a thread's CPU time. pthreads on Linux
 * (lib/base/thread-linux.c), Win32 on Windows (lib/base/thread-win32.c).
 * None of it prints or exits; a failure to start is returned. */
#ifndef NTLENS_THREAD_H
#define NTLENS_THREAD_H

#ifdef __cplusplus
extern "C" {
#endif

struct ntl_lock;

/* A new lock, or NULL when out of memory. */
struct ntl_lock *ntl_lock_new(void);
/* Frees l (NULL is ignored); no thread may hold or wait on it. */
void ntl_lock_free(struct ntl_lock *l);
void ntl_lock_take(struct ntl_lock *l);
void ntl_lock_drop(struct ntl_lock *l);
/* Drops the lock (held by the caller) until ntl_lock_wake, then takes it
 * again. It may also return without a wake: callers wait in a loop on
 * their own condition. */
void ntl_lock_wait(struct ntl_lock *l);
/* Wakes every thread waiting on l. */
void ntl_lock_wake(struct ntl_lock *l);

struct ntl_threads;

/* Starts n threads (n > 0), each running fn(arg), into *t. Returns 0 when
 * at least one started (the callers share work through a queue, so fewer
 * threads only take longer), or -1 when none could be started (out of
 * memory or the system refused). */
int ntl_threads_start(struct ntl_threads **t, unsigned n, void (*fn)(void *), void *arg);
/* Waits for every thread of t to return, and frees t. */
void ntl_threads_join(struct ntl_threads *t);

/* CPU time the calling thread has used, in seconds (0 when unknown). */
double ntl_thread_cpu(void);

#ifdef __cplusplus
}
#endif

#endif
