/* Stopping a long-running command (capture, sample, ps -s, samba-provider)
 * cleanly: the first Ctrl-C or SIGTERM (Windows: Ctrl-C or Ctrl-Break) sets a
 * flag the command checks between steps, so what it gathered is kept whole
 * (a file renamed into place, a JSON document closed); a second one ends the
 * process as usual. Platform code: cli-stop-linux.c, cli-stop-win32.c. */
#ifndef NTLENS_TOOL_CLI_STOP_H
#define NTLENS_TOOL_CLI_STOP_H

#include <signal.h>
#include <stdbool.h>

void cli_stop_catch_signals(void);
bool cli_stop_requested(void);
/* The flag itself, for a library walk that checks it between steps
 * (struct ntl_stack_options.stop). */
const volatile sig_atomic_t *cli_stop_flag(void);
/* Sleeps up to ms, returning at once when a stop is requested. Without
 * cli_stop_catch_signals it is a plain sleep. */
void cli_sleep_ms(unsigned ms);

#endif
