/* ntlens/thread.h over Win32 threads, critical sections and condition
 * variables. */
#include <stdlib.h>
#include <windows.h>

#include "ntlens/thread.h"

struct ntl_lock {
    CRITICAL_SECTION cs;
    CONDITION_VARIABLE cv;
};

struct ntl_lock *ntl_lock_new(void)
{
    struct ntl_lock *l = malloc(sizeof *l);
    if (!l)
        return NULL;
    InitializeCriticalSection(&l->cs);
    InitializeConditionVariable(&l->cv);
    return l;
}

void ntl_lock_free(struct ntl_lock *l)
{
    if (!l)
        return;
    DeleteCriticalSection(&l->cs);
    free(l);
}

void ntl_lock_take(struct ntl_lock *l) { EnterCriticalSection(&l->cs); }
void ntl_lock_drop(struct ntl_lock *l) { LeaveCriticalSection(&l->cs); }
void ntl_lock_wait(struct ntl_lock *l) { SleepConditionVariableCS(&l->cv, &l->cs, INFINITE); }
void ntl_lock_wake(struct ntl_lock *l) { WakeAllConditionVariable(&l->cv); }

struct ntl_threads {
    unsigned n;
    void (*fn)(void *);
    void *arg;
    HANDLE t[];
};

static DWORD WINAPI trampoline(LPVOID p)
{
    struct ntl_threads *t = p;
    t->fn(t->arg);
    return 0;
}

int ntl_threads_start(struct ntl_threads **out, unsigned n, void (*fn)(void *), void *arg)
{
    struct ntl_threads *t = malloc(sizeof *t + n * sizeof t->t[0]);
    if (!t)
        return -1;
    t->fn = fn;
    t->arg = arg;
    for (t->n = 0; t->n < n; t->n++)
        if (!(t->t[t->n] = CreateThread(NULL, 0, trampoline, t, 0, NULL)))
            break;
    if (t->n == 0) {
        free(t);
        return -1;
    }
    *out = t;
    return 0;
}

void ntl_threads_join(struct ntl_threads *t)
{
    WaitForMultipleObjects(t->n, t->t, TRUE, INFINITE);
    for (unsigned i = 0; i < t->n; i++)
        CloseHandle(t->t[i]);
    free(t);
}

double ntl_thread_cpu(void)
{
    FILETIME created, exited, kernel, user;
    if (!GetThreadTimes(GetCurrentThread(), &created, &exited, &kernel, &user))
        return 0;
    ULARGE_INTEGER k = {.LowPart = kernel.dwLowDateTime, .HighPart = kernel.dwHighDateTime};
    ULARGE_INTEGER u = {.LowPart = user.dwLowDateTime, .HighPart = user.dwHighDateTime};
    return (double)(k.QuadPart + u.QuadPart) * 1e-7;
}
