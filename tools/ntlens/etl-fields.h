/* An event's decoded fields for `etl events`: its provider and event names
 * and its fields as a JSON object and as "name=value" text. */
#ifndef NTLENS_TOOL_ETL_FIELDS_H
#define NTLENS_TOOL_ETL_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/etl.h"
#include "ntlens/etl_manifest.h"

struct etl_text {
    char *s;
    size_t len, cap;
    bool failed;           /* out of memory: s holds what fit */
    bool off;              /* not wanted: nothing is written (s stays NULL) */
};

#define ETL_PROVIDERS_SEEN 64
#define ETL_KEYS_SEEN 256

struct etl_fields {
    const char *provider;  /* provider name: TraceLogging traits or the well-known table; NULL */
    const char *event;     /* event name from the schema; NULL */
    bool has_fields;       /* json and text hold the fields */
    bool self_named;       /* provider and event named by the event itself (TraceLogging) */
    uint32_t pid;          /* the header's process id, or the payload's ProcessId when the
                            * header has none (PERFINFO); UINT32_MAX when neither */
    struct etl_text json, text;
    char error[320];       /* why the payload did not decode; "" when it did */
    char event_buf[64];    /* a kernel event's "Group/Opcode" */
    unsigned event_key;    /* 1 << 16 | group << 8 | opcode of event_buf; 0 before any */
    /* Manifests (--manifest), tried in order before TraceLogging; set by
     * etl_fields_add_manifest. */
    struct ntl_etl_manifest **manifests;
    size_t nmanifests;
    struct ntl_etl_mf *mf;
    struct etl_provider_seen {   /* provider names looked up, by GUID */
        struct ntl_guid guid;
        const char *name;
        bool known;
    } seen[ETL_PROVIDERS_SEEN];
    struct etl_mof_tpls *mof_tpls; /* kernel classes' field templates (etl-mof-tpl.h) */
    struct etl_mof_tpl *tpl;       /* the last event's template; NULL when none */
    struct etl_key_seen {         /* JSON keys of kernel classes' fields, by name pointer */
        const char *name;
        uint8_t len;
        char text[63];
    } keys_seen[ETL_KEYS_SEEN];
};

/* Adds m (owned by f from now on) to the manifests events are decoded with.
 * Returns 0, or -1 when out of memory (m freed). */
int etl_fields_add_manifest(struct etl_fields *f, struct ntl_etl_manifest *m);

struct opt_list;
/* Loads every --manifest FILE of paths. Returns 0, or an exit status after
 * saying why a file did not load (named with its offset and line). */
int etl_fields_load_manifests(struct etl_fields *f, const struct opt_list *paths, const char *cmd);

/* Loads the compiled manifest (WEVT_TEMPLATE and message table resources)
 * of every --manifest-from binary of paths, as etl_fields_load_manifests. */
int etl_fields_load_binaries(struct etl_fields *f, const struct opt_list *paths, const char *cmd);

/* The --manifest-from option (needs parse-options.h). */
#define OPT_MANIFEST_FROM(list)                                                               \
    OPT_LIST(0, "manifest-from", (list), "FILE",                                              \
             "decode manifest providers' events with the manifest compiled\n"                 \
             "into this provider binary (its WEVT_TEMPLATE resource; repeatable)")

/* The --manifest option (needs parse-options.h). */
#define OPT_MANIFEST(list)                                                                    OPT_LIST(0, "manifest", (list), "FILE",                                                            "decode manifest providers' events with this instrumentation\n"                            "manifest (.man XML; repeatable)")

/* Decodes ev (its buffers reused from the last call). Set json.off or
 * text.off before the first call to skip a form nobody shows. Returns 0, or -1 when
 * out of memory. A payload that does not match its schema leaves has_fields
 * false and error set. */
int etl_fields_decode(struct etl_fields *f, const struct ntl_etl_event *ev);
void etl_fields_free(struct etl_fields *f);

#endif
