/* A program with known hot functions for `ntlens profile -- hotprog`:
 * hot_lib (a shared library) does 70% of the main thread's work, hot_exe
 * (here) 30%, and a second thread makes system calls in bursts.
 *   hotprog ROUNDS */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

unsigned long hot_lib(unsigned long n);

static volatile int done;
volatile unsigned long result;

/* The same loop as hot_lib's, so work divides as iterations do. */
__attribute__((noinline)) unsigned long hot_exe(unsigned long n)
{
    volatile unsigned long sink = 0;
    for (unsigned long i = 0; i < n; i++)
        sink += i * i;
    return sink;
}

/* Bursts of system calls with pauses between, so that the thread shows in
 * the kernel without taking a CPU from main on a shared machine. */
static void *syscalls(void *arg)
{
    (void)arg;
    while (!done) {
        for (int i = 0; i < 200; i++)
            (void)getppid();
        usleep(500);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 1000;
    pthread_t t;
    if (pthread_create(&t, NULL, syscalls, NULL) != 0)
        return 1;
    for (long r = 0; r < rounds; r++) {
        result += hot_lib(70000);
        result += hot_exe(30000);
    }
    done = 1;
    pthread_join(t, NULL);
    return 0;
}
