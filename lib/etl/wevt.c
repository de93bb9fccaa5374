/* Compiled instrumentation manifests: the WEVT_TEMPLATE resource mc.exe
 * builds into a provider's binary, read into the model of
 * manifest-internal.h that the .man reader fills, so one decoder serves
 * both. Layout as Joachim Metz documents it ("Windows Event manifest
 * binary format", libfwevt): a CRIM header listing providers, each a WEVT
 * element directory of MAPS, TTBL, EVNT, TASK, OPCO... elements. Offsets
 * are relative to the CRIM header; every one is checked against the blob.
 *
 * Where that documentation marks a template item's fields unknown, we read
 * them as TDH's EVENT_PROPERTY_INFO, which the 20-byte descriptor mirrors:
 * flags at 0 (struct 0x1, length from a field 0x2, count from a field 0x4,
 * fixed length 0x10, fixed count 0x20), in-type and out-type bytes at 4 and
 * 5 (a struct: the index of its first member and the member count, u16 at
 * 4 and 6), the map's offset at 8, the count and length (or the index of
 * the field giving them) u16 at 12 and 14. A struct's members follow it.
 * Out-types are TDH's numbers. Texts (the provider's name, map values) are
 * message ids, looked up in the binary's message table when given. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest-internal.h"
#include "ntlens/reader.h"
#include "ntlens/utf16.h"

#define ITEM_SIZE 20
#define EVENT_SIZE 48
#define F_STRUCT 0x1u
#define F_LENGTH_REF 0x2u
#define F_COUNT_REF 0x4u
#define F_LENGTH 0x10u
#define F_COUNT 0x20u

struct wevt {
    const uint8_t *b;
    size_t size;
    const uint8_t *msgs;
    size_t msize;
    struct ntl_etl_manifest *m;
    struct ntl_error *err;
    uint32_t provider;
    uint32_t *tmpl_off, *map_off;   /* element offsets of this provider's templates, maps */
    size_t ntmpl, nmap, captmpl, capmap;
    size_t budget;                  /* see charge() */
};

static int too_many(struct wevt *w, uint64_t off)
{
    return ntl_error_set(w->err, NTL_ERR_LIMIT, "WEVT_TEMPLATE", off,
                         "maps, templates and events define more than the blob can hold");
}

/* Takes n from the budget of things the blob defines: shared offsets (many
 * descriptors naming one element) must not multiply its size. */
static int charge(struct wevt *w, uint64_t off, uint64_t n)
{
    if (n > w->budget)
        return too_many(w, off);
    w->budget -= n;
    return 0;
}

static int bad(struct wevt *w, uint64_t off, const char *what)
{
    return ntl_error_set(w->err, NTL_ERR_FORMAT, "WEVT_TEMPLATE", off, "%s", what);
}

static int nomem(struct wevt *w)
{
    return ntl_error_set(w->err, NTL_ERR_NOMEM, "WEVT_TEMPLATE", NTL_NO_OFFSET, "out of memory");
}

/* len bytes at off, or NULL (err set). */
static const uint8_t *at(struct wevt *w, uint64_t off, uint64_t len, const char *what)
{
    if (!ntl_range_ok(w->size, off, len)) {
        ntl_error_set(w->err, NTL_ERR_TRUNCATED, "WEVT_TEMPLATE", off,
                      "%s: 0x%llx bytes past the end (size 0x%zx)", what, (unsigned long long)len,
                      w->size);
        return NULL;
    }
    return w->b + off;
}

static bool grow(void **a, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap)
        return true;
    size_t c = *cap ? 2 * *cap : 16;
    void *p = realloc(*a, c * elem);
    if (!p)
        return false;
    *a = p;
    *cap = c;
    return true;
}
#define GROW(a, n, cap) grow((void **)&(a), (n), &(cap), sizeof *(a))

/* A string kept by the manifest; NULL when out of memory. */
static const char *own(struct wevt *w, char *s)
{
    struct ntl_etl_manifest *m = w->m;
    if (!s || !GROW(m->owned, m->nowned, m->capowned)) {
        free(s);
        return NULL;
    }
    return m->owned[m->nowned++] = s;
}

