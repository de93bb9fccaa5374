/* libFuzzer: the split flow decoder (ntlens/ipt_flow_split.h), trace and
 * code both fuzzed, laid out as for fuzz_ipt_flow (the first byte: 16-byte
 * units of code at 0x1000 and 0x100000; the rest: the trace). The trace is
 * decoded on one thread and on three (up to twelve parts), after errors
 * both by resync and by recovery, instruction by instruction and in runs:
 * the records must be the same, field by field, offsets included. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/ipt_flow_split.h"
#include "ntlens/ipt_image.h"

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
    struct ntl_ipt_split_config sc = {.jobs = jobs, .recover = recover};
    struct ntl_error err;
    struct told t = {0, 0};
    if (ntl_ipt_flow_split(cfg, &sc, take, &t, &err) < 0)
        abort();
    return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t code = (size_t)data[0] * 16;
    if (code > size - 1)
        code = size - 1;
    struct ntl_ipt_image *img;
    struct ntl_error err;
    if (ntl_ipt_image_new(&img, &err) < 0)
        return 0;
    if (code && (ntl_ipt_image_add(img, data + 1, code, 0x1000, &err) < 0 ||
                 ntl_ipt_image_add(img, data + 1, code, 0x100000, &err) < 0))
        abort();
    struct ntl_ipt_flow_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.trace.buf = data + 1 + code;
    cfg.trace.size = size - 1 - code;
    cfg.read = ntl_ipt_image_read;
    cfg.read_ctx = img;
    for (int way = 0; way < 4; way++) {
        cfg.runs = way & 1;
        struct told one = decode(&cfg, 1, way & 2), many = decode(&cfg, 3, way & 2);
        if (one.n != many.n || one.hash != many.hash)
            abort();
    }
    ntl_ipt_image_free(img);
    return 0;
}
