/* ntlens dump relocate: move modules of a minidump to new addresses
 * (MINIDUMP_MODULE.BaseOfImage and the matching memory descriptors), as seed
 * 002 does after MiniDumpWriteDump. Dumps are evidence: the result goes to a
 * new file unless --in-place says otherwise. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "commands.h"
#include "dump-common.h"
#include "ntlens/minidump.h"

#define DUMP_FILE_LIMIT (8ull << 30)

static void usage(FILE *f)
{
    fputs("usage: ntlens dump relocate [OPTIONS] FILE.dmp NAME=ADDR...\n"
          "\n"
          "Move modules of a minidump to new base addresses: rewrites each module's\n"
          "MINIDUMP_MODULE.BaseOfImage and the StartOfMemoryRange of every memory\n"
          "descriptor inside its image. NAME is the module's file name (case-insensitive)\n"
          "or its full name in the dump. The result goes to -o FILE; the dump itself is\n"
          "rewritten only with --in-place.\n"
          "\n"
          "Options:\n"
          "  -o, --output FILE    write the result here (not the input itself)\n"
          "      --in-place       rewrite the input dump instead\n"
          "  -q, --quiet          no summary\n"
          "  -h, --help           show this help\n",
          f);
}

/* The same path, or (where the system gives file ids) the same file. */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!strcmp(a, b))
        return true;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return false;
    return sa.st_ino != 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cmd_dump_relocate(int argc, char **argv)
{
    enum { OPT_IN_PLACE = 1 };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"in-place", no_argument, NULL, OPT_IN_PLACE},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = argv[0], *out = NULL, *in;
    bool quiet = false, in_place = false;
    struct ntl_buf file;
    struct ntl_error err = {0};
    struct dump_base *moves;
    int opt, nmoves = 0, rc = EXIT_OK;

    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o': out = optarg; break;
        case OPT_IN_PLACE: in_place = true; break;
        case 'q': quiet = true; break;
        case 'h': usage(stdout); return EXIT_OK;
        default: return cli_usage_error(cmd, "unknown option");
        }
    }
    if (argc - optind < 2)
        return cli_usage_error(cmd, "want a minidump file and at least one NAME=ADDR");
    in = argv[optind++];
    if (!out && !in_place)
        return cli_usage_error(cmd, "-o FILE names the relocated dump (or --in-place rewrites %s)", in);
    if (out && in_place)
        return cli_usage_error(cmd, "-o and --in-place exclude each other");
    if (out && same_file(in, out))
        return cli_usage_error(cmd, "-o names the input dump %s; give another file or --in-place",
                               in);
    moves = calloc((size_t)(argc - optind), sizeof *moves);
    if (!moves)
        return cli_failf(cmd, "out of memory");
    for (; optind < argc; optind++) {
        if (!dump_parse_base(argv[optind], &moves[nmoves])) {
            rc = cli_usage_error(cmd, "want NAME=ADDR, not '%s'", argv[optind]);
            goto done;
        }
        nmoves++;
    }
    if (ntl_file_read(in, (size_t)DUMP_FILE_LIMIT, &file, &err) < 0) {
        rc = cli_fail(cmd, &err, NULL); /* the message names the file */
        goto done;
    }
    for (int i = 0; i < nmoves; i++) {
        int n = ntl_md_relocate(file.data, file.len, moves[i].name, moves[i].addr, &err);
        if (n < 0) {
            rc = cli_fail(cmd, &err, in);
            break;
        }
        if (!quiet)
            fprintf(stderr, "%s: moved to 0x%016" PRIx64 " (%d memory range%s)\n", moves[i].name,
                    moves[i].addr, n, n == 1 ? "" : "s");
    }
    if (rc == EXIT_OK && ntl_file_write(out ? out : in, file.data, file.len, &err) < 0)
        rc = cli_fail(cmd, &err, NULL);
    ntl_buf_free(&file);
done:
    for (int i = 0; i < nmoves; i++)
        free(moves[i].name);
    free(moves);
    return rc;
}
