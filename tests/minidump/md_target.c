/* A process for lldb to dump (test_lldb_core.py): it stops in stop_here with
 * a known marker on its stack (lldb-14's minidump writer saves stacks). */
#include <string.h>

char ntlens_marker[64] = "ntlens-minidump-marker:0123456789abcdef";

__attribute__((noinline)) int stop_here(const char *p)
{
    return p[0];
}

int main(void)
{
    char local[64];
    memcpy(local, ntlens_marker, sizeof local);
    return stop_here(local) == 'n' ? 0 : 1;
}
