/* The dynamic value relocation table (DVRT) of a PE image: where the load
 * config points (DynamicValueRelocTableOffset/Section, or the older
 * DynamicValueRelocTable VA), IMAGE_DYNAMIC_RELOCATION_TABLE version 1
 * (IMAGE_DYNAMIC_RELOCATION64 packed in 12 bytes, IMAGE_DYNAMIC_RELOCATION32
 * in 8) and version 2 (IMAGE_DYNAMIC_RELOCATION64_V2 with its header data),
 * and the per-symbol fixups carried as base-relocation-style blocks.
 *
 * Definitions are ours, from the public descriptions (winnt.h's
 * IMAGE_*_DYNAMIC_RELOCATION and Microsoft's "Mitigating Spectre variant 2
 * with Retpoline on Windows"); mingw's headers lack them. */
#ifndef NTLENS_PE_DVRT_H
#define NTLENS_PE_DVRT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"
#include "ntlens/pe.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ntl_dvrt_symbol {
    NTL_DVRT_GUARD_RF_PROLOGUE = 1,
    NTL_DVRT_GUARD_RF_EPILOGUE = 2,
    NTL_DVRT_GUARD_IMPORT_CONTROL_TRANSFER = 3,
    NTL_DVRT_GUARD_INDIR_CONTROL_TRANSFER = 4,
    NTL_DVRT_GUARD_SWITCHTABLE_BRANCH = 5,
    NTL_DVRT_ARM64X = 6,
    NTL_DVRT_FUNCTION_OVERRIDE = 7,
    NTL_DVRT_ARM64_KERNEL_IMPORT_CALL_TRANSFER = 8,
};

/* IATIndex value meaning "do not optimize this site". */
#define NTL_DVRT_IAT_INDEX_NONE 0x7ffffu

/* One fixup: a site at rva, decoded according to its symbol. */
struct ntl_dvrt_fixup {
    uint32_t rva;            /* block VirtualAddress + PageRelativeOffset */
    uint32_t raw;            /* the entry as stored (16 or 32 bits) */
    uint64_t file_offset;    /* of the entry */
    /* IMPORT_CONTROL_TRANSFER: PageRelativeOffset:12 IndirectCall:1 IATIndex:19 */
    bool indirect_call;
    uint32_t iat_index;
    /* INDIR_CONTROL_TRANSFER: PageRelativeOffset:12 IndirectCall:1 RexWPrefix:1 CfgCheck:1 */
    bool rex_w;
    bool cfg_check;
    /* SWITCHTABLE_BRANCH: PageRelativeOffset:12 RegisterNumber:4; other
     * symbols: Type:4 in the same bits */
    uint8_t reg_or_type;
};

/* One IMAGE_DYNAMIC_RELOCATION[_V2] entry. */
struct ntl_dvrt_reloc {
    uint64_t symbol;
    uint64_t file_offset;    /* of the entry header */
    uint32_t fixup_size;     /* BaseRelocSize (v1) or FixupInfoSize (v2) */
    uint32_t header_size;    /* v2 only */
    uint32_t symbol_group;   /* v2 only */
    uint32_t flags;          /* v2 only */
    uint32_t block_count;
    size_t first_fixup;      /* index into ntl_dvrt.fixups */
    size_t fixup_count;
    /* RF prologue (v2 header data): IMAGE_PROLOGUE_DYNAMIC_RELOCATION_HEADER */
    uint8_t prologue_size;
    uint64_t prologue_offset;  /* file offset of the prologue bytes */
    /* RF epilogue (v2 header data): IMAGE_EPILOGUE_DYNAMIC_RELOCATION_HEADER */
    uint32_t epilogue_count;
    uint8_t epilogue_size;
    uint8_t branch_descriptor_size;
    uint16_t branch_descriptor_count;
};

struct ntl_dvrt {
    bool present;
    uint32_t rva;
    uint64_t file_offset;
    uint32_t version;
    uint32_t size;           /* bytes after the 8-byte table header */
    size_t reloc_count;
    struct ntl_dvrt_reloc *relocs;
    size_t fixup_count;
    struct ntl_dvrt_fixup *fixups;
};

/* Locates the table through the load config and parses it. present=false
 * when the image has none. */
int ntl_pe_dvrt(const struct ntl_pe *pe, struct ntl_dvrt *out, struct ntl_error *err);

/* Parses a table held in data (size bytes, at file offset origin, loaded at
 * rva). pe32plus selects 64-bit symbols. */
int ntl_dvrt_parse(const uint8_t *data, size_t size, uint64_t origin, uint32_t rva, bool pe32plus,
                   struct ntl_dvrt *out, struct ntl_error *err);
void ntl_dvrt_free(struct ntl_dvrt *d);

/* "IMPORT_CONTROL_TRANSFER", ... or NULL for an unknown symbol. */
const char *ntl_dvrt_symbol_name(uint64_t symbol);

#ifdef __cplusplus
}
#endif
#endif
