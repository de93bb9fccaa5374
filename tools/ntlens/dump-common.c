#include "dump-common.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "out.h"

int dump_bases_add(struct dump_bases *b, const char *arg)
{
    const char *eq = strrchr(arg, '=');
    struct dump_base *d;
    uint64_t addr;

    if (!eq || eq == arg || !cli_parse_u64(eq + 1, &addr))
        return -1;
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 8;
        struct dump_base *v = realloc(b->v, cap * sizeof *v);
        if (!v)
            return -2;
        b->v = v;
        b->cap = cap;
    }
    d = &b->v[b->n];
    if (!(d->name = malloc((size_t)(eq - arg) + 1)))
        return -2;
    memcpy(d->name, arg, (size_t)(eq - arg));
    d->name[eq - arg] = 0;
    d->addr = addr;
    b->n++;
    return 0;
}

void dump_bases_free(struct dump_bases *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->v[i].name);
    free(b->v);
    memset(b, 0, sizeof *b);
}

void dump_size_cell(struct out *o, int fmt, uint64_t v)
{
    if (fmt == OUT_JSON || fmt == OUT_JSONL)
        out_u64(o, v);
    else
        out_strf(o, "0x%" PRIx64, v);
}

void dump_stamp_time_cell(struct out *o, uint32_t stamp)
{
    if (stamp)
        out_time(o, stamp, 0, 0);
    else
        out_null(o);
}
