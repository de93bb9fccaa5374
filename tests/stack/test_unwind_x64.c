/* The x64 unwinder on hand-built images: each unwind code, prolog offsets,
 * epilogs, chained entries, machine frames, leaves, the caller's pc - 1
 * lookup, and bad data (loops, RVAs outside the image, stack outside
 * memory, unknown codes and versions). */
#include <string.h>

#include "check.h"
#include "ntlens/reader.h"
#include "ntlens/stack_unwind.h"

#define BASE 0x140000000ull
#define IMG_SIZE 0x3000u
#define STACK 0x7ff000ull
#define STACK_SIZE 0x2000u
#define PDATA 0x2000u
#define XDATA 0x2400u

static uint8_t image[IMG_SIZE];
static uint8_t stack[STACK_SIZE];

static size_t read_mem(void *ctx, uint64_t va, void *buf, size_t len)
{
    (void)ctx;
    size_t n = 0;
    if (va - BASE < IMG_SIZE)
        n = IMG_SIZE - (size_t)(va - BASE) < len ? IMG_SIZE - (size_t)(va - BASE) : len,
        memcpy(buf, image + (va - BASE), n);
    else if (va - STACK < STACK_SIZE)
        n = STACK_SIZE - (size_t)(va - STACK) < len ? STACK_SIZE - (size_t)(va - STACK) : len,
        memcpy(buf, stack + (va - STACK), n);
    return n;
}

static const struct ntl_unwind_mem mem = {read_mem, NULL};
static struct ntl_unwind_x64_image img = {BASE, IMG_SIZE, PDATA, 0};

/* Appends a RUNTIME_FUNCTION (callers add them in ascending order). */
static void add_function(uint32_t begin, uint32_t end, uint32_t unwind)
{
    uint8_t *e = image + PDATA + img.pdata_size;
    ntl_put_le32(e, begin);
    ntl_put_le32(e + 4, end);
    ntl_put_le32(e + 8, unwind);
    img.pdata_size += 12;
}

/* An UNWIND_INFO at rva: version 1, flags, prolog size, frame register and
 * offset, then codes as (prolog offset, op | info << 4) byte pairs or raw
 * 16-bit slots. Returns the RVA just past the codes (for a chained entry). */
static uint32_t put_info(uint32_t rva, uint8_t flags, uint8_t prolog, uint8_t frame,
                         const uint16_t *slots, uint8_t count)
{
    uint8_t *u = image + rva;
    u[0] = (uint8_t)(1 | flags << 3);
    u[1] = prolog;
    u[2] = count;
    u[3] = frame;
    for (unsigned i = 0; i < count; i++)
        ntl_put_le16(u + 4 + 2 * i, slots[i]);
    return rva + 4 + 2 * ((count + 1u) & ~1u);
}

#define CODE(off, op, info) ((uint16_t)((off) | ((op) | (info) << 4) << 8))

static void put_stack(uint64_t va, uint64_t v) { ntl_put_le64(stack + (va - STACK), v); }

static struct ntl_unwind_x64_regs regs(uint64_t rip, uint64_t rsp)
{
    struct ntl_unwind_x64_regs r = {.rip = rip};
    r.gpr[NTL_X64_RSP] = rsp;
    return r;
}

static void reset(void)
{
    memset(image, 0x90, sizeof image); /* nops: no epilog unless a test puts one */
    memset(image + PDATA, 0, IMG_SIZE - PDATA);
    memset(stack, 0, sizeof stack);
    img.pdata_size = 0;
}

/* push rbx (ends at 1); sub rsp, 0x20 (ends at 5): the codes in reverse. */
static void push_alloc_function(void)
{
    static const uint16_t c[] = {CODE(5, 2, 3), CODE(1, 0, NTL_X64_RBX)};
    put_info(XDATA, 0, 5, 0, c, 2);
    add_function(0x1000, 0x1100, XDATA);
}

