/* Platform helpers of `ntlens samba-provider`. */
#ifndef NTLENS_TOOL_SAMBA_PROVIDER_H
#define NTLENS_TOOL_SAMBA_PROVIDER_H

#include <stdbool.h>

/* Installs SIGINT/SIGTERM handlers that make samba_provider_stopping()
 * true (Windows: Ctrl-C). */
void samba_provider_catch_signals(void);
bool samba_provider_stopping(void);
/* Sleeps up to ms, returning early once stopping. */
void samba_provider_sleep_ms(unsigned ms);

#endif
