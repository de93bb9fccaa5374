/* ELF files into an image with their functions' names: lib/ipt places the
 * segments; lib/profile reads the symbols, at file offsets, which apply
 * from where the file's offset 0 lands. */
#include "ntlens/buf.h"
#include "ntlens/ipt_sources.h"

static int add_names(struct ntl_iptsrc_syms *syms, const char *path, const struct ntl_buf *f,
                     bool at_base, uint64_t base, struct ntl_error *err)
{
    uint64_t file0, end;
    struct ntl_profile_symtab *t = NULL;
    int rc = ntl_ipt_elf_extent(f->data, f->len, at_base, base, &file0, &end, err);
    if (rc < 0)
        return rc;
    /* A build without an ELF symbol reader, or a file whose tables do not
     * parse, still names the module. */
    if (ntl_profile_symtab_from_elf(path, &t, NULL) < 0)
        t = NULL;
    if (t && ntl_profile_symtab_count(t) == 0) { /* a stripped file: the module alone */
        ntl_profile_symtab_free(t);
        t = NULL;
    }
    return ntl_iptsrc_syms_add(syms, path, file0, end - file0, t, err);
}

int ntl_iptsrc_add_elf(struct ntl_ipt_image *img, struct ntl_iptsrc_syms *syms,
                       const char *path, bool at_base, uint64_t base, struct ntl_error *err)
{
    struct ntl_buf f;
    ntl_buf_init(&f, NTL_IPT_MAX_IMAGE);
    int rc = ntl_file_read(path, NTL_IPT_MAX_IMAGE, &f, err);
    if (rc >= 0)
        rc = ntl_ipt_image_add_elf_bytes(img, f.data, f.len, at_base, base, err);
    if (rc >= 0 && syms)
        rc = add_names(syms, path, &f, at_base, base, err);
    ntl_buf_free(&f);
    if (rc < 0)
        ntl_error_prefix(err, "%s", path);
    return rc < 0 ? rc : 0;
}
