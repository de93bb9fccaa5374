/* Timing and terminal checks for `ntlens ps -s` on POSIX hosts. */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "ps.h"

void ps_sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

bool ps_stdout_is_terminal(void)
{
    return isatty(1) != 0;
}
