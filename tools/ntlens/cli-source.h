/* The source and credential options every performance-data command shares
 * (OPT_SOURCE_OPTIONS, one entry each in a command's option table), and
 * opening the sources they name. Passwords never come from argv. */
#ifndef NTLENS_TOOL_CLI_SOURCE_H
#define NTLENS_TOOL_CLI_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "ntlens/source.h"
#include "parse-options.h"

#define CLI_SOURCE_MAX 256

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
            "how long one call to a remote server may take, all\n"                          \
            "its replies included, before giving up (default 30)"),                                          \
    OPT_U64(0, "max-block", &(cs)->max_block, "BYTES", 4096, 1u << 30,                       \
            "largest performance-data answer accepted (default 64 MiB)")

void cli_sources_init(struct cli_sources *cs);
/* Adds a source named other than by -S (PsList's \\HOST operand, a counter
 * path's machine). Returns false when CLI_SOURCE_MAX are there already. */
bool cli_sources_add(struct cli_sources *cs, const char *spec);
/* Opens every source ("local" when none was given), asking for a password
 * where a remote one needs it. The sources open at once, so a server that
 * stalls costs its own timeout, not the sum of everyone's. When any fails,
 * prints each failing source's own error and returns EXIT_FAIL (or
 * EXIT_USAGE) with nothing left open. */
int cli_sources_open(struct cli_sources *cs, const char *cmd, struct ntl_source **out);
/* The two halves of cli_sources_open, for a command that opens its sources
 * in parallel and goes on with those that answer: prepare checks the specs
 * and obtains the password (printing any failure); open_one opens source i
 * (safe from several threads at once). */
int cli_sources_prepare(struct cli_sources *cs, const char *cmd);
int cli_source_open_one(const struct cli_sources *cs, size_t i, struct ntl_source **out,
                        struct ntl_error *err);
void cli_sources_close(struct ntl_source **sources, size_t n);
/* Wipes the password copy. */
void cli_sources_clear(struct cli_sources *cs);

/* Takes NTLENS_PASSWORD out of the environment once, at start, before any
 * thread or SMB helper exists, so no /proc/PID/environ shows it; the sources
 * opened later use the copy, which is wiped once handed over. */
void cli_sources_take_env_password(void);

/* Reads a password from the terminal without echo. Returns false when there
 * is no terminal. Platform code: cli-prompt-linux.c, cli-prompt-win32.c. */
bool cli_prompt_password(const char *prompt, char *buf, size_t size);
/* Copies environment variable name into buf, wipes its value where the
 * environment holds it and removes it. False when it was not set. */
bool cli_take_env_secret(const char *name, char *buf, size_t size);

#endif
