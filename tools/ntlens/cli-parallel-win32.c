/* Running one job per source at once (Windows threads). */
#include <windows.h>

#include <stdlib.h>

#include "cli-parallel.h"

struct job {
    void (*fn)(void *arg, size_t i);
    void *arg;
    size_t i;
};

static DWORD WINAPI run_job(LPVOID p)
{
    struct job *j = p;
    j->fn(j->arg, j->i);
    return 0;
}

void cli_parallel(size_t n, void (*fn)(void *arg, size_t i), void *arg)
{
    struct job *jobs = n > 1 ? calloc(n, sizeof *jobs) : NULL;
    HANDLE *threads = n > 1 ? calloc(n, sizeof *threads) : NULL;

    if (!jobs || !threads) { /* one source, or no memory: in turn */
        for (size_t i = 0; i < n; i++)
            fn(arg, i);
    } else {
        for (size_t i = 0; i < n; i++) {
            jobs[i] = (struct job){fn, arg, i};
            threads[i] = CreateThread(NULL, 0, run_job, &jobs[i], 0, NULL);
            if (!threads[i])
                fn(arg, i);
        }
        for (size_t i = 0; i < n; i++)
            if (threads[i]) {
                WaitForSingleObject(threads[i], INFINITE);
                CloseHandle(threads[i]);
            }
    }
    free(jobs);
    free(threads);
}
