/* Options every performance-data command shares, and opening its sources:
 *   -S, --source SPEC        local (default), a capture file, smb://[DOMAIN;]USER@HOST[:PORT],
 *                            \\HOST; repeatable for several hosts at once
 *   -U, --user [DOMAIN/]USER remote user (password: prompt, NTLENS_PASSWORD, or -A)
 *   -A, --authentication-file FILE   smbclient's format: username=, password=, domain=
 *   -k, --kerberos           use the Kerberos ticket cache
 *   -N, --no-pass            anonymous, no password
 *       --timeout SECONDS    connect timeout for remote sources (default 10)
 *       --call-timeout SECONDS   wait for one remote reply at most this long (default 30)
 *       --max-block BYTES    cap on one performance-data answer (default 64 MiB)
 * Passwords never come from argv. */
#ifndef NTLENS_TOOL_CLI_SOURCE_H
#define NTLENS_TOOL_CLI_SOURCE_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "ntlens/source.h"
#include "parse-options.h"

#define CLI_SOURCE_MAX 256

enum {
    CLI_SOURCE_OPT_TIMEOUT = 0x1000,
    CLI_SOURCE_OPT_CALL_TIMEOUT,
    CLI_SOURCE_OPT_MAX_BLOCK,
};

/* Splice into a command's getopt_long tables. */
#define CLI_SOURCE_SHORTOPTS "S:U:A:kN"
#define CLI_SOURCE_LONGOPTS                                                   \
    {"source", required_argument, NULL, 'S'},                                 \
    {"user", required_argument, NULL, 'U'},                                   \
    {"authentication-file", required_argument, NULL, 'A'},                    \
    {"kerberos", no_argument, NULL, 'k'},                                     \
    {"no-pass", no_argument, NULL, 'N'},                                      \
    {"timeout", required_argument, NULL, CLI_SOURCE_OPT_TIMEOUT},             \
    {"call-timeout", required_argument, NULL, CLI_SOURCE_OPT_CALL_TIMEOUT},   \
    {"max-block", required_argument, NULL, CLI_SOURCE_OPT_MAX_BLOCK}

/* For --help texts. */
extern const char cli_source_help[];

struct cli_sources {
    const char *specs[CLI_SOURCE_MAX];
    size_t nspecs;
    struct ntl_source_options opt;
    const char *auth_file;
    long timeout_s, call_timeout_s; /* 0: the library's default */
    uint64_t max_block;             /* 0: the library's default */
    char user[256];
    char domain[256];
    char password[256];
};

/* The source and credential options, for a command's option table:
 * OPT_SOURCE_OPTIONS(&cs) expands to a group of entries. PsList's -u USER
 * is -U; its -p PASSWORD is refused, since argv is visible to every user. */
int cli_source_option_cb(const struct opt *o, const char *arg, void *cs);
int cli_user_option_cb(const struct opt *o, const char *arg, void *cs);
#define OPT_SOURCE_OPTIONS(cs)                                                               \
    OPT_GROUP("Source options"),                                                             \
    OPT_CALLBACK('S', "source", "SPEC", cli_source_option_cb, (cs),                          \
                 "local (default), a capture file, smb://[DOMAIN;]USER@HOST[:PORT]\n"        \
                 "or \\\\HOST; repeat for several hosts, queried in parallel"),               \
    OPT_CALLBACK('U', "user", "[DOMAIN/]USER", cli_user_option_cb, (cs),                     \
                 "remote user; the password comes from a prompt, from\n"                     \
                 "NTLENS_PASSWORD, or from -A, never from the command line",                 \
                 .aliases = "-u"),                                                           \
    OPT_REFUSED('p', "password", "PASSWORD",                                                 \
                "a password on the command line is visible to every user of the machine;\n" \
                "use the prompt, NTLENS_PASSWORD or -A FILE", .flags = OPT_HIDDEN),          \
    OPT_STRING('A', "authentication-file", &(cs)->auth_file, "FILE",                         \
               "smbclient's format: username=, password=, domain= lines"),                   \
    OPT_FLAG('k', "kerberos", &(cs)->opt.kerberos, "authenticate with the Kerberos ticket cache"), \
    OPT_FLAG('N', "no-pass", &(cs)->opt.anonymous, "connect anonymously"),                  \
    OPT_INT(0, "timeout", &(cs)->timeout_s, "SECONDS", 1, 3600,                              \
            "connect timeout for remote sources (default 10)"),                              \
    OPT_INT(0, "call-timeout", &(cs)->call_timeout_s, "SECONDS", 1, 3600,                    \
            "how long to wait for one reply of a remote server\n"                            \
            "before giving up on it (default 30)"),                                          \
    OPT_U64(0, "max-block", &(cs)->max_block, "BYTES", 4096, 1u << 30,                       \
            "largest performance-data answer accepted (default 64 MiB)")

void cli_sources_init(struct cli_sources *cs);
/* Handles one getopt result. Returns 1 when it was a source option, 0 when
 * not, or -1 after printing a usage error (the command exits 2). */
int cli_sources_option(struct cli_sources *cs, const char *cmd, int opt, const char *arg);
/* Adds a positional source (PsList's \\HOST). */
int cli_sources_add(struct cli_sources *cs, const char *cmd, const char *spec);
/* Opens every source ("local" when none was given), asking for a password
 * where a remote one needs it. On failure prints the error and returns
 * EXIT_FAIL (or EXIT_USAGE) with nothing left open. */
int cli_sources_open(struct cli_sources *cs, const char *cmd, struct ntl_source **out);
void cli_sources_close(struct ntl_source **sources, size_t n);
/* Wipes the password copy. */
void cli_sources_clear(struct cli_sources *cs);

/* Reads a password from the terminal without echo. Returns false when there
 * is no terminal. Platform code: cli-prompt-linux.c, cli-prompt-win32.c. */
bool cli_prompt_password(const char *prompt, char *buf, size_t size);

#endif
