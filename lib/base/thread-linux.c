/* ntlens/thread.h over pthreads. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "ntlens/thread.h"

struct ntl_lock {
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

struct ntl_lock *ntl_lock_new(void)
{
    struct ntl_lock *l = malloc(sizeof *l);
    if (!l)
        return NULL;
    if (pthread_mutex_init(&l->mu, NULL) != 0) {
        free(l);
        return NULL;
    }
    if (pthread_cond_init(&l->cv, NULL) != 0) {
        pthread_mutex_destroy(&l->mu);
        free(l);
        return NULL;
    }
    return l;
}

void ntl_lock_free(struct ntl_lock *l)
{
    if (!l)
        return;
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    free(l);
}

void ntl_lock_take(struct ntl_lock *l) { pthread_mutex_lock(&l->mu); }
void ntl_lock_drop(struct ntl_lock *l) { pthread_mutex_unlock(&l->mu); }
void ntl_lock_wait(struct ntl_lock *l) { pthread_cond_wait(&l->cv, &l->mu); }
void ntl_lock_wake(struct ntl_lock *l) { pthread_cond_broadcast(&l->cv); }

struct ntl_threads {
    unsigned n;
    void (*fn)(void *);
    void *arg;
    pthread_t t[];
};

static void *trampoline(void *p)
{
    struct ntl_threads *t = p;
    t->fn(t->arg);
    return NULL;
}

int ntl_threads_start(struct ntl_threads **out, unsigned n, void (*fn)(void *), void *arg)
{
    struct ntl_threads *t = malloc(sizeof *t + n * sizeof t->t[0]);
    if (!t)
        return -1;
    t->fn = fn;
    t->arg = arg;
    for (t->n = 0; t->n < n; t->n++)
        if (pthread_create(&t->t[t->n], NULL, trampoline, t) != 0)
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
    for (unsigned i = 0; i < t->n; i++)
        pthread_join(t->t[i], NULL);
    free(t);
}

double ntl_thread_cpu(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0)
        return 0;
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
