/* A minidump's memory into an image, and its modules into names: the
 * exports are read from each module's mapped headers when the dump holds
 * them (a dump of mapped images, as `dump build` writes, does; a code-only
 * one or a process dump without headers does not, and the module is named
 * without functions). */
#include <stdlib.h>
#include <string.h>

#include "ntlens/buf.h"
#include "ntlens/ipt_sources.h"
#include "ntlens/minidump.h"
#include "ntlens/pe.h"

/* Largest dump read whole. */
#define DUMP_MAX ((size_t)4 << 30)

/* The module's image as mapped, from the ranges that fall in it (zero
 * elsewhere) into a malloc'd buffer; NULL when the dump holds none of it or
 * memory is short. */
static uint8_t *mapped_image(const struct ntl_minidump *md, const struct ntl_md_module *m)
{
    if (m->size == 0 || m->size > NTL_PE_MAX_IMAGE_SIZE || !ntl_md_read(md, m->base, &(char){0}, 1))
        return NULL;
    uint8_t *img = calloc(1, m->size);
    if (!img)
        return NULL;
    for (size_t i = 0; i < md->range_count; i++) {
        const struct ntl_md_range *r = &md->ranges[i];
        uint64_t lo = r->start > m->base ? r->start : m->base;
        uint64_t hi = r->start + r->size < m->base + m->size ? r->start + r->size : m->base + m->size;
        if (lo < hi)
            memcpy(img + (lo - m->base), md->data + r->file_offset + (lo - r->start), hi - lo);
    }
    return img;
}

/* The named exports of a mapped image. lib/pe reads files: its sections are
 * pointed at their own RVAs so that its reads land in the mapped bytes. NULL
 * when the headers are not there or do not parse (no names, not an error:
 * the dump's memory is what it is). */
static struct ntl_profile_symtab *mapped_exports(const uint8_t *img, uint32_t size)
{
    struct ntl_pe pe;
    struct ntl_pe_exports ex = {0};
    struct ntl_profile_symtab *t = NULL;
    if (ntl_pe_parse(img, size, &pe, NULL) < 0)
        return NULL;
    for (uint16_t i = 0; i < pe.section_count; i++) {
        struct ntl_pe_section *s = &pe.sections[i];
        uint32_t vsize = s->virtual_size ? s->virtual_size : s->raw_size;
        s->raw_offset = s->virtual_address;
        s->raw_size = s->virtual_address >= size ? 0
                      : vsize > size - s->virtual_address ? size - s->virtual_address : vsize;
    }
    if (ntl_pe_exports_parse(&pe, &ex, NULL) >= 0 && ntl_profile_symtab_new(&t, NULL) >= 0) {
        for (size_t i = 0; i < ex.count; i++) {
            const struct ntl_pe_export *e = &ex.entries[i];
            if (e->name && e->rva && !e->forwarder &&
                ntl_profile_symtab_add(t, e->name, e->rva, 0, NULL) < 0)
                break;
        }
    }
    ntl_pe_exports_free(&ex);
    ntl_pe_free(&pe);
    /* No names: no table (lib/profile sorts even an empty one). */
    if (t && ntl_profile_symtab_count(t) == 0) {
        ntl_profile_symtab_free(t);
        t = NULL;
    }
    return t;
}

static int add_modules(struct ntl_iptsrc_syms *syms, const struct ntl_minidump *md,
                       struct ntl_error *err)
{
    for (size_t i = 0; i < md->module_count; i++) {
        const struct ntl_md_module *m = &md->modules[i];
        if (m->size == 0)
            continue; /* a dump irregularity, already reported by dump show */
        uint8_t *img = mapped_image(md, m);
        struct ntl_profile_symtab *t = img ? mapped_exports(img, m->size) : NULL;
        free(img);
        int rc = ntl_iptsrc_syms_add(syms, m->name ? m->name : "?", m->base, m->size, t, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int ntl_iptsrc_add_dump_bytes(struct ntl_ipt_image *img, struct ntl_iptsrc_syms *syms,
                              const uint8_t *data, size_t size, struct ntl_error *err)
{
    struct ntl_minidump md;
    int rc = ntl_md_parse(data, size, &md, err);
    if (rc < 0)
        return rc;
    size_t added = 0;
    for (size_t i = 0; i < md.range_count && rc >= 0; i++) {
        const struct ntl_md_range *r = &md.ranges[i];
        if (r->size == 0)
            continue;
        rc = ntl_ipt_image_add(img, data + r->file_offset, (size_t)r->size, r->start, err);
        if (rc < 0)
            ntl_error_prefix(err, "memory range at file offset 0x%llx",
                             (unsigned long long)r->desc_offset);
        else
            added++;
    }
    if (rc >= 0 && syms)
        rc = add_modules(syms, &md, err);
    ntl_md_free(&md);
    return rc < 0 ? rc : (int)(added > INT32_MAX ? INT32_MAX : added);
}

int ntl_iptsrc_add_dump(struct ntl_ipt_image *img, struct ntl_iptsrc_syms *syms,
                        const char *path, struct ntl_error *err)
{
    struct ntl_buf f;
    ntl_buf_init(&f, DUMP_MAX);
    int rc = ntl_file_read(path, DUMP_MAX, &f, err);
    if (rc >= 0)
        rc = ntl_iptsrc_add_dump_bytes(img, syms, f.data, f.len, err);
    ntl_buf_free(&f);
    return rc;
}
