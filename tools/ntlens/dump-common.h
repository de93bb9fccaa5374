/* Helpers the dump commands share: NAME=ADDR arguments and the cells every
 * dump table writes the same way. */
#ifndef NTLENS_TOOL_DUMP_COMMON_H
#define NTLENS_TOOL_DUMP_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct out;

/* The largest dump the commands read into memory. */
#define DUMP_FILE_LIMIT (8ull << 30)

struct dump_base {
    char *name;
    uint64_t addr;
};

/* Repeated NAME=ADDR arguments, in order. */
struct dump_bases {
    struct dump_base *v;
    size_t n, cap;
};

/* Parses "NAME=ADDR" (ADDR decimal or 0x hex) and appends it. Returns 0, -1
 * for a malformed argument, -2 when out of memory. */
int dump_bases_add(struct dump_bases *b, const char *arg);
void dump_bases_free(struct dump_bases *b);

/* A size or file offset: hex text ("0x5000") in table, CSV and TSV, the
 * integer in JSON and JSON lines. */
void dump_size_cell(struct out *o, int fmt, uint64_t v);
/* A PE or minidump TimeDateStamp (seconds since 1970, UTC) as ISO 8601; 0 is null. */
void dump_stamp_time_cell(struct out *o, uint32_t stamp);

#endif
