/* etl-threads.h over Win32 threads, critical sections and condition
 * variables. */
#include <stdlib.h>
#include <windows.h>

#include "etl-threads.h"

struct etl_lock {
    CRITICAL_SECTION cs;
    CONDITION_VARIABLE cv;
};

struct etl_lock *etl_lock_new(void)
{
    struct etl_lock *l = malloc(sizeof *l);
    if (!l)
        return NULL;
    InitializeCriticalSection(&l->cs);
    InitializeConditionVariable(&l->cv);
    return l;
}

void etl_lock_free(struct etl_lock *l)
{
    if (!l)
        return;
    DeleteCriticalSection(&l->cs);
    free(l);
}

void etl_lock_take(struct etl_lock *l) { EnterCriticalSection(&l->cs); }
void etl_lock_drop(struct etl_lock *l) { LeaveCriticalSection(&l->cs); }
void etl_lock_wait(struct etl_lock *l) { SleepConditionVariableCS(&l->cv, &l->cs, INFINITE); }
void etl_lock_wake(struct etl_lock *l) { WakeAllConditionVariable(&l->cv); }

struct etl_thread {
    HANDLE h;
    void (*fn)(void *);
    void *arg;
};

static DWORD WINAPI trampoline(LPVOID p)
{
    struct etl_thread *t = p;
    t->fn(t->arg);
    return 0;
}

struct etl_thread *etl_thread_start(void (*fn)(void *), void *arg)
{
    struct etl_thread *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    t->fn = fn;
    t->arg = arg;
    if (!(t->h = CreateThread(NULL, 0, trampoline, t, 0, NULL))) {
        free(t);
        return NULL;
    }
    return t;
}

void etl_thread_join(struct etl_thread *t)
{
    WaitForSingleObject(t->h, INFINITE);
    CloseHandle(t->h);
    free(t);
}
