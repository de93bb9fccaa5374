/* The sections of `dump show`: each writes one table of a parsed minidump
 * through the writer (columns, then rows). */
#ifndef NTLENS_TOOL_DUMP_SHOW_H
#define NTLENS_TOOL_DUMP_SHOW_H

#include <stddef.h>

#include "ntlens/minidump.h"

struct out;

struct dump_section {
    const char *name;  /* the --section choice and the JSON member */
    const char *title; /* the heading above it in a table of every section */
    void (*write)(struct out *o, int fmt, const struct ntl_minidump *md); /* fmt: enum out_format */
};

extern const struct dump_section dump_sections[];
/* The choices of --section, NULL-terminated, in dump_sections' order. */
extern const char *const dump_section_names[];
#define DUMP_SECTION_COUNT 6

#endif
