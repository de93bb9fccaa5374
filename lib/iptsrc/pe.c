/* PE modules through lib/minidump's dump-build pipeline: it already maps
 * each file as the loader does, rebases it, binds its imports and applies
 * import optimization across all of them (the optimized call needs the
 * exporting module's address); the dump it builds in memory is then read
 * like any other. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/ipt_sources.h"
#include "ntlens/minidump.h"

int ntl_iptsrc_add_pe(struct ntl_ipt_image *img, struct ntl_iptsrc_syms *syms,
                      const struct ntl_iptsrc_pe_options *o, struct ntl_md_build *b,
                      struct ntl_error *err)
{
    memset(b, 0, sizeof *b);
    if (o->count == 0 && !(o->etl_path && o->dir_count))
        return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                             "no PE module: give files, or a trace and a folder");
    struct ntl_md_build_base *bases = calloc(o->count ? o->count : 1, sizeof *bases);
    if (!bases)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    for (size_t i = 0; i < o->count; i++) {
        bases[i].name = ntl_md_base_name(o->files[i]);
        bases[i].addr = o->bases[i];
    }
    struct ntl_md_build_options bo = {
        .etl_path = o->etl_path,
        .modules = o->files,
        .module_count = o->count,
        .search_dirs = o->dirs,
        .search_dir_count = o->dir_count,
        .bases = bases,
        .base_count = o->count,
        .all_kernel = o->etl_path && o->dir_count,
        .import_optimization = o->import_optimization,
    };
    int rc = ntl_md_build(&bo, b, err);
    free(bases);
    if (rc < 0)
        return rc;
    rc = ntl_iptsrc_add_dump_bytes(img, syms, b->dump.data, b->dump.len, err);
    return rc < 0 ? rc : (int)b->module_count;
}
