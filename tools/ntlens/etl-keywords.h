/* An EVENT_HEADER event's level and keyword names for `etl events`: the
 * names the loaded manifests give its provider, else winmeta.xml's standard
 * ones (win:Error, win:ResponseTime); and --level / --keywords given by
 * name as well as by number. */
#ifndef NTLENS_TOOL_ETL_KEYWORDS_H
#define NTLENS_TOOL_ETL_KEYWORDS_H

#include <stddef.h>
#include <stdint.h>

#include "etl-fields.h"

/* The level's name, or NULL when neither a manifest nor winmeta names it. */
const char *etl_level_name(const struct etl_fields *f, const struct ntl_etl_event *ev);
/* "GCKeyword,win:ResponseTime,0x400": a name per keyword bit, the bits
 * nobody names as one hex mask; "" for no keywords. */
void etl_keyword_names(const struct etl_fields *f, const struct ntl_etl_event *ev, char *buf,
                       size_t size);
/* A level: a number 0..255 or a name. -1 when it is neither. */
int etl_level_parse(const struct etl_fields *f, const char *s, uint64_t *level);
/* Keywords: NAME|MASK[,NAME|MASK...], their masks or'ed. -1 (with the bad
 * item in *bad) when an item is neither a number nor a known name. */
int etl_keywords_parse(const struct etl_fields *f, const char *s, uint64_t *mask, const char **bad);

#endif
