/* The dump walk on minidumps built here byte by byte (SystemInfo,
 * ThreadList with CONTEXT records, ModuleList, MemoryList): an image held
 * in the dump (unwind data and export names from its memory), a stack
 * pointer outside the stack memory, a missing CONTEXT, code in no module
 * (a scan, marked), a stack pointer that does not advance, the thread
 * filter and frame limit, an x86 dump (ebp chain, marked) and an
 * architecture without a walker. */
#include <string.h>

#include "../pe/pe_gen.h"
#include "check.h"
#include "ntlens/buf.h"
#include "ntlens/minidump.h"
#include "ntlens/pe.h"
#include "ntlens/reader.h"
#include "ntlens/stack.h"

#define BASE 0x140000000ull /* build_kernel's: KeFoo at +0x1800, ExBar at +0x1810 */
#define STACK 0x20000ull
#define STACK_SIZE 0x1000u

struct thread_spec {
    uint32_t tid;
    uint64_t rip, rsp, rbp; /* x86: eip, esp, ebp */
    bool no_context;
};

static uint8_t mapped[SEC_RVA + SEC_SIZE];
static uint8_t stack[STACK_SIZE];

static void put_stack(uint64_t va, uint64_t v) { ntl_put_le64(stack + (va - STACK), v); }

static uint32_t here(const struct ntl_buf *b) { return (uint32_t)b->len; }

static void put_context(struct ntl_buf *b, uint16_t arch, const struct thread_spec *t)
{
    uint8_t *c;
    if (arch == NTL_MD_ARCH_X86) {
        ntl_buf_grow_zero(b, 716, &c);
        ntl_put_le32(c + 0xb4, (uint32_t)t->rbp);
        ntl_put_le32(c + 0xb8, (uint32_t)t->rip);
        ntl_put_le32(c + 0xc4, (uint32_t)t->rsp);
        return;
    }
    ntl_buf_grow_zero(b, 1232, &c);
    ntl_put_le64(c + 0x78 + 8 * 4, t->rsp);
    ntl_put_le64(c + 0x78 + 8 * 5, t->rbp);
    ntl_put_le64(c + 0xf8, t->rip);
}

/* A dump of the threads, the image at BASE (for x64) and the stack. */
static void build(struct ntl_buf *b, uint16_t arch, const struct thread_spec *t, size_t n)
{
    uint32_t ctx[8], name, img_rva, stack_rva, dir = 32;
    ntl_buf_init(b, 0);
    uint8_t *p;
    ntl_buf_grow_zero(b, 32 + 4 * 12, &p);
    ntl_put_le32(p, NTL_MD_SIGNATURE);
    ntl_put_le32(p + 4, NTL_MD_VERSION);
    ntl_put_le32(p + 8, 4);
    ntl_put_le32(p + 12, dir);
    for (size_t i = 0; i < n; i++) {
        ctx[i] = here(b);
        put_context(b, arch, &t[i]);
    }
    name = here(b);
    ntl_buf_put_u32(b, 10);
    ntl_buf_append(b, "k\0.\0d\0l\0l\0\0\0", 12);
    img_rva = here(b);
    ntl_buf_append(b, mapped, sizeof mapped);
    stack_rva = here(b);
    ntl_buf_append(b, stack, sizeof stack);

    uint32_t sys = here(b);
    ntl_buf_grow_zero(b, 56, &p);
    ntl_put_le16(p, arch);
    uint32_t threads = here(b);
    ntl_buf_put_u32(b, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        ntl_buf_grow_zero(b, 48, &p);
        ntl_put_le32(p, t[i].tid);
        ntl_put_le64(p + 24, STACK);
        ntl_put_le32(p + 32, STACK_SIZE);
        ntl_put_le32(p + 36, stack_rva);
        ntl_put_le32(p + 40, t[i].no_context ? 0 : arch == NTL_MD_ARCH_X86 ? 716 : 1232);
        ntl_put_le32(p + 44, t[i].no_context ? 0 : ctx[i]);
    }
    uint32_t modules = here(b);
    ntl_buf_put_u32(b, 1);
    ntl_buf_grow_zero(b, 108, &p);
    ntl_put_le64(p, BASE);
    ntl_put_le32(p + 8, sizeof mapped);
    ntl_put_le32(p + 16, 0x5eed1234);
    ntl_put_le32(p + 20, name);
    uint32_t memory = here(b);
    ntl_buf_put_u32(b, 2);
    ntl_buf_put_u64(b, BASE);
    ntl_buf_put_u32(b, sizeof mapped);
    ntl_buf_put_u32(b, img_rva);
    ntl_buf_put_u64(b, STACK);
    ntl_buf_put_u32(b, STACK_SIZE);
    ntl_buf_put_u32(b, stack_rva);
    const uint32_t streams[4][3] = {{NTL_MD_SYSTEM_INFO, 56, sys},
                                    {NTL_MD_THREAD_LIST, 4 + 48 * (uint32_t)n, threads},
                                    {NTL_MD_MODULE_LIST, 4 + 108, modules},
                                    {NTL_MD_MEMORY_LIST, 4 + 32, memory}};
    for (int i = 0; i < 4; i++) {
        ntl_put_le32(b->data + dir + 12 * i, streams[i][0]);
        ntl_put_le32(b->data + dir + 12 * i + 4, streams[i][1]);
        ntl_put_le32(b->data + dir + 12 * i + 8, streams[i][2]);
    }
}

