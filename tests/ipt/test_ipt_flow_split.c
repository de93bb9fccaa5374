/* Unit tests for the split flow decoder (ntlens/ipt_flow_split.h): on 2
 * and 4 threads it hands out the records one decoder gives, field by field
 * (offsets included), on a trace made to test the seams and on the kAFL
 * recordings; and the seams are really taken or really decoded again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#include "ntlens/buf.h"
#include "ntlens/ipt_flow_split.h"
#include "ntlens/ipt_image.h"

/* 0x3000: call 0x3010; jz 0x3000; jmp rax; nop x7
 * 0x3010: nop; ret */
static const uint8_t code[] = {0xe8, 0x0b, 0x00, 0x00, 0x00, 0x74, 0xf9, 0xff, 0xe0, 0x90, 0x90,
                               0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3};

static int read_code(uint8_t *buf, size_t size, uint64_t addr, void *ctx)
{
    (void)ctx;
    if (addr < 0x3000 || addr >= 0x3000 + sizeof code)
        return NTL_ERR_NOT_FOUND;
    size_t n = 0x3000 + sizeof code - addr;
    n = n < size ? n : size;
    memcpy(buf, code + (addr - 0x3000), n);
    return (int)n;
}

/* A PSB+ with tracing enabled at ip, in 64-bit mode. */
static size_t psb_at(uint8_t *t, uint64_t ip)
{
    size_t n = 0;
    for (int i = 0; i < 8; i++) {
        t[n++] = 0x02;
        t[n++] = 0x82;
    }
    t[n++] = 0x99; /* MODE.Exec 64-bit */
    t[n++] = 0x01;
    t[n++] = 0xdd; /* FUP, 8 bytes of IP */
    for (int i = 0; i < 8; i++)
        t[n++] = (uint8_t)(ip >> 8 * i);
    t[n++] = 0x02; /* PSBEND */
    t[n++] = 0x23;
    return n;
}

/* Loops (call, nop, ret, jz taken), a PSB between two loops (at 0x3000,
 * the return stack empty: a seam a later part takes over at), more loops,
 * a PSB between the call and its compressed ret (at 0x3011: one decoder
 * returns to 0x3005, a decoder synchronised there has no call to return
 * to), and the way out (jz not taken, jmp rax, TIP.PGD). */
static size_t make_trace(uint8_t *t)
{
    static const uint8_t start[] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
                                    0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
                                    0x02, 0x23, 0x99, 0x01, 0xd1, 0x00, 0x30, 0x00,
                                    0x00, 0x00, 0x00, 0x00, 0x00};
    size_t n = sizeof start;
    memcpy(t, start, n);
    for (int i = 0; i < 60; i++)
        t[n++] = 0x0e; /* TNT-8: ret, jz taken */
    n += psb_at(t + n, 0x3000);
    for (int i = 0; i < 60; i++)
        t[n++] = 0x0e;
    n += psb_at(t + n, 0x3011);
    t[n++] = 0x0c; /* ret, jz not taken */
    t[n++] = 0x01; /* TIP.PGD at the jmp rax */
    return n;
}

struct recs {
    struct ntl_ipt_flow_rec v[4096];
    size_t n;
    unsigned errors;
};

static int keep(void *ctx, const struct ntl_ipt_flow_rec *r)
{
    struct recs *k = ctx;
    k->errors += r->kind != NTL_IPT_REC_ITEM;
    if (k->n < sizeof k->v / sizeof k->v[0])
        k->v[k->n] = *r;
    k->n++;
    return 0;
}

static bool same_rec(const struct ntl_ipt_flow_rec *a, const struct ntl_ipt_flow_rec *b)
{
    const struct ntl_ipt_flow_item *x = &a->it, *y = &b->it;
    if (a->kind != b->kind || a->status != b->status || a->offset != b->offset)
        return false;
    if (a->kind != NTL_IPT_REC_ITEM)
        return a->ip == b->ip;
    return x->kind == y->kind && x->flags == y->flags && x->mode == y->mode &&
           x->iclass == y->iclass && x->size == y->size && x->ip == y->ip && x->a == y->a &&
           x->b == y->b && x->c == y->c;
}

/* The records of cfg on jobs threads into *k; its stats into *st. */
static void split(const struct ntl_ipt_flow_config *cfg, unsigned jobs, struct recs *k,
                  struct ntl_ipt_split_stats *st)
{
    struct ntl_ipt_split_config sc = {.jobs = jobs, .stats = st};
    struct ntl_error err;
    memset(k, 0, sizeof *k);
    CHECK_EQ_INT(ntl_ipt_flow_split(cfg, &sc, keep, k, &err), 0);
}

/* Records on 2 and 4 threads equal one thread's; the stats of the last. */
static void compare(const struct ntl_ipt_flow_config *cfg, struct ntl_ipt_split_stats *st)
{
    static struct recs one, many;
    split(cfg, 1, &one, st);
    for (unsigned jobs = 2; jobs <= 4; jobs += 2) {
        split(cfg, jobs, &many, st);
        CHECK_EQ_U64(many.n, one.n);
        size_t n = one.n < sizeof one.v / sizeof one.v[0] ? one.n : sizeof one.v / sizeof one.v[0];
        size_t same = 0;
        for (size_t i = 0; i < n && i < many.n; i++)
            same += same_rec(&one.v[i], &many.v[i]);
        CHECK_EQ_U64(same, n);
    }
}

