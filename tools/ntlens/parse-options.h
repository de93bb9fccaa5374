/* One declarative option table per command, git's parse-options as the
 * model: each entry gives the long name, the short letter, the argument, the
 * help line and where the value goes. From the table come parsing,
 * validation with one wording for every mistake, `--help`, and the SYNOPSIS
 * and OPTIONS sections of the command's man page. Option sets several
 * commands share (sources and credentials, output format, ETL reading) are
 * macros that expand to entries, so a command concatenates them into its
 * table.
 *
 *     struct opt opts[] = {
 *         OPT_GROUP("View"),
 *         OPT_CMDMODE('d', "threads", &o.view, VIEW_THREADS, "thread detail"),
 *         OPT_INT('i', "interval", &o.interval, "SECONDS", 1, 86400, "refresh every SECONDS"),
 *         OPT_FORMAT(&o.fmt),
 *         OPT_END(),
 *     };
 *     int n = parse_options(&ps_command, opts, argc, argv);
 *     if (n < 0)
 *         return parse_options_exit(n);   // --help: 0; a mistake: 2
 *     // argv[1..n] are the operands, in order.
 */
#ifndef NTLENS_TOOL_PARSE_OPTIONS_H
#define NTLENS_TOOL_PARSE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ntlens/error.h"

enum opt_type {
    OPT_TYPE_END,
    OPT_TYPE_GROUP,    /* a heading in --help and the man page */
    OPT_TYPE_FLAG,     /* bool *value = true */
    OPT_TYPE_CMDMODE,  /* int *value = defval; two different modes conflict */
    OPT_TYPE_STRING,   /* const char **value = the argument */
    OPT_TYPE_LIST,     /* appended to struct opt_list *value (repeatable) */
    OPT_TYPE_INT,      /* long *value, a whole number in [min, max] */
    OPT_TYPE_U64,      /* uint64_t *value in [min, max]; 0x hex accepted */
    OPT_TYPE_CHOICE,   /* int *value = index of the argument in choices */
    OPT_TYPE_CALLBACK, /* callback(opt, arg, ctx) */
    OPT_TYPE_REFUSED,  /* always a usage error: help says why */
};

enum {
    OPT_OPTARG = 1 << 0,      /* the argument is optional: --name[=ARG], -xARG */
    OPT_NEXT_NUMBER = 1 << 1, /* with OPT_OPTARG: a number in the next word is the argument too */
    OPT_HIDDEN = 1 << 2,      /* parsed, not shown in --help or the man page */
};

struct opt;

/* A callback returns 0, or the result of opt_error() for a bad argument. */
typedef int (*opt_callback_fn)(const struct opt *o, const char *arg, void *ctx);

struct opt {
    enum opt_type type;
    int short_name;           /* 0: none */
    const char *long_name;    /* NULL: none */
    void *value;
    const char *argh;         /* the argument's name in help: "SECONDS"; NULL: takes none */
    const char *help;
    unsigned flags;
    intptr_t defval;          /* CMDMODE's mode; FLAG's value is always true */
    int64_t min, max;         /* INT and U64 */
    const char *const *choices; /* CHOICE: NULL-terminated, matched case-insensitively */
    opt_callback_fn callback;
    void *ctx;
    /* Compatibility spellings of the tool a command replaces, space
     * separated: "-r" acts as one more short letter, "-si" must be a whole
     * word whose argument is the next word. */
    const char *aliases;
};

/* Values of a repeatable option, in order. */
#define OPT_LIST_MAX 256
struct opt_list {
    const char *items[OPT_LIST_MAX];
    size_t n;
};

/* Every macro takes further designated initializers at its end, e.g.
 * OPT_INT(..., .flags = OPT_OPTARG | OPT_NEXT_NUMBER, .aliases = "-s"). */
#define OPT_END() {.type = OPT_TYPE_END}
#define OPT_GROUP(title) {.type = OPT_TYPE_GROUP, .help = (title)}
#define OPT_FLAG(s, l, v, h, ...)                                                         \
    {.type = OPT_TYPE_FLAG, .short_name = (s), .long_name = (l), .value = (v), .help = (h), \
     __VA_ARGS__}