static void test_push_alloc_small(void)
{
    struct ntl_error err = {0};
    reset();
    push_alloc_function();
    uint64_t s = STACK + 0x100;
    put_stack(s + 0x20, 0x1234);         /* saved rbx */
    put_stack(s + 0x28, BASE + 0x1800);  /* return address */
    struct ntl_unwind_x64_regs r = regs(BASE + 0x1050, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_UNWIND_X64_CODES);
    CHECK_EQ_U64(r.rip, BASE + 0x1800);
    CHECK_EQ_U64(r.gpr[NTL_X64_RSP], s + 0x30);
    CHECK_EQ_U64(r.gpr[NTL_X64_RBX], 0x1234);

    /* In the prolog after the push, before the sub: only the push applies. */
    put_stack(s, 0x5678);
    put_stack(s + 8, BASE + 0x1900);
    r = regs(BASE + 0x1001, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_UNWIND_X64_CODES);
    CHECK_EQ_U64(r.rip, BASE + 0x1900);
    CHECK_EQ_U64(r.gpr[NTL_X64_RSP], s + 16);
    CHECK_EQ_U64(r.gpr[NTL_X64_RBX], 0x5678);

    /* At the first instruction nothing has run: the return address is at rsp. */
    r = regs(BASE + 0x1000, s + 8);
    r.gpr[NTL_X64_RBX] = 7;
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_UNWIND_X64_CODES);
    CHECK_EQ_U64(r.rip, BASE + 0x1900);
    CHECK_EQ_U64(r.gpr[NTL_X64_RBX], 7);
}

static void test_alloc_large_and_saves(void)
{
    struct ntl_error err = {0};
    reset();
    /* sub rsp, 0x1000 (ALLOC_LARGE/0: size/8 in the next slot); mov [rsp+0x30], rsi
     * (SAVE_NONVOL, offset/8); mov [rsp+0x800], rdi (SAVE_NONVOL_FAR, 32 bits);
     * movaps [rsp+0x40], xmm6 (SAVE_XMM128) and a FAR one, which must be skipped. */
    static const uint16_t c[] = {
        CODE(30, 9, 6), 0x900, 0,          /* SAVE_XMM128_FAR xmm6, 0x900 */
        CODE(24, 8, 6), 4,                 /* SAVE_XMM128 xmm6, 0x40 */
        CODE(16, 5, NTL_X64_RDI), 0x800, 0,
        CODE(12, 4, NTL_X64_RSI), 6,
        CODE(7, 1, 0), 0x1000 / 8,
    };
    put_info(XDATA, 0, 34, 0, c, 12);
    add_function(0x1000, 0x1100, XDATA);
    uint64_t s = STACK + 0x10;
    put_stack(s + 0x30, 0xaaaa);
    put_stack(s + 0x800, 0xbbbb);
    put_stack(s + 0x1000, BASE + 0x1800);
    struct ntl_unwind_x64_regs r = regs(BASE + 0x1050, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_UNWIND_X64_CODES);
    CHECK_EQ_U64(r.rip, BASE + 0x1800);
    CHECK_EQ_U64(r.gpr[NTL_X64_RSP], s + 0x1008);
    CHECK_EQ_U64(r.gpr[NTL_X64_RSI], 0xaaaa);
    CHECK_EQ_U64(r.gpr[NTL_X64_RDI], 0xbbbb);
    /* The return address past the stack memory: the address is named. */
    r = regs(BASE + 0x1050, STACK + 0x1800);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_ERR_TRUNCATED);
    CHECK_EQ_U64(err.offset, STACK + 0x2000); /* the save of rdi */

    /* ALLOC_LARGE/1 (32-bit size) of 0x100 instead. */
    static const uint16_t c2[] = {CODE(12, 4, NTL_X64_RSI), 6, CODE(7, 1, 1), 0x100, 0};
    put_info(XDATA, 0, 12, 0, c2, 5);
    put_stack(s + 0x100, BASE + 0x1a00);
    r = regs(BASE + 0x1050, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_UNWIND_X64_CODES);
    CHECK_EQ_U64(r.rip, BASE + 0x1a00);
    CHECK_EQ_U64(r.gpr[NTL_X64_RSP], s + 0x108);
    CHECK_EQ_U64(r.gpr[NTL_X64_RSI], 0xaaaa);

}

