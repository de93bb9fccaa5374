/* Parsing and validation from a command's option table (parse-options.h). */
#include "parse-options.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

/* --help-man, hidden: the build makes the man pages' SYNOPSIS and OPTIONS with it. */
enum { PARSE_OPT_MAN = -3 };

/* The parse in progress: errors name the command and the spelling typed. */
struct parse_state {
    const struct opt_command *cmd;
    const struct opt *opts;
    const char *spelling;        /* "-r", "--refresh", "-si" */
    char spelling_buf[3];
    const struct opt *mode_opt[16]; /* CMDMODE entries given, to name a conflict */
    size_t nmodes;
};

static struct parse_state state;

/* Options given in the last parse, by table position (for opt_given). */
static const struct opt *given_table;
static unsigned char given[256];

static void vusage(const char *fmt, va_list ap)
{
    fprintf(stderr, "ntlens %s: ", state.cmd->name);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'ntlens %s --help'.\n", state.cmd->name);
}

static int usage(const char *fmt, ...) NTL_PRINTF(1, 2);
static int usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vusage(fmt, ap);
    va_end(ap);
    return PARSE_OPT_ERROR;
}

int opt_error(const struct opt *o, const char *fmt, ...)
{
    va_list ap;
    (void)o;
    fprintf(stderr, "ntlens %s: option '%s' ", state.cmd->name, state.spelling);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'ntlens %s --help'.\n", state.cmd->name);
    return PARSE_OPT_ERROR;
}

int opt_usage_error(const struct opt_command *cmd, const char *fmt, ...)
{
    va_list ap;
    state.cmd = cmd;
    va_start(ap, fmt);
    vusage(fmt, ap);
    va_end(ap);
    return EXIT_USAGE;
}

int parse_options_exit(int rc)
{
    return rc == PARSE_OPT_HELP ? EXIT_OK : EXIT_USAGE;
}

bool opt_given(const struct opt *opts, const char *long_name)
{
    if (opts != given_table)
        return false;
    for (size_t i = 0; opts[i].type != OPT_TYPE_END && i < sizeof given; i++)
        if (opts[i].long_name && !strcmp(opts[i].long_name, long_name))
            return given[i];
    return false;
}

/* ---- describing what an option wants ---- */

/* "SECONDS, a whole number from 1 to 3600", "FORMAT, one of table, csv". */
static const char *describe(const struct opt *o, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "%s", o->argh ? o->argh : "a value");
    switch (o->type) {
    case OPT_TYPE_INT:
        snprintf(buf + n, size - n, ", a whole number from %" PRId64 " to %" PRId64, o->min, o->max);
        break;
    case OPT_TYPE_U64:
        snprintf(buf + n, size - n, ", a number from %" PRIu64 " to %" PRIu64 " (0x for hex)",
                 (uint64_t)o->min, (uint64_t)o->max);
        break;
    case OPT_TYPE_CHOICE:
        for (size_t i = 0; o->choices[i] && n < size; i++)
            n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : ", one of ", o->choices[i]);
        break;
    default:
        break;
    }
    return buf;
}

static int bad_value(const struct opt *o, const char *arg)
{
    char want[256];
    return opt_error(o, "needs %s, not '%s'", describe(o, want, sizeof want), arg);
}

/* ---- applying one option ---- */

static bool parse_u64(const char *s, uint64_t *v)
{
    char *end;
    if (!*s || *s == '-' || *s == '+' || *s == ' ')
        return false;
    errno = 0;
    *v = strtoull(s, &end, 0);
    return !errno && !*end;
}

static int set_cmdmode(const struct opt *o)
{
    int *v = o->value;
    for (size_t i = 0; i < state.nmodes; i++) {
        const struct opt *m = state.mode_opt[i];
        if (m->value == o->value && m->defval != o->defval) {
            char other[64];
            if (m->long_name)
                snprintf(other, sizeof other, "--%s", m->long_name);
            else
                snprintf(other, sizeof other, "-%c", m->short_name);
            return opt_error(o, "cannot be used with '%s'", other);
        }
    }
    if (state.nmodes < sizeof state.mode_opt / sizeof state.mode_opt[0])
        state.mode_opt[state.nmodes++] = o;
    *v = (int)o->defval;
    return 0;
}