/* The counted UTF-16 string at off (u32 size including itself). */
static const char *name_at(struct wevt *w, uint32_t off, const char *what, int *rc)
{
    const uint8_t *p = at(w, off, 4, what);
    uint32_t n;
    const char *s;
    *rc = 0;
    if (!p || (n = ntl_le32(p)) < 4 || !(p = at(w, off, n, what))) {
        *rc = p ? bad(w, off, "string size below 4") : NTL_ERR_TRUNCATED;
        return NULL;
    }
    n = (n - 4) / 2;
    if (!(s = own(w, ntl_utf16_to_utf8_dup(p + 4, ntl_utf16_unit_len(p + 4, n)))))
        *rc = nomem(w);
    return s;
}

/* Message id's text from the message table (MESSAGE_RESOURCE_DATA), its
 * trailing line break and blanks dropped; NULL when there is none. */
static const char *message(struct wevt *w, uint32_t id, int *rc)
{
    const uint8_t *t = w->msgs;
    *rc = 0;
    if (w->msize < 4)
        return NULL;
    uint32_t nblocks = ntl_le32(t);
    for (uint64_t i = 0; i < nblocks && 4 + 12 * (i + 1) <= w->msize; i++) {
        const uint8_t *blk = t + 4 + 12 * i;
        uint32_t lo = ntl_le32(blk), hi = ntl_le32(blk + 4);
        uint64_t off = ntl_le32(blk + 8);
        if (id < lo || id > hi)
            continue;
        for (uint32_t k = lo; off + 4 <= w->msize; k++) {
            uint16_t len = ntl_le16(t + off), flags = ntl_le16(t + off + 2);
            if (len < 4 || off + len > w->msize)
                return NULL;
            if (k == id) {
                char *s = flags & 1 ? ntl_utf16_to_utf8_dup(t + off + 4,
                                                            ntl_utf16_unit_len(t + off + 4, (len - 4u) / 2))
                                    : malloc(len - 3u);
                if (s && !(flags & 1)) {
                    memcpy(s, t + off + 4, len - 4u);
                    s[len - 4u] = '\0';
                }
                size_t n = s ? strlen(s) : 0;
                while (n && (s[n - 1] == '\r' || s[n - 1] == '\n' || s[n - 1] == ' '))
                    s[--n] = '\0';
                const char *o = own(w, s);
                if (!o)
                    *rc = nomem(w);
                return o;
            }
            off += len;
        }
        return NULL;
    }
    return NULL;
}

/* A VMAP or BMAP: name, entry count, then (value, message id) pairs. */
static int map(struct wevt *w, uint32_t off)
{
    struct ntl_etl_manifest *m = w->m;
    const uint8_t *p = at(w, off, 16, "map");
    int rc;
    if (!p)
        return NTL_ERR_TRUNCATED;
    uint32_t n = ntl_le32(p + 12);
    if (!at(w, off + 16, (uint64_t)n * 8, "map entries"))
        return NTL_ERR_TRUNCATED;
    if ((rc = charge(w, off, (uint64_t)n + 1)) < 0)
        return rc;
    if (!GROW(m->maps, m->nmaps, m->capmaps) || !GROW(w->map_off, w->nmap, w->capmap))
        return nomem(w);
    struct mf_map mp = {w->provider, NULL, !memcmp(p, "BMAP", 4), (uint32_t)m->nentries, 0};
    if (!(mp.name = name_at(w, ntl_le32(p + 8), "map name", &rc)))
        return rc;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = w->b + off + 16 + 8 * (size_t)i;
        const char *text = message(w, ntl_le32(e + 4), &rc);
        if (rc < 0)
            return rc;
        if (!text) /* the value shows without a name */
            continue;
        if (!GROW(m->entries, m->nentries, m->capentries))
            return nomem(w);
        m->entries[m->nentries++] = (struct mf_entry){ntl_le32(e), text};
        mp.n++;
    }
    w->map_off[w->nmap++] = off;
    m->maps[m->nmaps++] = mp;
    return 0;
}