static void test_set_fpreg(void)
{
    struct ntl_error err = {0};
    reset();
    /* push rbp (1); sub rsp, 0x40 (5); lea rbp, [rsp+0x20] (10); frame rbp, offset 2*16. */
    static const uint16_t c[] = {CODE(10, 3, 0), CODE(5, 2, 7), CODE(1, 0, NTL_X64_RBP)};
    put_info(XDATA, 0, 10, NTL_X64_RBP | 2 << 4, c, 3);
    add_function(0x1000, 0x1100, XDATA);
    uint64_t s = STACK + 0x400;
    put_stack(s + 0x40, 0x9999);        /* saved rbp */
    put_stack(s + 0x48, BASE + 0x1c00);
    /* In the body after an alloca: rsp is far below, rbp still frames it. */
    struct ntl_unwind_x64_regs r = regs(BASE + 0x1050, s - 0x200);
    r.gpr[NTL_X64_RBP] = s + 0x20;
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_UNWIND_X64_CODES);
    CHECK_EQ_U64(r.rip, BASE + 0x1c00);
    CHECK_EQ_U64(r.gpr[NTL_X64_RSP], s + 0x50);
    CHECK_EQ_U64(r.gpr[NTL_X64_RBP], 0x9999);

    /* In the prolog before the lea: rbp is the caller's, rsp addresses the frame. */
    r = regs(BASE + 0x1005, s);
    r.gpr[NTL_X64_RBP] = 0xdead;
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_UNWIND_X64_CODES);
    CHECK_EQ_U64(r.rip, BASE + 0x1c00);
    CHECK_EQ_U64(r.gpr[NTL_X64_RBP], 0x9999);
}

static void test_machframe(void)
{
    struct ntl_error err = {0};
    reset();
    static const uint16_t c0[] = {CODE(0, 10, 0)}, c1[] = {CODE(0, 10, 1)};
    put_info(XDATA, 0, 0, 0, c0, 1);
    put_info(XDATA + 0x40, 0, 0, 0, c1, 1);
    add_function(0x1000, 0x1100, XDATA);
    add_function(0x1100, 0x1200, XDATA + 0x40);
    uint64_t s = STACK + 0x200;
    put_stack(s, BASE + 0x1d00);   /* RIP */
    put_stack(s + 24, STACK + 0x800); /* RSP */
    struct ntl_unwind_x64_regs r = regs(BASE + 0x1050, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_UNWIND_X64_MACHFRAME);
    CHECK_EQ_U64(r.rip, BASE + 0x1d00);
    CHECK_EQ_U64(r.gpr[NTL_X64_RSP], STACK + 0x800);
    /* With an error code first. */
    r = regs(BASE + 0x1150, s - 8);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_UNWIND_X64_MACHFRAME);
    CHECK_EQ_U64(r.rip, BASE + 0x1d00);
    CHECK_EQ_U64(r.gpr[NTL_X64_RSP], STACK + 0x800);
}

static void test_chained(void)
{
    struct ntl_error err = {0};
    reset();
    push_alloc_function(); /* the parent: 0x1000..0x1100 */
    /* A part of it elsewhere that saved r12 at [rsp+0x10]; chained to the parent. */
    static const uint16_t c[] = {CODE(4, 4, NTL_X64_R12), 2};
    uint32_t end = put_info(XDATA + 0x40, 4, 0, 0, c, 2); /* UNW_FLAG_CHAININFO */
    ntl_put_le32(image + end, 0x1000);
    ntl_put_le32(image + end + 4, 0x1100);
    ntl_put_le32(image + end + 8, XDATA);
    add_function(0x1200, 0x1300, XDATA + 0x40);
    uint64_t s = STACK + 0x100;
    put_stack(s + 0x10, 0x1212);
    put_stack(s + 0x20, 0x3434);
    put_stack(s + 0x28, BASE + 0x1e00);
    struct ntl_unwind_x64_regs r = regs(BASE + 0x1250, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_UNWIND_X64_CODES);
    CHECK_EQ_U64(r.rip, BASE + 0x1e00);
    CHECK_EQ_U64(r.gpr[NTL_X64_R12], 0x1212);
    CHECK_EQ_U64(r.gpr[NTL_X64_RBX], 0x3434);
    CHECK_EQ_U64(r.gpr[NTL_X64_RSP], s + 0x30);

    /* A chain that leads back to itself: a bounded error, not a hang. */
    ntl_put_le32(image + end + 8, XDATA + 0x40);
    r = regs(BASE + 0x1250, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_ERR_FORMAT);
    CHECK(strstr(err.message, "longer than") != NULL);
}

