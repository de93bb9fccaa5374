/* Internals shared by the x64 unwinder's files. */
#ifndef NTLENS_LIB_STACK_UNWIND_X64_H
#define NTLENS_LIB_STACK_UNWIND_X64_H

#include "ntlens/stack_unwind.h"

/* Reads exactly len bytes at va, or fails with NTL_ERR_TRUNCATED naming
 * what and the first address. */
int ntl_unwind_need(const struct ntl_unwind_mem *m, uint64_t va, void *buf, size_t len,
                    const char *what, struct ntl_error *err);

/* Epilogs (unwind-x64-epilog.c). 1 when the code at r->rip is an epilog of
 * f (Windows' rule: an optional add/lea to rsp, pops, then ret, or a jmp
 * within the function that leads there), 0 when not, < 0 when the code
 * bytes are not in memory. */
int ntl_unwind_x64_in_epilog(const struct ntl_unwind_mem *m, const struct ntl_unwind_x64_image *img,
                             const struct ntl_unwind_x64_function *f, uint64_t pc,
                             struct ntl_error *err);
/* Executes that epilog on r up to and including the ret. 0, or < 0. */
int ntl_unwind_x64_run_epilog(const struct ntl_unwind_mem *m, struct ntl_unwind_x64_regs *r,
                              struct ntl_error *err);

#endif