static int apply(const struct opt *o, const char *arg)
{
    long l;
    uint64_t u;

    if ((size_t)(o - state.opts) < sizeof given)
        given[o - state.opts] = 1;
    switch (o->type) {
    case OPT_TYPE_FLAG:
        *(bool *)o->value = true;
        return 0;
    case OPT_TYPE_CMDMODE:
        return set_cmdmode(o);
    case OPT_TYPE_STRING:
        *(const char **)o->value = arg;
        return 0;
    case OPT_TYPE_LIST: {
        struct opt_list *list = o->value;
        if (list->n == OPT_LIST_MAX)
            return opt_error(o, "may be given at most %d times", OPT_LIST_MAX);
        list->items[list->n++] = arg;
        return 0;
    }
    case OPT_TYPE_INT:
        if (!arg) /* an optional argument that was not given */
            return 0;
        if (!cli_parse_int(arg, (long)o->min, (long)o->max, &l))
            return bad_value(o, arg);
        *(long *)o->value = l;
        return 0;
    case OPT_TYPE_U64:
        if (!parse_u64(arg, &u) || u < (uint64_t)o->min || u > (uint64_t)o->max)
            return bad_value(o, arg);
        *(uint64_t *)o->value = u;
        return 0;
    case OPT_TYPE_CHOICE:
        for (int i = 0; o->choices[i]; i++)
            if (!strcasecmp(o->choices[i], arg)) {
                *(int *)o->value = i;
                return 0;
            }
        return bad_value(o, arg);
    case OPT_TYPE_CALLBACK:
        return o->callback(o, arg, o->ctx);
    case OPT_TYPE_REFUSED: {
        char reason[512];
        snprintf(reason, sizeof reason, "%s", o->help);
        for (char *p = reason; *p; p++) /* help's line breaks are for --help */
            if (*p == '\n')
                *p = ' ';
        return opt_error(o, "is not accepted: %s", reason);
    }
    default:
        return usage("internal error: option table entry of type %d", (int)o->type);
    }
}

static bool takes_arg(const struct opt *o)
{
    return o->argh != NULL;
}

/* ---- finding the entry ---- */

static bool alias_is(const struct opt *o, const char *word, size_t len)
{
    const char *a = o->aliases;
    while (a && *a) {
        size_t n = strcspn(a, " ");
        if (n == len && !strncmp(a, word, len))
            return true;
        a += n;
        a += strspn(a, " ");
    }
    return false;
}

static const struct opt *find_short(int c)
{
    char word[3] = {'-', (char)c, '\0'};
    for (const struct opt *o = state.opts; o->type != OPT_TYPE_END; o++)
        if (o->type != OPT_TYPE_GROUP && (o->short_name == c || alias_is(o, word, 2)))
            return o;
    return NULL;
}

/* Exact long name, else a unique prefix of one (getopt_long's rule). */
static const struct opt *find_long(const char *name, size_t len, int *rc)
{
    const struct opt *found = NULL;
    *rc = 0;
    for (const struct opt *o = state.opts; o->type != OPT_TYPE_END; o++)
        if (o->long_name && strlen(o->long_name) == len && !strncmp(o->long_name, name, len))
            return o;
    for (const struct opt *o = state.opts; o->type != OPT_TYPE_END; o++) {
        if (!o->long_name || strncmp(o->long_name, name, len) || (o->flags & OPT_HIDDEN))
            continue;
        if (found) {
            *rc = usage("option '--%.*s' is ambiguous: --%s or --%s?", (int)len, name,
                        found->long_name, o->long_name);
            return NULL;
        }
        found = o;
    }
    return found;
}

static const struct opt *find_word_alias(const char *word)
{
    size_t len = strlen(word);
    if (len < 3)
        return NULL;
    for (const struct opt *o = state.opts; o->type != OPT_TYPE_END; o++)
        if (o->type != OPT_TYPE_GROUP && alias_is(o, word, len))
            return o;
    return NULL;
}

/* The argument of an option whose word holds none: the next word, or, for an
 * optional argument, the next word only when it is a number (PsList's
 * "-s 5"); *i is moved past a word taken. */
