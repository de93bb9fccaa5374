/* A shared library without unwind data (no .eh_frame, no .debug_frame),
 * with frame pointers: libdw unwinds out of it by the frame pointer, and
 * ntlens must mark the frame found that way. */
#include <unistd.h>

__attribute__((noinline)) int stacknocfi_wait(int fd)
{
    char c;
    int r = (int)read(fd, &c, 1);
    return r + 2; /* work after the call: the call is not a tail call */
}
