/* A DLL frame for stack_target.exe: dll_call_back calls back into the
 * program, so a thread sits in the program with a frame of this DLL below. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

__declspec(dllexport) __attribute__((noinline)) int dll_call_back(int (*fn)(int), int arg)
{
    volatile int keep = arg;
    int r = fn(arg);
    return r + keep; /* work after the call keeps it from being a tail call */
}
