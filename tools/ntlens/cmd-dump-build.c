/* ntlens dump build: a minidump of kernel modules mapped at the addresses an
 * ETW trace recorded, with the kernel's import optimization applied (seed
 * 002: what LoadLibraryEx + MiniDumpWriteDump + relocation did on Windows,
 * here in portable C). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "dump-common.h"
#include "ntlens/etl.h"
#include "ntlens/etl_images.h"
#include "ntlens/importopt.h"
#include "ntlens/minidump.h"
#include "ntlens/pe.h"
#include "output.h"

#define MODULE_FILE_LIMIT (512u << 20)

static void usage(FILE *f)
{
    fputs("usage: ntlens dump build [OPTIONS] --module FILE... -o OUT.dmp\n"
          "\n"
          "Build a minidump of kernel modules: each module file is mapped as the loader\n"
          "maps it, relocated to the load address the ETW trace recorded (or --base),\n"
          "its imports bound, and the kernel's import optimization applied to its\n"
          "IMPORT_CONTROL_TRANSFER sites. Prints a report of every site.\n"
          "\n"
          "Options:\n"
          "  -e, --etl FILE         take load addresses from the trace's image events\n"
          "  -m, --module FILE      a module file (.sys, .exe, .dll); repeatable; module\n"
          "                         files may also be given as arguments\n"
          "  -b, --base NAME=ADDR   load address of module NAME (overrides the trace)\n"
          "  -s, --search DIR       look for module files named like a --module (or the\n"
          "                         trace's modules) in DIR; repeatable\n"
          "  -a, --all-kernel       every kernel module the trace has loaded at its end that\n"
          "                         the search directories hold (needs --etl and --search)\n"
          "  -o, --output FILE      the minidump to write (required)\n"
          "  -c, --code-only        write only each module's headers and executable sections\n"
          "                         (like MiniDumpWithCodeSegs; smaller dumps)\n"
          "      --no-import-optimization\n"
          "                         leave call sites as in the files (the remote system\n"
          "                         does not use import optimization)\n"
          "      --os-version MAJ.MIN.BUILD\n"
          "                         SystemInfo version (default: from the trace, else 10.0.0)\n"
          "  -f, --format FMT       report as table (default), csv or json\n"
          "  -q, --quiet            no report\n"
          "  -h, --help             show this help\n",
          f);
}

struct module {
    const char *path;
    const struct ntl_etl_image *img; /* the trace's event, or NULL */
    char *dump_name;
    struct ntl_buf file;
    struct ntl_pe pe;
    struct ntl_pe_codeview cv;
    struct ntl_buf image;
    uint64_t base;
    const char *origin;
    uint64_t (*ranges)[2];
    size_t range_count;
};

/* The headers' page and each executable section (whole pages), merged where
 * they touch. */
static int code_ranges(struct module *m)
{
    const struct ntl_pe *pe = &m->pe;
    uint64_t page = pe->section_alignment >= 0x1000 ? pe->section_alignment : 0x1000;
    m->ranges = calloc((size_t)pe->section_count + 1, sizeof *m->ranges);
    if (!m->ranges)
        return -1;
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

/* The module's load address from the trace: the last Load/DCStart/DCEnd
 * event naming it that is not followed by an Unload of the same base. */
static const struct ntl_etl_image *trace_image(const struct ntl_etl_image *imgs, size_t n,
                                               const char *path)
{
    const struct ntl_etl_image *best = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!dump_same_module(imgs[i].name, path))
            continue;
        if (imgs[i].kind == NTL_ETL_IMAGE_UNLOAD) {
            if (best && best->base == imgs[i].base)
                best = NULL;
        } else if (!best || imgs[i].kernel || !best->kernel) {
            best = &imgs[i];
        }
    }
    return best;
}

static bool add_path(char ***paths, size_t *n, size_t *cap, char *p)
{
    if (!p)
        return false;
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        char **v = realloc(*paths, ncap * sizeof *v);
        if (!v) {
            free(p);
            return false;
        }
        *paths = v;
        *cap = ncap;
    }
    (*paths)[(*n)++] = p;
    return true;
}

