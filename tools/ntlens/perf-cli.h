/* What the performance-data commands (counters, sample, capture) share:
 * loading title databases with the standard fallback, taking a parsed
 * snapshot, naming objects and counters, glob matching, typeperf's counter
 * paths, and the platform's clock and sleep (perf-clock-*.c). */
#ifndef NTLENS_TOOL_PERF_CLI_H
#define NTLENS_TOOL_PERF_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/perf.h"
#include "ntlens/source.h"

/* Loads "Counter <lang>" (help = false) or "Help <lang>" into t, then fills
 * what is missing from Windows' standard titles. A source without the
 * database is not an error (Wine, Samba: tiny or no tables); it is reported
 * through *missing when that is non-NULL. A malformed database is: returns
 * EXIT_FAIL after printing the error. */
int perf_titles_load(const char *cmd, struct ntl_source *src, unsigned lang, bool help,
                     struct ntl_perf_titles *t, bool *missing);

/* Queries the source and parses the answer into *block (which borrows raw).
 * Returns 0, NTL_ERR_EOF at the end of a capture, or another negative
 * status with err set. */
int perf_snapshot(struct ntl_source *src, const char *query, struct ntl_buf *raw,
                  struct ntl_perf_block **block, struct ntl_error *err);

/* The name of a title index, or its number when the database lacks it. */
const char *perf_name(const struct ntl_perf_titles *t, uint32_t index, char *buf, size_t size);

/* Case-insensitive glob: '*' any run, '?' one character. */
bool perf_glob(const char *pattern, const char *s);
bool perf_has_wildcard(const char *s);

/* An object or counter given by index ("230") or by name pattern: true when
 * `index` (named `name`) is what spec asks for. */
bool perf_spec_matches(const char *spec, uint32_t index, const char *name);

/* --lang: a registry language id in hex ("009", "0x409", "7"). */
bool perf_parse_lang(const char *s, unsigned *lang);
/* --detail: novice|advanced|expert|wizard or 100..400 (rounded up). */
bool perf_parse_detail(const char *s, uint32_t *level);
const char *perf_detail_name(uint32_t level);

/* typeperf's counter path: [\\MACHINE]\OBJECT[(INSTANCE)]\COUNTER, where
 * INSTANCE may be PARENT/NAME#N and any part may hold wildcards. */
struct perf_path {
    char machine[256];
    char object[256];
    char instance[512];
    bool has_instance;
    char counter[256];
};
/* Returns NULL, or a message saying what is wrong. */
const char *perf_path_parse(const char *s, struct perf_path *p);
/* True when instance `in` is selected by pattern: a pattern with '/' is
 * matched against "parent/name#N", one without against "name#N". */
bool perf_instance_matches(const char *pattern, const struct ntl_perf_instance *in);

/* Platform: wall clock (Unix ns, UTC) and sleeping. */
int64_t perf_now_unix_ns(void);
void perf_sleep_ms(unsigned ms);

#endif
