/* Helpers the dump commands share: NAME=ADDR arguments, address cells. */
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
/* An address cell: hex text in tables ("0x" and `digits` digits, 0: as
 * needed), the exact integer in JSON and CSV (a double would lose the low
 * bits of a kernel address). */
void dump_hex_cell(struct out_table *t, enum out_format fmt, uint64_t v, int digits);

#endif
