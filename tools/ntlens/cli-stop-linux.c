/* Ending a long-running command on SIGINT or SIGTERM (cli-stop.h) on POSIX
 * hosts. The handler only sets a flag and writes a byte to a pipe the sleep
 * polls, so a signal that arrives just before the sleep still ends it at once. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli-stop.h"

static volatile sig_atomic_t stopped;
static int wake[2] = {-1, -1};

static void on_signal(int sig)
{
    int saved = errno;
    (void)sig;
    stopped = 1;
    if (wake[1] >= 0 && write(wake[1], "", 1) < 0) {
        /* the pipe is full: a wake-up is already pending */
    }
    errno = saved;
}

void cli_stop_catch_signals(void)
{
    struct sigaction sa;

    if (pipe(wake) == 0) {
        for (int i = 0; i < 2; i++) {
            fcntl(wake[i], F_SETFL, fcntl(wake[i], F_GETFL) | O_NONBLOCK);
            fcntl(wake[i], F_SETFD, FD_CLOEXEC);
        }
    } else {
        wake[0] = wake[1] = -1; /* the sleep falls back to poll's timeout and EINTR */
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* SA_RESTART: a query in flight finishes; SA_RESETHAND: a second
     * signal of the same kind ends the process as it would have. */
    sa.sa_flags = SA_RESTART | SA_RESETHAND;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

bool cli_stop_requested(void)
{
    return stopped != 0;
}

const volatile sig_atomic_t *cli_stop_flag(void)
{
    return &stopped;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void cli_sleep_ms(unsigned ms)
{
    int64_t end = now_ms() + ms;

    while (!stopped) {
        int64_t left = end - now_ms();
        struct pollfd p = {.fd = wake[0], .events = POLLIN};
        if (left <= 0 || poll(&p, wake[0] >= 0 ? 1 : 0, (int)left) > 0)
            return;
    }
}
