/* ntlens: a thin dispatcher. Each subcommand lives in cmd-<name>.c. */
#include <stdio.h>
#include <string.h>

#include "cli-source.h"
#include "cli.h"
#include "commands.h"

#ifndef NTLENS_VERSION
#define NTLENS_VERSION "unknown"
#endif

struct command {
    const char *name;
    int (*func)(int argc, char **argv);
    const char *summary;
};

#define NTLENS_ENTRY(name, func, summary) {name, func, summary},
static const struct command commands[] = {NTLENS_COMMANDS(NTLENS_ENTRY)};
#undef NTLENS_ENTRY

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fputs("usage: ntlens COMMAND [OPTIONS] [ARGS]\n"
          "\n"
          "Look inside Windows: performance data, processes and threads, ETW traces,\n"
          "Intel PT and minidumps.\n"
          "\n"
          "Commands:\n",
          f);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-16s %s\n", commands[i].name, commands[i].summary);
    fputs("\nOptions:\n"
          "  -h, --help       show this help\n"
          "      --version    show the version\n"
          "\n'ntlens help COMMAND' or 'ntlens COMMAND --help' describes a command;\n"
          "'man ntlens-COMMAND' too (a two-word command's page is ntlens-GROUP-COMMAND).\n", f);
}

/* A group ("ipt") is the first word of two-word commands. */
static bool is_group(const char *word)
{
    size_t n = strlen(word);
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strncmp(commands[i].name, word, n) && commands[i].name[n] == ' ')
            return true;
    return false;
}

static void group_usage(FILE *f, const char *group)
{
    size_t n = strlen(group);
    fprintf(f, "usage: ntlens %s COMMAND [OPTIONS] [ARGS]\n\nCommands:\n", group);
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strncmp(commands[i].name, group, n) && commands[i].name[n] == ' ')
            fprintf(f, "  %-16s %s\n", commands[i].name, commands[i].summary);
}

/* argv: the command's words ("ipt", "dump"). */
static int help_command(int argc, char **argv)
{
    char full[64];
    char *words[] = {full, "--help", NULL};

    snprintf(full, sizeof full, "%s%s%s", argv[0], argc > 1 ? " " : "", argc > 1 ? argv[1] : "");
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, full))
            return commands[i].func(2, words);
    if (argc == 1 && is_group(argv[0])) {
        group_usage(stdout, argv[0]);
        return EXIT_OK;
    }
    fprintf(stderr, "ntlens help: '%s' is not a command. See 'ntlens --help'.\n", full);
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    char full[64];

    cli_sources_take_env_password();
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        (!strcmp(argv[1], "help") && argc == 2)) {
        usage(stdout);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "help")) /* "ntlens help ipt dump" is "ntlens ipt dump --help" */
        return help_command(argc - 2, argv + 2);
    if (!strcmp(argv[1], "--version")) {
        printf("ntlens %s\n", NTLENS_VERSION);
        return EXIT_OK;
    }
    if (is_group(argv[1])) {
        if (argc < 3 || argv[2][0] == '-') {
            bool help = argc >= 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"));
            group_usage(help ? stdout : stderr, argv[1]);
            return help ? EXIT_OK : EXIT_USAGE;
        }
        snprintf(full, sizeof full, "%s %s", argv[1], argv[2]);
        for (size_t i = 0; i < NCOMMANDS; i++)
            if (!strcmp(commands[i].name, full)) {
                argv[2] = full;
                return commands[i].func(argc - 2, argv + 2);
            }
        fprintf(stderr, "ntlens: '%s' is not a command.\n", full);
        group_usage(stderr, argv[1]);
        return EXIT_USAGE;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, argv[1]))
            return commands[i].func(argc - 1, argv + 1);
    fprintf(stderr, "ntlens: '%s' is not a command. See 'ntlens --help'.\n", argv[1]);
    return EXIT_USAGE;
}
