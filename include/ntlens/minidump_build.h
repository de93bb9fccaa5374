/* The `dump build` pipeline (seed 002, in portable C): kernel module files
 * mapped as the loader maps them, relocated to the load addresses an ETW
 * trace recorded (or the caller gives), their imports bound, the kernel's
 * import optimization applied, and a minidump of them built in memory.
 *
 *     struct ntl_md_build_options o = {.etl_path = "trace.etl", .modules = files,
 *                                      .module_count = n, .import_optimization = true};
 *     struct ntl_md_build b;
 *     if (ntl_md_build(&o, &b, &err) < 0) ...   (b is empty)
 *     write b.dump; show b.notes, b.modules, b.report
 *     ntl_md_build_free(&b);
 *
 * Nothing is printed: what deserves a warning comes back as notes. */
#ifndef NTLENS_MINIDUMP_BUILD_H
#define NTLENS_MINIDUMP_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/error.h"
#include "ntlens/importopt.h"
#include "ntlens/minidump.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest module file read. */
#define NTL_MD_MODULE_FILE_LIMIT (512u << 20)

/* A load address the caller gives for a module (matched like module names). */
struct ntl_md_build_base {
    const char *name;
    uint64_t addr;
};

struct ntl_md_build_options {
    const char *etl_path;                  /* load addresses from its image events; or NULL */
    const char *const *modules;            /* module files; a name that is no file is looked */
    size_t module_count;                   /*   up in search_dirs */
    const char *const *search_dirs;
    size_t search_dir_count;
    const struct ntl_md_build_base *bases; /* override the trace */
    size_t base_count;
    bool all_kernel;           /* add every kernel module loaded at the trace's end that
                                * search_dirs hold (needs etl_path and search_dirs) */
    bool at_set;               /* the trace's modules as at raw ETW time `at` (an IPT */
    uint64_t at;               /*   event's) instead: its image events after it ignored */
    bool import_optimization;  /* apply it (else only bind the imports) */
    bool code_only;            /* write only headers and executable sections */
    bool version_set;          /* use version[] instead of the trace's OS version */
    uint32_t version[3];       /* major, minor, build */
};

/* What the caller should tell the user; none stops the build. */
enum ntl_md_note_kind {
    NTL_MD_NOTE_TRACE_SKIPPED,   /* the trace had bad parts, skipped (detail says which) */
    NTL_MD_NOTE_NOT_IN_SEARCH,   /* a trace kernel module is in no search directory */
    NTL_MD_NOTE_MORE_NOT_FOUND,  /* count more such modules, not listed one by one */
    NTL_MD_NOTE_SIZE_MISMATCH,   /* file's SizeOfImage differs from the trace's (value) */
    NTL_MD_NOTE_STAMP_MISMATCH,  /* file's TimeDateStamp differs from the trace's (value) */
    NTL_MD_NOTE_BASE_UNUSED,     /* a base names no module */
    NTL_MD_NOTE_OVERLAP,         /* subject and other overlap in memory */
};

struct ntl_md_note {
    enum ntl_md_note_kind kind;
    char subject[260];         /* the module file, trace module or base name it is about */
    char other[260];           /* OVERLAP: the second module */
    uint64_t address;          /* NOT_IN_SEARCH: its base in the trace */
    uint64_t value, expected;  /* MISMATCH: the file's value and the trace's; MORE: count */
    char detail[320];          /* TRACE_SKIPPED: the first error, formatted */
};

/* Where a module's load address came from. */
enum ntl_md_origin {
    NTL_MD_ORIGIN_BASE,        /* the caller's bases */
    NTL_MD_ORIGIN_TRACE,
};

struct ntl_md_built_module {
    char *path;                /* the file read */
    char *dump_name;           /* the name in the dump: the trace's, or \SystemRoot\... */
    uint64_t base;
    uint32_t size;             /* SizeOfImage */
    enum ntl_md_origin origin;
};

struct ntl_md_build {
    struct ntl_buf dump;                 /* the minidump */
    size_t module_count;
    struct ntl_md_built_module *modules; /* in the dump's order */
    struct ntl_iopt_report report;       /* sites; site.module indexes modules[] */
    size_t note_count;
    struct ntl_md_note *notes;
};

/* Runs the pipeline. Returns 0 with *out filled, or a negative status with
 * err set and *out empty:
 *   NTL_ERR_ARGUMENT        no module (and no all_kernel); all_kernel without
 *                           etl_path or search_dirs
 *   NTL_MD_NO_MODULE_FILE   a module is no file and in no search directory
 *   NTL_MD_NO_MODULES       all_kernel found none of the trace's kernel
 *                           modules in search_dirs
 *   NTL_MD_NO_BASE          a module has no load address: no base names it
 *                           and the trace (if any) does not list it
 *   any status of ntl_etl_images_load (the trace, read with keep_going: its
 *   bad parts become a note) and ntl_etl_open_file;
 *   any status of ntl_file_read, ntl_pe_parse, ntl_pe_codeview, ntl_pe_map,
 *   ntl_pe_rebase, ntl_importopt_bind, ntl_importopt_apply, ntl_md_write;
 *   NTL_ERR_NOMEM.
 * err's message names the file it is about (the trace or a module) once. */
int ntl_md_build(const struct ntl_md_build_options *opt, struct ntl_md_build *out,
                 struct ntl_error *err);
void ntl_md_build_free(struct ntl_md_build *b);

/* True when two module names name the same file: equal base names, ignoring
 * case, or equal stems when one has no extension. */
bool ntl_md_same_module(const char *a, const char *b);
/* Lookup: the file named like name (its base name, case-insensitively) in
 * the first directory that has one, as a malloc'd path; NULL when none has
 * it (or out of memory). */
char *ntl_md_find_file(const char *const *dirs, size_t ndirs, const char *name);

#ifdef __cplusplus
}
#endif
#endif
