/* Symbol tables for sampling profiles: function names with their offsets
 * from a module's base (the address of its file offset 0; a PE image's RVA),
 * from an ELF file's .symtab/.dynsym or a PE image's exports. A profile
 * resolves the buckets of every range whose path matches a table's
 * (ntl_profile_use_symbols). */
#ifndef NTLENS_PROFILE_SYMBOLS_H
#define NTLENS_PROFILE_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ntl_profile;
struct ntl_profile_symtab;

/* A symbol as ntl_profile_symtab_lookup gives it (a copy: the table keeps
 * its symbols smaller); name points into the table. */
struct ntl_profile_symbol {
    const char *name;
    uint64_t offset;         /* from the module's base */
    uint64_t size;           /* when the source gives none: up to the next symbol;
                                0: to the module's end (a size past 4 GiB is taken
                                as none given) */
};

/* An empty table. 0, or NTL_ERR_NOMEM. */
int ntl_profile_symtab_new(struct ntl_profile_symtab **out, struct ntl_error *err);
void ntl_profile_symtab_free(struct ntl_profile_symtab *t);

/* Adds a symbol (size 0: unknown, it then extends to the next symbol).
 * 0, or NTL_ERR_NOMEM, NTL_ERR_LIMIT (more than 2^24 symbols). */
int ntl_profile_symtab_add(struct ntl_profile_symtab *t, const char *name, uint64_t offset,
                           uint64_t size, struct ntl_error *err);
size_t ntl_profile_symtab_count(const struct ntl_profile_symtab *t);

/* The symbol covering offset into *sym, and how far into it offset is into
 * *disp (the first lookup after an add sorts the table): 1, or 0 when none
 * does (before the first symbol, past a sized symbol's end). */
int ntl_profile_symtab_lookup(struct ntl_profile_symtab *t, uint64_t offset,
                              struct ntl_profile_symbol *sym, uint64_t *disp);

/* The functions of an ELF file (STT_FUNC of .symtab, else .dynsym), at
 * their file offsets (through the PT_LOAD holding each), so that they
 * apply to a range based where the file's offset 0 is mapped.
 * Returns 0 (the table may be empty: a stripped file without .dynsym), or:
 *   NTL_ERR_IO           the file cannot be opened (err: the system's reason;
 *                        the path is left to the caller to name)
 *   NTL_ERR_FORMAT       not an ELF file, or its tables are malformed
 *   NTL_ERR_UNSUPPORTED  this build has no ELF reader (Windows)
 *   NTL_ERR_LIMIT, NTL_ERR_NOMEM */
int ntl_profile_symtab_from_elf(const char *path, struct ntl_profile_symtab **out,
                                struct ntl_error *err);

/* The named exports of a PE image (file bytes), at their RVAs. 0, or the
 * statuses of ntl_pe_parse and ntl_pe_exports_parse (NTL_ERR_FORMAT,
 * NTL_ERR_TRUNCATED with a file offset), NTL_ERR_LIMIT, NTL_ERR_NOMEM. */
int ntl_profile_symtab_from_pe(const void *data, size_t size, struct ntl_profile_symtab **out,
                               struct ntl_error *err);

/* Gives the profile a table (it frees it with itself) for every range
 * whose path is path (exact). 0, or NTL_ERR_NOMEM (t is then freed). */
int ntl_profile_use_symbols(struct ntl_profile *p, const char *path,
                            struct ntl_profile_symtab *t, struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
