/* Lines of /proc/PID/task/TID/stack as kernel frames: with and without the
 * address (zeroed for all but root on most kernels), a module's function,
 * and lines that are not frames. Then /proc/PID/task/TID/syscall: in a
 * call, blocked outside one, running, and text that is neither. Last,
 * whether a thread has exited: this one (no), a zombie child (yes), a
 * reaped one (yes). */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

    struct stack_syscall sc;
    CHECK_EQ_INT(stack_proc_parse_syscall("0 0x3 0x7ffd2a1c 0x1 0x0 0x0 0x0 0x7ffd2a18 "
                                          "0x7f3c1a2b3c4d\n", &sc), 0);
    CHECK(sc.nr == 0);
    CHECK_EQ_U64(sc.sp, 0x7ffd2a18);
    CHECK_EQ_U64(sc.pc, 0x7f3c1a2b3c4d);
    CHECK_EQ_INT(stack_proc_parse_syscall("-1 0x7ffe10 0x401000\n", &sc), 0);
    CHECK(sc.nr == -1);
    CHECK_EQ_U64(sc.sp, 0x7ffe10);
    CHECK_EQ_U64(sc.pc, 0x401000);
    CHECK_EQ_INT(stack_proc_parse_syscall("running\n", &sc), -EAGAIN);
    CHECK_EQ_INT(stack_proc_parse_syscall("0 0x3 0x7ffd2a1c\n", &sc), -EINVAL);
    CHECK_EQ_INT(stack_proc_parse_syscall("-1 0x7ffe10 0x401000 0x5\n", &sc), -EINVAL);
    CHECK_EQ_INT(stack_proc_parse_syscall("-1 0x7ffe10 0x40zz\n", &sc), -EINVAL);
    CHECK_EQ_INT(stack_proc_parse_syscall("", &sc), -EINVAL);

    CHECK(!stack_proc_thread_exited(getpid(), (uint32_t)getpid()));
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    siginfo_t si;
    /* Exited, not reaped: a zombie. */
    CHECK(waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT) == 0);
    CHECK(stack_proc_thread_exited(child, (uint32_t)child));
    CHECK(waitpid(child, NULL, 0) == child);
    CHECK(stack_proc_thread_exited(child, (uint32_t)child));
    return check_exit();
}
