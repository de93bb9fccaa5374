/* Symbol tables for sampling profiles: function names with their offsets
 * from a module's base (the address of its file offset 0; a PE image's RVA),
 * from an ELF file's .symtab/.dynsym or a PE image's exports. A profile
 * resolves the buckets of every range whose path matches a table's
 * (ntl_profile_use_symbols). */
#ifndef NTLENS_PROFILE_SYMBOLS_H
#define NTLENS_PROFILE_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ntl_profile;
struct ntl_profile_range;
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
/* Room for n more symbols (at most to the limit of 2^24) in one
 * allocation, for a loader that knows how many it may add; more still grow
 * the table. 0, or NTL_ERR_NOMEM. */
int ntl_profile_symtab_reserve(struct ntl_profile_symtab *t, size_t n, struct ntl_error *err);
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

/* Loads the table of a range's file (name and path as the range has
 * them): 0 with *out set, or NULL when there is none for that file; or a
 * negative status with err set. It runs on the loader's thread, so it
 * must not touch the profile; ctx is the caller's. */
typedef int (*ntl_profile_symtab_loader)(void *ctx, const char *name, const char *path,
                                         struct ntl_profile_symtab **out,
                                         struct ntl_error *err);

/* Loads the tables of p's ranges (each distinct name and path once, those
 * added before and after this call) on a second thread while samples are
 * added, sorted there too. thread false, or a thread that cannot start:
 * nothing until ntl_profile_symbols_join, which loads them then on the
 * calling thread (what a caller without the thread would do). The report
 * is the same either way. 0, or NTL_ERR_ARGUMENT (already started),
 * NTL_ERR_NOMEM. */
int ntl_profile_symbols_start(struct ntl_profile *p, ntl_profile_symtab_loader load, void *ctx,
                              bool thread, struct ntl_error *err);

/* Whether the loader runs on a thread of its own (false before start, on
 * the fallback and after the join). */
bool ntl_profile_symbols_threaded(const struct ntl_profile *p);

/* Called by ntl_profile_symbols_join for a table that failed to load,
 * with the range it was for and the loader's error. */
typedef void (*ntl_profile_symtab_failed)(void *ctx, const struct ntl_profile_range *r,
                                          const struct ntl_error *e);

/* Waits for the loader and gives p the tables of the modules with hits
 * (ntl_profile_use_symbols), each path once, in the order of
 * ntl_profile_modules, calling failed (may be NULL) for those whose load
 * failed; the tables of modules without hits are dropped (a load not yet
 * begun is skipped). Ranges added after it get no table from the loader.
 * With the thread, the join also sorts the hits of every range on both
 * threads (what reading a range's functions or buckets does first): the
 * report is the same, and its thread does half that work.
 * 0 (also when nothing was started), or NTL_ERR_NOMEM. */
int ntl_profile_symbols_join(struct ntl_profile *p, ntl_profile_symtab_failed failed, void *ctx,
                             struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
