/* Live stacks: to be written (issue 15). */
#include "ntlens/stack.h"

int ntl_stack_live(uint32_t pid, const struct ntl_stack_options *o,
                   struct ntl_stack_process **out, struct ntl_error *err)
{
    (void)o;
    (void)out;
    return ntl_error_set(err, NTL_ERR_UNSUPPORTED, NULL, NTL_NO_OFFSET,
                         "live stacks of process %u: not built yet", pid);
}