/* MAPS: a count, offsets of all maps but the first, which follows them. */
static int maps(struct wevt *w, uint32_t off)
{
    const uint8_t *p = at(w, off, 12, "MAPS");
    if (!p)
        return NTL_ERR_TRUNCATED;
    uint32_t n = ntl_le32(p + 8);
    if (!n)
        return 0;
    if (!(p = at(w, off + 12, (uint64_t)(n - 1) * 4, "MAPS offsets")))
        return NTL_ERR_TRUNCATED;
    int rc = map(w, off + 12 + 4 * (n - 1));
    for (uint32_t i = 0; rc == 0 && i + 1 < n; i++)
        rc = map(w, ntl_le32(p + 4 * i));
    return rc;
}

static const uint8_t tdh_out[] = {
    [1] = NTL_ETL_OUT_STRING, [2] = NTL_ETL_OUT_FILETIME, [3] = NTL_ETL_OUT_SIGNED,
    [4] = NTL_ETL_OUT_UNSIGNED, [5] = NTL_ETL_OUT_SIGNED, [6] = NTL_ETL_OUT_UNSIGNED,
    [7] = NTL_ETL_OUT_SIGNED, [8] = NTL_ETL_OUT_UNSIGNED, [9] = NTL_ETL_OUT_SIGNED,
    [10] = NTL_ETL_OUT_UNSIGNED, [13] = NTL_ETL_OUT_BOOLEAN, [16] = NTL_ETL_OUT_HEX,
    [17] = NTL_ETL_OUT_HEX, [18] = NTL_ETL_OUT_HEX, [19] = NTL_ETL_OUT_HEX,
    [20] = NTL_ETL_OUT_PID, [21] = NTL_ETL_OUT_TID, [22] = NTL_ETL_OUT_PORT,
    [23] = NTL_ETL_OUT_IPV4, [24] = NTL_ETL_OUT_IPV6, [25] = NTL_ETL_OUT_SOCKETADDRESS,
    [28] = NTL_ETL_OUT_XML, [30] = NTL_ETL_OUT_WIN32ERROR, [31] = NTL_ETL_OUT_NTSTATUS,
    [32] = NTL_ETL_OUT_HRESULT, [33] = NTL_ETL_OUT_FILETIME, [34] = NTL_ETL_OUT_JSON,
    [35] = NTL_ETL_OUT_UTF8, [37] = NTL_ETL_OUT_CODE_POINTER,
};

/* One 20-byte descriptor into an item of the template whose items start at first. */
static int item(struct wevt *w, const uint8_t *d, uint64_t off, uint32_t first, struct mf_item *it)
{
    uint32_t flags = ntl_le32(d), i = (uint32_t)w->m->nitems - first;
    uint16_t count = ntl_le16(d + 12), length = ntl_le16(d + 14);
    int rc;
    *it = (struct mf_item){.length_ref = MF_NONE, .count_ref = MF_NONE, .map = MF_NONE,
                           .offset = off, .end = (uint32_t)w->m->nitems + 1};
    if (!(it->name = name_at(w, ntl_le32(d + 16), "item name", &rc)))
        return rc;
    if ((it->is_struct = flags & F_STRUCT)) {
        if (ntl_le16(d + 4) != i + 1)
            return bad(w, off, "struct members do not follow their struct");
        it->in_type = NTL_ETL_IN_STRUCT;
        it->out_type = (uint8_t)(ntl_le16(d + 6) > 255 ? 255 : ntl_le16(d + 6));
    } else {
        it->in_type = d[4];
        it->out_type = d[5] < sizeof tdh_out ? tdh_out[d[5]] : 0;
        if (it->in_type == NTL_ETL_IN_NULL || it->in_type >= NTL_ETL_IN_STRUCT)
            return ntl_error_set(w->err, NTL_ERR_UNSUPPORTED, "WEVT_TEMPLATE", off,
                                 "item '%s': unknown in-type %u", it->name, d[4]);
        if (it->in_type == NTL_ETL_IN_HEXINT32 || it->in_type == NTL_ETL_IN_HEXINT64)
            it->out_type = NTL_ETL_OUT_HEX;
    }
    if (((flags & F_LENGTH_REF) && length >= i) || ((flags & F_COUNT_REF) && count >= i))
        return bad(w, off, "length or count names a field that is not earlier");
    it->has_length = flags & (F_LENGTH | F_LENGTH_REF);
    it->has_count = flags & (F_COUNT | F_COUNT_REF);
    if (flags & F_LENGTH_REF)
        it->length_ref = first + length;
    else
        it->length = length;
    if (flags & F_COUNT_REF)
        it->count_ref = first + count;
    else
        it->count = count;
    if ((it->length_ref != MF_NONE && w->m->items[it->length_ref].is_struct) ||
        (it->count_ref != MF_NONE && w->m->items[it->count_ref].is_struct))
        return bad(w, off, "length or count names a struct");
    uint32_t moff = ntl_le32(d + 8);
    for (size_t k = 0; moff && k < w->nmap && it->map == MF_NONE; k++)
        if (w->map_off[k] == moff)
            it->map = (uint32_t)(w->m->nmaps - w->nmap + k);
    if (moff && it->map == MF_NONE)
        return bad(w, off, "item names a map that is not in MAPS");
    return 0;
}

