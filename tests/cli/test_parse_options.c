/* The option parser every command stands on: spellings, values, ranges,
 * modes, compatibility aliases, operands, and one wording per mistake. */
#include "check.h"

#include <unistd.h>

#include "parse-options.h"

static const struct opt_command cmd = {"demo", "[NAME]", "a demo", "Demo description."};

enum { MODE_NONE, MODE_A, MODE_B };

struct demo {
    bool flag;
    int mode;
    const char *str;
    struct opt_list list;
    long n, opt_n;
    uint64_t u;
    int choice;
    bool opt_n_given;
};

static const char *const colors[] = {"red", "green", NULL};

/* Runs the parser on a copy of words with stderr captured into err. */
static int run(struct demo *d, char *err, size_t errsize, const char *const *words)
{
    static char *argv[32];
    int argc = 0, saved = dup(2), rc;
    FILE *tmp = check_tmpfile();
    struct opt opts[] = {
        OPT_GROUP("Demo"),
        OPT_FLAG('q', "quiet", &d->flag, "be quiet"),
        OPT_CMDMODE('a', "alpha", &d->mode, MODE_A, "mode a"),
        OPT_CMDMODE('b', "beta", &d->mode, MODE_B, "mode b"),
        OPT_STRING('o', "output", &d->str, "FILE", "write FILE"),
        OPT_LIST('S', "source", &d->list, "SPEC", "a source", .aliases = "-s"),
        OPT_INT('i', "interval", &d->n, "SECONDS", 1, 60, "interval", .aliases = "-si -r"),
        OPT_INT('t', "task", &d->opt_n, "N", 1, 99, "optional", .flags = OPT_OPTARG | OPT_NEXT_NUMBER),
        OPT_U64(0, "base", &d->u, "ADDR", 0, UINT64_MAX, "an address"),
        OPT_CHOICE('c', "color", &d->choice, "COLOR", colors, "a color"),
        OPT_REFUSED('p', "password", "PASSWORD", "use NTLENS_PASSWORD"),
        OPT_END(),
    };

    argv[argc++] = "demo";
    for (; *words; words++)
        argv[argc++] = (char *)*words;
    argv[argc] = NULL;
    memset(d, 0, sizeof *d);
    fflush(stderr);
    dup2(fileno(tmp), 2);
    rc = parse_options(&cmd, opts, argc, argv);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    err[fread(err, 1, errsize - 1, tmp)] = '\0';
    fclose(tmp);
    d->opt_n_given = opt_given(opts, "task");
    return rc;
}

#define RUN(...) run(&d, err, sizeof err, (const char *const[]){__VA_ARGS__, NULL})

int main(void)
{
    struct demo d;
    char err[1024];

    /* Spellings: clusters, attached values, --name=value, abbreviations, operands anywhere. */
    CHECK_EQ_INT(RUN("-qa", "x", "-i5", "--output=o.txt", "--col", "GREEN", "y"), 2);
    CHECK(d.flag && d.mode == MODE_A && d.n == 5 && !strcmp(d.str, "o.txt") && d.choice == 1);
    CHECK_EQ_STR(err, "");
    CHECK_EQ_INT(RUN("-S", "a", "--source", "b", "-sc", "--", "-q"), 1);
    CHECK_EQ_INT(d.list.n, 3);
    CHECK(!d.flag);
    CHECK_EQ_STR(d.list.items[2], "c");
    CHECK_EQ_INT(RUN("--base", "0xfffff80242400000"), 0);
    CHECK_EQ_U64(d.u, 0xfffff80242400000ull);

    /* Compatibility spellings: a whole word, and a letter. */
    CHECK_EQ_INT(RUN("-si", "7"), 0);
    CHECK_EQ_INT(d.n, 7);
    CHECK_EQ_INT(RUN("-r", "9"), 0);
    CHECK_EQ_INT(d.n, 9);

    /* An optional argument, in the word or as the next number. */
    CHECK_EQ_INT(RUN("-t", "12", "name"), 1);
    CHECK(d.opt_n == 12 && d.opt_n_given);
    CHECK_EQ_INT(RUN("-t", "name"), 1);
    CHECK(d.opt_n == 0 && d.opt_n_given);
    CHECK_EQ_INT(RUN("--task=3"), 0);
    CHECK_EQ_INT(d.opt_n, 3);
    CHECK_EQ_INT(RUN("-q"), 0);
    CHECK(!d.opt_n_given);

    /* Mistakes: one wording each, naming the option as typed. */
    CHECK_EQ_INT(RUN("--format"), PARSE_OPT_ERROR);
    CHECK_EQ_STR(err, "ntlens demo: unknown option '--format'\nTry 'ntlens demo --help'.\n");
    CHECK_EQ_INT(RUN("-z"), PARSE_OPT_ERROR);
    CHECK_EQ_STR(err, "ntlens demo: unknown option '-z'\nTry 'ntlens demo --help'.\n");
    CHECK_EQ_INT(RUN("-qz"), PARSE_OPT_ERROR);
    CHECK_EQ_STR(err, "ntlens demo: unknown option '-z' in '-qz'\nTry 'ntlens demo --help'.\n");
    CHECK_EQ_INT(RUN("-i"), PARSE_OPT_ERROR);
    CHECK_EQ_STR(err, "ntlens demo: option '-i' needs SECONDS, a whole number from 1 to 60\n"
                      "Try 'ntlens demo --help'.\n");
    CHECK_EQ_INT(RUN("--interval", "0"), PARSE_OPT_ERROR);
    CHECK_EQ_STR(err, "ntlens demo: option '--interval' needs SECONDS, a whole number from 1 to 60, "
                      "not '0'\nTry 'ntlens demo --help'.\n");
    CHECK_EQ_INT(RUN("-si", "x"), PARSE_OPT_ERROR);
    CHECK(strstr(err, "option '-si' needs SECONDS") != NULL);
    CHECK_EQ_INT(RUN("--color=blue"), PARSE_OPT_ERROR);
    CHECK(strstr(err, "option '--color' needs COLOR, one of red, green, not 'blue'") != NULL);
    CHECK_EQ_INT(RUN("-a", "--beta"), PARSE_OPT_ERROR);
    CHECK(strstr(err, "option '--beta' cannot be used with '--alpha'") != NULL);
    CHECK_EQ_INT(RUN("--quiet=yes"), PARSE_OPT_ERROR);
    CHECK(strstr(err, "option '--quiet' takes no value") != NULL);
    CHECK_EQ_INT(RUN("-p", "secret"), PARSE_OPT_ERROR);
    CHECK(strstr(err, "option '-p' is not accepted: use NTLENS_PASSWORD") != NULL);
    CHECK(strstr(err, "secret") == NULL);
    CHECK_EQ_INT(RUN("--base", "-1"), PARSE_OPT_ERROR);
    CHECK_EQ_INT(RUN("--inter", "4"), 0); /* a unique prefix */
    CHECK_EQ_INT(d.n, 4);
    CHECK(memchr(err, '\0', strlen(err)) == NULL);

    /* --help goes to stdout and is not an error. */
    CHECK_EQ_INT(parse_options_exit(PARSE_OPT_HELP), 0);
    CHECK_EQ_INT(parse_options_exit(PARSE_OPT_ERROR), 2);
    return check_exit();
}
