#include "dump-common.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

bool dump_parse_base(const char *arg, struct dump_base *b)
{
    const char *eq = strrchr(arg, '=');
    if (!eq || eq == arg || !cli_parse_u64(eq + 1, &b->addr))
        return false;
    b->name = malloc((size_t)(eq - arg) + 1);
    if (!b->name)
        return false;
    memcpy(b->name, arg, (size_t)(eq - arg));
    b->name[eq - arg] = 0;
    b->used = false;
    return true;
}

void dump_hex_cell(struct out_table *t, enum out_format fmt, uint64_t v, int digits)
{
    if (fmt == OUT_TABLE)
        out_table_strf(t, "0x%0*" PRIx64, digits, v);
    else
        out_table_u64(t, v);
}