static void test_epilog(void)
{
    struct ntl_error err = {0};
    reset();
    push_alloc_function();
    /* 0x1080: add rsp, 0x20; pop rbx; ret. 0x1060: jmp 0x1084 (to the pops). */
    static const uint8_t epi[] = {0x48, 0x83, 0xc4, 0x20, 0x5b, 0xc3};
    memcpy(image + 0x1080, epi, sizeof epi);
    image[0x1060] = 0xeb;
    image[0x1061] = 0x22;
    uint64_t s = STACK + 0x100;
    put_stack(s + 0x20, 0x4242);
    put_stack(s + 0x28, BASE + 0x1f00);
    struct ntl_unwind_x64_regs r = regs(BASE + 0x1080, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_UNWIND_X64_EPILOG);
    CHECK_EQ_U64(r.rip, BASE + 0x1f00);
    CHECK_EQ_U64(r.gpr[NTL_X64_RSP], s + 0x30);
    CHECK_EQ_U64(r.gpr[NTL_X64_RBX], 0x4242);
    /* After the add: the prolog's codes would add 0x20 again; the epilog does not. */
    r = regs(BASE + 0x1084, s + 0x20);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_UNWIND_X64_EPILOG);
    CHECK_EQ_U64(r.rip, BASE + 0x1f00);
    CHECK_EQ_U64(r.gpr[NTL_X64_RBX], 0x4242);
    /* At the ret. */
    r = regs(BASE + 0x1085, s + 0x28);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_UNWIND_X64_EPILOG);
    CHECK_EQ_U64(r.rip, BASE + 0x1f00);
    /* A jmp within the function into the epilog's pops. */
    r = regs(BASE + 0x1060, s + 0x20);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_UNWIND_X64_EPILOG);
    CHECK_EQ_U64(r.gpr[NTL_X64_RBX], 0x4242);
    /* A jmp to itself is no epilog (bounded), so the codes apply. */
    image[0x1061] = 0xfe;
    r = regs(BASE + 0x1060, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_UNWIND_X64_CODES);
    CHECK_EQ_U64(r.rip, BASE + 0x1f00);
    /* lea rsp, [rbp+8]; pop rbx; ret */
    static const uint8_t lea[] = {0x48, 0x8d, 0x65, 0x08, 0x5b, 0xc3};
    memcpy(image + 0x1090, lea, sizeof lea);
    r = regs(BASE + 0x1090, 0);
    r.gpr[NTL_X64_RBP] = s + 0x18;
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_UNWIND_X64_EPILOG);
    CHECK_EQ_U64(r.rip, BASE + 0x1f00);
    CHECK_EQ_U64(r.gpr[NTL_X64_RSP], s + 0x30);
}

