/* ETW manifest providers: events decoded with the provider's
 * instrumentation manifest (a .man XML file), as tracerpt and TDH do with
 * the manifest Windows registers.
 *
 *     struct ntl_etl_manifest *m;
 *     struct ntl_etl_mf *d = ntl_etl_mf_new();
 *     ntl_etl_manifest_load("ClrEtwAll.man", &m, &err);
 *     if ((rc = ntl_etl_mf_begin(d, m, &ev, &err)) > 0)
 *         while ((rc = ntl_etl_mf_next(d, &f, &err)) > 0) ...
 *
 * Read from a manifest: providers (name, GUID), tasks and opcodes (event
 * names "Task/Opcode"), templates (data of every in-type of etl_fields.h,
 * lengths and counts given as numbers or by an earlier field, counted
 * arrays of values and of structs, nested structs), value and bitmap maps
 * with their messages from the string table. The XML is read by a bounded
 * reader of our own (no libxml2, so Windows builds decode the same way);
 * it takes what manifests use: elements, attributes, comments, CDATA, the
 * five named entities and character references. The compiled form mc.exe
 * builds into a binary (WEVT_TEMPLATE) is read into the same model. */
#ifndef NTLENS_ETL_MANIFEST_H
#define NTLENS_ETL_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"
#include "ntlens/etl.h"
#include "ntlens/etl_fields.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ntl_etl_manifest;

/* Parses size bytes of manifest XML. Returns 0, NTL_ERR_NOMEM, or
 * NTL_ERR_FORMAT / NTL_ERR_TRUNCATED / NTL_ERR_LIMIT / NTL_ERR_UNSUPPORTED
 * with err at the byte offset (its line in the message): malformed XML, an
 * unknown in-type, a template, map or length/count field that is not
 * defined, more than NTL_ETL_MF_MAX_DEPTH nested structs. */
int ntl_etl_manifest_parse(const char *xml, size_t size, struct ntl_etl_manifest **out,
                           struct ntl_error *err);
/* The same from a file (at most 64 MiB); ntl_file_read's statuses too. */
int ntl_etl_manifest_load(const char *path, struct ntl_etl_manifest **out, struct ntl_error *err);
void ntl_etl_manifest_free(struct ntl_etl_manifest *m);

/* The same model from a compiled manifest: the WEVT_TEMPLATE resource of a
 * provider's binary (size bytes from "CRIM") and, when msgs is not NULL,
 * its RT_MESSAGETABLE resource, which holds the provider's name and the
 * maps' texts (without it, providers are named by GUID and mapped values
 * show as numbers). Events are named "Task/Opcode" or the task; an event
 * with no task has no name. Returns 0, NTL_ERR_NOMEM, or
 * NTL_ERR_FORMAT / NTL_ERR_TRUNCATED / NTL_ERR_LIMIT / NTL_ERR_UNSUPPORTED
 * with err at the blob offset. See lib/etl/wevt.c for the layout. */
int ntl_etl_manifest_parse_wevt(const uint8_t *data, size_t size, const uint8_t *msgs, size_t msize,
                                struct ntl_etl_manifest **out, struct ntl_error *err);

/* The manifest's name for a provider GUID; NULL when it defines none. */
const char *ntl_etl_manifest_provider_name(const struct ntl_etl_manifest *m,
                                           const struct ntl_guid *g);
/* The names a manifest gives the keyword bits (a <keyword>'s mask, exactly)
 * and the levels of provider g; NULL when it defines none (the standard
 * ones, win:Error or win:ResponseTime, are in etl.h). */
const char *ntl_etl_manifest_level_name(const struct ntl_etl_manifest *m, const struct ntl_guid *g,
                                        uint8_t level);
const char *ntl_etl_manifest_keyword_name(const struct ntl_etl_manifest *m,
                                          const struct ntl_guid *g, uint64_t mask);
/* A keyword's mask or a level's value by name (any provider of m, case
 * insensitive): false when m defines no such name. */
bool ntl_etl_manifest_find_keyword(const struct ntl_etl_manifest *m, const char *name,
                                   uint64_t *mask);
bool ntl_etl_manifest_find_level(const struct ntl_etl_manifest *m, const char *name, uint8_t *level);
/* The events it defines, and the key of event i (< that count): what an
 * event's header must carry to be decoded with it. */
size_t ntl_etl_manifest_events(const struct ntl_etl_manifest *m);
void ntl_etl_manifest_event_key(const struct ntl_etl_manifest *m, size_t i, struct ntl_guid *provider,
                                uint16_t *id, uint8_t *version);

#define NTL_ETL_MF_MAX_DEPTH 7

/* A decoder, reused from event to event. NULL when out of memory. */
struct ntl_etl_mf *ntl_etl_mf_new(void);
void ntl_etl_mf_free(struct ntl_etl_mf *d);

/* Decodes ev's payload with m: 1 when m defines ev (its provider GUID, id
 * and version), with the names below set and the items ready for
 * ntl_etl_mf_next; 0 when m does not define it; NTL_ERR_NOMEM. A payload
 * that does not fit its template is reported by ntl_etl_mf_next, after the
 * items that did decode. */
int ntl_etl_mf_begin(struct ntl_etl_mf *d, const struct ntl_etl_manifest *m,
                     const struct ntl_etl_event *ev, struct ntl_error *err);
/* The provider's and the event's names (valid while m lives): "Task/Opcode",
 * the task alone, or the event's symbol. */
const char *ntl_etl_mf_provider_name(const struct ntl_etl_mf *d);
const char *ntl_etl_mf_event_name(const struct ntl_etl_mf *d);

/* The next item, as ntl_etl_tl_next gives them (a mapped value carries its
 * map's text in map_text): 1, 0 after the last (the payload consumed
 * exactly), or with err set at the event's file offset (the message names
 * the field and the payload offset):
 *   NTL_ERR_TRUNCATED  a value runs past the payload
 *   NTL_ERR_FORMAT     payload bytes left after the last field, a string
 *                      without its NUL, a malformed SID
 *   NTL_ERR_LIMIT      more items than the payload can hold (huge counts)
 * After an error, further calls return the same error. */
int ntl_etl_mf_next(struct ntl_etl_mf *d, struct ntl_etl_field *f, struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