/* Where the struct at i ends (its members, nested, follow it). */
static int struct_end(struct wevt *w, uint32_t i, uint32_t end, unsigned depth)
{
    struct mf_item *it = &w->m->items[i];
    uint32_t j = i + 1;
    if (depth >= NTL_ETL_MF_MAX_DEPTH)
        return ntl_error_set(w->err, NTL_ERR_LIMIT, "WEVT_TEMPLATE", it->offset,
                             "structs nest deeper than 7");
    for (unsigned k = 0; k < it->out_type; k++) {
        if (j >= end)
            return bad(w, it->offset, "struct has more members than its template");
        if (w->m->items[j].is_struct) {
            int rc = struct_end(w, j, end, depth + 1);
            if (rc < 0)
                return rc;
            j = w->m->items[j].end;
        } else
            j++;
    }
    it->end = j;
    return 0;
}

/* TEMP: its descriptors (at an offset of their own) into items. */
static int template(struct wevt *w, uint32_t off, uint32_t size)
{
    struct ntl_etl_manifest *m = w->m;
    const uint8_t *p = w->b + off;
    uint32_t n = ntl_le32(p + 8), items = ntl_le32(p + 16);
    const uint8_t *d = NULL;
    int rc;
    if (size < 40 || memcmp(p, "TEMP", 4))
        return bad(w, off, "template is not a TEMP");
    if (n && !(d = at(w, items, (uint64_t)n * ITEM_SIZE, "template items")))
        return NTL_ERR_TRUNCATED;
    if ((rc = charge(w, off, (uint64_t)n + 1)) < 0)
        return rc;
    if (!GROW(m->templates, m->ntemplates, m->captemplates) ||
        !GROW(w->tmpl_off, w->ntmpl, w->captmpl))
        return nomem(w);
    uint32_t first = (uint32_t)m->nitems;
    for (uint32_t i = 0; i < n; i++) {
        if (!GROW(m->items, m->nitems, m->capitems))
            return nomem(w);
        if ((rc = item(w, d + (size_t)i * ITEM_SIZE, items + (uint64_t)i * ITEM_SIZE, first,
                       &m->items[m->nitems])) < 0)
            return rc;
        m->nitems++;
    }
    /* Top-level items: each struct's members are skipped over. */
    for (uint32_t i = first; i < m->nitems; i = m->items[i].end)
        if (m->items[i].is_struct && (rc = struct_end(w, i, (uint32_t)m->nitems, 0)) < 0)
            return rc;
    /* Compiled templates have no tid: named by offset in error messages. */
    char tid[24];
    snprintf(tid, sizeof tid, "at 0x%x", off);
    const char *t = own(w, strdup(tid));
    if (!t)
        return nomem(w);
    m->templates[m->ntemplates++] = (struct mf_template){w->provider, t, first, (uint32_t)m->nitems};
    w->tmpl_off[w->ntmpl++] = off;
    return 0;
}

