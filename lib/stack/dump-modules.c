/* Where a dump's modules' unwind data and names come from. The dump's own
 * memory is preferred (it is what ran); a module file from --modules is
 * used only when the dump lacks the module's unwind data, and only when its
 * SizeOfImage and TimeDateStamp match the dump's record of the module,
 * since a different build's unwind data gives wrong frames silently. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump-modules.h"
#include "ntlens/minidump_build.h"
#include "ntlens/pe.h"
#include "ntlens/reader.h"

static int by_base(const void *a, const void *b)
{
    uint64_t x = ((const struct dump_module *)a)->md->base, y = ((const struct dump_module *)b)->md->base;
    return (x > y) - (x < y);
}

int dump_memory_init(struct dump_memory *dm, const struct ntl_minidump *md, const char *dir,
                     struct ntl_error *err)
{
    *dm = (struct dump_memory){.md = md, .dir = dir};
    dm->mods = calloc(md->module_count ? md->module_count : 1, sizeof *dm->mods);
    if (!dm->mods)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    for (size_t i = 0; i < md->module_count; i++) {
        dm->mods[i].md = &md->modules[i];
        dm->mods[i].name = ntl_md_base_name(md->modules[i].name);
    }
    dm->nmods = md->module_count;
    qsort(dm->mods, dm->nmods, sizeof *dm->mods, by_base);
    return 0;
}

void dump_memory_free(struct dump_memory *dm)
{
    for (size_t i = 0; i < dm->nmods; i++) {
        ntl_buf_free(&dm->mods[i].file_image);
        ntl_profile_symtab_free(dm->mods[i].syms);
    }
    free(dm->mods);
}

/* The loaded module whose image holds va, loaded or not. */
static struct dump_module *module_of(const struct dump_memory *dm, uint64_t va)
{
    size_t lo = 0, hi = dm->nmods;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (dm->mods[mid].md->base <= va)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || va - dm->mods[lo - 1].md->base >= dm->mods[lo - 1].md->size)
        return NULL;
    return &dm->mods[lo - 1];
}

/* Copies what one source holds at va: a mapped module file (used only
 * where the dump lacked the module's unwind data), the thread's stack, or
 * the dump's ranges; cheapest lookups first, as each unwind step reads
 * many times. */
static size_t read_some(const struct dump_memory *dm, uint64_t va, uint8_t *out, size_t len)
{
    const struct dump_module *m = module_of(dm, va);
    const uint8_t *from = NULL;
    uint64_t avail = 0;
    if (m && m->file_image.len && va - m->md->base < m->file_image.len) {
        from = m->file_image.data + (va - m->md->base);
        avail = m->file_image.len - (va - m->md->base);
    } else if (va - dm->stack_start < dm->stack_size) {
        from = dm->stack_bytes + (va - dm->stack_start);
        avail = dm->stack_size - (va - dm->stack_start);
    } else {
        return ntl_md_read(dm->md, va, out, len);
    }
    size_t k = avail < len ? (size_t)avail : len;
    memcpy(out, from, k);
    return k;
}

size_t dump_memory_read(void *ctx, uint64_t va, void *buf, size_t len)
{
    const struct dump_memory *dm = ctx;
    uint8_t *out = buf;
    size_t done = 0;
    while (done < len) {
        size_t k = read_some(dm, va + done, out + done, len - done);
        if (k == 0)
            break;
        done += k;
    }
    return done;
}

/* The image at the module's base in the dump, laid out as a file whose
 * sections sit at their RVAs, so the PE reader takes it: exports and the
 * exception directory come out of it. 0, 1 when the dump lacks the
 * headers, < 0 out of memory. */
static int from_dump(struct dump_memory *dm, struct dump_module *m, struct ntl_error *err)
{
    uint8_t mz[2];
    if (m->md->size < 0x200 || m->md->size > NTL_PE_MAX_IMAGE_SIZE ||
        ntl_md_read(dm->md, m->md->base, mz, 2) != 2 || mz[0] != 'M' || mz[1] != 'Z')
        return 1;
    uint8_t *copy = calloc(1, m->md->size);
    if (!copy)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    for (uint64_t off = 0; off < m->md->size; off += 0x1000) {
        uint64_t n = m->md->size - off < 0x1000 ? m->md->size - off : 0x1000;
        ntl_md_read(dm->md, m->md->base + off, copy + off, (size_t)n);
    }
    struct ntl_pe pe;
    struct ntl_error perr = {0};
    int rc = 1;
    if (ntl_pe_parse(copy, m->md->size, &pe, &perr) >= 0) {
        /* Point each section's file bytes at its RVA. */
        for (uint16_t i = 0; i < pe.section_count; i++) {
            uint8_t *h = copy + pe.sections[i].header_offset;
            uint32_t va = pe.sections[i].virtual_address, vs = pe.sections[i].virtual_size;
            if (va > m->md->size)
                va = m->md->size;
            ntl_put_le32(h + 16, vs < m->md->size - va ? vs : m->md->size - va);
            ntl_put_le32(h + 20, va);
        }
        uint8_t first[12];
        /* Headers without the table (a dump of stacks only) send us to the file. */
        if (pe.machine == NTL_PE_MACHINE_AMD64 && pe.dir_count > NTL_PE_DIR_EXCEPTION &&
            pe.dirs[NTL_PE_DIR_EXCEPTION].size &&
            ntl_md_read(dm->md, m->md->base + pe.dirs[NTL_PE_DIR_EXCEPTION].rva, first, 12) == 12) {
            m->img = (struct ntl_unwind_x64_image){m->md->base, m->md->size,
                                                   pe.dirs[NTL_PE_DIR_EXCEPTION].rva,
                                                   pe.dirs[NTL_PE_DIR_EXCEPTION].size};
            m->has_unwind = true;
        }
        ntl_pe_free(&pe);
        if (ntl_profile_symtab_from_pe(copy, m->md->size, &m->syms, &perr) == NTL_ERR_NOMEM)
            rc = ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
        else
            rc = m->has_unwind ? 0 : 1;
    }
    free(copy);
    return rc;
}

