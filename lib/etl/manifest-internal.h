/* The parsed manifest, shared by its reader (manifest.c) and the event
 * decoder (mf_decode.c). Private to lib/etl. */
#ifndef NTLENS_ETL_MANIFEST_INTERNAL_H
#define NTLENS_ETL_MANIFEST_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ntlens/etl_manifest.h"

#define MF_NONE UINT32_MAX

/* One <data> or <struct> of a template; a struct's members follow it, up
 * to `end`. A length or count is a number or an earlier field (`_ref`). */
struct mf_item {
    const char *name;
    uint8_t in_type, out_type;
    bool is_struct, has_length, has_count;
    uint32_t end;
    uint32_t length, length_ref;
    uint32_t count, count_ref;
    uint32_t map;
    size_t offset;           /* of its tag in the XML */
    /* while parsing: the names the attributes gave */
    const char *length_name, *count_name, *map_name;
};

struct mf_template {
    uint32_t provider;
    const char *tid;
    uint32_t first, end;     /* items */
};

struct mf_event {
    uint32_t provider;
    uint16_t id;
    uint8_t version;
    uint32_t tmpl;           /* MF_NONE: no payload */
    const char *name;        /* "Task/Opcode" */
    const char *tmpl_name, *task, *opcode, *symbol;
    size_t offset;
};

struct mf_map {
    uint32_t provider;
    const char *name;
    bool bitmap;
    uint32_t first, n;       /* entries */
};

struct mf_entry {
    uint64_t value;
    const char *text;        /* the message, its $(string.id) resolved */
};

enum mf_named_kind { MF_TASK, MF_OPCODE, MF_KEYWORD, MF_LEVEL };

struct mf_named {            /* a task, an opcode, a keyword or a level */
    uint8_t kind;            /* enum mf_named_kind */
    uint32_t provider, task; /* an opcode's task, MF_NONE when provider-wide */
    const char *name;
    uint64_t value;          /* a keyword's mask */
};

/* Adds a named value of provider `provider`: 0 or NTL_ERR_NOMEM. */
int mf_add_named(struct ntl_etl_manifest *m, uint8_t kind, uint32_t provider, const char *name,
                 uint64_t value);

struct mf_provider {
    struct ntl_guid guid;
    const char *name;
    uint32_t first_event, end_event; /* events sorted by provider, id, version */
};

struct ntl_etl_manifest {
    struct mf_provider *providers;
    struct mf_event *events;
    struct mf_template *templates;
    struct mf_item *items;
    struct mf_map *maps;
    struct mf_entry *entries;
    struct mf_named *named;
    struct { const char *id, *value; } *strings;
    size_t nproviders, nevents, ntemplates, nitems, nmaps, nentries, nnamed, nstrings;
    size_t capproviders, capevents, captemplates, capitems, capmaps, capentries, capnamed, capstrings;
    char **owned;            /* every string above */
    size_t nowned, capowned;
};

/* After parsing: names to indexes, messages, event names, the event order. */
int mf_resolve(struct ntl_etl_manifest *m, struct ntl_error *err);

#endif
