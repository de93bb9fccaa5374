/* Minidump stacks: to be written (issue 15). */
#include "ntlens/stack.h"

int ntl_stack_from_dump(const void *data, size_t size, const struct ntl_stack_options *o,
                        struct ntl_stack_process **out, struct ntl_error *err)
{
    (void)data;
    (void)size;
    (void)o;
    (void)out;
    return ntl_error_set(err, NTL_ERR_UNSUPPORTED, NULL, NTL_NO_OFFSET,
                         "minidump stacks: not built yet");
}
