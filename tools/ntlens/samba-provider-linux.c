/* Signals and sleeping for `ntlens samba-provider` on POSIX hosts. */
#include <signal.h>
#include <string.h>
#include <time.h>

#include "samba-provider.h"

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

void samba_provider_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

bool samba_provider_stopping(void)
{
    return stopping != 0;
}

void samba_provider_sleep_ms(unsigned ms)
{
    /* In 100 ms steps so a signal ends the wait promptly. */
    while (ms > 0 && !stopping) {
        unsigned step = ms < 100 ? ms : 100;
        struct timespec ts = {0, (long)step * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
}
