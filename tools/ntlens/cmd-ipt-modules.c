/* TODO(owner of this command): replace with the real implementation. */
#include "cli.h"
#include "commands.h"

int cmd_ipt_modules(int argc, char **argv)
{
    (void)argc;
    return cli_failf(argv[0], "not implemented yet");
}
