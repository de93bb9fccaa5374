/* A fixed amount of work through a three-deep call chain, for the sampling
 * overhead: it prints on stderr the CPU time its work took (user and
 * system, measured from inside, so the profiler's start and report are not
 * counted, nor other work on a shared machine), then its wall time (which
 * a profiler's own threads competing for the cores would stretch).
 *   spin ROUNDS */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

__attribute__((noinline)) static void leaf(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        sink += i * i;
}

__attribute__((noinline)) static void middle(unsigned long n)
{
    leaf(n);
    leaf(n / 2);
}

__attribute__((noinline)) static void top(unsigned long n) { middle(n); }

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 1000;
    struct timespec a, b, wa, wb;
    clock_gettime(CLOCK_MONOTONIC, &wa);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    for (long r = 0; r < rounds; r++)
        top(100000);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    clock_gettime(CLOCK_MONOTONIC, &wb);
    fprintf(stderr, "spin: %.6f s wall %.6f s\n",
            (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9,
            (double)(wb.tv_sec - wa.tv_sec) + (wb.tv_nsec - wa.tv_nsec) / 1e9);
    return 0;
}
