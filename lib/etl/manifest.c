/* Instrumentation manifests (.man XML) read into the model of
 * manifest-internal.h: one pass over the tags, then names resolved (event
 * templates, maps, length and count fields, messages from the string table). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest-internal.h"
#include "ntlens/buf.h"
#include "xml.h"

/* Grows array a (n used, cap allocated) by one; false when out of memory. */
#define GROW(a, n, cap)                                                                  \
    ((n) < (cap) || grow((void **)&(a), &(cap), sizeof *(a)))

static bool grow(void **a, size_t *cap, size_t elem)
{
    size_t c = *cap ? 2 * *cap : 16;
    void *p = realloc(*a, c * elem);
    if (!p)
        return false;
    *a = p;
    *cap = c;
    return true;
}

struct parse {
    struct ntl_etl_manifest *m;
    struct xml x;
    struct ntl_error *err;
    uint32_t provider, tmpl, task;      /* open elements, MF_NONE when not */
    uint32_t map;
    uint32_t structs[NTL_ETL_MF_MAX_DEPTH];
    unsigned nstructs;
    bool in_localization_done;          /* only the first stringTable counts */
    bool in_string_table;
};

static int nomem(struct parse *p)
{
    return ntl_error_set(p->err, NTL_ERR_NOMEM, "manifest", p->x.tag_offset, "out of memory");
}

static int bad(struct parse *p, int status, const char *fmt, const char *what)
{
    return ntl_error_set(p->err, status, "manifest", p->x.tag_offset, "line %u: <%.*s>: %s%s",
                         xml_line(&p->x, p->x.tag_offset), (int)p->x.name_len, p->x.name, fmt,
                         what ? what : "");
}

/* The attribute's decoded value, owned by the manifest; NULL when absent
 * (*rc 0) or on error (*rc < 0). */
static const char *attr(struct parse *p, const char *name, int *rc)
{
    const struct xml_attr *a = xml_attr(&p->x, name);
    char *s;
    *rc = 0;
    if (!a)
        return NULL;
    if (!GROW(p->m->owned, p->m->nowned, p->m->capowned) || !(s = malloc(a->value_len + 1))) {
        *rc = nomem(p);
        return NULL;
    }
    if (!xml_value(a, s, a->value_len + 1)) {
        free(s);
        *rc = bad(p, NTL_ERR_FORMAT, "bad character reference in attribute ", name);
        return NULL;
    }
    p->m->owned[p->m->nowned++] = s;
    return s;
}

/* A number attribute (decimal or 0x hex); false when absent or not a number. */
static bool number(const char *s, uint64_t *v)
{
    char *end;
    if (!s || !*s || *s == '-')
        return false;
    *v = strtoull(s, &end, 0);
    return !*end;
}

static const struct { const char *name; uint8_t type; } in_types[] = {
    {"win:UnicodeString", NTL_ETL_IN_UNICODESTRING}, {"win:AnsiString", NTL_ETL_IN_ANSISTRING},
    {"win:Int8", NTL_ETL_IN_INT8}, {"win:UInt8", NTL_ETL_IN_UINT8},
    {"win:Int16", NTL_ETL_IN_INT16}, {"win:UInt16", NTL_ETL_IN_UINT16},
    {"win:Int32", NTL_ETL_IN_INT32}, {"win:UInt32", NTL_ETL_IN_UINT32},
    {"win:Int64", NTL_ETL_IN_INT64}, {"win:UInt64", NTL_ETL_IN_UINT64},
    {"win:Float", NTL_ETL_IN_FLOAT}, {"win:Double", NTL_ETL_IN_DOUBLE},
    {"win:Boolean", NTL_ETL_IN_BOOL32}, {"win:Binary", NTL_ETL_IN_BINARY},
    {"win:GUID", NTL_ETL_IN_GUID}, {"win:Pointer", NTL_ETL_IN_POINTER},
    {"win:FILETIME", NTL_ETL_IN_FILETIME}, {"win:SYSTEMTIME", NTL_ETL_IN_SYSTEMTIME},
    {"win:SID", NTL_ETL_IN_SID}, {"win:HexInt32", NTL_ETL_IN_HEXINT32},
    {"win:HexInt64", NTL_ETL_IN_HEXINT64}, {"win:CountedString", NTL_ETL_IN_COUNTEDSTRING},
    {"win:CountedAnsiString", NTL_ETL_IN_COUNTEDANSISTRING},
};

