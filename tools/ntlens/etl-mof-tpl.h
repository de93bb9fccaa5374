/* Kernel (MOF) classes' fields as templates for `etl events`: what the
 * decoder's walks gave for a layout (kind, group, opcode, version, pointer
 * size), so later events of it are written from fixed offsets without the
 * class lookup and the item walk. Only what the walks showed is trusted:
 * fixed-size values, then at most one UTF-16 string to the payload's end,
 * that string only once two walks ended it at different lengths (a
 * fixed-size char16 array ends at one length). */
#ifndef NTLENS_TOOL_ETL_MOF_TPL_H
#define NTLENS_TOOL_ETL_MOF_TPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/etl.h"
#include "ntlens/etl_fields.h"

/* Fields a template holds; a layout with more walks every event. */
#define ETL_MOF_TPL_FIELDS 24

struct etl_mof_tpl {
    uint64_t key;
    bool bad;                     /* a walk showed something else: walk every event */
    bool seen;                    /* n, total and f are set */
    bool ends;                    /* a walk ended after the fixed fields */
    bool tail;                    /* the string's end confirmed (see above) */
    size_t tail_len;              /* the first string's bytes with its NUL; 0 before */
    size_t n, total;              /* the fixed fields and their bytes */
    struct ntl_etl_field f[ETL_MOF_TPL_FIELDS + 1]; /* the fixed fields, then the string */
    /* JSON-only rows (etl-fields.c): the fixed fields as ,"name":value
     * without the field's general path, when all are integers. */
    bool prepared, direct;
    size_t direct_max;            /* the most the fixed members write */
    struct etl_tpl_member {
        uint8_t how;              /* etl-fields.c's enum member_how */
        uint8_t key_len;
        bool pid;                 /* a candidate for the PERFINFO process id */
        char key[61];             /* "name": escaped */
    } m[ETL_MOF_TPL_FIELDS];
};

struct etl_mof_tpls;

/* ev's template; with create, a new empty one when there is none (NULL
 * when out of memory or the table is full). */
struct etl_mof_tpl *etl_mof_tpl_find(struct etl_mof_tpls **tpls, const struct ntl_etl_event *ev,
                                     bool create);
/* How t writes ev: 0 the fixed fields, 1 and the string, -1 not (walk it). */
int etl_mof_tpl_fits(const struct etl_mof_tpl *t, const struct ntl_etl_event *ev);
/* Learns from a successful walk of ev: its n items (n > ETL_MOF_TPL_FIELDS + 1:
 * more than were kept). */
void etl_mof_tpl_learn(struct etl_mof_tpl *t, const struct ntl_etl_event *ev,
                       const struct ntl_etl_field *items, size_t n);
void etl_mof_tpl_free(struct etl_mof_tpls *tpls);

#endif
