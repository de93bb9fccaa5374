/* A minidump's modules as the stack walk needs them: where each one's
 * unwind data is (the dump's memory, or its file in --modules DIR mapped as
 * the loader maps it), its exported names, and why it has none; and the
 * memory a walk reads (the dump's ranges, the thread's stack, the mapped
 * files). Modules are loaded on the first frame that needs them. */
#ifndef NTLENS_LIB_STACK_DUMP_MODULES_H
#define NTLENS_LIB_STACK_DUMP_MODULES_H

#include "ntlens/buf.h"
#include "ntlens/minidump.h"
#include "ntlens/profile_symbols.h"
#include "ntlens/stack_unwind.h"

struct dump_module {
    const struct ntl_md_module *md;
    const char *name;                 /* base name */
    bool loaded;
    bool has_unwind;                  /* img is usable */
    struct ntl_unwind_x64_image img;
    struct ntl_buf file_image;        /* the module file, mapped (empty: none) */
    struct ntl_profile_symtab *syms;  /* exports; NULL when none */
    char why[256];                    /* why there is no unwind data */
};

struct dump_memory {
    const struct ntl_minidump *md;
    const char *dir;                  /* --modules; NULL */
    struct dump_module *mods;         /* sorted by base */
    size_t nmods;
    /* The current thread's stack as its MINIDUMP_THREAD gives it (some
     * writers keep stacks out of the memory list). */
    uint64_t stack_start, stack_size;
    const uint8_t *stack_bytes;
};

/* 0, or NTL_ERR_NOMEM. */
int dump_memory_init(struct dump_memory *dm, const struct ntl_minidump *md, const char *dir,
                     struct ntl_error *err);
void dump_memory_free(struct dump_memory *dm);

/* The read callback of ntl_unwind_mem (ctx: the dump_memory). */
size_t dump_memory_read(void *ctx, uint64_t va, void *buf, size_t len);

/* Lookup: the module holding va, loaded; NULL when none holds it. Loading
 * never fails the walk: a module without unwind data says why. NULL with
 * *nomem set when out of memory. */
struct dump_module *dump_module_at(struct dump_memory *dm, uint64_t va, bool *nomem);

/* The exported function holding va (caller: va is a return address), or
 * NULL; *off is va's offset from it. An export before the start of va's
 * RUNTIME_FUNCTION names another function and is not used. */
const char *dump_module_name_of(struct dump_memory *dm, struct dump_module *m, uint64_t va,
                                bool caller, uint64_t *off);

#endif
