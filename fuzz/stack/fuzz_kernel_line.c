/* libFuzzer harness: the parser of /proc/PID/task/TID/stack lines
 * (stack_proc_parse_kernel_line), fed the input cut into lines the way
 * stack_proc_kernel_frames reads the file (fgets into 512 bytes). A frame
 * it accepts must keep to the line it was given: its function and module
 * point into that line (or are the parser's own "vmlinux"), the function is
 * not empty, and both end before the line's end; anything else aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "live-linux.h"

#define LINE 512 /* stack_proc_kernel_frames' buffer */

static void check_within(const char *s, const char *line, size_t len, bool may_be_static)
{
    if (may_be_static && strcmp(s, "vmlinux") == 0 && (s < line || s > line + len))
        return;
    if (s < line || s > line + len || s + strlen(s) > line + len)
        abort();
}

static void one_line(const char *data, size_t len)
{
    char line[LINE];
    memcpy(line, data, len);
    line[len] = 0;
    len = strlen(line); /* fgets would stop at a NUL in the file the same way */
    struct ntl_stack_frame f;
    if (!stack_proc_parse_kernel_line(line, &f))
        return;
    if (!*f.function || f.mode != NTL_STACK_KERNEL || f.how != NTL_STACK_KERNEL_LIST)
        abort();
    check_within(f.function, line, len, false);
    check_within(f.module, line, len, true);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    while (size) {
        const char *nl = memchr(s, '\n', size < LINE - 1 ? size : LINE - 1);
        size_t len = nl ? (size_t)(nl - s) + 1 : (size < LINE - 1 ? size : LINE - 1);
        one_line(s, len);
        s += len;
        size -= len;
    }
    return 0;
}