static bool file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

/* The trace's kernel modules still loaded at its end, each name once, that
 * the search directories hold; the others are named in a warning. */
static bool add_trace_modules(const char *cmd, const struct ntl_etl_image *imgs, size_t nimgs,
                              const char *const *dirs, size_t ndirs, char ***paths, size_t *n,
                              size_t *cap)
{
    size_t missing = 0;
    for (size_t i = 0; i < nimgs; i++) {
        const struct ntl_etl_image *img = &imgs[i];
        bool seen = false;
        char *path;
        if (!img->kernel || !img->name[0] || trace_image(imgs, nimgs, img->name) != img)
            continue;
        for (size_t k = 0; k < *n && !seen; k++)
            seen = dump_same_module((*paths)[k], img->name);
        if (seen)
            continue;
        path = dump_find_file(dirs, ndirs, img->name);
        if (!path) {
            if (missing++ < 20)
                cli_warn(cmd, "%s (0x%016" PRIx64 ") is not in the search directories", img->name,
                         img->base);
            continue;
        }
        if (!add_path(paths, n, cap, path))
            return false;
    }
    if (missing > 20)
        cli_warn(cmd, "%zu more of the trace's kernel modules are not in the search directories",
                 missing - 20);
    return true;
}

static char *default_dump_name(const char *path)
{
    const char *b = dump_base_name(path);
    const char *dot = strrchr(b, '.');
    bool driver = dot && (!strcmp(dot, ".sys") || !strcmp(dot, ".SYS"));
    size_t n = strlen(b) + 40;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "\\SystemRoot\\system32\\%s%s", driver ? "drivers\\" : "", b);
    return s;
}

static void report(const struct module *mods, const struct ntl_iopt_report *rep, enum out_format fmt)
{
    struct out_table *t = out_table_new();

    out_table_column(t, "module", NULL, OUT_LEFT);
    out_table_column(t, "rva", NULL, OUT_RIGHT);
    out_table_column(t, "address", NULL, OUT_RIGHT);
    out_table_column(t, "kind", NULL, OUT_LEFT);
    out_table_column(t, "iat_index", NULL, OUT_RIGHT);
    out_table_column(t, "import", NULL, OUT_LEFT);
    out_table_column(t, "target", NULL, OUT_RIGHT);
    out_table_column(t, "resolved", NULL, OUT_LEFT);
    out_table_column(t, "result", NULL, OUT_LEFT);
    out_table_column(t, "detail", NULL, OUT_LEFT);
    for (size_t i = 0; i < rep->count; i++) {
        const struct ntl_iopt_site *s = &rep->sites[i];
        out_table_str(t, dump_base_name(mods[s->module].path));
        dump_hex_cell(t, fmt, s->rva, 0);
        dump_hex_cell(t, fmt, s->address, 16);
        out_table_str(t, s->call ? "call" : "jmp");
        if (s->iat_index == 0x7ffff && fmt == OUT_TABLE)
            out_table_str(t, "0x7FFFF");
        else
            out_table_u64(t, s->iat_index);
        if (s->import_dll[0])
            out_table_strf(t, "%s!%s", s->import_dll, s->import_name);
        else
            out_table_null(t);
        if (s->target) {
            dump_hex_cell(t, fmt, s->target, 16);
            out_table_strf(t, "%s!%s", dump_base_name(mods[s->target_module].path), s->target_name);
        } else {
            out_table_null(t);
            out_table_null(t);
        }
        out_table_str(t, s->status == NTL_IOPT_PATCHED ? "patched" : "skipped");
        if (s->detail[0])
            out_table_str(t, s->detail);
        else
            out_table_null(t);
        out_table_row_end(t);
    }
    out_table_render(t, stdout, fmt);
    out_table_free(t);
}

static bool parse_version(const char *s, uint32_t v[3])
{
    unsigned a, b, c;
    char tail;
    if (sscanf(s, "%u.%u.%u%c", &a, &b, &c, &tail) != 3)
        return false;
    v[0] = a;
    v[1] = b;
    v[2] = c;
    return true;
}

