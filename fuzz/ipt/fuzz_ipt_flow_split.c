/* libFuzzer: the split flow decoder (ntlens/ipt_flow_split.h), trace and
 * code both fuzzed, laid out as flow_input.h says (code, then trace). The trace is
 * decoded on one thread and on three (up to twelve parts), after errors
 * both by resync and by recovery, instruction by instruction and in runs:
 * the records must be the same, field by field, offsets included. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/ipt_flow_split.h"
#include "flow_input.h"

struct told {
    uint64_t n, hash;
};

static void fold(struct told *t, uint64_t v)
{
    t->hash = (t->hash ^ v) * 0x100000001b3ull;
}

static int take(void *ctx, const struct ntl_ipt_flow_rec *r)
{
    struct told *t = ctx;
    t->n++;
    fold(t, r->kind);
    fold(t, (uint64_t)r->status);
    fold(t, r->offset);
    if (r->kind != NTL_IPT_REC_ITEM) {
        fold(t, r->ip);
        return 0;
    }
    const struct ntl_ipt_flow_item *it = &r->it;
    fold(t, (uint64_t)it->kind | (uint64_t)it->flags << 8 | (uint64_t)it->mode << 16 |
                (uint64_t)it->iclass << 24 | (uint64_t)it->size << 32);
    fold(t, it->ip);
    fold(t, it->a);
    fold(t, it->b);
    fold(t, it->c);
    return 0;
}

static struct told decode(const struct ntl_ipt_flow_config *cfg, unsigned jobs, bool recover)
{
    /* Four parts a job (twice the default): more seams an input. */
    struct ntl_ipt_split_config sc = {.jobs = jobs, .recover = recover, .parts_per_job = 4};
    struct ntl_error err;
    struct told t = {0, 0};
    if (ntl_ipt_flow_split(cfg, &sc, take, &t, &err) < 0)
        abort();
    return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_ipt_flow_config cfg;
    struct ntl_ipt_image *img = flow_input(data, size, &cfg);
    if (!img)
        return 0;
    for (int way = 0; way < 4; way++) {
        cfg.runs = way & 1;
        struct told one = decode(&cfg, 1, way & 2), many = decode(&cfg, 3, way & 2);
        if (one.n != many.n || one.hash != many.hash)
            abort();
    }
    ntl_ipt_image_free(img);
    return 0;
}
