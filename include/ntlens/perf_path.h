/* typeperf's counter paths and the matching rules every performance-data
 * consumer shares: [\\MACHINE]\OBJECT[(INSTANCE)]\COUNTER, where OBJECT and
 * COUNTER are names (case-insensitive) or title indices, INSTANCE is NAME,
 * NAME#N (the N-th of same-named ones) or PARENT/NAME#N, and any part may
 * hold the wildcards '*' and '?'. A path is expanded against one parsed
 * block (ntlens/perf.h) and its title database. Nothing here does I/O. */
#ifndef NTLENS_PERF_PATH_H
#define NTLENS_PERF_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"
#include "ntlens/perf.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ntl_perf_path {
    char machine[256];        /* "" when the path names none */
    char object[256];
    char instance[512];
    bool has_instance;        /* the path has "(...)", even "()" */
    char counter[256];
};

/* Parses s into *p. Returns 0, or NTL_ERR_ARGUMENT with err saying what is
 * wrong ("no \COUNTER after the object", "machine name too long", ...). */
int ntl_perf_path_parse(const char *s, struct ntl_perf_path *p, struct ntl_error *err);

/* Expanding a parsed path against one block: every (object, counter,
 * instance) it selects, in block order. Counter bases (which share their
 * counter's name and have no value of their own) are selected only by an
 * explicit index. */
struct ntl_perf_path_iter {
    const struct ntl_perf_path *path;
    const struct ntl_perf_block *block;
    const struct ntl_perf_titles *titles;
    size_t object, counter, instance;   /* the next candidate */
};

struct ntl_perf_path_match {
    const struct ntl_perf_object *object;
    size_t counter;                     /* index into object->counters */
    const struct ntl_perf_instance *instance; /* NULL: the object has no instances */
    char instance_name[1024];           /* "parent/name#N" (ntl_perf_instance_path_name) */
    /* "\\MACHINE\Object(instance)\Counter" with names from the titles (or
     * indices where the titles lack them) and machine as given to begin. */
    char path[2048];
};

/* Starts an expansion; path, block and titles must outlive the iterator. */
void ntl_perf_path_iter_begin(struct ntl_perf_path_iter *it, const struct ntl_perf_path *path,
                              const struct ntl_perf_block *block,
                              const struct ntl_perf_titles *titles);
/* The next selected counter: 1 with *m filled, 0 when there are no more
 * (err untouched), or NTL_ERR_ARGUMENT with err set when the path does not
 * fit an object it names: the object has instances and the path gives none
 * ("name one, e.g. \Process(*)\ID Process"), or the object has none and the
 * path gives one other than "*". `machine` is what m->path starts with. */
int ntl_perf_path_next(struct ntl_perf_path_iter *it, const char *machine,
                       struct ntl_perf_path_match *m, struct ntl_error *err);

/* The name of a title index, or its number ("230") when the titles lack it.
 * Returns the name or buf. */
const char *ntl_perf_name(const struct ntl_perf_titles *t, uint32_t index, char *buf,
                          size_t size);

/* Case-insensitive glob: '*' any run, '?' one character. Linear in practice
 * and never exponential. */
bool ntl_perf_glob(const char *pattern, const char *s);
bool ntl_perf_has_wildcard(const char *s);

/* An object or counter given by index ("230") or by name pattern: true when
 * `index` (named `name`, NULL when unnamed) is what spec asks for. */
bool ntl_perf_spec_matches(const char *spec, uint32_t index, const char *name);

/* True when instance `in` is selected by pattern: a pattern with '/' is
 * matched against "parent/name#N", one without against "name#N"; the first
 * of same-named instances is both "name" and "name#0". */
bool ntl_perf_instance_matches(const char *pattern, const struct ntl_perf_instance *in);

/* A registry language id in hex ("009", "0x409", "7"): true and *lang set,
 * or false when s is not one (1..0xffff). */
bool ntl_perf_parse_lang(const char *s, unsigned *lang);
/* A detail level: novice|advanced|expert|wizard or 1..400 rounded up to a
 * multiple of 100. False when s is neither. */
bool ntl_perf_parse_detail(const char *s, uint32_t *level);
/* "novice", "advanced", "expert", "wizard", or "custom" for other levels. */
const char *ntl_perf_detail_name(uint32_t level);

#ifdef __cplusplus
}
#endif
#endif
