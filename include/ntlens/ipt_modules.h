/* The quick analysis of an Intel PT trace (seed 002): reconstruct every
 * TIP, TIP.PGE, TIP.PGD and FUP target without decoding instructions, count
 * how often each address occurs, and attribute the addresses to modules
 * from a map of "BASE SIZE NAME" lines (what `ntlens etl images --map`
 * prints). */
#ifndef NTLENS_IPT_MODULES_H
#define NTLENS_IPT_MODULES_H

#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ntl_ipt_target {
    uint64_t ip;
    uint64_t count;
};

/* Distinct targets and their counts (an open-addressing hash table), and
 * what the scan saw. */
struct ntl_ipt_targets {
    struct ntl_ipt_target *slots;
    size_t cap, used, limit;
    uint64_t total;        /* targets reconstructed */
    uint64_t by_type[4];   /* TIP, TIP.PGE, TIP.PGD, FUP */
    uint64_t suppressed;   /* IP packets whose IP was suppressed */
    uint64_t psbs;
    uint64_t errors;       /* decode errors, each followed by a resync */
    uint64_t first_error;  /* offset of the first, NTL_NO_OFFSET if none */
    uint64_t bytes;        /* bytes decoded from the first PSB on */
};

/* max_distinct bounds the table (0: 64 Mi addresses). */
void ntl_ipt_targets_init(struct ntl_ipt_targets *t, size_t max_distinct);
void ntl_ipt_targets_free(struct ntl_ipt_targets *t);

/* Scans buf from its first PSB to the end, resynchronising at the next PSB
 * after a decode error (counted in t->errors). Can be called again to add
 * another trace. NTL_ERR_NOT_FOUND when buf holds no PSB, NTL_ERR_LIMIT
 * when there are more distinct targets than the table may hold. */
int ntl_ipt_targets_scan(struct ntl_ipt_targets *t, const uint8_t *buf, size_t size,
                         struct ntl_error *err);

/* The distinct targets sorted by address, malloc'd into *out. */
int ntl_ipt_targets_sorted(const struct ntl_ipt_targets *t, struct ntl_ipt_target **out,
                           size_t *n, struct ntl_error *err);

struct ntl_ipt_module {
    uint64_t base, size;
    char *name;
};

struct ntl_ipt_module_map {
    struct ntl_ipt_module *mods; /* sorted by base */
    size_t n;
};

/* Parses lines "BASE SIZE NAME" (hex, 0x optional; NAME is the rest of the
 * line; '#' starts a comment; blank lines ignored). Errors name the line's
 * byte offset and number. */
int ntl_ipt_module_map_parse(const char *text, size_t len, struct ntl_ipt_module_map *map,
                             struct ntl_error *err);
void ntl_ipt_module_map_free(struct ntl_ipt_module_map *map);
/* Index of the module holding ip (the one with the highest base when
 * modules overlap), or -1. */
long ntl_ipt_module_map_find(const struct ntl_ipt_module_map *map, uint64_t ip);

#ifdef __cplusplus
}
#endif
#endif
