/* --help and the man page's SYNOPSIS and OPTIONS, both from the option
 * table (parse-options.h), so neither can drift from what is parsed. */
#include <string.h>

#include "parse-options.h"

#define HELP_COLUMN 27

static bool shown(const struct opt *o)
{
    return o->type != OPT_TYPE_GROUP && !(o->flags & OPT_HIDDEN);
}

/* "-r, --refresh SECONDS", "    --format FORMAT", "-s[SECONDS]". */
static size_t spell(const struct opt *o, char *buf, size_t size)
{
    bool optarg = o->flags & OPT_OPTARG;
    size_t n;

    if (o->short_name && o->long_name)
        n = (size_t)snprintf(buf, size, "-%c, --%s", o->short_name, o->long_name);
    else if (o->short_name)
        n = (size_t)snprintf(buf, size, "-%c", o->short_name);
    else
        n = (size_t)snprintf(buf, size, "    --%s", o->long_name);
    if (o->argh && n < size)
        n += (size_t)snprintf(buf + n, size - n, optarg ? "[%s%s]" : "%s%s",
                              optarg ? (o->long_name ? "=" : "") : " ", o->argh);
    return n < size ? n : size - 1;
}

static void print_wrapped_help(FILE *f, const char *help, size_t col)
{
    const char *line = help;
    for (;;) {
        size_t n = strcspn(line, "\n");
        fprintf(f, "%*s%.*s\n", (int)(HELP_COLUMN - col), "", (int)n, line);
        if (!line[n])
            break;
        line += n + 1;
        col = 0;
    }
}

static void print_option_help(FILE *f, const struct opt *o)
{
    char spelled[96], text[1024];
    size_t n = spell(o, spelled, sizeof spelled) + 2;

    snprintf(text, sizeof text, "%s%s%s%s", o->help ? o->help : "",
             o->aliases ? " (also " : "", o->aliases ? o->aliases : "", o->aliases ? ")" : "");
    fprintf(f, "  %s", spelled);
    if (n >= HELP_COLUMN - 1) {
        fputc('\n', f);
        n = 0;
    }
    print_wrapped_help(f, text, n);
}

void opt_print_help(const struct opt_command *cmd, const struct opt *opts, FILE *f)
{
    bool heading = false;

    fprintf(f, "usage: ntlens %s [OPTIONS]%s%s\n", cmd->name, cmd->synopsis ? " " : "",
            cmd->synopsis ? cmd->synopsis : "");
    if (cmd->description)
        fprintf(f, "\n%s\n", cmd->description);
    for (const struct opt *o = opts; o->type != OPT_TYPE_END; o++) {
        if (o->type == OPT_TYPE_GROUP) {
            fprintf(f, "\n%s:\n", o->help);
            heading = true;
        } else if (shown(o)) {
            if (!heading)
                fputc('\n', f);
            heading = true;
            print_option_help(f, o);
        }
    }
    fputs("\n  -h, --help               show this help\n", f);
}

/* ---- roff ---- */

/* Text as roff: backslashes and dashes escaped, a leading dot or quote
 * made literal. */
static void roff_text(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        if (i == 0 || s[i - 1] == '\n')
            if (s[i] == '.' || s[i] == '\'')
                fputs("\\&", f);
        if (s[i] == '\\')
            fputs("\\e", f);
        else if (s[i] == '-')
            fputs("\\-", f);
        else
            fputc(s[i], f);
    }
}

static void roff_str(FILE *f, const char *s)
{
    roff_text(f, s, strlen(s));
}

static void man_option(FILE *f, const struct opt *o)
{
    bool optarg = o->flags & OPT_OPTARG;

    fputs(".TP\n", f);
    if (o->short_name)
        fprintf(f, "\\fB\\-%c\\fR", o->short_name);
    if (o->short_name && o->long_name)
        fputs(", ", f);
    if (o->long_name) {
        fputs("\\fB\\-\\-", f);
        roff_str(f, o->long_name);
        fputs("\\fR", f);
    }
    if (o->argh) {
        fputs(optarg ? "[" : " ", f);
        if (optarg && o->long_name)
            fputc('=', f);
        fputs("\\fI", f);
        roff_str(f, o->argh);
        fputs(optarg ? "\\fR]" : "\\fR", f);
    }
    fputc('\n', f);
    roff_str(f, o->help ? o->help : "");
    fputc('\n', f);
    if (o->aliases) {
        fputs(".br\nAlso spelled \\fB", f);
        roff_str(f, o->aliases);
        fputs("\\fR, as the tool it replaces spells it.\n", f);
    }
}

void opt_print_man_sections(const struct opt_command *cmd, const struct opt *opts, FILE *f)
{
    fputs(".SH SYNOPSIS\n.B ntlens ", f);
    roff_str(f, cmd->name);
    fputs("\n.RI [ OPTIONS ]\n", f);
    if (cmd->synopsis) {
        roff_str(f, cmd->synopsis);
        fputc('\n', f);
    }
    fputs(".SH OPTIONS\n", f);
    for (const struct opt *o = opts; o->type != OPT_TYPE_END; o++) {
        if (o->type == OPT_TYPE_GROUP) {
            fputs(".SS ", f);
            roff_str(f, o->help);
            fputc('\n', f);
        } else if (shown(o)) {
            man_option(f, o);
        }
    }
    fputs(".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nShow the options and exit.\n", f);
}
