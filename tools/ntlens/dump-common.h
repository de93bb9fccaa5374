/* Helpers the dump commands share: NAME=ADDR arguments, module name matching. */
#ifndef NTLENS_TOOL_DUMP_COMMON_H
#define NTLENS_TOOL_DUMP_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output.h"

struct dump_base {
    char *name;
    uint64_t addr;
    bool used;
};

/* Parses "NAME=ADDR" (ADDR decimal or 0x hex) into b (name malloc'd). */
bool dump_parse_base(const char *arg, struct dump_base *b);
/* The part of a Windows or POSIX path after the last separator. */
const char *dump_base_name(const char *path);
/* True when two module names name the same file: equal base names, ignoring
 * case, or equal stems when one has no extension. */
bool dump_same_module(const char *a, const char *b);

/* The file named like name (base name, case-insensitive) in one of the
 * directories, as a malloc'd path; NULL when none has it. */
char *dump_find_file(const char *const *dirs, size_t ndirs, const char *name);

/* An address cell: hex text in tables ("0x" and `digits` digits, 0: as
 * needed), the exact integer in JSON and CSV (a double would lose the low
 * bits of a kernel address). */
void dump_hex_cell(struct out_table *t, enum out_format fmt, uint64_t v, int digits);

#endif
