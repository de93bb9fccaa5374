/* libFuzzer: minidumps as ipt flow's memory (--dump): every range into an
 * image, every module into names with the exports found in its mapped
 * headers (lib/pe reading a mapped image). Whatever the bytes, loading
 * succeeds or fails with the status err holds; each module's base then
 * reads back and has a name; never a crash, an out-of-bounds read or a
 * leak. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/ipt_sources.h"
#include "ntlens/minidump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_ipt_image *img;
    struct ntl_iptsrc_syms *syms;
    struct ntl_error err;
    if (ntl_ipt_image_new(&img, &err) < 0)
        return 0;
    if (ntl_iptsrc_syms_new(&syms, &err) < 0) {
        ntl_ipt_image_free(img);
        return 0;
    }
    int rc = ntl_iptsrc_add_dump_bytes(img, syms, data, size, &err);
    if (rc < 0 && err.status != rc)
        abort();
    struct ntl_minidump md;
    if (rc >= 0 && ntl_md_parse(data, size, &md, NULL) == 0) {
        for (size_t i = 0; i < md.module_count; i++) {
            const struct ntl_md_module *m = &md.modules[i];
            struct ntl_iptsrc_place p;
            char name[256];
            uint8_t b;
            if (m->size && !ntl_iptsrc_syms_find(syms, m->base, &p))
                abort();
            ntl_iptsrc_syms_name(syms, m->base + m->size / 2, name, sizeof name);
            if (!memchr(name, '\0', sizeof name))
                abort();
            /* The image holds what the dump holds at the base. */
            if ((ntl_ipt_image_read(&b, 1, m->base, img) > 0) != (ntl_md_read(&md, m->base, &b, 1) > 0))
                abort();
        }
        ntl_md_free(&md);
    }
    ntl_iptsrc_syms_free(syms);
    ntl_ipt_image_free(img);
    return 0;
}
