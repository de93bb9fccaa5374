/* The little of threads that the split flow decoder needs (flow-split.c):
 * a lock with one condition, and threads started and joined together.
 * pthreads on Linux (flow-threads-linux.c), Win32 on Windows
 * (flow-threads-win32.c). */
#ifndef NTLENS_IPT_FLOW_THREADS_H
#define NTLENS_IPT_FLOW_THREADS_H

struct flow_lock;

/* A new lock, or NULL when out of memory. */
struct flow_lock *flow_lock_new(void);
void flow_lock_free(struct flow_lock *l);
void flow_lock_take(struct flow_lock *l);
void flow_lock_drop(struct flow_lock *l);
/* Drops the lock until flow_lock_wake, then takes it again. */
void flow_lock_wait(struct flow_lock *l);
/* Wakes every thread waiting on l. */
void flow_lock_wake(struct flow_lock *l);

struct flow_threads;

/* n threads, each running fn(arg), into *t. Returns 0, or -1 when none
 * could be started (those started are joined first). */
int flow_threads_start(struct flow_threads **t, unsigned n, void (*fn)(void *), void *arg);
/* Waits for every thread of t to return, and frees t. */
void flow_threads_join(struct flow_threads *t);

/* CPU time the calling thread has used, in seconds (0 when unknown). */
double flow_thread_cpu(void);

#endif
