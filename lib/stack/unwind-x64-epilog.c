/* x64 epilogs. The unwind codes describe the prolog; in an epilog part of
 * the frame is already torn down, so Windows' rule is to recognise the
 * epilog by its instructions and emulate the rest of it instead. The
 * recognised forms are the ones the x64 ABI allows in an epilog:
 *     add rsp, imm | lea rsp, [reg+disp]     (optional, REX.W)
 *     pop reg ...
 *     ret | ret imm16 | rep ret | jmp (within the function, to more of the above) */
#include <string.h>

#include "ntlens/reader.h"
#include "unwind-x64.h"

/* Enough code bytes for the longest instruction we decode. */
#define WINDOW 16u

static size_t fetch(const struct ntl_unwind_mem *m, uint64_t pc, uint8_t *b)
{
    memset(b, 0, WINDOW);
    return m->read(m->ctx, pc, b, WINDOW);
}

/* Length of the leading add/lea to rsp at b, or 0 when b starts otherwise. */
static unsigned stack_adjust_length(const uint8_t *b)
{
    if ((b[0] & 0xf8) != 0x48)
        return 0;
    switch (b[1]) {
    case 0x81: return b[0] == 0x48 && b[2] == 0xc4 ? 7 : 0; /* add rsp, imm32 */
    case 0x83: return b[0] == 0x48 && b[2] == 0xc4 ? 4 : 0; /* add rsp, imm8 */
    case 0x8d:                                              /* lea rsp, [reg+disp] */
        if ((b[0] & 0x06) || ((b[2] >> 3) & 7) != 4 || (b[2] & 7) == 4)
            return 0;
        return (b[2] >> 6) == 1 ? 4 : (b[2] >> 6) == 2 ? 7 : 0;
    }
    return 0;
}

int ntl_unwind_x64_in_epilog(const struct ntl_unwind_mem *m, const struct ntl_unwind_x64_image *img,
                             const struct ntl_unwind_x64_function *f, uint64_t pc,
                             struct ntl_error *err)
{
    uint8_t b[WINDOW];
    if (fetch(m, pc, b) == 0)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "epilog", pc,
                             "the code at 0x%llx is not in memory", (unsigned long long)pc);
    pc += stack_adjust_length(b);
    for (unsigned n = 0; n < NTL_UNWIND_X64_MAX_EPILOG; n++) {
        if (fetch(m, pc, b) == 0)
            return 0; /* an epilog we cannot see is not one we can emulate */
        unsigned i = (b[0] & 0xf0) == 0x40 ? 1 : 0; /* REX */
        uint8_t op = b[i];
        uint64_t target;
        if (op >= 0x58 && op <= 0x5f) {
            pc += i + 1;
            continue;
        }
        switch (op) {
        case 0xc2:
        case 0xc3: return 1;
        case 0xf3: return b[i + 1] == 0xc3;
        case 0xe9: target = pc + i + 5 + (uint64_t)(int64_t)(int32_t)ntl_le32(b + i + 1); break;
        case 0xeb: target = pc + i + 2 + (uint64_t)(int64_t)(int8_t)b[i + 1]; break;
        default: return 0;
        }
        /* A jump leaving the function is a tail call or plain code, not an
         * epilog we can follow. */
        if (target - img->base < f->begin || target - img->base >= f->end)
            return 0;
        pc = target;
    }
    return 0; /* jumps in a loop */
}

static int pop_word(const struct ntl_unwind_mem *m, struct ntl_unwind_x64_regs *r, uint64_t *v,
                    struct ntl_error *err)
{
    uint8_t w[8];
    int rc = ntl_unwind_need(m, r->gpr[NTL_X64_RSP], w, 8, "stack", err);
    if (rc < 0)
        return rc;
    *v = ntl_le64(w);
    r->gpr[NTL_X64_RSP] += 8;
    return 0;
}

int ntl_unwind_x64_run_epilog(const struct ntl_unwind_mem *m, struct ntl_unwind_x64_regs *r,
                              struct ntl_error *err)
{
    uint64_t pc = r->rip;
    uint8_t b[WINDOW];
    int rc;
    /* ntl_unwind_x64_in_epilog accepted this code, so it ends in a ret. */
    for (unsigned n = 0; n < NTL_UNWIND_X64_MAX_EPILOG; n++) {
        if (fetch(m, pc, b) < 2)
            break;
        unsigned rex = (b[0] & 0xf0) == 0x40 ? b[0] & 0x0f : 0, i = rex || b[0] == 0x40;
        uint8_t op = b[i];
        if (op >= 0x58 && op <= 0x5f) {
            if ((rc = pop_word(m, r, &r->gpr[(op - 0x58) + (rex & 1) * 8], err)) < 0)
                return rc;
            pc += i + 1;
            continue;
        }
        switch (op) {
        case 0x81: r->gpr[NTL_X64_RSP] += (uint64_t)(int64_t)(int32_t)ntl_le32(b + i + 2); pc += i + 6; continue;
        case 0x83: r->gpr[NTL_X64_RSP] += (uint64_t)(int64_t)(int8_t)b[i + 2]; pc += i + 3; continue;
        case 0x8d: {
            uint64_t reg = r->gpr[(b[i + 1] & 7) + (rex & 1) * 8];
            if ((b[i + 1] >> 6) == 1) {
                r->gpr[NTL_X64_RSP] = reg + (uint64_t)(int64_t)(int8_t)b[i + 2];
                pc += i + 3;
            } else {
                r->gpr[NTL_X64_RSP] = reg + (uint64_t)(int64_t)(int32_t)ntl_le32(b + i + 2);
                pc += i + 6;
            }
            continue;
        }
        case 0xc2:
            if ((rc = pop_word(m, r, &r->rip, err)) < 0)
                return rc;
            r->gpr[NTL_X64_RSP] += ntl_le16(b + i + 1);
            return 0;
        case 0xc3:
        case 0xf3:
            return pop_word(m, r, &r->rip, err);
        case 0xe9: pc += i + 5 + (uint64_t)(int64_t)(int32_t)ntl_le32(b + i + 1); continue;
        case 0xeb: pc += i + 2 + (uint64_t)(int64_t)(int8_t)b[i + 1]; continue;
        }
        break;
    }
    return ntl_error_set(err, NTL_ERR_FORMAT, "epilog", pc,
                         "the epilog at 0x%llx changed while it was emulated",
                         (unsigned long long)r->rip);
}
