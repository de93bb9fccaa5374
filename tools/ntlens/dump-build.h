/* What `dump build` tells the user about a build: the import optimization
 * sites as records, the library's notes as warnings, and a summary of what
 * it wrote. */
#ifndef NTLENS_TOOL_DUMP_BUILD_H
#define NTLENS_TOOL_DUMP_BUILD_H

#include <stdbool.h>

#include "ntlens/minidump_build.h"

/* Every import optimization site through the writer, on stdout. Returns 0,
 * or -1 when out of memory or a write failed. */
int dump_build_print_sites(const struct ntl_md_build *b, int fmt);
/* A note of the pipeline as the warning the user reads. */
void dump_build_warn_note(const char *cmd, const struct ntl_md_note *n);
/* On stderr: each module (where its base came from), the sites patched and
 * skipped when import optimization ran, and the file written. */
void dump_build_summary(const struct ntl_md_build *b, const char *path, bool import_optimization);

#endif
