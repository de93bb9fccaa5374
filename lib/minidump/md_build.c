/* The `dump build` pipeline: trace image events -> module files -> mapped,
 * rebased, bound and import-optimized images -> a minidump. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/etl.h"
#include "ntlens/etl_images.h"
#include "ntlens/minidump_build.h"
#include "ntlens/pe.h"

/* How many missing trace modules get a note each. */
#define MISSING_NOTES 20

/* One module while it is built; what survives goes to ntl_md_built_module. */
struct mod {
    const struct ntl_etl_image *img; /* the trace's event, or NULL */
    struct ntl_buf file;
    struct ntl_pe pe;
    struct ntl_pe_codeview cv;
    struct ntl_buf image;
    uint64_t (*ranges)[2];
    size_t range_count;
};

struct run {
    const struct ntl_md_build_options *opt;
    struct ntl_md_build *out;
    struct ntl_etl_image *imgs;
    size_t nimgs;
    char **paths;
    size_t npaths, cpaths;
    struct mod *mods;
    uint32_t version[3], processors, when;
    struct ntl_error *err;
};

static int nomem(struct ntl_error *err)
{
    return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
}

static struct ntl_md_note *note(struct run *r, enum ntl_md_note_kind kind, const char *subject)
{
    struct ntl_md_build *b = r->out;
    struct ntl_md_note *n = realloc(b->notes, (b->note_count + 1) * sizeof *n);
    if (!n)
        return NULL;
    b->notes = n;
    n = &n[b->note_count++];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    snprintf(n->subject, sizeof n->subject, "%s", subject ? subject : "");
    return n;
}

static int add_path(struct run *r, char *p)
{
    if (!p)
        return nomem(r->err);
    if (r->npaths == r->cpaths) {
        size_t ncap = r->cpaths ? r->cpaths * 2 : 16;
        char **v = realloc(r->paths, ncap * sizeof *v);
        if (!v) {
            free(p);
            return nomem(r->err);
        }
        r->paths = v;
        r->cpaths = ncap;
    }
    r->paths[r->npaths++] = p;
    return 0;
}

/* The module's load address from the trace: the last Load/DCStart/DCEnd
 * event naming it that is not followed by an Unload of the same base (at
 * opt->at, when set: what was loaded then). */
static const struct ntl_etl_image *trace_image(const struct run *r, const char *path)
{
    const struct ntl_etl_image *best = NULL;
    for (size_t i = 0; i < r->nimgs; i++) {
        const struct ntl_etl_image *img = &r->imgs[i];
        if ((r->opt->at_set && img->timestamp > r->opt->at) || !ntl_md_same_module(img->name, path))
            continue;
        if (img->kind == NTL_ETL_IMAGE_UNLOAD) {
            if (best && best->base == img->base)
                best = NULL;
        } else if (!best || img->kernel || !best->kernel) {
            best = img;
        }
    }
    return best;
}

/* Image events, OS version, processors and start time of the trace. */
static int trace_info(struct run *r)
{
    struct ntl_etl_salvage sv;
    struct ntl_etl *t;
    int rc = ntl_etl_images_load(r->opt->etl_path, true, &r->imgs, &r->nimgs, &sv, r->err);
    if (rc < 0)
        return rc;
    if (sv.first.status) {
        struct ntl_md_note *n = note(r, NTL_MD_NOTE_TRACE_SKIPPED, r->opt->etl_path);
        if (!n)
            return nomem(r->err);
        ntl_error_format(&sv.first, n->detail, sizeof n->detail);
        n->value = sv.bad_buffers + sv.bad_events + sv.truncated;
    }
    if ((rc = ntl_etl_open_file(r->opt->etl_path, NULL, &t, r->err)) < 0)
        return rc;
    const struct ntl_etl_logfile *lf = ntl_etl_logfile(t);
    if (!r->opt->version_set && lf->version[0]) {
        r->version[0] = lf->version[0];
        r->version[1] = lf->version[1];
        r->version[2] = lf->provider_version;
    }
    if (lf->number_of_processors)
        r->processors = lf->number_of_processors;
    /* The dump's time is the trace's start (FILETIME to Unix time). */
    uint64_t secs = lf->start_time / 10000000u;
    if (secs > 11644473600u && secs - 11644473600u <= UINT32_MAX)
        r->when = (uint32_t)(secs - 11644473600u);
    ntl_etl_close(t);
    return 0;
}

/* The trace, its path named in any error. */
static int read_trace(struct run *r)
{
    int rc = trace_info(r);
    if (rc < 0)
        ntl_error_prefix(r->err, "%s", r->opt->etl_path);
    return rc;
}

