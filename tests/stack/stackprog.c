/* Threads that sit in known functions, for `ntlens stacks` against
 * `eu-stack`: a blocking read, a condition-variable (futex) wait, a busy
 * loop, a 20-deep recursion, a wait inside a shared library, one inside a
 * library without unwind data (found by frame pointer), and a wait inside
 * an inlined function. Prints "ready" when every thread is in place,
 * then waits until stdin closes. With an argument N (bench mode), runs N
 * threads, each blocked 20 frames deep. With "vfork", one more thread sits
 * in vfork for 3 seconds (an uninterruptible wait) while its child sleeps.
 * Built with -O1 -g: real code, with the inlining and CFI a release has. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int stacklib_wait(int fd);
int stacknocfi_wait(int fd);

static int pipe_fds[2];
static atomic_int ready;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static volatile unsigned long spins;

__attribute__((noinline)) static int block_in_read(void)
{
    char c;
    atomic_fetch_add(&ready, 1);
    int r = (int)read(pipe_fds[0], &c, 1);
    return r + 1;
}

static void *reader(void *arg)
{
    (void)arg;
    block_in_read();
    return NULL;
}

__attribute__((noinline)) static void wait_on_cond(void)
{
    pthread_mutex_lock(&lock);
    atomic_fetch_add(&ready, 1);
    for (;;)
        pthread_cond_wait(&never, &lock);
}

static void *condwait(void *arg)
{
    (void)arg;
    wait_on_cond();
    return NULL;
}

__attribute__((noinline)) static void busy_loop(void)
{
    atomic_fetch_add(&ready, 1);
    for (;;)
        spins++;
}

static void *busy(void *arg)
{
    (void)arg;
    busy_loop();
    return NULL;
}

__attribute__((noinline)) int recurse(int depth)
{
    if (depth == 0)
        return block_in_read();
    return recurse(depth - 1) + 1; /* the addition keeps the call a real frame */
}

static void *recurser(void *arg)
{
    (void)arg;
    recurse(19);
    return NULL;
}

static void *inlib(void *arg)
{
    (void)arg;
    atomic_fetch_add(&ready, 1);
    stacklib_wait(pipe_fds[0]);
    return NULL;
}

static void *nocfi(void *arg)
{
    (void)arg;
    atomic_fetch_add(&ready, 1);
    stacknocfi_wait(pipe_fds[0]);
    return NULL;
}

static inline __attribute__((always_inline)) int inlined_wait(void)
{
    char c;
    atomic_fetch_add(&ready, 1);
    return (int)read(pipe_fds[0], &c, 1) * 3;
}

__attribute__((noinline)) static int outer_of_inlined(void)
{
    return inlined_wait() + 7;
}

static void *inlined(void *arg)
{
    (void)arg;
    outer_of_inlined();
    return NULL;
}

/* The parent of a vfork waits, killable only, until the child exits. */
static void *vforker(void *arg)
{
    (void)arg;
    atomic_fetch_add(&ready, 1);
    if (vfork() == 0) {
        usleep(3000000);
        _exit(0);
    }
    block_in_read();
    return NULL;
}

static void start(void *(*fn)(void *), const char *name)
{
    pthread_t t;
    if (pthread_create(&t, NULL, fn, NULL) != 0) {
        perror("pthread_create");
        exit(1);
    }
    pthread_setname_np(t, name);
}

int main(int argc, char **argv)
{
    int expected = 7;
    if (pipe(pipe_fds) != 0)
        return 1;
    if (argc > 1 && !strcmp(argv[1], "vfork")) {
        start(vforker, "vforker");
        expected = 1;
    } else if (argc > 1) {
        expected = atoi(argv[1]);
        for (int i = 0; i < expected; i++) {
            pthread_attr_t a;
            pthread_t t;
            pthread_attr_init(&a);
            pthread_attr_setstacksize(&a, 64 << 10);
            if (pthread_create(&t, &a, recurser, NULL) != 0)
                return 1;
        }
    } else {
        start(reader, "reader");
        start(condwait, "condwait");
        start(busy, "busy");
        start(recurser, "recurse");
        start(inlib, "inlib");
        start(nocfi, "nocfi");
        start(inlined, "inlined");
    }
    while (atomic_load(&ready) < expected)
        usleep(1000);
    usleep(20000); /* from the counter to the system call */
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    char c;
    while (read(0, &c, 1) > 0)
        ;
    return 0;
}
