/* Ctrl-C and Ctrl-Break for `ntlens sample` on Windows: a flag the sampling
 * loop checks between rows, so what was printed stays whole. */
#include <windows.h>

#include "sample.h"

static volatile LONG stopping;

static BOOL WINAPI on_ctrl(DWORD type)
{
    (void)type;
    InterlockedExchange(&stopping, 1);
    return TRUE;
}

void sample_catch_signals(void)
{
    SetConsoleCtrlHandler(on_ctrl, TRUE);
}

bool sample_stopping(void)
{
    return stopping != 0;
}

void sample_sleep_ms(unsigned ms)
{
    while (ms > 0 && !stopping) {
        unsigned step = ms < 100 ? ms : 100;
        Sleep(step);
        ms -= step;
    }
}