/* TTBL: templates one after another, each with its size. */
static int templates(struct wevt *w, uint32_t off)
{
    const uint8_t *p = at(w, off, 12, "TTBL");
    if (!p)
        return NTL_ERR_TRUNCATED;
    uint32_t n = ntl_le32(p + 8);
    uint64_t t = (uint64_t)off + 12;
    for (uint32_t i = 0; i < n; i++) {
        if (!(p = at(w, t, 40, "TEMP")))
            return NTL_ERR_TRUNCATED;
        uint32_t size = ntl_le32(p + 4);
        int rc;
        if (!at(w, t, size, "TEMP"))
            return NTL_ERR_TRUNCATED;
        if ((rc = template(w, (uint32_t)t, size)) < 0)
            return rc;
        t += size;
    }
    return 0;
}

/* The standard opcodes of winmeta.xml, which providers do not define. */
static const char *win_opcode(uint8_t v)
{
    static const char *const names[] = {NULL, "win:Start", "win:Stop", "win:DC_Start",
                                        "win:DC_Stop", "win:Extension", "win:Reply", "win:Resume",
                                        "win:Suspend", "win:Send"};
    if (v < sizeof names / sizeof names[0])
        return names[v];
    return v == 240 ? "win:Receive" : NULL;
}

/* A TASK or OPCO definition's name: its data offset is at `at_data`. */
static const char *def_name(struct wevt *w, uint32_t def, unsigned at_data, int *rc)
{
    const uint8_t *p = at(w, def, at_data + 4, "task or opcode definition");
    *rc = 0;
    if (!p) {
        *rc = NTL_ERR_TRUNCATED;
        return NULL;
    }
    return name_at(w, ntl_le32(p + at_data), "task or opcode name", rc);
}

static int event(struct wevt *w, const uint8_t *d, uint64_t off)
{
    struct ntl_etl_manifest *m = w->m;
    struct mf_event e = {.provider = w->provider, .id = ntl_le16(d), .version = d[2],
                         .tmpl = MF_NONE, .offset = off};
    uint32_t tmpl = ntl_le32(d + 20), opcode = ntl_le32(d + 24), task = ntl_le32(d + 32);
    int rc = 0;
    for (size_t k = 0; tmpl && k < w->ntmpl && e.tmpl == MF_NONE; k++)
        if (w->tmpl_off[k] == tmpl)
            e.tmpl = (uint32_t)(m->ntemplates - w->ntmpl + k), e.tmpl_name = m->templates[e.tmpl].tid;
    if (tmpl && e.tmpl == MF_NONE)
        return bad(w, off, "event names a template that is not in TTBL");
    if (task && !(e.task = def_name(w, task, 24, &rc)))
        return rc;
    if (opcode && !(e.opcode = def_name(w, opcode, 8, &rc)))
        return rc;
    if (!opcode)
        e.opcode = win_opcode(d[5]);
    if (!GROW(m->events, m->nevents, m->capevents))
        return nomem(w);
    m->events[m->nevents++] = e;
    return 0;
}

