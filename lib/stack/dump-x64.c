/* An x64 thread of a dump: unwind data where the module has it; where it
 * does not (a module the dump and --modules lack, code in no module), a
 * scan of the stack for the nearest word that is a return address,
 * marked as the guess it is. */
#include <stdio.h>

#include "dump-walk.h"
#include "ntlens/reader.h"

/* Words a scan looks at before it gives up. */
#define SCAN_WORDS 2048u

/* Whether the bytes before ret end in a call (e8 rel32; ff /2 with its
 * register, memory and displacement forms). Code not in memory does not
 * refute it. */
static bool after_call(struct dump_memory *dm, uint64_t ret)
{
    uint8_t b[7];
    if (dump_memory_read(dm, ret - 7, b, 7) != 7)
        return true;
    if (b[2] == 0xe8)
        return true;
    for (unsigned len = 2; len <= 7; len++) {
        const uint8_t *c = b + 7 - len;
        if (c[0] == 0xff && ((c[1] >> 3) & 7) == 2)
            return true;
    }
    return false;
}

/* 1 with r at the caller found, 0 when the stack has none within
 * SCAN_WORDS, -1 when the stack at rsp is not in the dump. */
static int scan(struct dump_walk *w, struct ntl_unwind_x64_regs *r)
{
    uint64_t at = r->gpr[NTL_X64_RSP];
    for (unsigned i = 0; i < SCAN_WORDS; i++, at += 8) {
        uint8_t b[8];
        bool nomem;
        if (dump_memory_read(w->dm, at, b, 8) != 8)
            return i == 0 ? -1 : 0;
        uint64_t v = ntl_le64(b);
        struct dump_module *m = dump_module_at(w->dm, v - 1, &nomem);
        if (m && after_call(w->dm, v)) {
            r->rip = v;
            r->gpr[NTL_X64_RSP] = at + 8;
            return 1;
        }
    }
    return 0;
}

static void load_context(const uint8_t *ctx, struct ntl_unwind_x64_regs *r)
{
    for (unsigned i = 0; i < 16; i++)
        r->gpr[i] = ntl_le64(ctx + 0x78 + 8 * i);
    r->rip = ntl_le64(ctx + 0xf8);
}

/* The caller of the frame in r, and how it was found; < 0 with err (a
 * note) when there is none to be had. */
static int step(struct dump_walk *w, struct ntl_unwind_x64_regs *r, bool caller,
                enum ntl_stack_how *how, struct ntl_error *err)
{
    struct ntl_unwind_mem mem = {dump_memory_read, w->dm};
    bool nomem;
    struct dump_module *m = dump_module_at(w->dm, r->rip - (caller ? 1 : 0), &nomem);
    if (nomem)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    if (m && m->has_unwind) {
        *how = NTL_STACK_CFI;
        return ntl_unwind_x64_step(&mem, &m->img, caller, r, err);
    }
    *how = NTL_STACK_SCAN;
    int found = scan(w, r);
    if (found == 1)
        return NTL_UNWIND_X64_LEAF;
    char where[128];
    if (found < 0)
        snprintf(where, sizeof where, "the stack at rsp 0x%llx is not in the dump",
                 (unsigned long long)r->gpr[NTL_X64_RSP]);
    else
        snprintf(where, sizeof where, "no return address in the %u stack words from rsp", SCAN_WORDS);
    if (m)
        return ntl_error_set(err, NTL_ERR_NOT_FOUND, NULL, NTL_NO_OFFSET, "%s, and %s", m->why, where);
    return ntl_error_set(err, NTL_ERR_NOT_FOUND, NULL, NTL_NO_OFFSET,
                         "0x%llx is in no module of the dump, and %s", (unsigned long long)r->rip, where);
}

int dump_walk_x64(struct dump_walk *w, const uint8_t *ctx, struct ntl_error *err)
{
    struct ntl_unwind_x64_regs r;
    enum ntl_stack_how how = NTL_STACK_CONTEXT;
    int rc;
    load_context(ctx, &r);
    for (;;) {
        bool caller = w->t->nframes > 0;
        if ((rc = dump_walk_frame(w, r.rip, how, caller, err)) < 0 || dump_walk_full(w, err, &rc))
            return rc;
        uint64_t rsp = r.gpr[NTL_X64_RSP], pc = r.rip;
        struct ntl_error why = {0};
        int kind = step(w, &r, caller, &how, &why);
        if (kind == NTL_ERR_NOMEM)
            return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
        if (kind < 0)
            return ntl_stack_thread_note(w->p, w->t, err, "frame %zu (0x%llx): %s", w->t->nframes - 1,
                                         (unsigned long long)pc, why.message);
        if (r.rip == 0)
            return 0; /* the outermost frame: its caller is 0 */
        /* A caller's frame is above its callee's; only a machine frame
         * (an interrupt or exception) may switch to another stack. */
        if (kind != NTL_UNWIND_X64_MACHFRAME ? r.gpr[NTL_X64_RSP] <= rsp : r.gpr[NTL_X64_RSP] == rsp)
            return ntl_stack_thread_note(w->p, w->t, err,
                                         "frame %zu (0x%llx): the stack pointer did not advance (0x%llx to 0x%llx)",
                                         w->t->nframes - 1, (unsigned long long)pc,
                                         (unsigned long long)rsp, (unsigned long long)r.gpr[NTL_X64_RSP]);
    }
}