/* build_kernel's image, mapped, with .pdata: KeFoo (0x1800..0x1810) does
 * push rbx; sub rsp, 0x20; Spin (0x1900..0x1910) is a machine frame. */
static void make_image(void)
{
    static struct img m;
    build_kernel(&m);
    set_dir(&m, NTL_PE_DIR_EXCEPTION, 0x3000, 24);
    uint8_t *pd = at(&m, 0x3000), *x = at(&m, 0x3400);
    ntl_put_le32(pd, 0x1800), ntl_put_le32(pd + 4, 0x1810), ntl_put_le32(pd + 8, 0x3400);
    ntl_put_le32(pd + 12, 0x1900), ntl_put_le32(pd + 16, 0x1910), ntl_put_le32(pd + 20, 0x3440);
    static const uint8_t info[] = {1, 5, 2, 0, 5, 0x32, 1, 0x30};
    memcpy(x, info, sizeof info);
    static const uint8_t mach[] = {1, 0, 1, 0, 0, 0x0a};
    memcpy(at(&m, 0x3440), mach, sizeof mach);
    memset(at(&m, 0x1800), 0x90, 0x200);
    *at(&m, 0x180d) = 0xe8; /* a call ending at ExBar+2 (0x1812), for the scan */
    memset(mapped, 0, sizeof mapped);
    memcpy(mapped, m.b, SEC_RAW);
    memcpy(mapped + SEC_RVA, m.b + SEC_RAW, SEC_SIZE);
}

static const struct ntl_stack_thread *walk(const struct ntl_buf *b, const struct ntl_stack_options *o,
                                           struct ntl_stack_process **p, size_t i)
{
    struct ntl_error err = {0};
    int rc = ntl_stack_from_dump(b->data, b->len, o, p, &err);
    CHECK_EQ_INT(rc, 0);
    if (rc < 0 || i >= (*p)->nthreads)
        return NULL;
    return (*p)->threads[i];
}