static bool file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

/* The caller's modules; names that are not files come from the search dirs. */
static int given_modules(struct run *r)
{
    const struct ntl_md_build_options *o = r->opt;
    for (size_t i = 0; i < o->module_count; i++) {
        const char *m = o->modules[i];
        char *p;
        if (file_exists(m) || !o->search_dir_count)
            p = strdup(m);
        else if (!(p = ntl_md_find_file(o->search_dirs, o->search_dir_count, m)))
            return ntl_error_set(r->err, NTL_MD_NO_MODULE_FILE, NULL, NTL_NO_OFFSET,
                                 "%s: no such file, nor in the search directories", m);
        int rc = add_path(r, p);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The trace's kernel modules still loaded at its end, each name once, that
 * the search directories hold; the others become notes. */
static int trace_modules(struct run *r)
{
    const struct ntl_md_build_options *o = r->opt;
    size_t missing = 0;
    for (size_t i = 0; i < r->nimgs; i++) {
        const struct ntl_etl_image *img = &r->imgs[i];
        bool seen = false;
        if (!img->kernel || !img->name[0] || trace_image(r, img->name) != img)
            continue;
        for (size_t k = 0; k < r->npaths && !seen; k++)
            seen = ntl_md_same_module(r->paths[k], img->name);
        if (seen)
            continue;
        char *path = ntl_md_find_file(o->search_dirs, o->search_dir_count, img->name);
        if (path) {
            int rc = add_path(r, path);
            if (rc < 0)
                return rc;
        } else if (missing++ < MISSING_NOTES) {
            struct ntl_md_note *n = note(r, NTL_MD_NOTE_NOT_IN_SEARCH, img->name);
            if (!n)
                return nomem(r->err);
            n->address = img->base;
        }
    }
    if (missing > MISSING_NOTES) {
        struct ntl_md_note *n = note(r, NTL_MD_NOTE_MORE_NOT_FOUND, NULL);
        if (!n)
            return nomem(r->err);
        n->value = missing - MISSING_NOTES;
    }
    if (!r->npaths)
        return ntl_error_set(r->err, NTL_MD_NO_MODULES, NULL, NTL_NO_OFFSET,
                             "none of the trace's kernel modules is in the search directories");
    return 0;
}

static char *default_dump_name(const char *path)
{
    const char *b = ntl_md_base_name(path);
    const char *dot = strrchr(b, '.');
    bool driver = dot && (!strcmp(dot, ".sys") || !strcmp(dot, ".SYS"));
    size_t n = strlen(b) + 40;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "\\SystemRoot\\system32\\%s%s", driver ? "drivers\\" : "", b);
    return s;
}

/* Where module i loads: a base the caller gives wins over the trace. */
static int place(struct run *r, size_t i, bool *base_used)
{
    struct ntl_md_built_module *bm = &r->out->modules[i];
    const struct ntl_md_build_options *o = r->opt;
    const struct ntl_etl_image *img = r->imgs ? trace_image(r, bm->path) : NULL;
    bool have = false;

    r->mods[i].img = img;
    for (size_t k = 0; k < o->base_count; k++)
        if (ntl_md_same_module(o->bases[k].name, bm->path)) {
            bm->base = o->bases[k].addr;
            bm->origin = NTL_MD_ORIGIN_BASE;
            base_used[k] = have = true;
        }
    if (!have && img) {
        bm->base = img->base;
        bm->origin = NTL_MD_ORIGIN_TRACE;
        have = true;
    }
    if (!have)
        return ntl_error_set(r->err, NTL_MD_NO_BASE, NULL, NTL_NO_OFFSET,
                             "no load address for %s: %s", bm->path,
                             o->etl_path ? "the trace does not list it" : "no trace");
    bm->dump_name = img && img->name[0] ? strdup(img->name) : default_dump_name(bm->path);
    return bm->dump_name ? 0 : nomem(r->err);
}

/* Reads, parses, maps and rebases module i; notes a file of another build
 * than the one the trace saw (it would decode wrong). */
static int load(struct run *r, size_t i)
{
    struct ntl_md_built_module *bm = &r->out->modules[i];
    struct mod *m = &r->mods[i];
    int rc;
    if ((rc = ntl_file_read(bm->path, NTL_MD_MODULE_FILE_LIMIT, &m->file, r->err)) < 0) {
        ntl_error_prefix(r->err, "%s", bm->path);
        return rc;
    }
    if ((rc = ntl_pe_parse(m->file.data, m->file.len, &m->pe, r->err)) < 0 ||
        (rc = ntl_pe_codeview(&m->pe, &m->cv, r->err)) < 0 ||
        (rc = ntl_pe_map(&m->pe, &m->image, r->err)) < 0 ||
        (rc = ntl_pe_rebase(&m->pe, m->image.data, m->image.len, bm->base, r->err)) < 0) {
        ntl_error_prefix(r->err, "%s", bm->path);
        return rc;
    }
    bm->size = m->pe.size_of_image;
    struct ntl_md_note *n = NULL;
    if (m->img && m->img->size && m->img->size != m->pe.size_of_image) {
        if (!(n = note(r, NTL_MD_NOTE_SIZE_MISMATCH, bm->path)))
            return nomem(r->err);
        n->value = m->pe.size_of_image;
        n->expected = m->img->size;
    }
    if (m->img && m->img->time_date_stamp && m->img->time_date_stamp != m->pe.timestamp) {
        if (!(n = note(r, NTL_MD_NOTE_STAMP_MISMATCH, bm->path)))
            return nomem(r->err);
        n->value = m->pe.timestamp;
        n->expected = m->img->time_date_stamp;
    }
    return 0;
}

/* Places and loads every module; notes unused bases and overlaps. */
static int load_all(struct run *r)
{
    struct ntl_md_build *b = r->out;
    const struct ntl_md_build_options *o = r->opt;
    bool *used = calloc(o->base_count + 1, sizeof *used);
    int rc = 0;
    if (!used)
        return nomem(r->err);
    for (size_t i = 0; i < b->module_count && rc >= 0; i++) {
        b->modules[i].path = r->paths[i];
        r->paths[i] = NULL;
        if ((rc = place(r, i, used)) >= 0)
            rc = load(r, i);
    }
    for (size_t k = 0; k < o->base_count && rc >= 0; k++)
        if (!used[k] && !note(r, NTL_MD_NOTE_BASE_UNUSED, o->bases[k].name))
            rc = nomem(r->err);
    free(used);
    for (size_t i = 0; i < b->module_count && rc >= 0; i++)
        for (size_t j = i + 1; j < b->module_count && rc >= 0; j++) {
            const struct ntl_md_built_module *x = &b->modules[i], *y = &b->modules[j];
            if (x->base < y->base + y->size && y->base < x->base + x->size) {
                struct ntl_md_note *n = note(r, NTL_MD_NOTE_OVERLAP, x->path);
                if (!n)
                    rc = nomem(r->err);
                else
                    snprintf(n->other, sizeof n->other, "%s", y->path);
            }
        }
    return rc;
}

/* The headers' page and each executable section (whole pages), merged where
 * they touch: what MiniDumpWithCodeSegs keeps. */
static int code_ranges(struct mod *m)
{
    const struct ntl_pe *pe = &m->pe;
    uint64_t page = pe->section_alignment >= 0x1000 ? pe->section_alignment : 0x1000;
    m->ranges = calloc((size_t)pe->section_count + 1, sizeof *m->ranges);
    if (!m->ranges)
        return NTL_ERR_NOMEM;
    m->ranges[0][0] = 0;
    m->ranges[0][1] = (pe->size_of_headers + page - 1) / page * page;
    m->range_count = 1;
    for (uint16_t i = 0; i < pe->section_count; i++) {
        const struct ntl_pe_section *s = &pe->sections[i];
        uint64_t start = s->virtual_address, len = s->virtual_size ? s->virtual_size : s->raw_size;
        uint64_t end = (start + len + page - 1) / page * page;
        uint64_t (*last)[2] = &m->ranges[m->range_count - 1];
        if (!(s->characteristics & 0x20000020u)) /* MEM_EXECUTE or CNT_CODE */
            continue;
        if (end > m->image.len)
            end = m->image.len;
        if (start <= (*last)[0] + (*last)[1]) {
            if (end > (*last)[0] + (*last)[1])
                (*last)[1] = end - (*last)[0];
        } else if (start < end) {
            m->ranges[m->range_count][0] = start;
            m->ranges[m->range_count][1] = end - start;
            m->range_count++;
        }
    }
    if (m->ranges[0][1] > m->image.len)
        m->ranges[0][1] = m->image.len;
    return 0;
}

static uint16_t dump_arch(uint16_t machine)
{
    switch (machine) {
    case NTL_PE_MACHINE_I386: return NTL_MD_ARCH_X86;
    case NTL_PE_MACHINE_ARM64: return NTL_MD_ARCH_ARM64;
    default: return NTL_MD_ARCH_AMD64;
    }
}

/* Binds imports, applies import optimization, and writes the dump. */
static int link_and_write(struct run *r)
{
    struct ntl_md_build *b = r->out;
    size_t n = b->module_count;
    struct ntl_iopt_module *iom = calloc(n, sizeof *iom);
    struct ntl_md_module_spec *specs = calloc(n, sizeof *specs);
    int rc = iom && specs ? 0 : nomem(r->err);
    for (size_t i = 0; i < n && rc >= 0; i++)
        iom[i] = (struct ntl_iopt_module){b->modules[i].dump_name, &r->mods[i].pe,
                                          r->mods[i].image.data, r->mods[i].image.len,
                                          b->modules[i].base};
    if (rc >= 0)
        rc = ntl_importopt_bind(iom, n, r->err);
    if (rc >= 0 && r->opt->import_optimization)
        rc = ntl_importopt_apply(iom, n, &b->report, r->err);
    for (size_t i = 0; i < n && rc >= 0; i++) {
        struct mod *m = &r->mods[i];
        if (r->opt->code_only && code_ranges(m) < 0)
            rc = nomem(r->err);
        specs[i] = (struct ntl_md_module_spec){
            .name = b->modules[i].dump_name, .base = b->modules[i].base,
            .size = m->pe.size_of_image, .checksum = m->pe.checksum, .timestamp = m->pe.timestamp,
            .cv_record = m->cv.present ? m->cv.record : NULL,
            .cv_size = m->cv.present ? m->cv.record_size : 0,
            .memory = m->image.data, .memory_size = m->image.len,
            .ranges = (const uint64_t (*)[2])m->ranges, .range_count = m->range_count};
    }
    if (rc >= 0) {
        const struct mod *first = &r->mods[0];
        struct ntl_md_spec spec = {
            .timestamp = r->when, .arch = dump_arch(first->pe.machine),
            .major = r->version[0], .minor = r->version[1], .build = r->version[2],
            .processors = (uint8_t)(r->processors > 255 ? 255 : r->processors),
            .product_type = 1, .process_id = 4, .thread_id = 8,
            .thread_ip = b->modules[0].base + first->pe.entry_rva,
            .modules = specs, .module_count = n};
        rc = ntl_md_write(&spec, &b->dump, r->err);
    }
    free(iom);
    free(specs);
    return rc;
}

static int check_options(const struct ntl_md_build_options *o, struct ntl_error *err)
{
    if (o->all_kernel && (!o->etl_path || !o->search_dir_count))
        return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                             "all_kernel needs a trace and search directories");
    if (!o->module_count && !o->all_kernel)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET, "no module given");
    return 0;
}