static const struct { const char *name; uint8_t type; } out_types[] = {
    {"xs:string", NTL_ETL_OUT_STRING}, {"xs:boolean", NTL_ETL_OUT_BOOLEAN},
    {"win:HexInt8", NTL_ETL_OUT_HEX}, {"win:HexInt16", NTL_ETL_OUT_HEX},
    {"win:HexInt32", NTL_ETL_OUT_HEX}, {"win:HexInt64", NTL_ETL_OUT_HEX},
    {"win:PID", NTL_ETL_OUT_PID}, {"win:TID", NTL_ETL_OUT_TID}, {"win:Port", NTL_ETL_OUT_PORT},
    {"win:IPv4", NTL_ETL_OUT_IPV4}, {"win:IPv6", NTL_ETL_OUT_IPV6},
    {"win:SocketAddress", NTL_ETL_OUT_SOCKETADDRESS}, {"win:Xml", NTL_ETL_OUT_XML},
    {"win:Json", NTL_ETL_OUT_JSON}, {"win:Win32Error", NTL_ETL_OUT_WIN32ERROR},
    {"win:NTSTATUS", NTL_ETL_OUT_NTSTATUS}, {"win:HResult", NTL_ETL_OUT_HRESULT},
    {"xs:dateTime", NTL_ETL_OUT_FILETIME}, {"win:DateTimeCultureInsensitive", NTL_ETL_OUT_FILETIME},
    {"xs:byte", NTL_ETL_OUT_SIGNED}, {"xs:short", NTL_ETL_OUT_SIGNED},
    {"xs:int", NTL_ETL_OUT_SIGNED}, {"xs:long", NTL_ETL_OUT_SIGNED},
    {"xs:unsignedByte", NTL_ETL_OUT_UNSIGNED}, {"xs:unsignedShort", NTL_ETL_OUT_UNSIGNED},
    {"xs:unsignedInt", NTL_ETL_OUT_UNSIGNED}, {"xs:unsignedLong", NTL_ETL_OUT_UNSIGNED},
    {"win:Utf8", NTL_ETL_OUT_UTF8}, {"win:CodePointer", NTL_ETL_OUT_CODE_POINTER},
};

static int data_types(struct parse *p, struct mf_item *it)
{
    int rc;
    const char *in = attr(p, "inType", &rc), *out;
    if (rc < 0)
        return rc;
    if (!in)
        return bad(p, NTL_ERR_FORMAT, "no inType", NULL);
    it->in_type = NTL_ETL_IN_COUNT;
    for (size_t i = 0; i < sizeof in_types / sizeof in_types[0]; i++)
        if (!strcmp(in, in_types[i].name))
            it->in_type = in_types[i].type;
    if (it->in_type == NTL_ETL_IN_COUNT)
        return bad(p, NTL_ERR_UNSUPPORTED, "unknown inType ", in);
    if ((out = attr(p, "outType", &rc)))
        for (size_t i = 0; i < sizeof out_types / sizeof out_types[0]; i++)
            if (!strcmp(out, out_types[i].name))
                it->out_type = out_types[i].type;
    /* HexInt in-types show in hex whatever the out-type says. */
    if (it->in_type == NTL_ETL_IN_HEXINT32 || it->in_type == NTL_ETL_IN_HEXINT64)
        it->out_type = NTL_ETL_OUT_HEX;
    return rc;
}

/* <data> or <struct> inside a template. */
static int item(struct parse *p, bool is_struct)
{
    struct ntl_etl_manifest *m = p->m;
    struct mf_item it = {.is_struct = is_struct, .length_ref = MF_NONE, .count_ref = MF_NONE,
                         .map = MF_NONE};
    uint64_t v;
    int rc;
    if (!GROW(m->items, m->nitems, m->capitems))
        return nomem(p);
    if (!(it.name = attr(p, "name", &rc)))
        return rc < 0 ? rc : bad(p, NTL_ERR_FORMAT, "no name", NULL);
    it.length_name = attr(p, "length", &rc);
    if (rc >= 0)
        it.count_name = attr(p, "count", &rc);
    if (rc >= 0)
        it.map_name = attr(p, "map", &rc);
    if (rc < 0 || (!is_struct && (rc = data_types(p, &it)) < 0))
        return rc;
    if ((it.has_length = it.length_name != NULL) && number(it.length_name, &v))
        it.length = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v, it.length_name = NULL;
    if ((it.has_count = it.count_name != NULL) && number(it.count_name, &v))
        it.count = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v, it.count_name = NULL;
    it.end = (uint32_t)m->nitems + 1;
    it.offset = p->x.tag_offset;
    m->items[m->nitems++] = it;
    if (is_struct && !p->x.empty) {
        if (p->nstructs == NTL_ETL_MF_MAX_DEPTH)
            return bad(p, NTL_ERR_LIMIT, "structs nest deeper than 7", NULL);
        p->structs[p->nstructs++] = (uint32_t)m->nitems - 1;
    }
    return 0;
}