#define OPT_CMDMODE(s, l, v, mode, h, ...)                                                \
    {.type = OPT_TYPE_CMDMODE, .short_name = (s), .long_name = (l), .value = (v),         \
     .defval = (mode), .help = (h), __VA_ARGS__}
#define OPT_STRING(s, l, v, a, h, ...)                                                    \
    {.type = OPT_TYPE_STRING, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), \
     .help = (h), __VA_ARGS__}
#define OPT_LIST(s, l, v, a, h, ...)                                                      \
    {.type = OPT_TYPE_LIST, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), \
     .help = (h), __VA_ARGS__}
#define OPT_INT(s, l, v, a, lo, hi, h, ...)                                               \
    {.type = OPT_TYPE_INT, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), \
     .min = (lo), .max = (hi), .help = (h), __VA_ARGS__}
#define OPT_U64(s, l, v, a, lo, hi, h, ...)                                               \
    {.type = OPT_TYPE_U64, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), \
     .min = (int64_t)(lo), .max = (int64_t)(hi), .help = (h), __VA_ARGS__}
#define OPT_CHOICE(s, l, v, a, names, h, ...)                                             \
    {.type = OPT_TYPE_CHOICE, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), \
     .choices = (names), .help = (h), __VA_ARGS__}
/* argh NULL: the callback gets arg NULL. */
#define OPT_CALLBACK(s, l, a, fn, c, h, ...)                                              \
    {.type = OPT_TYPE_CALLBACK, .short_name = (s), .long_name = (l), .argh = (a),         \
     .callback = (fn), .ctx = (c), .help = (h), __VA_ARGS__}
/* An option that is always refused, help saying why (PsList's -p PASSWORD). */
#define OPT_REFUSED(s, l, a, reason, ...)                                                 \
    {.type = OPT_TYPE_REFUSED, .short_name = (s), .long_name = (l), .argh = (a),          \
     .help = (reason), __VA_ARGS__}

/* What a command is, for its usage line, --help and man page. */
struct opt_command {
    const char *name;           /* "ps", "ipt dump" */
    const char *synopsis;       /* operands after the options: "[\\\\COMPUTER] [NAME | PID]" */
    const char *summary;        /* one line: "list processes and threads (PsList)" */
    const char *description;    /* paragraphs for --help, "\n"-separated */
};

/* Parses argv[1..argc) against opts: options and operands may mix, "--"
 * ends the options. Returns the number of operands, moved to argv[1..n] in
 * order, or a negative PARSE_OPT_* value after printing help (--help) or a
 * usage error (with a pointer to --help) on stderr. */
enum { PARSE_OPT_HELP = -1, PARSE_OPT_ERROR = -2 };
int parse_options(const struct opt_command *cmd, const struct opt *opts, int argc, char **argv);

/* The exit code for a negative parse_options() result: 0 after --help, 2 after a mistake. */
int parse_options_exit(int rc);

/* From a callback: prints "ntlens CMD: option 'SPELLING' MESSAGE" as a usage
 * error and returns PARSE_OPT_ERROR. */
int opt_error(const struct opt *o, const char *fmt, ...) NTL_PRINTF(2, 3);

/* A usage error about operands or option combinations, worded like the
 * parser's own; returns 2 (the exit code). */
int opt_usage_error(const struct opt_command *cmd, const char *fmt, ...) NTL_PRINTF(2, 3);

/* True when the option (by long name) was given on the command line during
 * the last parse_options() with this table. */
bool opt_given(const struct opt *opts, const char *long_name);

/* --help text (usage line, description, options by group). */
void opt_print_help(const struct opt_command *cmd, const struct opt *opts, FILE *f);
/* The man page's SYNOPSIS and OPTIONS sections in roff. */
void opt_print_man_sections(const struct opt_command *cmd, const struct opt *opts, FILE *f);

#endif