int cmd_dump_build(int argc, char **argv)
{
    enum { OPT_NO_IOPT = 1, OPT_OS_VERSION };
    static const struct option longopts[] = {
        {"etl", required_argument, NULL, 'e'},
        {"module", required_argument, NULL, 'm'},
        {"base", required_argument, NULL, 'b'},
        {"search", required_argument, NULL, 's'},
        {"all-kernel", no_argument, NULL, 'a'},
        {"output", required_argument, NULL, 'o'},
        {"no-import-optimization", no_argument, NULL, OPT_NO_IOPT},
        {"code-only", no_argument, NULL, 'c'},
        {"os-version", required_argument, NULL, OPT_OS_VERSION},
        {"format", required_argument, NULL, 'f'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = argv[0], *etl = NULL, *out = NULL;
    char **paths = NULL;
    const char **dirs = calloc((size_t)argc + 1, sizeof *dirs);
    struct dump_base *bases = calloc((size_t)argc + 1, sizeof *bases);
    struct module *mods = NULL;
    struct ntl_md_module_spec *specs = NULL;
    struct ntl_iopt_module *iom = NULL;
    struct ntl_iopt_report rep = {0};
    struct ntl_etl_image *imgs = NULL;
    struct ntl_buf dump = {0};
    struct ntl_error err = {0};
    enum out_format fmt = OUT_TABLE;
    size_t npaths = 0, cpaths = 0, nbases = 0, nimgs = 0, ndirs = 0;
    bool iopt = true, quiet = false, version_set = false, code_only = false, all_kernel = false;
    uint32_t version[3] = {10, 0, 0}, processors = 1, when = 0;
    int opt, rc = EXIT_OK;

    if (!dirs || !bases) {
        free(dirs);
        free(bases);
        return cli_failf(cmd, "out of memory");
    }
    optind = 1;
    while ((opt = getopt_long(argc, argv, "e:m:b:s:ao:cf:qh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'e': etl = optarg; break;
        case 'm':
            if (!add_path(&paths, &npaths, &cpaths, strdup(optarg)))
                { rc = cli_failf(cmd, "out of memory"); goto done; }
            break;
        case 's': dirs[ndirs++] = optarg; break;
        case 'a': all_kernel = true; break;
        case 'b':
            if (!dump_parse_base(optarg, &bases[nbases]))
                { rc = cli_usage_error(cmd, "--base wants NAME=ADDR, not '%s'", optarg); goto done; }
            nbases++;
            break;
        case 'o': out = optarg; break;
        case OPT_NO_IOPT: iopt = false; break;
        case 'c': code_only = true; break;
        case OPT_OS_VERSION:
            if (!parse_version(optarg, version))
                { rc = cli_usage_error(cmd, "--os-version wants MAJOR.MINOR.BUILD"); goto done; }
            version_set = true;
            break;
        case 'f':
            if (!out_format_parse(optarg, &fmt))
                { rc = cli_usage_error(cmd, "unknown format '%s'", optarg); goto done; }
            break;
        case 'q': quiet = true; break;
        case 'h': usage(stdout); rc = EXIT_OK; goto done;
        default: rc = cli_usage_error(cmd, "unknown option"); goto done;
        }
    }
    while (optind < argc)
        if (!add_path(&paths, &npaths, &cpaths, strdup(argv[optind++])))
            { rc = cli_failf(cmd, "out of memory"); goto done; }
    if (all_kernel && (!etl || !ndirs))
        { rc = cli_usage_error(cmd, "--all-kernel needs --etl and --search"); goto done; }
    if (!npaths && !all_kernel)
        { rc = cli_usage_error(cmd, "no module given (--module FILE)"); goto done; }
    if (!out) { rc = cli_usage_error(cmd, "no output file given (-o OUT.dmp)"); goto done; }

    if (etl) {
        struct ntl_etl *t;
        if (ntl_etl_images_load(etl, true, &imgs, &nimgs, NULL, &err) < 0)
            { rc = cli_fail(cmd, &err, etl); goto done; }
        if (ntl_etl_open_file(etl, NULL, &t, &err) >= 0) {
            const struct ntl_etl_logfile *lf = ntl_etl_logfile(t);
            if (!version_set && lf->version[0]) {
                version[0] = lf->version[0];
                version[1] = lf->version[1];
                version[2] = lf->provider_version;
            }
            if (lf->number_of_processors)
                processors = lf->number_of_processors;
            /* The dump's time is the trace's start (FILETIME to Unix time). */
            if (lf->start_time / 10000000u > 11644473600u &&
                lf->start_time / 10000000u - 11644473600u <= UINT32_MAX)
                when = (uint32_t)(lf->start_time / 10000000u - 11644473600u);
            ntl_etl_close(t);
        }
    }

    /* Module names that are not files are looked up in the search directories. */
    for (size_t i = 0; i < npaths; i++) {
        char *found;
        if (file_exists(paths[i]) || !ndirs)
            continue;
        if (!(found = dump_find_file(dirs, ndirs, paths[i])))
            { rc = cli_failf(cmd, "%s: no such file, nor in the search directories", paths[i]); goto done; }
        free(paths[i]);
        paths[i] = found;
    }
    if (all_kernel && !add_trace_modules(cmd, imgs, nimgs, dirs, ndirs, &paths, &npaths, &cpaths))
        { rc = cli_failf(cmd, "out of memory"); goto done; }
    if (!npaths)
        { rc = cli_failf(cmd, "none of the trace's kernel modules is in the search directories"); goto done; }

    mods = calloc(npaths, sizeof *mods);
    specs = calloc(npaths, sizeof *specs);
    iom = calloc(npaths, sizeof *iom);
    if (!mods || !specs || !iom) { rc = cli_failf(cmd, "out of memory"); goto done; }
    for (size_t i = 0; i < npaths; i++) {
        struct module *m = &mods[i];
        const struct ntl_etl_image *img;
        bool have = false;

        m->path = paths[i];
        for (size_t k = 0; k < nbases; k++)
            if (dump_same_module(bases[k].name, m->path)) {
                m->base = bases[k].addr;
                m->origin = "--base";
                bases[k].used = have = true;
            }
        img = imgs ? trace_image(imgs, nimgs, m->path) : NULL;
        m->img = img;
        if (!have && img) {
            m->base = img->base;
            m->origin = "trace";
            have = true;
        }
        m->dump_name = img && img->name[0] ? strdup(img->name) : default_dump_name(m->path);
        if (!have) {
            rc = cli_failf(cmd, "no load address for %s: %s; give --base %s=ADDR", m->path,
                           etl ? "the trace does not list it" : "no --etl trace",
                           dump_base_name(m->path));
            goto done;
        }
        if (!m->dump_name) { rc = cli_failf(cmd, "out of memory"); goto done; }
        if (ntl_file_read(m->path, MODULE_FILE_LIMIT, &m->file, &err) < 0 ||
            ntl_pe_parse(m->file.data, m->file.len, &m->pe, &err) < 0 ||
            ntl_pe_codeview(&m->pe, &m->cv, &err) < 0 ||
            ntl_pe_map(&m->pe, &m->image, &err) < 0 ||
            ntl_pe_rebase(&m->pe, m->image.data, m->image.len, m->base, &err) < 0)
            { rc = cli_fail(cmd, &err, m->path); goto done; }
        iom[i] = (struct ntl_iopt_module){m->dump_name, &m->pe, m->image.data, m->image.len, m->base};
        /* A file of another build than the one that ran decodes wrong: say so. */
        if (img && img->size && img->size != m->pe.size_of_image)
            cli_warn(cmd, "%s: SizeOfImage 0x%x, the trace recorded 0x%" PRIx64 " (another build?)",
                     m->path, m->pe.size_of_image, img->size);
        if (img && img->time_date_stamp && img->time_date_stamp != m->pe.timestamp)
            cli_warn(cmd, "%s: TimeDateStamp 0x%x, the trace recorded 0x%x (another build?)",
                     m->path, m->pe.timestamp, img->time_date_stamp);
    }
    for (size_t k = 0; k < nbases; k++)
        if (!bases[k].used)
            cli_warn(cmd, "--base %s matches no --module", bases[k].name);
    for (size_t i = 0; i < npaths; i++)
        for (size_t j = i + 1; j < npaths; j++)
            if (mods[i].base < mods[j].base + mods[j].pe.size_of_image &&
                mods[j].base < mods[i].base + mods[i].pe.size_of_image)
                cli_warn(cmd, "%s and %s overlap in memory", mods[i].path, mods[j].path);

    if (ntl_importopt_bind(iom, npaths, &err) < 0)
        { rc = cli_fail(cmd, &err, "binding imports"); goto done; }
    if (iopt && ntl_importopt_apply(iom, npaths, &rep, &err) < 0)
        { rc = cli_fail(cmd, &err, "import optimization"); goto done; }

    for (size_t i = 0; i < npaths; i++) {
        struct module *m = &mods[i];
        if (code_only && code_ranges(m) < 0) { rc = cli_failf(cmd, "out of memory"); goto done; }
        specs[i] = (struct ntl_md_module_spec){
            .name = m->dump_name, .base = m->base, .size = m->pe.size_of_image,
            .checksum = m->pe.checksum, .timestamp = m->pe.timestamp,
            .cv_record = m->cv.present ? m->cv.record : NULL,
            .cv_size = m->cv.present ? m->cv.record_size : 0,
            .memory = m->image.data, .memory_size = m->image.len,
            .ranges = (const uint64_t (*)[2])m->ranges, .range_count = m->range_count};
    }
    {
        struct ntl_md_spec spec = {
            .timestamp = when,
            .arch = mods[0].pe.machine == NTL_PE_MACHINE_I386 ? NTL_MD_ARCH_X86
                    : mods[0].pe.machine == NTL_PE_MACHINE_ARM64 ? NTL_MD_ARCH_ARM64
                    : NTL_MD_ARCH_AMD64,
            .major = version[0], .minor = version[1], .build = version[2],
            .processors = (uint8_t)(processors > 255 ? 255 : processors),
            .product_type = 1, .process_id = 4, .thread_id = 8,
            .thread_ip = mods[0].base + mods[0].pe.entry_rva,
            .modules = specs, .module_count = npaths};
        if (ntl_md_write(&spec, &dump, &err) < 0 ||
            ntl_file_write(out, dump.data, dump.len, &err) < 0)
            { rc = cli_fail(cmd, &err, out); goto done; }
    }
    if (!quiet && iopt)
        report(mods, &rep, fmt);
    if (!quiet) {
        for (size_t i = 0; i < npaths; i++)
            fprintf(stderr, "%s: 0x%016" PRIx64 " size 0x%x (%s)\n", mods[i].dump_name,
                    mods[i].base, mods[i].pe.size_of_image, mods[i].origin);
        if (iopt)
            fprintf(stderr, "%zu import optimization sites: %zu patched, %zu skipped\n", rep.count,
                    rep.patched, rep.skipped);
        fprintf(stderr, "wrote %s: %zu modules, %zu bytes\n", out, npaths, dump.len);
    }
done:
    for (size_t i = 0; mods && i < npaths; i++) {
        ntl_pe_free(&mods[i].pe);
        ntl_buf_free(&mods[i].file);
        ntl_buf_free(&mods[i].image);
        free(mods[i].dump_name);
        free(mods[i].ranges);
    }
    for (size_t k = 0; k < nbases; k++)
        free(bases[k].name);
    ntl_iopt_report_free(&rep);
    ntl_buf_free(&dump);
    free(imgs);
    free(mods);
    free(specs);
    free(iom);
    for (size_t i = 0; i < npaths; i++)
        free(paths[i]);
    free(paths);
    free(dirs);
    free(bases);
    return rc;
}
