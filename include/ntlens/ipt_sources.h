/* Where the Intel PT flow decoder's memory and names come from, beyond the
 * raw files, page folders and ELF segments lib/ipt loads itself
 * (ipt_image.h):
 *   - PE images mapped as the Windows loader maps them, at given bases or at
 *     the load addresses an ETW trace's image events recorded, their imports
 *     bound and, if asked, the kernel's import optimization applied from
 *     their DVRT (lib/minidump's dump-build pipeline, run in memory);
 *   - per-process address spaces (a CR3 each) of an ETW trace's processes
 *     and their user-mode modules;
 *   - every memory range of a minidump (`ntlens dump build` writes them);
 *   - the N-th Intel PT trace of an ETW trace, unwrapped as `etl ipt` does;
 *   - names for addresses (ntl_iptsrc_syms): the module holding one (a dump's
 *     module list, a PE or ELF file) and the function (ELF .symtab/.dynsym,
 *     PE exports; a dump's modules' exports read from its memory).
 * The module sits above ipt, minidump (pe, etl) and profile
 * (docs/architecture.md): lib/ipt itself never learns about PE or ETW. */
#ifndef NTLENS_IPT_SOURCES_H
#define NTLENS_IPT_SOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"
#include "ntlens/ipt_image.h"
#include "ntlens/ipt_trace.h"
#include "ntlens/minidump_build.h"
#include "ntlens/profile_symbols.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- names --- */
struct ntl_iptsrc_syms;

/* An empty set of modules into *s. Returns 0, or NTL_ERR_NOMEM (err set). */
int ntl_iptsrc_syms_new(struct ntl_iptsrc_syms **s, struct ntl_error *err);
/* Frees s and every table given to it; NULL is fine. */
void ntl_iptsrc_syms_free(struct ntl_iptsrc_syms *s);

/* Adds module name (its base name is kept) at [base, base + size) with its
 * functions t (offsets from base; NULL for none), in the address space
 * ntl_iptsrc_syms_add_to chose. s takes t over, also when the call fails.
 * A lookup finds the module added last among those holding an address in
 * the current space. Returns 0, or NTL_ERR_ARGUMENT (size 0 or past 2^64),
 * NTL_ERR_NOMEM (err set). */
int ntl_iptsrc_syms_add(struct ntl_iptsrc_syms *s, const char *name, uint64_t base,
                        uint64_t size, struct ntl_profile_symtab *t, struct ntl_error *err);

/* Modules added from now on belong to the address space of cr3 when
 * in_space (a process's: named only while a lookup is in that space),
 * else to every space (the default: a kernel's). CR3s are compared without
 * their low 12 bits, as ntl_ipt_spaces compares them. Cannot fail. */
void ntl_iptsrc_syms_add_to(struct ntl_iptsrc_syms *s, bool in_space, uint64_t cr3);
/* Lookups from now on in the address space of cr3 (a PIP's): its modules
 * and every space's. Before the first, every space's only. Cannot fail. */
void ntl_iptsrc_syms_switch(struct ntl_iptsrc_syms *s, uint64_t cr3);

struct ntl_iptsrc_place {
    const char *module;      /* NULL when no module holds the address */
    uint64_t module_base;
    const char *function;    /* NULL when the module names none there */
    uint64_t function_start; /* when function is set */
};

/* Lookup: the module and function holding addr into *p; false (p->module
 * NULL) when no module does. */
bool ntl_iptsrc_syms_find(struct ntl_iptsrc_syms *s, uint64_t addr, struct ntl_iptsrc_place *p);

/* addr's name into buf: "module!function+0xD" ("+0xD" left out at the
 * function's start), else "module+0xOFFSET", else "0xADDR". Cannot fail
 * (the text is cut to size). */
void ntl_iptsrc_syms_name(struct ntl_iptsrc_syms *s, uint64_t addr, char *buf, size_t size);

/* --- memory --- */

/* Adds every memory range of the minidump at path to img, and its modules
 * (with the exports found in their mapped headers, where the dump holds
 * them) to syms (may be NULL). Returns the number of ranges added, or:
 *   ntl_file_read's statuses (the file, not named in err);
 *   ntl_md_parse's (NTL_ERR_FORMAT, NTL_ERR_TRUNCATED with a file offset);
 *   ntl_ipt_image_add's (NTL_ERR_ARGUMENT: two ranges overlap);
 *   NTL_ERR_NOMEM. */
int ntl_iptsrc_add_dump(struct ntl_ipt_image *img, struct ntl_iptsrc_syms *syms,
                        const char *path, struct ntl_error *err);
/* The same from a dump in memory (borrowed for the call). */
int ntl_iptsrc_add_dump_bytes(struct ntl_ipt_image *img, struct ntl_iptsrc_syms *syms,
                              const uint8_t *data, size_t size, struct ntl_error *err);

/* PE modules mapped as the loader maps them: the files at given bases
 * and/or every kernel module an ETW trace's image events leave loaded (at
 * its end or at a given time) that a folder holds, at its recorded
 * address. */
struct ntl_iptsrc_pe_options {
    const char *const *files;   /* --pe FILE:BASE */
    const uint64_t *bases;
    size_t count;
    const char *etl_path;       /* --etl TRACE with --modules DIR, or NULL */
    const char *const *dirs;
    size_t dir_count;
    bool import_optimization;   /* apply it from each module's DVRT (else imports
                                 * are only bound) */
    bool process_set;           /* with etl_path and dirs: also the user-mode modules */
    uint32_t process;           /*   of this process (an IPT event's) that dirs hold,
                                 *   at their addresses */
    bool at_set;                /* the trace's modules (kernel and process) loaded at */
    uint64_t at;                /*   raw ETW time `at` (an IPT event's), not at its end */
};