/* The module's file from --modules, if it is the same build. 0 when used,
 * 1 when not (m->why says why), < 0 out of memory. */
static int from_file(struct dump_memory *dm, struct dump_module *m, struct ntl_error *err)
{
    char *path = ntl_md_find_file(&dm->dir, 1, m->name);
    struct ntl_buf file = {0};
    struct ntl_pe pe;
    struct ntl_error ferr = {0};
    int rc = 1;
    if (!path) {
        snprintf(m->why, sizeof m->why, "the dump does not hold the unwind data of %s and %s has no file of that name",
                 m->name, dm->dir);
        return 1;
    }
    if (ntl_file_read(path, NTL_MD_MODULE_FILE_LIMIT, &file, &ferr) < 0 ||
        ntl_pe_parse(file.data, file.len, &pe, &ferr) < 0) {
        snprintf(m->why, sizeof m->why, "%s: %s", path, ferr.message);
        goto out;
    }
    if (pe.size_of_image != m->md->size || (m->md->timestamp && pe.timestamp != m->md->timestamp)) {
        snprintf(m->why, sizeof m->why,
                 "%s does not match the dump's module (SizeOfImage 0x%x, TimeDateStamp 0x%x; the dump has 0x%x, 0x%x)",
                 path, pe.size_of_image, pe.timestamp, m->md->size, m->md->timestamp);
    } else if (!m->syms && ntl_profile_symtab_from_pe(file.data, file.len, &m->syms, &ferr) == NTL_ERR_NOMEM) {
        rc = ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    } else if (pe.machine != NTL_PE_MACHINE_AMD64 || pe.dir_count <= NTL_PE_DIR_EXCEPTION ||
               !pe.dirs[NTL_PE_DIR_EXCEPTION].size) {
        snprintf(m->why, sizeof m->why, "%s has no x64 exception directory", path);
    } else if (ntl_pe_map(&pe, &m->file_image, &ferr) < 0) {
        snprintf(m->why, sizeof m->why, "%s: %s", path, ferr.message);
    } else {
        m->img = (struct ntl_unwind_x64_image){m->md->base, m->md->size, pe.dirs[NTL_PE_DIR_EXCEPTION].rva,
                                               pe.dirs[NTL_PE_DIR_EXCEPTION].size};
        m->has_unwind = true;
        rc = 0;
    }
    ntl_pe_free(&pe);
out:
    if (ferr.status == NTL_ERR_NOMEM && rc > 0)
        rc = ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    ntl_buf_free(&file);
    free(path);
    return rc;
}

struct dump_module *dump_module_at(struct dump_memory *dm, uint64_t va, bool *nomem)
{
    struct dump_module *m = module_of(dm, va);
    struct ntl_error err = {0};
    *nomem = false;
    if (!m || m->loaded)
        return m;
    m->loaded = true;
    int rc = from_dump(dm, m, &err);
    if (rc == 1 && dm->dir)
        rc = from_file(dm, m, &err);
    else if (rc == 1)
        snprintf(m->why, sizeof m->why,
                 "the dump does not hold the unwind data of %s (give its folder with --modules)", m->name);
    *nomem = rc < 0;
    return m;
}

const char *dump_module_name_of(struct dump_memory *dm, struct dump_module *m, uint64_t va,
                                bool caller, uint64_t *off)
{
    uint64_t at = va - (caller ? 1 : 0), disp;
    if (!m->syms || at - m->md->base >= m->md->size)
        return NULL;
    struct ntl_profile_symbol s;
    if (!ntl_profile_symtab_lookup(m->syms, at - m->md->base, &s, &disp))
        return NULL;
    if (m->has_unwind) {
        struct ntl_unwind_mem mem = {dump_memory_read, dm};
        struct ntl_unwind_x64_function f;
        struct ntl_error err = {0};
        if (ntl_unwind_x64_lookup(&mem, &m->img, (uint32_t)(at - m->md->base), &f, &err) == 1 &&
            s.offset < f.begin)
            return NULL;
    }
    *off = va - m->md->base - s.offset;
    return s.name;
}
