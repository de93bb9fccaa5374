/* A bounded XML reader for instrumentation manifests: start tags with their
 * attributes, end tags, and nothing else a manifest needs (text, comments,
 * processing instructions, CDATA and the DOCTYPE are skipped). Not a general
 * XML parser: no DTD entities, no encodings but UTF-8 (and ASCII). Every read
 * is bounded by the input; nesting is capped; errors carry the byte offset
 * and line. Private to lib/etl. */
#ifndef NTLENS_ETL_XML_H
#define NTLENS_ETL_XML_H

#include <stdbool.h>
#include <stddef.h>

#include "ntlens/error.h"

#define XML_MAX_DEPTH 64
#define XML_MAX_ATTRS 32

struct xml_attr {
    const char *name, *value;   /* value raw: entities still encoded */
    size_t name_len, value_len;
};

struct xml {
    const char *s;
    size_t size, pos;
    /* the current tag */
    bool end;                   /* </name> */
    bool empty;                 /* <name .../>: no end tag will follow */
    const char *name;           /* local name (a prefix like "win:" dropped) */
    size_t name_len;
    struct xml_attr attr[XML_MAX_ATTRS];
    size_t nattr;
    size_t tag_offset;
    unsigned depth;             /* elements open after this tag */
    struct { const char *name; size_t len; } open[XML_MAX_DEPTH];
};

void xml_init(struct xml *x, const char *s, size_t size);
/* The next tag: 1, 0 at the end of the input (every element closed), or
 * NTL_ERR_FORMAT / NTL_ERR_TRUNCATED / NTL_ERR_LIMIT with err set. */
int xml_next(struct xml *x, struct ntl_error *err);
bool xml_is(const struct xml *x, const char *name);
/* The attribute's raw value, NULL when absent. */
const struct xml_attr *xml_attr(const struct xml *x, const char *name);
/* The value with &lt; &gt; &amp; &quot; &apos; &#N; &#xN; decoded into buf
 * (size >= value_len + 1 always suffices); NULL on a bad reference. */
char *xml_value(const struct xml_attr *a, char *buf, size_t size);
/* 1-based line of an offset, for messages. */
unsigned xml_line(const struct xml *x, size_t offset);

#endif