static void test_leaf_and_lookup(void)
{
    struct ntl_error err = {0};
    struct ntl_unwind_x64_function f;
    reset();
    static const uint16_t c[] = {CODE(1, 0, NTL_X64_RBX)};
    put_info(XDATA, 0, 1, 0, c, 1);
    for (uint32_t i = 0; i < 50; i++)
        add_function(0x1000 + i * 0x20, 0x1000 + i * 0x20 + 0x10, XDATA);
    CHECK_EQ_INT(ntl_unwind_x64_lookup(&mem, &img, 0x1000 + 37 * 0x20 + 5, &f, &err), 1);
    CHECK_EQ_U64(f.begin, 0x1000 + 37 * 0x20);
    CHECK_EQ_INT(ntl_unwind_x64_lookup(&mem, &img, 0x1000 + 37 * 0x20 + 0x18, &f, &err), 0);
    CHECK_EQ_INT(ntl_unwind_x64_lookup(&mem, &img, 0x0fff, &f, &err), 0);

    uint64_t s = STACK + 0x100;
    put_stack(s, BASE + 0x2800);
    put_stack(s + 8, BASE + 0x2900);
    /* A leaf (between functions): the return address is at rsp. */
    struct ntl_unwind_x64_regs r = regs(BASE + 0x1018, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_UNWIND_X64_LEAF);
    CHECK_EQ_U64(r.rip, BASE + 0x2800);
    CHECK_EQ_U64(r.gpr[NTL_X64_RSP], s + 8);
    /* A return address just past a function (its last instruction a call)
     * belongs to that function: looked up at pc - 1, it pops rbx too. */
    r = regs(BASE + 0x1010, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, true, &r, &err), NTL_UNWIND_X64_CODES);
    CHECK_EQ_U64(r.rip, BASE + 0x2900);
    CHECK_EQ_U64(r.gpr[NTL_X64_RBX], BASE + 0x2800);
    /* The same with the next function starting with what looks like an
     * epilog (pop rbx; ret): it is not this function's. */
    image[0x1010] = 0x5b;
    image[0x1011] = 0xc3;
    r = regs(BASE + 0x1010, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, true, &r, &err), NTL_UNWIND_X64_CODES);
    CHECK_EQ_U64(r.rip, BASE + 0x2900);
    /* No image at all: a leaf. */
    r = regs(0x5000, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, NULL, false, &r, &err), NTL_UNWIND_X64_LEAF);
}

static void test_bad_data(void)
{
    struct ntl_error err = {0};
    struct ntl_unwind_x64_regs r;
    uint64_t s = STACK + 0x100;
    reset();
    /* UNWIND_INFO outside the image. */
    add_function(0x1000, 0x1100, IMG_SIZE - 2);
    r = regs(BASE + 0x1050, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_ERR_FORMAT);
    CHECK(strstr(err.message, "outside the image") != NULL);
    /* An exception directory outside the image. */
    struct ntl_unwind_x64_image bad = {BASE, IMG_SIZE, IMG_SIZE - 8, 24};
    r = regs(BASE + 0x1050, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &bad, false, &r, &err), NTL_ERR_FORMAT);
    /* Codes that run past the image. */
    reset();
    image[IMG_SIZE - 4] = 1;
    image[IMG_SIZE - 2] = 40;
    add_function(0x1000, 0x1100, IMG_SIZE - 4);
    r = regs(BASE + 0x1050, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_ERR_FORMAT);
    /* Version 3, an unknown code, a code cut short. */
    reset();
    static const uint16_t unknown[] = {CODE(1, 11, 0)}, cut[] = {CODE(1, 1, 1), 0};
    put_info(XDATA, 0, 1, 0, unknown, 1);
    add_function(0x1000, 0x1100, XDATA);
    r = regs(BASE + 0x1050, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_ERR_FORMAT);
    CHECK(strstr(err.message, "unknown") != NULL);
    put_info(XDATA, 0, 1, 0, cut, 2);
    r = regs(BASE + 0x1050, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_ERR_FORMAT);
    image[XDATA] = 3;
    r = regs(BASE + 0x1050, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_ERR_FORMAT);
    CHECK(strstr(err.message, "version 3") != NULL);
    /* A stack pointer outside memory: the address is named. */
    reset();
    push_alloc_function();
    r = regs(BASE + 0x1050, 0x10);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_ERR_TRUNCATED);
    CHECK_EQ_U64(err.offset, 0x30);
    /* A RUNTIME_FUNCTION pointing at another one (low bit), in a loop. */
    reset();
    add_function(0x1000, 0x1100, PDATA | 1);
    r = regs(BASE + 0x1050, s);
    CHECK_EQ_INT(ntl_unwind_x64_step(&mem, &img, false, &r, &err), NTL_ERR_FORMAT);
}

int main(void)
{
    test_push_alloc_small();
    test_alloc_large_and_saves();
    test_set_fpreg();
    test_machframe();
    test_chained();
    test_epilog();
    test_leaf_and_lookup();
    test_bad_data();
    return check_exit();
}
