/* An x86 thread of a dump: the ebp chain ([ebp] the caller's ebp, [ebp+4]
 * the return address). 32-bit code carries no table that says which
 * functions keep a frame pointer, so every frame past the first is marked
 * as likely, not certain. */
#include "dump-walk.h"
#include "ntlens/reader.h"

int dump_walk_x86(struct dump_walk *w, const uint8_t *ctx, struct ntl_error *err)
{
    uint64_t ebp = ntl_le32(ctx + 0xb4), pc = ntl_le32(ctx + 0xb8);
    enum ntl_stack_how how = NTL_STACK_CONTEXT;
    int rc;
    for (;;) {
        if ((rc = dump_walk_frame(w, pc, how, w->t->nframes > 0, err)) < 0 || dump_walk_full(w, err, &rc))
            return rc;
        if (ebp == 0)
            return 0; /* the outermost frame keeps no frame pointer */
        uint8_t b[8];
        if (dump_memory_read(w->dm, ebp, b, 8) != 8)
            return ntl_stack_thread_note(w->p, w->t, err,
                                         "frame %zu: the frame pointer 0x%llx points outside the stack memory in the dump",
                                         w->t->nframes - 1, (unsigned long long)ebp);
        uint64_t next = ntl_le32(b);
        pc = ntl_le32(b + 4);
        how = NTL_STACK_FRAME_POINTER;
        if (pc == 0)
            return 0;
        if (next != 0 && next <= ebp)
            return ntl_stack_thread_note(w->p, w->t, err,
                                         "frame %zu: the frame pointer did not advance (0x%llx to 0x%llx)",
                                         w->t->nframes, (unsigned long long)ebp, (unsigned long long)next);
        ebp = next;
    }
}
