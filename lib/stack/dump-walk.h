/* One thread's walk through a minidump, shared by the x64 and x86 walkers. */
#ifndef NTLENS_LIB_STACK_DUMP_WALK_H
#define NTLENS_LIB_STACK_DUMP_WALK_H

#include "dump-modules.h"
#include "ntlens/stack.h"

struct dump_walk {
    struct ntl_stack_process *p;
    struct ntl_stack_thread *t;
    struct dump_memory *dm;
    unsigned max_frames;
    const volatile sig_atomic_t *stop;
};

/* Appends a frame at pc (caller: a return address, named by pc - 1), named
 * from the dump's module list and the module's exports. 0, or
 * NTL_ERR_NOMEM. */
int dump_walk_frame(struct dump_walk *w, uint64_t pc, enum ntl_stack_how how, bool caller,
                    struct ntl_error *err);

/* True when the walk must end before another frame: it has max_frames
 * (noted), or the caller's stop flag is set. */
bool dump_walk_full(struct dump_walk *w, struct ntl_error *err, int *rc);

/* Walk from a CONTEXT record (the caller checked that the registers read
 * are inside it: up to Rip, or Eip). Problems with the thread become its
 * note; 0, or NTL_ERR_NOMEM. */
int dump_walk_x64(struct dump_walk *w, const uint8_t *ctx, struct ntl_error *err);
int dump_walk_x86(struct dump_walk *w, const uint8_t *ctx, struct ntl_error *err);

#endif
