/* ntlens capture, in parts: cmd-capture.c parses the options, capture-record.c
 * records snapshots from a source, capture-import.c builds a capture from raw
 * answers saved by other tools; Ctrl-C or SIGTERM end a recording cleanly
 * (cli-stop.h). */
#ifndef NTLENS_TOOL_CAPTURE_H
#define NTLENS_TOOL_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/perf_capture.h"
#include "ntlens/source.h"

#define CAPTURE_MAX_LANGS 16
/* The largest raw answer or title database read from a file or a source. */
#define CAPTURE_RAW_LIMIT (256u << 20)

struct capture_opts {
    const char *output;
    long count;              /* 0: until interrupted, or a capture source's end */
    double interval;         /* seconds between snapshots of a live source */
    unsigned langs[CAPTURE_MAX_LANGS];
    size_t nlangs;
    const char *query;
    bool import, quiet;
    const char *titles, *help_titles, *description;
};

/* Records snapshots of src into o->output. Returns the exit code. */
int capture_record(const char *cmd, const struct capture_opts *o, struct ntl_source *src);
/* Builds o->output from the raw PERF_DATA_BLOCK files. Returns the exit code. */
int capture_import(const char *cmd, const struct capture_opts *o, char **files, int nfiles);

/* Checks a block with the parser before it is stored; *ns is its
 * SystemTime as Unix ns (0 when the header's time is invalid). Returns the
 * exit code. */
int capture_check_block(const char *cmd, const char *what, const uint8_t *data, size_t size,
                        int64_t *ns);
/* Writes the file and, unless o->quiet, says what it wrote on stderr, like
 * `dump build`. Returns the exit code. */
int capture_save(const char *cmd, const struct capture_opts *o, struct ntl_capture_writer *w,
                 bool interrupted);

#endif
