/* A program with known hot functions for `ntlens profile -- hotprog`:
 * hot_lib (a shared library) does 70% of the main thread's work, hot_exe
 * (here) 30%, and a second thread makes system calls in a loop.
 *   hotprog ROUNDS */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

void hot_lib(unsigned long n);

static volatile int done;

/* The same loop as hot_lib's, so work divides as iterations do. */
__attribute__((noinline)) void hot_exe(unsigned long n)
{
    volatile unsigned long sink = 0;
    for (unsigned long i = 0; i < n; i++)
        sink += i * i;
}

static void *syscalls(void *arg)
{
    (void)arg;
    while (!done)
        (void)getppid();
    return NULL;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 1000;
    pthread_t t;
    if (pthread_create(&t, NULL, syscalls, NULL) != 0)
        return 1;
    for (long r = 0; r < rounds; r++) {
        hot_lib(70000);
        hot_exe(30000);
    }
    done = 1;
    pthread_join(t, NULL);
    return 0;
}
