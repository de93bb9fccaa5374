/* Capture files: N performance-data snapshots (raw PERF_DATA_BLOCK answers),
 * the title and help databases per language, time stamps and a source
 * description, in one file (docs/capture-format.md). A capture is a source
 * like any other (ntl_source_capture_open in ntlens/source.h). */
#ifndef NTLENS_PERF_CAPTURE_H
#define NTLENS_PERF_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Caps a reader and writer enforce (hostile files must not allocate more). */
#define NTL_CAPTURE_MAX_SNAPSHOTS 1000000u
#define NTL_CAPTURE_MAX_TITLES 256u

/* ---- writer: builds the file in memory, then writes it at once ---- */

struct ntl_capture_writer;

/* description: where the data came from ("local (Linux /proc)"), UTF-8. */
struct ntl_capture_writer *ntl_capture_writer_new(const char *description);
void ntl_capture_writer_free(struct ntl_capture_writer *w);
/* A raw "Counter <langid>" (help = false) or "Help <langid>" answer. */
int ntl_capture_writer_titles(struct ntl_capture_writer *w, bool help, unsigned langid,
                              const void *data, size_t size, struct ntl_error *err);
/* One snapshot: the raw block, the query that produced it ("Global"), and
 * when it was taken (Unix time in nanoseconds, UTC; 0 when unknown). */
int ntl_capture_writer_snapshot(struct ntl_capture_writer *w, int64_t unix_ns,
                                const char *query, const void *block, size_t size,
                                struct ntl_error *err);
size_t ntl_capture_writer_count(const struct ntl_capture_writer *w);
/* Writes the file (through a temporary name, then rename). */
int ntl_capture_writer_save(struct ntl_capture_writer *w, const char *path,
                            struct ntl_error *err);
/* The file's bytes so far (a complete capture at any moment). */
const struct ntl_buf *ntl_capture_writer_bytes(const struct ntl_capture_writer *w);

/* ---- reader: validates the whole file, then serves it ---- */

struct ntl_capture;

struct ntl_capture_snapshot {
    int64_t unix_ns;
    const char *query;       /* UTF-8 */
    const uint8_t *block;
    size_t size;
};

struct ntl_capture_titles {
    bool help;
    unsigned langid;
    const uint8_t *data;
    size_t size;
};

/* Parses a capture held in memory; the capture borrows `data` (keep it
 * alive until ntl_capture_free). Errors name the record and file offset. */
int ntl_capture_parse(const void *data, size_t size, struct ntl_capture **out,
                      struct ntl_error *err);
/* Reads and parses a file (the capture owns the bytes). */
int ntl_capture_load(const char *path, size_t max_size, struct ntl_capture **out,
                     struct ntl_error *err);
void ntl_capture_free(struct ntl_capture *c);

const char *ntl_capture_description(const struct ntl_capture *c);
size_t ntl_capture_snapshot_count(const struct ntl_capture *c);
const struct ntl_capture_snapshot *ntl_capture_snapshot(const struct ntl_capture *c, size_t i);
size_t ntl_capture_titles_count(const struct ntl_capture *c);
const struct ntl_capture_titles *ntl_capture_titles_at(const struct ntl_capture *c, size_t i);
/* The stored database for (help, langid), or NULL. */
const struct ntl_capture_titles *ntl_capture_find_titles(const struct ntl_capture *c, bool help,
                                                         unsigned langid);

#ifdef __cplusplus
}
#endif
#endif
