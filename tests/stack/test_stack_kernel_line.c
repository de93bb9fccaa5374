/* Lines of /proc/PID/task/TID/stack as kernel frames: with and without the
 * address (zeroed for all but root on most kernels), a module's function,
 * and lines that are not frames. */
#include <string.h>

#include "check.h"
#include "live-linux.h"

int main(void)
{
    struct ntl_stack_frame f;
    char a[] = "[<0>] anon_pipe_read+0x366/0x4a0\n";
    CHECK(stack_proc_parse_kernel_line(a, &f));
    CHECK_EQ_U64(f.pc, NTL_STACK_UNKNOWN);
    CHECK_EQ_STR(f.function, "anon_pipe_read");
    CHECK_EQ_U64(f.function_offset, 0x366);
    CHECK_EQ_STR(f.module, "vmlinux");
    CHECK(f.mode == NTL_STACK_KERNEL && f.how == NTL_STACK_KERNEL_LIST);

    char b[] = "[<ffffffffc0a1b2c3>] nfs_wait_bit_killable+0x1c/0x40 [nfs]\n";
    CHECK(stack_proc_parse_kernel_line(b, &f));
    CHECK_EQ_U64(f.pc, 0xffffffffc0a1b2c3ull);
    CHECK_EQ_STR(f.function, "nfs_wait_bit_killable");
    CHECK_EQ_U64(f.function_offset, 0x1c);
    CHECK_EQ_STR(f.module, "nfs");

    char c[] = "[<0>] entry_SYSCALL_64_after_hwframe\n";
    CHECK(stack_proc_parse_kernel_line(c, &f));
    CHECK_EQ_STR(f.function, "entry_SYSCALL_64_after_hwframe");
    CHECK_EQ_U64(f.function_offset, 0);

    char d[] = "garbage\n", e[] = "[<zz>] x+0x1/0x2\n", g[] = "[<0>] \n", h[] = "";
    CHECK(!stack_proc_parse_kernel_line(d, &f));
    CHECK(!stack_proc_parse_kernel_line(e, &f));
    CHECK(!stack_proc_parse_kernel_line(g, &f));
    CHECK(!stack_proc_parse_kernel_line(h, &f));
    return check_exit();
}
