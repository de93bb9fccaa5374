/* Unit tests for the flow decoder's two paths (ntlens/ipt_flow.h): a loop
 * decoded instruction by instruction and in runs (cached blocks and TNT
 * decisions) gives the same instructions and events, and
 * ntl_ipt_flow_invalidate makes the caches see changed code. */
#include <string.h>

#include "check.h"

#include "ntlens/ipt_flow.h"

/* 0x1000: dec ecx; jnz 0x1000; jmp rax */
static uint8_t code[] = {0xff, 0xc9, 0x75, 0xfc, 0xff, 0xe0};

static int read_code(uint8_t *buf, size_t size, uint64_t addr, void *ctx)
{
    (void)ctx;
    if (addr < 0x1000 || addr >= 0x1000 + sizeof code)
        return NTL_ERR_NOT_FOUND;
    size_t n = 0x1000 + sizeof code - addr;
    n = n < size ? n : size;
    memcpy(buf, code + (addr - 0x1000), n);
    return (int)n;
}

/* PSB, PSBEND, MODE.Exec 64-bit, TIP.PGE 0x1000, TNT taken x3 then not
 * taken, TIP.PGD without IP (it binds to the jmp rax). */
static const uint8_t trace[] = {
    0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
    0x02, 0x82, 0x02, 0x82, 0x02, 0x23, 0x99, 0x01, 0xd1, 0x00, 0x10, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x3c, 0x01};

/* Instructions decoded and the events, as kinds in order. */
static uint64_t decode(struct ntl_ipt_flow *f, char *kinds, size_t size)
{
    struct ntl_ipt_flow_item it;
    struct ntl_error err;
    uint64_t n = 0;
    size_t k = 0;
    CHECK_EQ_INT(ntl_ipt_flow_sync(f, &err), 0);
    int rc;
    while ((rc = ntl_ipt_flow_next(f, &it, &err)) > 0) {
        if (it.kind == NTL_IPT_FL_INSN || it.kind == NTL_IPT_FL_RUN) {
            n += it.kind == NTL_IPT_FL_RUN ? it.b : 1;
            continue;
        }
        if (k + 1 < size)
            kinds[k++] = (char)('a' + it.kind);
    }
    kinds[k] = 0;
    CHECK_EQ_INT(rc, 0);
    return n;
}

static void test_paths(void)
{
    struct ntl_ipt_flow_config cfg;
    struct ntl_ipt_flow *f;
    struct ntl_error err;
    char one[16], runs[16];
    memset(&cfg, 0, sizeof cfg);
    cfg.trace.buf = trace;
    cfg.trace.size = sizeof trace;
    cfg.read = read_code;
    CHECK_EQ_INT(ntl_ipt_flow_new(&f, &cfg, &err), 0);
    CHECK_EQ_U64(decode(f, one, sizeof one), 9); /* 4 x (dec, jnz), jmp */
    ntl_ipt_flow_free(f);
    cfg.runs = true;
    CHECK_EQ_INT(ntl_ipt_flow_new(&f, &cfg, &err), 0);
    CHECK_EQ_U64(decode(f, runs, sizeof runs), 9);
    /* ENABLED, EXEC_MODE, DISABLED, as letters from 'a'. */
    CHECK(strcmp(one, "chd") == 0);
    CHECK(strcmp(runs, one) == 0);
    /* The code changes (dec ecx becomes two NOPs): the caches keep the
     * old code until told. */
    code[0] = code[1] = 0x90;
    CHECK_EQ_U64(decode(f, runs, sizeof runs), 9);
    ntl_ipt_flow_invalidate(f);
    CHECK_EQ_U64(decode(f, runs, sizeof runs), 13);
    CHECK(strcmp(one, runs) == 0);
    ntl_ipt_flow_free(f);
    code[0] = 0xff;
    code[1] = 0xc9;
}

int main(void)
{
    test_paths();
    return check_exit();
}
