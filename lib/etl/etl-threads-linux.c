/* etl-threads.h over pthreads. */
#include <pthread.h>
#include <stdlib.h>

#include "etl-threads.h"

struct etl_lock {
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

struct etl_lock *etl_lock_new(void)
{
    struct etl_lock *l = malloc(sizeof *l);
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

void etl_lock_free(struct etl_lock *l)
{
    if (!l)
        return;
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    free(l);
}

void etl_lock_take(struct etl_lock *l) { pthread_mutex_lock(&l->mu); }
void etl_lock_drop(struct etl_lock *l) { pthread_mutex_unlock(&l->mu); }
void etl_lock_wait(struct etl_lock *l) { pthread_cond_wait(&l->cv, &l->mu); }
void etl_lock_wake(struct etl_lock *l) { pthread_cond_broadcast(&l->cv); }

struct etl_thread {
    pthread_t t;
    void (*fn)(void *);
    void *arg;
};

static void *trampoline(void *p)
{
    struct etl_thread *t = p;
    t->fn(t->arg);
    return NULL;
}

struct etl_thread *etl_thread_start(void (*fn)(void *), void *arg)
{
    struct etl_thread *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    t->fn = fn;
    t->arg = arg;
    if (pthread_create(&t->t, NULL, trampoline, t) != 0) {
        free(t);
        return NULL;
    }
    return t;
}

void etl_thread_join(struct etl_thread *t)
{
    pthread_join(t->t, NULL);
    free(t);
}