/* Runs lib/minidump's dump-build pipeline on o and adds the dump it builds
 * to img and syms (as ntl_iptsrc_add_dump_bytes). *b holds what the
 * pipeline reports (notes, modules, import-optimization sites); the caller
 * frees it with ntl_md_build_free after any result. Returns the number of
 * modules mapped, or ntl_md_build's statuses (err names the file),
 * ntl_iptsrc_add_dump_bytes's, ntl_etl_images_load's (the trace, for the
 * process's modules), NTL_ERR_ARGUMENT (no module at all), NTL_ERR_LIMIT
 * (more than NTL_IPTSRC_MAX_PE modules), NTL_ERR_NOMEM. */
#define NTL_IPTSRC_MAX_PE 4096
int ntl_iptsrc_add_pe(struct ntl_ipt_image *img, struct ntl_iptsrc_syms *syms,
                      const struct ntl_iptsrc_pe_options *o, struct ntl_md_build *b,
                      struct ntl_error *err);

/* Per-process address spaces from an ETW trace: each process that its
 * Process events (Start, DCStart, DCEnd; version 3 and later) give a CR3
 * (DirectoryTableBase) and that runs at time `at`, with its user-mode
 * modules loaded at `at` that dirs hold, mapped as the loader maps them
 * (one dump-build run per process, so that its imports bind) into the
 * image of its CR3's space, and named in that space in syms
 * (ntl_iptsrc_syms_add_to). Kernel-mode modules are the default image's
 * (ntl_iptsrc_add_pe), shared by every space. */
struct ntl_iptsrc_spaces_options {
    const char *etl_path;
    const char *const *dirs;
    size_t dir_count;
    uint64_t at;                /* a raw ETW timestamp (an IPT event's); UINT64_MAX: the
                                 * trace's end */
    bool import_optimization;   /* as ntl_iptsrc_pe_options's */
    uint32_t process;           /* the process whose CR3 *info reports (an IPT event's) */
};

struct ntl_iptsrc_spaces_info {
    size_t processes;           /* with a CR3 at `at` */
    size_t spaces;              /* of them, those with a module mapped */
    size_t modules;             /* user-mode modules mapped, in all */
    bool process_found;         /* o->process has a CR3 at `at`: */
    uint64_t process_cr3;       /*   this one */
};

/* Fills s (and syms, may be NULL) as above; *info says what was found.
 * Returns the number of spaces made, or:
 *   ntl_etl_open_file's statuses and those of ntl_etl_next that leave
 *   nothing to skip to (err names the file);
 *   ntl_md_build's statuses (err names the module file);
 *   ntl_ipt_spaces_image's and ntl_iptsrc_add_dump_bytes's;
 *   NTL_ERR_LIMIT (a process with more than NTL_IPTSRC_MAX_PE modules);
 *   NTL_ERR_NOMEM.
 * Image and Process events that do not decode, bad buffers and a cut at
 * the end are skipped (as ntl_etl_images_load's keep_going). */
int ntl_iptsrc_add_etl_spaces(struct ntl_ipt_spaces *s, struct ntl_iptsrc_syms *syms,
                              const struct ntl_iptsrc_spaces_options *o,
                              struct ntl_iptsrc_spaces_info *info, struct ntl_error *err);

/* Adds the ELF file at path as ntl_ipt_image_add_elf does, and, when syms
 * is not NULL, names its functions from its .symtab or .dynsym (none where
 * this build reads no ELF symbols). Returns 0, or ntl_ipt_image_add_elf's
 * statuses; err names the file. */
int ntl_iptsrc_add_elf(struct ntl_ipt_image *img, struct ntl_iptsrc_syms *syms,
                       const char *path, bool at_base, uint64_t base, struct ntl_error *err);

/* --- traces --- */

/* What ntl_iptsrc_etl_trace found about the trace. */
struct ntl_iptsrc_etl_trace {
    uint64_t event_offset;      /* file offset of the ETW event */
    uint32_t process, thread;
    uint64_t ipt_option;
    uint64_t timestamp;         /* the ETW event's raw time (what was loaded then:
                                 * ntl_iptsrc_spaces_options's at) */
    bool wrapped;               /* a full ring buffer, unwrapped */
    unsigned count;             /* IPT events in the file up to this one */
};

/* The n-th (from 1, as `etl ipt` numbers them) Intel PT trace of the ETW
 * trace at path into t (t->data, t->size; free with ntl_ipt_trace_free
 * after any result), unwrapped from its next write position when its ring
 * buffer wrapped. Returns 0, or:
 *   ntl_etl_open_file's and ntl_etl_next's statuses;
 *   ntl_etl_ipt_decode's (NTL_ERR_FORMAT, NTL_ERR_TRUNCATED: the event);
 *   NTL_ERR_NOT_FOUND   fewer than n IPT events (err says how many), or a
 *                       wrapped buffer without a PSB;
 *   NTL_ERR_ARGUMENT    n is 0;
 *   NTL_ERR_NOMEM.
 * err names the event's file offset, not the file. */
int ntl_iptsrc_etl_trace(struct ntl_ipt_trace *t, const char *path, unsigned n,
                         struct ntl_iptsrc_etl_trace *info, struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