static int start_template(struct parse *p)
{
    struct ntl_etl_manifest *m = p->m;
    int rc;
    if (!GROW(m->templates, m->ntemplates, m->captemplates))
        return nomem(p);
    struct mf_template *t = &m->templates[m->ntemplates];
    *t = (struct mf_template){p->provider, attr(p, "tid", &rc), (uint32_t)m->nitems,
                              (uint32_t)m->nitems};
    if (!t->tid)
        return rc < 0 ? rc : bad(p, NTL_ERR_FORMAT, "no tid", NULL);
    if (!p->x.empty)
        p->tmpl = (uint32_t)m->ntemplates;
    m->ntemplates++;
    return 0;
}

static int event(struct parse *p)
{
    struct ntl_etl_manifest *m = p->m;
    uint64_t id, version = 0;
    int rc = 0;
    if (!GROW(m->events, m->nevents, m->capevents))
        return nomem(p);
    struct mf_event *e = &m->events[m->nevents];
    memset(e, 0, sizeof *e);
    e->provider = p->provider;
    e->tmpl = MF_NONE;
    e->offset = p->x.tag_offset;
    if (!number(attr(p, "value", &rc), &id) || id > 0xffff)
        return rc < 0 ? rc : bad(p, NTL_ERR_FORMAT, "value is not an event id", NULL);
    const char *ver = attr(p, "version", &rc);
    if (rc < 0 || (ver && (!number(ver, &version) || version > 255)))
        return rc < 0 ? rc : bad(p, NTL_ERR_FORMAT, "version is not a number up to 255", NULL);
    e->id = (uint16_t)id;
    e->version = (uint8_t)version;
    if (!(e->tmpl_name = attr(p, "template", &rc)) && rc < 0)
        return rc;
    if (!(e->task = attr(p, "task", &rc)) && rc < 0)
        return rc;
    if (!(e->opcode = attr(p, "opcode", &rc)) && rc < 0)
        return rc;
    if (!(e->symbol = attr(p, "symbol", &rc)) && rc < 0)
        return rc;
    m->nevents++;
    return 0;
}

/* <task> (task MF_NONE), <opcode> (in a task, or provider-wide), <keyword>
 * (its mask) or <level>. */
static int named(struct parse *p, uint8_t kind)
{
    struct ntl_etl_manifest *m = p->m;
    uint64_t v = 0;
    const char *name;
    int rc;
    if (!(name = attr(p, "name", &rc)))
        return rc < 0 ? rc : bad(p, NTL_ERR_FORMAT, "no name", NULL);
    if (!number(attr(p, kind == MF_KEYWORD ? "mask" : "value", &rc), &v) && rc < 0)
        return rc;
    if (mf_add_named(m, kind, p->provider, name, v) < 0)
        return nomem(p);
    if (kind == MF_OPCODE)
        m->named[m->nnamed - 1].task = p->task;
    if (kind == MF_TASK && !p->x.empty)
        p->task = (uint32_t)m->nnamed - 1;
    return 0;
}

static int map_start(struct parse *p, bool bitmap)
{
    struct ntl_etl_manifest *m = p->m;
    int rc;
    if (!GROW(m->maps, m->nmaps, m->capmaps))
        return nomem(p);
    struct mf_map *mp = &m->maps[m->nmaps];
    *mp = (struct mf_map){p->provider, attr(p, "name", &rc), bitmap, (uint32_t)m->nentries, 0};
    if (!mp->name)
        return rc < 0 ? rc : bad(p, NTL_ERR_FORMAT, "no name", NULL);
    if (!p->x.empty)
        p->map = (uint32_t)m->nmaps;
    m->nmaps++;
    return 0;
}

static int map_entry(struct parse *p)
{
    struct ntl_etl_manifest *m = p->m;
    uint64_t v;
    int rc;
    if (!GROW(m->entries, m->nentries, m->capentries))
        return nomem(p);
    struct mf_entry *e = &m->entries[m->nentries];
    if (!number(attr(p, "value", &rc), &v))
        return rc < 0 ? rc : bad(p, NTL_ERR_FORMAT, "value is not a number", NULL);
    e->value = v;
    if (!(e->text = attr(p, "message", &rc)))
        return rc < 0 ? rc : bad(p, NTL_ERR_FORMAT, "no message", NULL);
    m->nentries++;
    m->maps[p->map].n++;
    return 0;
}

static int string_entry(struct parse *p)
{
    struct ntl_etl_manifest *m = p->m;
    int rc;
    if (!GROW(m->strings, m->nstrings, m->capstrings))
        return nomem(p);
    m->strings[m->nstrings].id = attr(p, "id", &rc);
    if (rc >= 0)
        m->strings[m->nstrings].value = attr(p, "value", &rc);
    if (rc < 0)
        return rc;
    if (m->strings[m->nstrings].id && m->strings[m->nstrings].value)
        m->nstrings++;
    return 0;
}

