/* Conventions every subcommand shares: how errors reach the user, and the
 * exit codes (0 ok, 1 failure, 2 usage error). */
#ifndef NTLENS_TOOL_CLI_H
#define NTLENS_TOOL_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "ntlens/error.h"

#define EXIT_OK 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2
/* From a command's argument parsing: go on and run (any other value is the
 * exit code, e.g. 0 after --help). */
#define CLI_CONTINUE (-1)

/* "ntlens CMD: MESSAGE" plus a pointer to --help; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) NTL_PRINTF(2, 3);
/* "ntlens CMD: [CONTEXT: ]ERROR" from a library error; returns EXIT_FAIL. */
int cli_fail(const char *cmd, const struct ntl_error *err, const char *context);
/* "ntlens CMD: MESSAGE"; returns EXIT_FAIL. */
int cli_failf(const char *cmd, const char *fmt, ...) NTL_PRINTF(2, 3);
void cli_warn(const char *cmd, const char *fmt, ...) NTL_PRINTF(2, 3);

/* Strict number parsing for option values: the whole string must be a number
 * in range (0x prefix accepted by the u64 form). */
bool cli_parse_u64(const char *s, uint64_t *v);
bool cli_parse_int(const char *s, long min, long max, long *v);
bool cli_parse_double(const char *s, double *v);
/* True when s is one or more decimal digits and nothing else. */
bool cli_is_decimal(const char *s);

/* True when a progress bar or a password prompt may use the terminal. */
bool cli_stderr_is_terminal(void);
/* True when stdout is a terminal (a refreshing view redraws in place). */
bool cli_stdout_is_terminal(void);

#endif
