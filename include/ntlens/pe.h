/* PE/COFF images (PE32 and PE32+): headers, sections, data directories,
 * exports, imports, base relocations, resources, the debug directory and the load
 * config, read from an untrusted file image; and the loader's view of an
 * image (sections laid out at their RVAs), optionally rebased.
 *
 * A struct ntl_pe borrows the file bytes it was parsed from; they must
 * outlive it. Every error names the structure and the absolute file offset.
 * Dynamic value relocations are in ntlens/pe_dvrt.h. */
#ifndef NTLENS_PE_H
#define NTLENS_PE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NTL_PE_MACHINE_I386 0x014c
#define NTL_PE_MACHINE_AMD64 0x8664
#define NTL_PE_MACHINE_ARM64 0xaa64

enum ntl_pe_dir_index {
    NTL_PE_DIR_EXPORT = 0,
    NTL_PE_DIR_IMPORT = 1,
    NTL_PE_DIR_RESOURCE = 2,
    NTL_PE_DIR_EXCEPTION = 3,
    NTL_PE_DIR_SECURITY = 4,
    NTL_PE_DIR_BASERELOC = 5,
    NTL_PE_DIR_DEBUG = 6,
    NTL_PE_DIR_LOAD_CONFIG = 10,
    NTL_PE_DIR_IAT = 12,
    NTL_PE_DIR_COUNT = 16,
};

/* Largest SizeOfImage we map (kernel modules are far smaller). */
#define NTL_PE_MAX_IMAGE_SIZE (1024u << 20)

struct ntl_pe_section {
    char name[9];            /* NUL-terminated, at most 8 characters */
    uint32_t virtual_address;
    uint32_t virtual_size;
    uint32_t raw_offset;     /* PointerToRawData */
    uint32_t raw_size;       /* SizeOfRawData, clipped to the file */
    uint32_t characteristics;
    uint64_t header_offset;  /* file offset of the IMAGE_SECTION_HEADER */
};

struct ntl_pe_dir {
    uint32_t rva;
    uint32_t size;
};

struct ntl_pe {
    const uint8_t *data;     /* the file, borrowed */
    size_t size;
    bool pe32plus;
    uint16_t machine;
    uint16_t characteristics;
    uint16_t subsystem;
    uint16_t dll_characteristics;
    uint32_t timestamp;
    uint32_t checksum;
    uint32_t size_of_image;
    uint32_t size_of_headers;
    uint32_t entry_rva;
    uint32_t section_alignment;
    uint32_t file_alignment;
    uint64_t image_base;
    uint64_t nt_offset;       /* file offset of "PE\0\0" */
    uint64_t optional_offset; /* file offset of the optional header */
    uint32_t dir_count;       /* NumberOfRvaAndSizes, at most 16 */
    struct ntl_pe_dir dirs[NTL_PE_DIR_COUNT];
    uint16_t section_count;
    struct ntl_pe_section *sections;
};

/* Parses the headers and section table. Directories are parsed on demand. */
int ntl_pe_parse(const void *data, size_t size, struct ntl_pe *pe, struct ntl_error *err);
void ntl_pe_free(struct ntl_pe *pe);

/* Pointer size of the image: 8 for PE32+, 4 for PE32. */
static inline unsigned ntl_pe_ptr_size(const struct ntl_pe *pe) { return pe->pe32plus ? 8 : 4; }

/* Where the image's bytes at rva are in the file: the longest run available
 * from the file (within one section's raw data, or the headers). Fails with
 * NTL_ERR_FORMAT when rva maps to no file bytes. */
int ntl_pe_rva_span(const struct ntl_pe *pe, uint32_t rva, const uint8_t **ptr, size_t *avail,
                    uint64_t *file_offset, struct ntl_error *err);
/* Like ntl_pe_rva_span but requires len bytes; what names the structure for errors. */
int ntl_pe_rva_need(const struct ntl_pe *pe, uint32_t rva, size_t len, const char *what,
                    const uint8_t **ptr, uint64_t *file_offset, struct ntl_error *err);
/* Copies a NUL-terminated ASCII string at rva (at most size-1 bytes kept). */
int ntl_pe_rva_string(const struct ntl_pe *pe, uint32_t rva, const char *what, char *out,
                      size_t size, struct ntl_error *err);
/* Index of the section holding rva, or -1. */
int ntl_pe_section_of(const struct ntl_pe *pe, uint32_t rva);

