/* The little of threads that decompressing ahead needs (ahead.c): a lock
 * with one condition and one thread. pthreads on Linux
 * (etl-threads-linux.c), Win32 on Windows (etl-threads-win32.c). */
#ifndef NTLENS_ETL_THREADS_H
#define NTLENS_ETL_THREADS_H

struct etl_lock;

/* A new lock, or NULL when out of memory. */
struct etl_lock *etl_lock_new(void);
void etl_lock_free(struct etl_lock *l);
void etl_lock_take(struct etl_lock *l);
void etl_lock_drop(struct etl_lock *l);
/* Drops the lock until etl_lock_wake, then takes it again. */
void etl_lock_wait(struct etl_lock *l);
/* Wakes every thread waiting on l. */
void etl_lock_wake(struct etl_lock *l);

struct etl_thread;

/* A thread running fn(arg), or NULL when it could not start. */
struct etl_thread *etl_thread_start(void (*fn)(void *), void *arg);
/* Waits for it to return and frees it. */
void etl_thread_join(struct etl_thread *t);

#endif
