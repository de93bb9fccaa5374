/* The shared-library frame of stackprog: a thread that waits inside a .so. */
#include <unistd.h>

__attribute__((noinline)) int stacklib_wait(int fd)
{
    char c;
    int r = (int)read(fd, &c, 1);
    return r + 1; /* work after the call: the call is not a tail call */
}