static void test_x64(void)
{
    struct ntl_buf b;
    struct ntl_stack_process *p;
    make_image();
    memset(stack, 0, sizeof stack);
    uint64_t s = STACK + 0x100;
    put_stack(s + 0x20, 0x1234);
    put_stack(s + 0x28, BASE + 0x1812); /* into ExBar: no RUNTIME_FUNCTION, a leaf */
    put_stack(s + 0x30, 0);
    uint64_t s2 = STACK + 0x400;        /* a scan from here finds BASE + 0x1812 */
    put_stack(s2, 0x77);
    put_stack(s2 + 8, BASE + 0x1813);   /* no call before it */
    put_stack(s2 + 16, BASE + 0x1812);
    uint64_t s3 = STACK + 0x600;        /* a machine frame naming its own rsp */
    put_stack(s3, BASE + 0x1812);
    put_stack(s3 + 24, s3);
    const struct thread_spec t[] = {
        {1, BASE + 0x1805, s, 0, false},
        {2, BASE + 0x1805, 0x5000, 0, false},
        {3, 0, 0, 0, true},
        {4, 0x1234, s2, 0, false},
        {5, BASE + 0x1900, s3, 0, false},
        {6, 0xfffff80000001000ull, 0x5000, 0, false},
    };
    build(&b, NTL_MD_ARCH_AMD64, t, 6);

    const struct ntl_stack_thread *th = walk(&b, NULL, &p, 0);
    CHECK(th && th->nframes == 2 && !*th->note);
    if (th && th->nframes == 2) {
        CHECK_EQ_STR(th->frames[0].function, "KeFoo");
        CHECK_EQ_U64(th->frames[0].function_offset, 5);
        CHECK_EQ_STR(th->frames[0].module, "k.dll");
        CHECK_EQ_STR(ntl_stack_how_name(th->frames[0].how), "context");
        CHECK_EQ_STR(th->frames[1].function, "ExBar");
        CHECK_EQ_U64(th->frames[1].function_offset, 2);
        CHECK_EQ_STR(ntl_stack_how_name(th->frames[1].how), "cfi");
    }
    th = p->nthreads > 1 ? p->threads[1] : NULL;
    CHECK(th && th->nframes == 1 && strstr(th->note, "memory at 0x5020 is not in the dump"));
    th = p->nthreads > 2 ? p->threads[2] : NULL;
    CHECK(th && th->nframes == 0 && strstr(th->note, "CONTEXT"));
    th = p->nthreads > 3 ? p->threads[3] : NULL;
    CHECK(th && th->nframes >= 2);
    if (th && th->nframes >= 2) {
        CHECK_EQ_U64(th->frames[1].pc, BASE + 0x1812);
        CHECK_EQ_STR(ntl_stack_how_name(th->frames[1].how), "scan");
    }
    th = p->nthreads > 4 ? p->threads[4] : NULL;
    CHECK(th && th->nframes == 1 && strstr(th->note, "did not advance"));
    /* Kernel code in no module, its stack not in the dump. */
    th = p->nthreads > 5 ? p->threads[5] : NULL;
    CHECK(th && th->nframes == 1 && th->frames[0].mode == NTL_STACK_KERNEL &&
          th->frames[0].module[0] == 0 &&
          strstr(th->note, "in no module of the dump, and the stack at rsp 0x5000 is not in the dump"));
    CHECK(p->threads[0]->frames[0].mode == NTL_STACK_USER);
    ntl_stack_process_free(p);

    /* Only the threads asked for, in that order; one the dump lacks is noted. */
    const uint32_t tids[] = {4, 99};
    struct ntl_stack_options o = {.tids = tids, .ntids = 2, .max_frames = 1};
    th = walk(&b, &o, &p, 1);
    CHECK(p && p->nthreads == 2 && p->threads[0]->tid == 4 && p->threads[0]->nframes == 1 &&
          strstr(p->threads[0]->note, "limit of 1 frames"));
    CHECK(th && th->tid == 99 && strstr(th->note, "no thread 99"));
    ntl_stack_process_free(p);

    /* No walker for ARM64; a dump cut in its header. */
    struct ntl_error err = {0};
    ntl_put_le16(b.data + ntl_le32(b.data + 32 + 8), NTL_MD_ARCH_ARM64);
    CHECK_EQ_INT(ntl_stack_from_dump(b.data, b.len, NULL, &p, &err), NTL_ERR_UNSUPPORTED);
    CHECK_EQ_INT(ntl_stack_from_dump(b.data, 20, NULL, &p, &err), NTL_ERR_TRUNCATED);
    ntl_buf_free(&b);
}

static void test_x86(void)
{
    struct ntl_buf b;
    struct ntl_stack_process *p;
    memset(stack, 0, sizeof stack);
    put_stack(STACK + 0x10, (STACK + 0x20) | (uint64_t)0x401100 << 32);
    put_stack(STACK + 0x20, (uint64_t)0x401200 << 32);
    put_stack(STACK + 0x40, (STACK + 0x40) | (uint64_t)0x401300 << 32); /* points at itself */
    const struct thread_spec t[] = {{7, 0x401000, STACK, STACK + 0x10, false},
                                    {8, 0x401000, STACK, STACK + 0x40, false}};
    build(&b, NTL_MD_ARCH_X86, t, 2);
    const struct ntl_stack_thread *th = walk(&b, NULL, &p, 0);
    CHECK(th && th->nframes == 3 && !*th->note);
    if (th && th->nframes == 3) {
        CHECK_EQ_U64(th->frames[2].pc, 0x401200);
        CHECK_EQ_STR(ntl_stack_how_name(th->frames[0].how), "context");
        CHECK_EQ_STR(ntl_stack_how_name(th->frames[1].how), "frame-pointer");
    }
    th = p && p->nthreads > 1 ? p->threads[1] : NULL;
    CHECK(th && th->nframes == 1 && strstr(th->note, "did not advance"));
    ntl_stack_process_free(p);
    ntl_buf_free(&b);
}

int main(void)
{
    test_x64();
    test_x86();
    return check_exit();
}
