/* Ctrl-C and sleeping for `ntlens samba-provider` on Windows. */
#include <windows.h>

#include "samba-provider.h"

static volatile LONG stopping;

static BOOL WINAPI on_ctrl(DWORD type)
{
    (void)type;
    InterlockedExchange(&stopping, 1);
    return TRUE;
}

void samba_provider_catch_signals(void)
{
    SetConsoleCtrlHandler(on_ctrl, TRUE);
}

bool samba_provider_stopping(void)
{
    return stopping != 0;
}

void samba_provider_sleep_ms(unsigned ms)
{
    while (ms > 0 && !stopping) {
        unsigned step = ms < 100 ? ms : 100;
        Sleep(step);
        ms -= step;
    }
}
