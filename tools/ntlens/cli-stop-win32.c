/* Ending a long-running command on Ctrl-C or Ctrl-Break (cli-stop.h) on
 * Windows. The console runs the handler in a thread of its own: it sets a
 * flag and an event the sleep waits on. */
#include <windows.h>

#include "cli-stop.h"

static volatile LONG stopped;
/* The same, for cli_stop_flag's readers. */
static volatile sig_atomic_t stopped_flag;
static HANDLE wake;

static BOOL WINAPI on_ctrl(DWORD type)
{
    if (type != CTRL_C_EVENT && type != CTRL_BREAK_EVENT)
        return FALSE;
    /* a second one: the default handler ends the process */
    if (InterlockedExchange(&stopped, 1))
        return FALSE;
    stopped_flag = 1;
    if (wake)
        SetEvent(wake);
    return TRUE;
}

void cli_stop_catch_signals(void)
{
    wake = CreateEventA(NULL, TRUE, FALSE, NULL);
    SetConsoleCtrlHandler(on_ctrl, TRUE);
}

bool cli_stop_requested(void)
{
    return InterlockedCompareExchange(&stopped, 0, 0) != 0;
}

const volatile sig_atomic_t *cli_stop_flag(void)
{
    return &stopped_flag;
}

void cli_sleep_ms(unsigned ms)
{
    if (wake)
        WaitForSingleObject(wake, ms);
    else
        Sleep(ms);
}