/* --- exports --- */
struct ntl_pe_export {
    uint32_t ordinal;        /* biased ordinal */
    uint32_t rva;            /* 0 for an empty slot */
    char *name;              /* NULL when exported by ordinal only */
    char *forwarder;         /* "NTOSKRNL.KeFoo" when rva points into the export directory */
};

struct ntl_pe_exports {
    char *dll_name;
    uint32_t ordinal_base;
    size_t count;
    struct ntl_pe_export *entries;
};

int ntl_pe_exports_parse(const struct ntl_pe *pe, struct ntl_pe_exports *out, struct ntl_error *err);
void ntl_pe_exports_free(struct ntl_pe_exports *ex);
/* Finds an export by name (exact) or, with name NULL, by biased ordinal. */
const struct ntl_pe_export *ntl_pe_export_find(const struct ntl_pe_exports *ex, const char *name,
                                               uint32_t ordinal);

/* --- imports --- */
struct ntl_pe_import {
    const char *dll;         /* points into the owning ntl_pe_imports */
    char *name;              /* NULL when imported by ordinal */
    uint16_t hint;
    uint16_t ordinal;        /* when name is NULL */
    uint32_t iat_rva;        /* the IAT slot the loader fills */
};

struct ntl_pe_imports {
    size_t dll_count;
    char **dlls;
    size_t count;
    struct ntl_pe_import *entries;
};

int ntl_pe_imports_parse(const struct ntl_pe *pe, struct ntl_pe_imports *out, struct ntl_error *err);
void ntl_pe_imports_free(struct ntl_pe_imports *im);
const struct ntl_pe_import *ntl_pe_import_by_iat(const struct ntl_pe_imports *im, uint32_t iat_rva);

/* --- base relocations --- */
#define NTL_PE_REL_ABSOLUTE 0
#define NTL_PE_REL_HIGH 1
#define NTL_PE_REL_LOW 2
#define NTL_PE_REL_HIGHLOW 3
#define NTL_PE_REL_DIR64 10

struct ntl_pe_reloc {
    uint32_t rva;
    uint8_t type;
};

/* Every entry of the base relocation directory except ABSOLUTE padding. */
int ntl_pe_relocs_parse(const struct ntl_pe *pe, struct ntl_pe_reloc **out, size_t *count,
                        struct ntl_error *err);

/* --- debug directory --- */
struct ntl_pe_codeview {
    bool present;
    uint8_t guid[16];        /* as stored (Data1..3 little-endian) */
    uint32_t age;
    char pdb[260];
    const uint8_t *record;   /* the raw RSDS record in the file */
    uint32_t record_size;
};

/* Finds the CodeView RSDS record of the debug directory (present=false when none). */
int ntl_pe_codeview(const struct ntl_pe *pe, struct ntl_pe_codeview *cv, struct ntl_error *err);

/* --- load config --- */
struct ntl_pe_load_config {
    bool present;
    uint32_t rva;
    uint32_t size;                 /* its Size field */
    uint64_t security_cookie;
    uint64_t guard_flags;
    uint64_t dvrt_va;              /* DynamicValueRelocTable (old images) */
    uint32_t dvrt_offset;          /* DynamicValueRelocTableOffset */
    uint16_t dvrt_section;         /* DynamicValueRelocTableSection, 1-based */
};

int ntl_pe_load_config(const struct ntl_pe *pe, struct ntl_pe_load_config *lc, struct ntl_error *err);

/* --- resources --- */
#define NTL_PE_RT_MESSAGETABLE 11

/* The data of the first resource of a type, named (type_name, e.g.
 * "WEVT_TEMPLATE") or numbered (type_name NULL, type_id): its first name,
 * its first language. 1 with *data (in the file) and *size, 0 when the
 * image has no such resource, or NTL_ERR_FORMAT for a directory or data
 * entry outside the resource directory or the file. */
int ntl_pe_resource_find(const struct ntl_pe *pe, const char *type_name, uint32_t type_id,
                         const uint8_t **data, size_t *size, struct ntl_error *err);

/* --- the loader's view --- */
/* Lays the image out as the loader maps it: SizeOfImage bytes, headers at 0,
 * each section's raw data at its RVA, virtual tails zero. */
int ntl_pe_map(const struct ntl_pe *pe, struct ntl_buf *image, struct ntl_error *err);
/* Applies the base relocations to a mapped image for a load at new_base. */
int ntl_pe_rebase(const struct ntl_pe *pe, uint8_t *image, size_t size, uint64_t new_base,
                  struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