static int apply_next_word(const struct opt *o, int argc, char **argv, int *i)
{
    if (o->flags & OPT_OPTARG) {
        if ((o->flags & OPT_NEXT_NUMBER) && *i + 1 < argc && cli_is_decimal(argv[*i + 1]))
            return apply(o, argv[++*i]);
        return apply(o, NULL);
    }
    if (*i + 1 >= argc) {
        char want[256];
        return opt_error(o, "needs %s", describe(o, want, sizeof want));
    }
    return apply(o, argv[++*i]);
}

/* ---- the words ---- */

/* "--name", "--name=ARG" or "--name ARG"; *i is the word's index. */
static int parse_long(int argc, char **argv, int *i)
{
    const char *word = argv[*i] + 2, *eq = strchr(word, '=');
    size_t len = eq ? (size_t)(eq - word) : strlen(word);
    const struct opt *o;
    int rc;

    if (len == 4 && !strncmp(word, "help", 4) && !eq)
        return PARSE_OPT_HELP;
    if (len == 8 && !strncmp(word, "help-man", 8) && !eq)
        return PARSE_OPT_MAN;
    if (!(o = find_long(word, len, &rc)))
        return rc ? rc : usage("unknown option '--%.*s'", (int)len, word);
    state.spelling = argv[*i];
    if (eq) {
        static char spelled[128];
        snprintf(spelled, sizeof spelled, "--%s", o->long_name);
        state.spelling = spelled;
    }
    if (!takes_arg(o)) {
        if (eq)
            return opt_error(o, "takes no value");
        return apply(o, NULL);
    }
    if (eq)
        return apply(o, eq + 1);
    return apply_next_word(o, argc, argv, i);
}

/* "-x", "-abc" (flags clustered), "-rVALUE" or "-r VALUE". */
static int parse_short(int argc, char **argv, int *i)
{
    for (const char *p = argv[*i] + 1; *p; p++) {
        const struct opt *o;
        state.spelling_buf[0] = '-';
        state.spelling_buf[1] = *p;
        state.spelling = state.spelling_buf;
        if (*p == 'h' && !find_short('h'))
            return PARSE_OPT_HELP;
        if (!(o = find_short((unsigned char)*p))) {
            if (p == argv[*i] + 1)
                return usage("unknown option '%s'", argv[*i]);
            return usage("unknown option '-%c' in '%s'", *p, argv[*i]);
        }
        if (!takes_arg(o)) {
            int rc = apply(o, NULL);
            if (rc < 0)
                return rc;
            continue;
        }
        if (p[1])
            return apply(o, p + 1);
        return apply_next_word(o, argc, argv, i);
    }
    return 0;
}

/* A whole-word compatibility spelling ("-si 5"); 1 when word was one. */
static int parse_word_alias(int argc, char **argv, int *i, int *rc)
{
    const struct opt *o = find_word_alias(argv[*i]);
    if (!o)
        return 0;
    state.spelling = argv[*i];
    *rc = takes_arg(o) ? apply_next_word(o, argc, argv, i) : apply(o, NULL);
    return 1;
}

int parse_options(const struct opt_command *cmd, const struct opt *opts, int argc, char **argv)
{
    int nops = 0, rc = 0;
    bool only_operands = false;

    memset(&state, 0, sizeof state);
    memset(given, 0, sizeof given);
    state.cmd = cmd;
    state.opts = opts;
    given_table = opts;
    for (int i = 1; i < argc && rc >= 0; i++) {
        const char *w = argv[i];
        if (only_operands || w[0] != '-' || !w[1]) {
            argv[++nops] = argv[i];
            continue;
        }
        if (!strcmp(w, "--")) {
            only_operands = true;
            continue;
        }
        if (parse_word_alias(argc, argv, &i, &rc))
            continue;
        rc = w[1] == '-' ? parse_long(argc, argv, &i) : parse_short(argc, argv, &i);
    }
    if (rc == PARSE_OPT_MAN) {
        opt_print_man_sections(cmd, opts, stdout);
        rc = PARSE_OPT_HELP;
    } else if (rc == PARSE_OPT_HELP) {
        opt_print_help(cmd, opts, stdout);
    }
    if (rc < 0)
        return rc;
    argv[nops + 1] = NULL;
    return nops;
}