static int provider(struct parse *p)
{
    struct ntl_etl_manifest *m = p->m;
    int rc;
    const char *guid;
    if (!GROW(m->providers, m->nproviders, m->capproviders))
        return nomem(p);
    struct mf_provider *pr = &m->providers[m->nproviders];
    memset(pr, 0, sizeof *pr);
    if (!(pr->name = attr(p, "name", &rc)) || !(guid = attr(p, "guid", &rc)))
        return rc < 0 ? rc : bad(p, NTL_ERR_FORMAT, "no name or guid", NULL);
    if (!ntl_guid_parse(guid, &pr->guid))
        return bad(p, NTL_ERR_FORMAT, "bad guid ", guid);
    p->provider = (uint32_t)m->nproviders++;
    return 0;
}

static int start(struct parse *p)
{
    struct xml *x = &p->x;
    if (xml_is(x, "provider"))
        return provider(p);
    if (p->provider == MF_NONE) {
        if (xml_is(x, "stringTable") && !p->in_localization_done)
            p->in_string_table = true;
        else if (xml_is(x, "string") && p->in_string_table)
            return string_entry(p);
        return 0;
    }
    if (p->tmpl != MF_NONE && (xml_is(x, "data") || xml_is(x, "struct")))
        return item(p, xml_is(x, "struct"));
    if (xml_is(x, "template"))
        return start_template(p);
    if (xml_is(x, "event"))
        return event(p);
    if (xml_is(x, "task"))
        return named(p, MF_TASK);
    if (xml_is(x, "opcode"))
        return named(p, MF_OPCODE);
    if (xml_is(x, "keyword"))
        return named(p, MF_KEYWORD);
    if (xml_is(x, "level"))
        return named(p, MF_LEVEL);
    if (xml_is(x, "valueMap") || xml_is(x, "bitMap"))
        return map_start(p, xml_is(x, "bitMap"));
    if (xml_is(x, "map") && p->map != MF_NONE)
        return map_entry(p);
    return 0;
}

static void end(struct parse *p)
{
    struct xml *x = &p->x;
    if (xml_is(x, "struct") && p->nstructs)
        p->m->items[p->structs[--p->nstructs]].end = (uint32_t)p->m->nitems;
    else if (xml_is(x, "template") && p->tmpl != MF_NONE) {
        p->m->templates[p->tmpl].end = (uint32_t)p->m->nitems;
        p->tmpl = MF_NONE;
    } else if (xml_is(x, "task"))
        p->task = MF_NONE;
    else if (xml_is(x, "valueMap") || xml_is(x, "bitMap"))
        p->map = MF_NONE;
    else if (xml_is(x, "provider"))
        p->provider = MF_NONE;
    else if (xml_is(x, "stringTable") && p->in_string_table) {
        p->in_string_table = false;
        p->in_localization_done = true;
    }
}

int ntl_etl_manifest_parse(const char *text, size_t size, struct ntl_etl_manifest **out,
                           struct ntl_error *err)
{
    struct parse p = {.err = err, .provider = MF_NONE, .tmpl = MF_NONE, .task = MF_NONE,
                      .map = MF_NONE};
    int rc;
    *out = NULL;
    if (!(p.m = calloc(1, sizeof *p.m)))
        return ntl_error_set(err, NTL_ERR_NOMEM, "manifest", 0, "out of memory");
    xml_init(&p.x, text, size);
    while ((rc = xml_next(&p.x, err)) > 0) {
        if (p.x.end)
            end(&p);
        else if ((rc = start(&p)) < 0)
            break;
        else if (p.x.empty)
            end(&p);
    }
    if (rc == 0 && !p.m->nproviders)
        rc = ntl_error_set(err, NTL_ERR_FORMAT, "manifest", 0, "no <provider> element");
    if (rc == 0)
        rc = mf_resolve(p.m, err);
    if (rc < 0) {
        ntl_etl_manifest_free(p.m);
        return rc;
    }
    *out = p.m;
    return 0;
}

int ntl_etl_manifest_load(const char *path, struct ntl_etl_manifest **out, struct ntl_error *err)
{
    struct ntl_buf b = {0};
    int rc = ntl_file_read(path, 64u << 20, &b, err);
    if (rc < 0)
        return rc;
    rc = ntl_etl_manifest_parse((const char *)b.data, b.len, out, err);
    ntl_buf_free(&b);
    return rc;
}

void ntl_etl_manifest_free(struct ntl_etl_manifest *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nowned; i++)
        free(m->owned[i]);
    free(m->owned);
    free(m->providers);
    free(m->events);
    free(m->templates);
    free(m->items);
    free(m->maps);
    free(m->entries);
    free(m->named);
    free(m->strings);
    free(m);
}
