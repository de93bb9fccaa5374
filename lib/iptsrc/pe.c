/* PE modules through lib/minidump's dump-build pipeline: it already maps
 * each file as the loader does, rebases it, binds its imports and applies
 * import optimization across all of them (the optimized call needs the
 * exporting module's address); the dump it builds in memory is then read
 * like any other. The pipeline finds a trace's kernel modules itself; a
 * process's user-mode modules are found here and given with their bases. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/etl_images.h"
#include "ntlens/ipt_sources.h"
#include "ntlens/minidump.h"

#include "iptsrc-internal.h"

/* The modules given to the pipeline: the caller's files, then the
 * process's; paths[i] is owned when i >= owned_from. */
struct list {
    const char **paths;
    struct ntl_md_build_base *bases;
    size_t n, owned_from;
};

static int nomem(struct ntl_error *err)
{
    return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
}

static int add(struct list *l, const char *path, uint64_t base, struct ntl_error *err)
{
    if (l->n == NTL_IPTSRC_MAX_PE)
        return ntl_error_set(err, NTL_ERR_LIMIT, NULL, NTL_NO_OFFSET, "more than %d PE modules",
                             NTL_IPTSRC_MAX_PE);
    l->paths[l->n] = path;
    l->bases[l->n].name = ntl_md_base_name(path);
    l->bases[l->n].addr = base;
    l->n++;
    return 0;
}

/* The process's user-mode modules that the folders hold, appended to l. */
static int process_modules(const struct ntl_iptsrc_pe_options *o, struct list *l,
                           struct ntl_error *err)
{
    struct ntl_etl_image *imgs = NULL;
    size_t count = 0;
    int rc = ntl_etl_images_load(o->etl_path, true, &imgs, &count, NULL, err);
    if (rc < 0) {
        ntl_error_prefix(err, "%s", o->etl_path);
        return rc;
    }
    bool *present = malloc((count ? count : 1) * sizeof *present);
    uint64_t at = o->at_set ? o->at : UINT64_MAX;
    rc = present ? iptsrc_images_present(imgs, count, at, present, err) : nomem(err);
    for (size_t i = 0; i < count && rc >= 0; i++) {
        const struct ntl_etl_image *img = &imgs[i];
        if (img->kernel || img->pid != o->process || !img->name[0] || !present[i])
            continue;
        char *path = ntl_md_find_file(o->dirs, o->dir_count, img->name);
        if (!path)
            continue;
        rc = add(l, path, img->base, err);
        if (rc < 0)
            free(path);
    }
    free(present);
    free(imgs);
    return rc < 0 ? rc : 0;
}

static int build(const struct ntl_iptsrc_pe_options *o, struct list *l, struct ntl_md_build *b,
                 struct ntl_error *err)
{
    for (size_t i = 0; i < o->count; i++) {
        int rc = add(l, o->files[i], o->bases[i], err);
        if (rc < 0)
            return rc;
    }
    l->owned_from = l->n;
    bool with_trace = o->etl_path && o->dir_count;
    if (with_trace && o->process_set) {
        int rc = process_modules(o, l, err);
        if (rc < 0)
            return rc;
    }
    struct ntl_md_build_options bo = {
        .etl_path = with_trace ? o->etl_path : NULL,
        .modules = l->paths,
        .module_count = l->n,
        .search_dirs = o->dirs,
        .search_dir_count = o->dir_count,
        .bases = l->bases,
        .base_count = l->n,
        .all_kernel = with_trace,
        .at_set = with_trace && o->at_set,
        .at = o->at,
        .import_optimization = o->import_optimization,
    };
    return ntl_md_build(&bo, b, err);
}

int ntl_iptsrc_add_pe(struct ntl_ipt_image *img, struct ntl_iptsrc_syms *syms,
                      const struct ntl_iptsrc_pe_options *o, struct ntl_md_build *b,
                      struct ntl_error *err)
{
    memset(b, 0, sizeof *b);
    if (o->count == 0 && !(o->etl_path && o->dir_count))
        return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                             "no PE module: give files, or a trace and a folder");
    if (o->count > NTL_IPTSRC_MAX_PE)
        return ntl_error_set(err, NTL_ERR_LIMIT, NULL, NTL_NO_OFFSET, "more than %d PE modules",
                             NTL_IPTSRC_MAX_PE);
    struct list l = {.paths = calloc(NTL_IPTSRC_MAX_PE, sizeof *l.paths),
                     .bases = calloc(NTL_IPTSRC_MAX_PE, sizeof *l.bases)};
    int rc = l.paths && l.bases ? build(o, &l, b, err) : nomem(err);
    for (size_t i = l.owned_from; i < l.n; i++)
        free((char *)l.paths[i]);
    free(l.paths);
    free(l.bases);
    if (rc < 0)
        return rc;
    rc = ntl_iptsrc_add_dump_bytes(img, syms, b->dump.data, b->dump.len, err);
    return rc < 0 ? rc : (int)b->module_count;
}
