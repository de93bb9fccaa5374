/* Kernel (MOF) classes' field templates for `etl events`: per layout (kind,
 * group, opcode, version, pointer size), the library's fixed prefix of its
 * fields (ntl_etl_mof_prefix: what the walk gives at fixed offsets, checked
 * against the walk by fuzz/etl/fuzz_mof_prefix.c) and how their JSON
 * members are written, found once per layout instead of once per event. */
#ifndef NTLENS_TOOL_ETL_MOF_TPL_H
#define NTLENS_TOOL_ETL_MOF_TPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/etl.h"
#include "ntlens/etl_fields.h"

/* A JSON row's fragments for one layout (etl-record.c renders and owns
 * them): ,"kind":... through "keyword", and ,"event":... through
 * "keyword_names" (NULL, 0 with --raw). */
struct etl_row_frags {
    char *head, *names;
    size_t head_len, names_len;
};

struct etl_mof_tpl {
    uint64_t key;
    /* The JSON row's fragments of this template's events, kept by
     * etl-record.c when it first finds them (head NULL before): the
     * template's key (kind, group, opcode, version, pointer size) fixes the
     * row's layout, so its events skip the layout lookup. */
    struct etl_row_frags row;
    char event[64];               /* its events' "Group/Opcode" (etl-fields.c); "" before */
    bool known;                   /* the layout is known: p is set */
    struct ntl_etl_mof_prefix p;
    /* JSON-only rows (etl-fields.c): the fixed fields as ,"name":value
     * without the field's general path, when all are integers. */
    bool prepared, direct;
    size_t direct_max;            /* the most the fixed members write */
    struct etl_tpl_member {
        uint8_t how;              /* etl-fields.c's enum member_how */
        uint8_t key_len;
        bool pid;                 /* a candidate for the PERFINFO process id */
        char key[64];             /* "name": escaped, then anything */
    } m[NTL_ETL_MOF_PREFIX_MAX];
};

struct etl_mof_tpls;

/* ev's template, made on first use; NULL when out of memory or the table
 * is full (then walk ev). */
struct etl_mof_tpl *etl_mof_tpl_find(struct etl_mof_tpls **tpls, const struct ntl_etl_event *ev);
void etl_mof_tpl_free(struct etl_mof_tpls *tpls);

#endif
