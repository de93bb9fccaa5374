/* Import optimization as the Windows kernel applies it at load time
 * ("Mitigating Spectre variant 2 with Retpoline on Windows"): every
 * IMPORT_CONTROL_TRANSFER site of a module's dynamic value relocation table
 *     call [rip+IAT]  ; 48 FF 15 disp32 + 0F 1F 44 00 xx (a 5-byte nop)
 *     jmp  [rip+IAT]  ; 48 FF 25 disp32 + CC CC CC CC CC
 * becomes, when the import resolves within +-2 GB,
 *     mov r10,[rip+IAT] ; 4C 8B 15 disp32
 *     call/jmp target   ; E8/E9 rel32
 * The import is resolved through the exporting module's export table at that
 * module's load address; HAL.dll imports resolve through ntoskrnl.exe (HAL
 * forwards to it on current Windows). */
#ifndef NTLENS_IMPORTOPT_H
#define NTLENS_IMPORTOPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"
#include "ntlens/pe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A module mapped at its load address. The image is patched in place. */
struct ntl_iopt_module {
    const char *name;        /* file name or path; matched by base name, case-insensitively */
    const struct ntl_pe *pe;
    uint8_t *image;          /* ntl_pe_map output */
    size_t image_size;
    uint64_t base;
};

enum ntl_iopt_status {
    NTL_IOPT_PATCHED,
    NTL_IOPT_SKIP_NO_OPTIMIZE,   /* IATIndex 0x7FFFF */
    NTL_IOPT_SKIP_BAD_IAT_INDEX, /* no import at that IAT slot */
    NTL_IOPT_SKIP_NOT_LOADED,    /* the exporting module is not among the modules */
    NTL_IOPT_SKIP_NO_EXPORT,     /* the exporting module lacks the name or ordinal */
    NTL_IOPT_SKIP_FORWARDER,     /* a forwarder that cannot be followed */
    NTL_IOPT_SKIP_OUT_OF_RANGE,  /* target beyond rel32 reach */
    NTL_IOPT_SKIP_BAD_CODE,      /* the bytes at the site are not the expected sequence */
    NTL_IOPT_SKIP_IAT_MISMATCH,  /* the instruction does not read the IAT slot of IATIndex */
};

struct ntl_iopt_site {
    size_t module;           /* index into the module array */
    uint32_t rva;
    uint64_t address;
    bool call;               /* IndirectCall: call, else tail jump */
    uint32_t iat_index;
    char import_dll[64];
    char import_name[128];   /* "#ORDINAL" for ordinal imports */
    size_t target_module;    /* SIZE_MAX when unresolved */
    char target_name[128];   /* export name the import resolved to (after forwarders) */
    uint64_t target;         /* 0 when unresolved */
    enum ntl_iopt_status status;
    char detail[160];        /* why it was skipped */
};

struct ntl_iopt_report {
    size_t count;
    struct ntl_iopt_site *sites;
    size_t patched;
    size_t skipped;
};

/* Applies import optimization to every module (in place) and reports every
 * site. Modules whose DVRT cannot be parsed fail the call. */
int ntl_importopt_apply(struct ntl_iopt_module *mods, size_t n, struct ntl_iopt_report *rep,
                        struct ntl_error *err);
void ntl_iopt_report_free(struct ntl_iopt_report *rep);
const char *ntl_iopt_status_name(enum ntl_iopt_status s);

/* Writes resolved import addresses into every module's IAT slots, as the
 * loader binds them. Returns the number of slots bound. */
int ntl_importopt_bind(struct ntl_iopt_module *mods, size_t n, struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