static int run_pipeline(struct run *r)
{
    int rc;
    if ((rc = check_options(r->opt, r->err)) < 0)
        return rc;
    if (r->opt->etl_path && (rc = read_trace(r)) < 0)
        return rc;
    if ((rc = given_modules(r)) < 0)
        return rc;
    if (r->opt->all_kernel && (rc = trace_modules(r)) < 0)
        return rc;
    r->mods = calloc(r->npaths, sizeof *r->mods);
    r->out->modules = calloc(r->npaths, sizeof *r->out->modules);
    if (!r->mods || !r->out->modules)
        return nomem(r->err);
    r->out->module_count = r->npaths;
    if ((rc = load_all(r)) < 0)
        return rc;
    return link_and_write(r);
}

int ntl_md_build(const struct ntl_md_build_options *opt, struct ntl_md_build *out,
                 struct ntl_error *err)
{
    struct run r = {.opt = opt, .out = out, .err = err,
                    .version = {10, 0, 0}, .processors = 1};
    memset(out, 0, sizeof *out);
    if (opt->version_set)
        memcpy(r.version, opt->version, sizeof r.version);
    int rc = run_pipeline(&r);
    for (size_t i = 0; r.mods && i < out->module_count; i++) {
        ntl_pe_free(&r.mods[i].pe);
        ntl_buf_free(&r.mods[i].file);
        ntl_buf_free(&r.mods[i].image);
        free(r.mods[i].ranges);
    }
    free(r.mods);
    for (size_t i = 0; i < r.npaths; i++)
        free(r.paths[i]);
    free(r.paths);
    free(r.imgs);
    if (rc < 0)
        ntl_md_build_free(out);
    return rc < 0 ? rc : 0;
}

void ntl_md_build_free(struct ntl_md_build *b)
{
    for (size_t i = 0; i < b->module_count; i++) {
        free(b->modules[i].path);
        free(b->modules[i].dump_name);
    }
    free(b->modules);
    free(b->notes);
    ntl_iopt_report_free(&b->report);
    ntl_buf_free(&b->dump);
    memset(b, 0, sizeof *b);
}
