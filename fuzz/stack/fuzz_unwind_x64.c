/* libFuzzer harness: the x64 unwinder over memory shaped like a dump's (an
 * image holding .pdata, UNWIND_INFO and code, and a stack), walked as
 * dump-x64.c walks it; and, for an input that is a minidump, the whole
 * dump walk (ntl_stack_from_dump), whose modules' unwind data then comes
 * from the dump's memory.
 *
 * A non-dump input is: u32 rip offset in the image, u32 rsp offset in the
 * stack, u32 .pdata RVA, u32 .pdata size, u32 image size; the image's
 * bytes; the stack's bytes (the rest). Integers little-endian. */
#include <stdint.h>
#include <string.h>

#include "ntlens/reader.h"
#include "ntlens/stack.h"
#include "ntlens/stack_unwind.h"

#define BASE 0x180000000ull
#define STACK 0x10000ull

struct space {
    const uint8_t *image, *stack;
    size_t image_size, stack_size;
};

static size_t piece(const uint8_t *p, size_t size, uint64_t off, void *buf, size_t len)
{
    if (off >= size)
        return 0;
    size_t n = size - off < len ? (size_t)(size - off) : len;
    memcpy(buf, p + off, n);
    return n;
}

static size_t read_space(void *ctx, uint64_t va, void *buf, size_t len)
{
    const struct space *s = ctx;
    if (va >= BASE)
        return piece(s->image, s->image_size, va - BASE, buf, len);
    if (va >= STACK)
        return piece(s->stack, s->stack_size, va - STACK, buf, len);
    return 0;
}

static void walk(const uint8_t *data, size_t size)
{
    if (size < 20)
        return;
    uint32_t image_size = ntl_le32(data + 16);
    if (image_size > size - 20)
        image_size = (uint32_t)(size - 20);
    struct space s = {data + 20, data + 20 + image_size, image_size, size - 20 - image_size};
    struct ntl_unwind_mem m = {read_space, &s};
    struct ntl_unwind_x64_image img = {BASE, image_size, ntl_le32(data + 8), ntl_le32(data + 12)};
    struct ntl_unwind_x64_regs r = {.rip = BASE + ntl_le32(data)};
    r.gpr[NTL_X64_RSP] = STACK + ntl_le32(data + 4);
    for (unsigned n = 0; n < 64 && r.rip; n++) {
        struct ntl_error err;
        uint64_t rsp = r.gpr[NTL_X64_RSP];
        int kind = ntl_unwind_x64_step(&m, &img, n > 0, &r, &err);
        if (kind < 0 || (kind != NTL_UNWIND_X64_MACHFRAME && r.gpr[NTL_X64_RSP] <= rsp))
            break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 4 && memcmp(data, "MDMP", 4) == 0) {
        struct ntl_stack_process *p;
        struct ntl_error err;
        struct ntl_stack_options o = {.max_frames = 64};
        if (ntl_stack_from_dump(data, size, &o, &p, &err) == 0)
            ntl_stack_process_free(p);
        return 0;
    }
    walk(data, size);
    return 0;
}
