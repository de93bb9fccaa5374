/* Timing and terminal checks for `ntlens ps -s` on Windows. */
#include <windows.h>

#include <io.h>

#include "ps.h"

void ps_sleep_ms(unsigned ms)
{
    Sleep(ms);
}

bool ps_stdout_is_terminal(void)
{
    return _isatty(1) != 0;
}
