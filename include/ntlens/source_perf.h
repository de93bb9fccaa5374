/* Reading parsed performance data from a source: title databases with a
 * chosen fallback, one parsed snapshot, and PsList's rows (ntlens/perf_ps.h)
 * taken from a source. */
#ifndef NTLENS_SOURCE_PERF_H
#define NTLENS_SOURCE_PERF_H

#include <stdbool.h>
#include <stddef.h>

#include "ntlens/buf.h"
#include "ntlens/error.h"
#include "ntlens/perf.h"
#include "ntlens/perf_ps.h"
#include "ntlens/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What fills the indices a source's own title database does not name. */
enum ntl_source_titles_fill {
    /* Nothing: such indices stay unnamed and show as numbers (\230\784).
     * Right for sources whose indices are their own (Samba's store), where
     * Windows' standard name for an index belongs to another counter. */
    NTL_SOURCE_TITLES_OWN = 0,
    /* Windows' standard English table: right for Windows and for sources
     * that serve Windows' standard indices (the local Linux provider, Wine). */
    NTL_SOURCE_TITLES_STANDARD = 1,
};

/* Loads the source's "Counter <lang>" (NTL_TITLES_COUNTER) or "Help <lang>"
 * database into t, then, with NTL_SOURCE_TITLES_STANDARD, fills what it
 * lacks from Windows' standard titles. A source that does not give the
 * database is not an error (Wine, Samba, an import without titles; whatever
 * the source answered): *missing (may be NULL) says so. Returns 0, or with
 * err set: NTL_ERR_FORMAT or NTL_ERR_TRUNCATED for a malformed database
 * (err names "Counter 009"), or NTL_ERR_NOMEM. */
int ntl_source_load_titles(struct ntl_source *src, enum ntl_title_kind kind, unsigned lang,
                           enum ntl_source_titles_fill fill, struct ntl_perf_titles *t,
                           bool *missing, struct ntl_error *err);

/* Queries the source and parses the answer into *block (which borrows raw;
 * *block is NULL on failure). Returns 0, NTL_ERR_EOF at the end of a capture
 * (err set), what ntl_source_query returns, or what ntl_perf_block_parse
 * returns, always with err set. */
int ntl_source_snapshot(struct ntl_source *src, const char *query, struct ntl_buf *raw,
                        struct ntl_perf_block **block, struct ntl_error *err);

/* Loads the source's English counter names (a missing or malformed database
 * leaves Windows' standard names) and resolves the indices ps needs;
 * *titles is the caller's (ntl_perf_titles_free). Returns 0 or NTL_ERR_NOMEM
 * with err set. */
int ntl_source_ps_titles(struct ntl_source *src, struct ntl_perf_titles **titles,
                         struct ntl_perf_ps_indices *ix, struct ntl_error *err);

/* Queries the source for Process (plus Thread and Processor when asked) and
 * fills out; out->host falls back to the source's description when the
 * block names no system. Returns 0, NTL_ERR_EOF at the end of a capture, or
 * what ntl_source_query and ntl_perf_ps_sample_parse return, with err set.
 * Call ntl_perf_ps_sample_free(out) in every case. */
int ntl_source_ps_take(struct ntl_source *src, const struct ntl_perf_ps_indices *ix,
                       bool threads, bool cpus, struct ntl_perf_ps_sample *out,
                       struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