static int events(struct wevt *w, uint32_t off)
{
    const uint8_t *p = at(w, off, 16, "EVNT");
    if (!p)
        return NTL_ERR_TRUNCATED;
    uint32_t n = ntl_le32(p + 8);
    if (!(p = at(w, off + 16, (uint64_t)n * EVENT_SIZE, "EVNT definitions")))
        return NTL_ERR_TRUNCATED;
    int rc = charge(w, off, n);
    if (rc < 0)
        return rc;
    for (uint32_t i = 0; i < n; i++) {
        rc = event(w, p + (size_t)i * EVENT_SIZE, off + 16 + (uint64_t)i * EVENT_SIZE);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* KEYW (mask u64, message id, name offset: 16 bytes each) or LEVL (value
 * u32, message id, name offset: 12 bytes each). */
static int named_defs(struct wevt *w, uint32_t off, uint8_t kind)
{
    unsigned size = kind == MF_KEYWORD ? 16 : 12;
    const uint8_t *p = at(w, off, 12, kind == MF_KEYWORD ? "KEYW" : "LEVL");
    int rc;
    if (!p)
        return NTL_ERR_TRUNCATED;
    uint32_t n = ntl_le32(p + 8);
    if (!(p = at(w, off + 12, (uint64_t)n * size, "keyword or level definitions")))
        return NTL_ERR_TRUNCATED;
    if ((rc = charge(w, off, n)) < 0)
        return rc;
    for (uint32_t i = 0; i < n; i++, p += size) {
        uint64_t value = kind == MF_KEYWORD ? ntl_le64(p) : ntl_le32(p);
        const char *name = name_at(w, ntl_le32(p + size - 4), "keyword or level name", &rc);
        if (!name)
            return rc;
        if (mf_add_named(w->m, kind, w->provider, name, value) < 0)
            return nomem(w);
    }
    return 0;
}

static int keywords(struct wevt *w, uint32_t off)
{
    return named_defs(w, off, MF_KEYWORD);
}

static int levels(struct wevt *w, uint32_t off)
{
    return named_defs(w, off, MF_LEVEL);
}

/* A WEVT element directory: maps first (templates name them), templates
 * (events name them), events, keyword and level names. Other elements
 * (channels, filters) are not needed. */
static int provider(struct wevt *w, const uint8_t *desc, uint32_t off)
{
    static const struct { const char sig[5]; int (*read)(struct wevt *, uint32_t); } passes[] = {
        {"MAPS", maps}, {"TTBL", templates}, {"EVNT", events},
        {"KEYW", keywords}, {"LEVL", levels}};
    struct ntl_etl_manifest *m = w->m;
    const uint8_t *p = at(w, off, 20, "WEVT");
    int rc;
    if (!p)
        return NTL_ERR_TRUNCATED;
    if (memcmp(p, "WEVT", 4))
        return bad(w, off, "provider is not a WEVT element");
    uint32_t n = ntl_le32(p + 12);
    const uint8_t *el = at(w, off + 20, (uint64_t)n * 8, "WEVT element descriptors");
    if (!el)
        return NTL_ERR_TRUNCATED;
    if (!GROW(m->providers, m->nproviders, m->capproviders))
        return nomem(w);
    struct mf_provider *pr = &m->providers[m->nproviders];
    memset(pr, 0, sizeof *pr);
    memcpy(pr->guid.b, desc, 16);
    if (!(pr->name = message(w, ntl_le32(p + 8), &rc)) && rc == 0) {
        char g[40];
        if (!(pr->name = own(w, strdup(ntl_guid_format(&pr->guid, g, sizeof g)))))
            return nomem(w);
    }
    if (rc < 0)
        return rc;
    w->provider = (uint32_t)m->nproviders++;
    w->ntmpl = w->nmap = 0;
    for (size_t k = 0; k < sizeof passes / sizeof passes[0]; k++)
        for (uint32_t i = 0; i < n; i++) {
            uint32_t eo = ntl_le32(el + 8 * i);
            const uint8_t *sig = at(w, eo, 4, "WEVT element");
            if (!sig)
                return NTL_ERR_TRUNCATED;
            if (!memcmp(sig, passes[k].sig, 4) && (rc = passes[k].read(w, eo)) < 0)
                return rc;
        }
    return 0;
}

int ntl_etl_manifest_parse_wevt(const uint8_t *data, size_t size, const uint8_t *msgs, size_t msize,
                                struct ntl_etl_manifest **out, struct ntl_error *err)
{
    struct wevt w = {.b = data, .size = size, .msgs = msgs, .msize = msgs ? msize : 0,
                     .err = err, .budget = size / 8};
    const uint8_t *p = at(&w, 0, 16, "CRIM header");
    int rc = 0;
    *out = NULL;
    if (!p)
        return NTL_ERR_TRUNCATED;
    if (memcmp(p, "CRIM", 4))
        return bad(&w, 0, "no CRIM signature");
    uint32_t n = ntl_le32(p + 12);
    if (!n)
        return bad(&w, 12, "no providers");
    const uint8_t *desc = at(&w, 16, (uint64_t)n * 20, "provider descriptors");
    if (!desc)
        return NTL_ERR_TRUNCATED;
    if (!(w.m = calloc(1, sizeof *w.m)))
        return nomem(&w);
    for (uint32_t i = 0; rc == 0 && i < n; i++)
        rc = provider(&w, desc + 20 * (size_t)i, ntl_le32(desc + 20 * (size_t)i + 16));
    if (rc == 0)
        rc = mf_resolve(w.m, err);
    free(w.tmpl_off);
    free(w.map_off);
    if (rc < 0) {
        ntl_etl_manifest_free(w.m);
        return rc;
    }
    *out = w.m;
    return 0;
}
