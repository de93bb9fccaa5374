/* libFuzzer harness: the minidump reader (strict, and stream by stream as
 * `dump show` reads a damaged dump), memory reads by address, and
 * relocation of the first module (on a copy). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/minidump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_minidump md;
    struct ntl_error err;
    uint8_t buf[64];
    char *name = NULL;

    int rc = ntl_md_parse_partial(data, size, &md, &err);
    if (rc < 0 && rc != NTL_MD_INCOMPLETE)
        return 0;
    /* What a partial parse keeps must be as safe to use as a whole one. */
    for (size_t i = 0; i < md.module_count && i < 16; i++)
        (void)ntl_md_module_find(&md, md.modules[i].name);
    (void)ntl_md_read(&md, md.range_count ? md.ranges[0].start : 0, buf, sizeof buf);
    ntl_md_free(&md);
    if (ntl_md_parse(data, size, &md, &err) < 0)
        return 0;
    for (size_t i = 0; i < md.range_count && i < 16; i++) {
        (void)ntl_md_read(&md, md.ranges[i].start + md.ranges[i].size / 2, buf, sizeof buf);
        (void)ntl_md_read(&md, md.ranges[i].start - 8, buf, sizeof buf);
    }
    for (size_t i = 0; i < md.module_count && i < 16; i++)
        (void)ntl_md_module_at(&md, md.modules[i].base);
    if (md.module_count)
        name = strdup(md.modules[0].name);
    ntl_md_free(&md);
    if (name) {
        uint8_t *copy = malloc(size);
        if (copy) {
            memcpy(copy, data, size);
            (void)ntl_md_relocate(copy, size, name, 0xfffff80400000000ull, &err);
            free(copy);
        }
        free(name);
    }
    return 0;
}
