/* Running one job per source at once (POSIX threads, part of glibc). */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cli-parallel.h"

struct job {
    void (*fn)(void *arg, size_t i);
    void *arg;
    size_t i;
};

static void *run_job(void *p)
{
    struct job *j = p;
    j->fn(j->arg, j->i);
    return NULL;
}

void cli_parallel(size_t n, void (*fn)(void *arg, size_t i), void *arg)
{
    struct job *jobs = n > 1 ? calloc(n, sizeof *jobs) : NULL;
    pthread_t *threads = n > 1 ? calloc(n, sizeof *threads) : NULL;
    bool *started = n > 1 ? calloc(n, sizeof *started) : NULL;

    if (!jobs || !threads || !started) { /* one source, or no memory: in turn */
        for (size_t i = 0; i < n; i++)
            fn(arg, i);
    } else {
        for (size_t i = 0; i < n; i++) {
            jobs[i] = (struct job){fn, arg, i};
            started[i] = pthread_create(&threads[i], NULL, run_job, &jobs[i]) == 0;
            if (!started[i])
                fn(arg, i);
        }
        for (size_t i = 0; i < n; i++)
            if (started[i])
                pthread_join(threads[i], NULL);
    }
    free(jobs);
    free(threads);
    free(started);
}
