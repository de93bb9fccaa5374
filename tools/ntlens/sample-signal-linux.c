/* Ctrl-C and SIGTERM for `ntlens sample` on POSIX hosts: a flag the
 * sampling loop checks between rows, so what was printed stays whole (a
 * JSON document gets its closing bracket). SA_RESTART lets a snapshot in
 * progress finish instead of failing with EINTR. */
#include <signal.h>
#include <string.h>
#include <time.h>

#include "sample.h"

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

void sample_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

bool sample_stopping(void)
{
    return stopping != 0;
}

void sample_sleep_ms(unsigned ms)
{
    /* In 100 ms steps so a signal ends the wait promptly. */
    while (ms > 0 && !stopping) {
        unsigned step = ms < 100 ? ms : 100;
        struct timespec ts = {0, (long)step * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
}