static void test_seams(void)
{
    static uint8_t t[1024];
    struct ntl_ipt_flow_config cfg;
    struct ntl_ipt_split_stats st;
    static struct recs k;
    memset(&cfg, 0, sizeof cfg);
    cfg.trace.buf = t;
    cfg.trace.size = make_trace(t);
    cfg.read = read_code;
    for (int runs = 0; runs < 2; runs++) {
        cfg.runs = runs;
        /* One decoder: no error (the ret after the PSB returns to 0x3005). */
        split(&cfg, 1, &k, &st);
        CHECK_EQ_INT(k.errors, 0);
        CHECK(k.n > (runs ? 2u : 100u));
        compare(&cfg, &st);
        /* Three parts: the first seam taken, the second decoded again with
         * the return stack the part before it left. */
        CHECK_EQ_INT(st.parts, 3);
        CHECK_EQ_INT(st.taken, 1);
        CHECK_EQ_INT(st.redecoded, 1);
    }
}

/* fuzz_ipt_flow_split's finding: after errors, a seam where tracing is
 * disabled (its PSB+'s FUP has no IP), then a PSB+ that says it is enabled.
 * The error names the IP the decoder last knew, which a decoder
 * synchronised at the seam does not know: the seam must not be taken (the
 * error named IP 0 on three threads, 0x100006 on one). Which worker takes
 * which part varies, so a few rounds. */
static void test_disabled_seam(void)
{
    static uint8_t in[4096];
    char path[512];
    const char *root = getenv("NTLENS_SOURCE_ROOT");
    snprintf(path, sizeof path, "%s/fuzz/corpus/ipt_flow_split/recover-error-ip-disabled-seam",
             root ? root : ".");
    FILE *fp = fopen(path, "rb");
    CHECK(fp != NULL);
    if (!fp)
        return;
    size_t size = fread(in, 1, sizeof in, fp), code = (size_t)in[0] * 16;
    fclose(fp);
    CHECK(size > code + 1);
    struct ntl_ipt_image *img;
    struct ntl_error err;
    CHECK_EQ_INT(ntl_ipt_image_new(&img, &err), 0);
    CHECK_EQ_INT(ntl_ipt_image_add(img, in + 1, code, 0x1000, &err), 0);
    CHECK_EQ_INT(ntl_ipt_image_add(img, in + 1, code, 0x100000, &err), 0);
    struct ntl_ipt_flow_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.trace.buf = in + 1 + code;
    cfg.trace.size = size - 1 - code;
    cfg.read = ntl_ipt_image_read;
    cfg.read_ctx = img;
    cfg.runs = true;
    static struct recs one, many;
    struct ntl_ipt_split_config sc = {.jobs = 1, .recover = true, .parts_per_job = 4};
    CHECK_EQ_INT(ntl_ipt_flow_split(&cfg, &sc, keep, &one, &err), 0);
    CHECK(one.n > 0 && one.v[one.n - 1].status == NTL_IPT_BAD_STATUS);
    CHECK_EQ_U64(one.v[one.n - 1].ip, 0x100006);
    for (int round = 0; round < 20; round++) {
        memset(&many, 0, sizeof many);
        sc.jobs = 3;
        CHECK_EQ_INT(ntl_ipt_flow_split(&cfg, &sc, keep, &many, &err), 0);
        CHECK_EQ_U64(many.n, one.n);
        CHECK(many.n == one.n && same_rec(&many.v[many.n - 1], &one.v[one.n - 1]));
    }
    ntl_ipt_image_free(img);
}

/* The kAFL recordings: seams taken, the same records. */
static void test_recordings(void)
{
    static const char *const names[] = {"kafl-foo", "kafl-unzip", "kafl-avscript32"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char rel[256];
        struct ntl_buf trace;
        struct ntl_ipt_image *img;
        struct ntl_error err;
        ntl_buf_init(&trace, 0);
        snprintf(rel, sizeof rel, "ipt/real/%s/trace.pt", names[i]);
        CHECK_EQ_INT(ntl_file_read(check_data_path(rel), (size_t)1 << 24, &trace, &err), 0);
        CHECK_EQ_INT(ntl_ipt_image_new(&img, &err), 0);
        snprintf(rel, sizeof rel, "ipt/real/%s/image", names[i]);
        CHECK(ntl_ipt_image_add_pages(img, check_data_path(rel), &err) > 0);
        struct ntl_ipt_flow_config cfg;
        struct ntl_ipt_split_stats st;
        memset(&cfg, 0, sizeof cfg);
        cfg.trace.buf = trace.data;
        cfg.trace.size = trace.len;
        cfg.read = ntl_ipt_image_read;
        cfg.read_ctx = img;
        cfg.runs = true;
        compare(&cfg, &st);
        CHECK(st.parts >= 4);
        CHECK(st.taken >= 2);
        ntl_ipt_image_free(img);
        ntl_buf_free(&trace);
    }
}

int main(void)
{
    test_seams();
    test_disabled_seam();
    test_recordings();
    return check_exit();
}
