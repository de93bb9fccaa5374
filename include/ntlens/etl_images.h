/* Image events of an ETW trace: kernel Image/Process-group hooks Load (10),
 * Unload (2), DCStart (3), DCEnd (4), in SYSTEM or PERFINFO headers (and
 * classic events with the Image class GUID). */
#ifndef NTLENS_ETL_IMAGES_H
#define NTLENS_ETL_IMAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"
#include "ntlens/etl.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ntl_etl_image_kind {
    NTL_ETL_IMAGE_LOAD,
    NTL_ETL_IMAGE_UNLOAD,
    NTL_ETL_IMAGE_DCSTART,
    NTL_ETL_IMAGE_DCEND,
};

/* "Load", "Unload", "DCStart", "DCEnd". */
const char *ntl_etl_image_kind_name(enum ntl_etl_image_kind kind);

struct ntl_etl_image {
    enum ntl_etl_image_kind kind;
    uint64_t base;
    uint64_t size;
    uint32_t pid;
    uint32_t checksum;
    uint32_t time_date_stamp;
    uint64_t default_base;
    bool kernel;              /* base in kernel space (top bit set for the pointer size) */
    uint64_t timestamp;       /* raw event timestamp */
    uint64_t filetime;        /* UTC; 0 when the trace has no usable clock */
    char name[520];           /* UTF-8, as logged: "\SystemRoot\system32\ntoskrnl.exe" */
};

/* Decodes ev if it is an image event: 1 with *img filled, 0 when ev is
 * not one (err untouched), NTL_ERR_FORMAT or NTL_ERR_TRUNCATED with err set
 * when it is one but malformed. t may be NULL (filetime is then 0). */
int ntl_etl_image_decode(const struct ntl_etl *t, const struct ntl_etl_event *ev,
                         struct ntl_etl_image *img, struct ntl_error *err);

/* What ntl_etl_images_load skipped with keep_going. */
struct ntl_etl_salvage {
    size_t bad_buffers;        /* buffers (or their rest) skipped after an error */
    size_t bad_events;         /* image events that did not decode */
    bool truncated;            /* the file ends inside a buffer; the whole ones were read */
    struct ntl_error first;    /* the first of those errors (status 0 when none) */
};

/* Reads every image event of a trace file, in file order, into a malloc'd
 * array (free with free()); *count may be 0. keep_going: skip bad buffers
 * and bad image events, and stop at a cut in the file, instead of failing;
 * salvage (may be NULL) says what was skipped. Returns 0, or any status
 * ntl_etl_open_file and ntl_etl_next return (with keep_going only those
 * that leave nothing to skip to: NTL_ERR_IO, NTL_ERR_NOMEM, NTL_ERR_LIMIT, or
 * an error of the open), or NTL_ERR_FORMAT/NTL_ERR_TRUNCATED for a malformed
 * image event; err names it. The path is left to the caller to name. */
int ntl_etl_images_load(const char *path, bool keep_going, struct ntl_etl_image **out,
                        size_t *count, struct ntl_etl_salvage *salvage, struct ntl_error *err);

/* Lookup: the last image covering addr among those loaded at the end of the
 * trace (Load/DCStart/DCEnd not followed by an Unload of the same base);
 * NULL when none does. */
const struct ntl_etl_image *ntl_etl_images_find(const struct ntl_etl_image *imgs, size_t count,
                                                uint64_t addr);

#ifdef __cplusplus
}
#endif
#endif
