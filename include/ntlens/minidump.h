/* Minidumps: a writer for dumps of mapped kernel modules (header, stream
 * directory, SystemInfo, MiscInfo, a ThreadList with one thread, a ModuleList
 * with names, sizes, checksums, TimeDateStamps and CodeView records, and a
 * Memory64List holding the images), a reader for any minidump (Windows',
 * Wine's, lldb's, ours) that serves its memory by virtual address, and the
 * in-place relocation of a module (seed 002's post-processing step). */
#ifndef NTLENS_MINIDUMP_H
#define NTLENS_MINIDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* minidump's own status codes (range -200..-249, shared with pe). */
enum ntl_md_status {
    /* ntl_md_parse_partial: some streams could not be read; the rest are. */
    NTL_MD_INCOMPLETE = -200,
    /* ntl_md_build (ntlens/minidump_build.h): */
    NTL_MD_NO_MODULE_FILE = -201, /* a module is no file and in no search directory */
    NTL_MD_NO_BASE = -202,        /* a module has no load address */
    NTL_MD_NO_MODULES = -203,     /* all_kernel found no module file */
};

/* "incomplete dump", "no module file", "no load address", "no module
 * found"; ntl_status_name() for the generic codes. */
const char *ntl_md_status_name(int status);

/* The part of a Windows or POSIX path after the last separator. */
const char *ntl_md_base_name(const char *path);

#define NTL_MD_SIGNATURE 0x504d444du /* "MDMP" */
#define NTL_MD_VERSION 0xa793u

enum ntl_md_stream_type {
    NTL_MD_THREAD_LIST = 3,
    NTL_MD_MODULE_LIST = 4,
    NTL_MD_MEMORY_LIST = 5,
    NTL_MD_EXCEPTION = 6,
    NTL_MD_SYSTEM_INFO = 7,
    NTL_MD_MEMORY64_LIST = 9,
    NTL_MD_MISC_INFO = 15,
};

#define NTL_MD_ARCH_X86 0
#define NTL_MD_ARCH_ARM 5
#define NTL_MD_ARCH_AMD64 9
#define NTL_MD_ARCH_ARM64 12

/* --- writer --- */
struct ntl_md_module_spec {
    const char *name;          /* UTF-8 path, as the debugger shows it */
    uint64_t base;
    uint32_t size;             /* SizeOfImage */
    uint32_t checksum;
    uint32_t timestamp;
    const uint8_t *cv_record;  /* raw CodeView record (RSDS), or NULL */
    uint32_t cv_size;
    const uint8_t *memory;     /* bytes at base, or NULL for none */
    size_t memory_size;
    /* Which parts of memory to write, as (offset, size) pairs in ascending
     * order; range_count 0 writes all of it. */
    const uint64_t (*ranges)[2];
    size_t range_count;
};

struct ntl_md_spec {
    uint32_t timestamp;
    uint16_t arch;             /* NTL_MD_ARCH_* */
    uint32_t major, minor, build;
    uint8_t processors;
    uint8_t product_type;      /* 1 workstation, 3 server */
    uint32_t process_id;
    uint32_t thread_id;
    uint64_t thread_ip;        /* Rip of the one thread's context */
    const struct ntl_md_module_spec *modules;
    size_t module_count;
};

/* Cap on a written dump (the memory of the modules dominates). */
#define NTL_MD_MAX_WRITE (4ull << 30)

/* Writes the dump into out (initialised here). Returns 0, or with err set:
 * NTL_ERR_LIMIT (larger than NTL_MD_MAX_WRITE), NTL_ERR_ARGUMENT (a range
 * outside its module's memory), NTL_ERR_NOMEM. */
int ntl_md_write(const struct ntl_md_spec *spec, struct ntl_buf *out, struct ntl_error *err);

/* --- reader --- */
struct ntl_md_stream {
    uint32_t type;
    uint32_t size;
    uint32_t rva;
    int status;                /* 0, or why it could not be read (ntl_md_parse_partial) */
};

struct ntl_md_module {
    uint64_t base;
    uint32_t size, checksum, timestamp;
    char *name;
    bool has_cv;               /* an RSDS CodeView record */
    uint8_t guid[16];
    uint32_t age;
    char pdb[260];
    uint64_t entry_offset;     /* file offset of its MINIDUMP_MODULE */
};

struct ntl_md_range {
    uint64_t start, size;
    uint64_t file_offset;      /* of its bytes */
    uint64_t desc_offset;      /* of its memory descriptor */
};

struct ntl_md_system_info {
    bool present;
    uint16_t arch, level, revision;
    uint8_t processors, product_type;
    uint32_t major, minor, build, platform;
    char csd_version[128];
};

#define NTL_MD_MAX_IRREGULARITIES 16

struct ntl_md_irregularity {
    uint64_t offset;           /* file offset of the odd field */
    char what[160];
};

struct ntl_md_thread {
    uint32_t id;
    uint64_t teb;
    uint64_t stack_start;
    uint32_t stack_size;
    uint32_t stack_rva;        /* file offset of the stack's bytes (0: none) */
    uint32_t context_size;
    uint32_t context_rva;      /* file offset of its CONTEXT record; with
                                  context_size, not checked against the file */
};

struct ntl_minidump {
    const uint8_t *data;       /* borrowed */
    size_t size;
    uint32_t version;
    uint32_t timestamp;
    uint64_t flags;
    size_t stream_count;
    struct ntl_md_stream *streams;
    size_t module_count;
    struct ntl_md_module *modules;
    size_t range_count;
    struct ntl_md_range *ranges;
    bool memory64;             /* ranges came from a Memory64List */
    size_t thread_count;
    struct ntl_md_thread *threads;
    struct ntl_md_system_info sys;
    bool has_misc;
    uint32_t misc_flags, process_id;
    /* What is odd but readable (a stream listed twice, no streams, a module
     * of SizeOfImage 0): found ones count all, the first few are kept. */
    size_t irregular_count;
    struct ntl_md_irregularity irregular[NTL_MD_MAX_IRREGULARITIES];
};

/* Parses a dump held in memory (borrowed; it must outlive md). Returns 0,
 * or with err set (naming the structure and file offset) and md empty:
 *   NTL_ERR_TRUNCATED  shorter than the header
 *   NTL_ERR_FORMAT     no signature; the directory, a stream, a module name,
 *                      a CodeView record or a memory range outside the file;
 *                      a list longer than its stream
 *   NTL_ERR_NOMEM */
int ntl_md_parse(const void *data, size_t size, struct ntl_minidump *md, struct ntl_error *err);
/* Like ntl_md_parse, but a stream that cannot be read does not stop the
 * others (a cut or damaged dump): returns 0 when every stream was read;
 * NTL_MD_INCOMPLETE when some could not be, with md holding everything else
 * (each bad stream's status < 0; a list keeps its whole entries before the
 * bad one) and err naming the first bad stream; or, with md empty, any
 * status of ntl_md_parse for the header and directory, and NTL_ERR_NOMEM.
 * Free md after 0 and NTL_MD_INCOMPLETE. */
int ntl_md_parse_partial(const void *data, size_t size, struct ntl_minidump *md,
                         struct ntl_error *err);
void ntl_md_free(struct ntl_minidump *md);
/* Copies up to len bytes of memory at va; stops at the first address the dump
 * does not hold. Returns the number of bytes copied (0 when none). */
size_t ntl_md_read(const struct ntl_minidump *md, uint64_t va, void *buf, size_t len);
/* Lookup: the module whose image holds va; NULL when none does. */
const struct ntl_md_module *ntl_md_module_at(const struct ntl_minidump *md, uint64_t va);
/* "ModuleListStream", ...; NULL for a type without a name. */
const char *ntl_md_stream_name(uint32_t type);
/* Lookup: a module by base name (case-insensitive) or full name; NULL when
 * none matches. */
const struct ntl_md_module *ntl_md_module_find(const struct ntl_minidump *md, const char *name);

/* Moves a module of the dump held in data (writable) to new_base: rewrites
 * its MINIDUMP_MODULE.BaseOfImage and the StartOfMemoryRange of every memory
 * descriptor inside its image. Returns the number of ranges moved (>= 0), or
 * with err set: any status of ntl_md_parse, or NTL_ERR_NOT_FOUND when no
 * module is named name (an error here: the caller asked to move it). */
int ntl_md_relocate(uint8_t *data, size_t size, const char *name, uint64_t new_base,
                    struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
