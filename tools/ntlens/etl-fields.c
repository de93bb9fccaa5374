/* TraceLogging fields rendered for `etl events`: one walk over the decoded
 * items writes both the JSON object and the table's "name=value" text. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "etl-common.h"
#include "etl-decimal.h"
#include "etl-fields.h"
#include "etl-mof-tpl.h"
#include "ntlens/buf.h"
#include "ntlens/etl_fields.h"
#include "ntlens/pe.h"
#include "ntlens/reader.h"
#include "out.h"

/* Text grows up to this; a payload is at most 64 KiB, so no real event nears it. */
#define TEXT_MAX (8u << 20)

/* Room for n more bytes and a NUL at the end of t: where they go, or NULL
 * when t is off or out of memory (t->failed). */
static char *room(struct etl_text *t, size_t n)
{
    if (t->off)
        return NULL;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *p = cap <= TEXT_MAX ? realloc(t->s, cap) : NULL;
        if (!p) {
            t->failed = true;
            return NULL;
        }
        t->s = p;
        t->cap = cap;
    }
    return t->s + t->len;
}

/* Ends what was written at d, from room(). */
static void done(struct etl_text *t, char *d)
{
    t->len = (size_t)(d - t->s);
    t->s[t->len] = '\0';
}

static void put(struct etl_text *t, const char *s, size_t n)
{
    char *d = room(t, n);
    if (!d)
        return;
    memcpy(d, s, n);
    done(t, d + n);
}

static void puts_(struct etl_text *t, const char *s) { put(t, s, strlen(s)); }

static void json_string(struct etl_text *t, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const char *run = s;
    if (t->off)
        return;
    put(t, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        put(t, run, (size_t)(s - run));
        char esc[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
        if (c == '"' || c == '\\')
            esc[1] = (char)c, esc[2] = 0;
        puts_(t, esc);
        run = s + 1;
    }
    put(t, run, (size_t)(s - run));
    put(t, "\"", 1);
}

/* What json_string writes, to d with room for 6n + 2 bytes; the end. */
static char *json_string_to(char *d, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    *d++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            *d++ = (char)c;
            continue;
        }
        *d++ = '\\';
        if (c == '"' || c == '\\') {
            *d++ = (char)c;
        } else {
            memcpy(d, "u00", 3);
            d[3] = hex[c >> 4];
            d[4] = hex[c & 15];
            d += 5;
        }
    }
    *d++ = '"';
    return d;
}

/* The value of f in *buf (grown as needed for long strings and binary). */
static const char *value_text(const struct ntl_etl_field *f, char *small, size_t size, char **big)
{
    if (ntl_etl_field_class(f) == NTL_ETL_VALUE_FLOAT)
        return out_format_double(small, size, ntl_etl_field_f64(f));
    size_t n = ntl_etl_field_text(f, small, size);
    if (n < size)
        return small;
    if (!(*big = malloc(n + 1)))
        return NULL;
    ntl_etl_field_text(f, *big, n + 1);
    return *big;
}

struct walk {
    struct etl_fields *out;
    bool static_names;            /* field names are the decoder's constants (kernel classes) */
    bool first[NTL_ETL_TL_MAX_DEPTH + 1];   /* no member written yet at this depth */
    const char *path[NTL_ETL_TL_MAX_DEPTH + 1];
    char elem[NTL_ETL_TL_MAX_DEPTH + 1][80];
};

static void json_key(struct walk *w, const struct ntl_etl_field *f)
{
    struct etl_text *j = &w->out->json;
    if (!w->first[f->depth])
        put(j, ",", 1);
    w->first[f->depth] = false;
    if (!f->in_array) {
        json_string(j, f->name);
        put(j, ":", 1);
    }
}

/* "a.b[2]=" in the table text: the struct path and the element index. */
static void text_key(struct walk *w, const struct ntl_etl_field *f)
{
    struct etl_text *t = &w->out->text;
    char idx[16];
    if (t->off)
        return;
    if (t->len)
        put(t, " ", 1);
    for (unsigned d = 0; d < f->depth; d++)
        if (w->path[d]) {
            puts_(t, w->path[d]);
            put(t, ".", 1);
        }
    puts_(t, f->name);
    if (f->in_array) {
        snprintf(idx, sizeof idx, "[%u]", f->index);
        puts_(t, idx);
    }
    put(t, "=", 1);
}

static bool needs_quotes(const char *s)
{
    return !*s || strpbrk(s, " \"=\t\n") != NULL;
}

/* "name": of a kernel class's field, escaped once per name: their names
 * are the layouts' constants, so the pointer is the key. NULL when it is
 * too long to keep. */
static const struct etl_key_seen *key_seen(struct etl_fields *out, const char *name)
{
    uintptr_t h = (uintptr_t)name;
    struct etl_key_seen *e = &out->keys_seen[(h ^ h >> 8 ^ h >> 16) % ETL_KEYS_SEEN];
    if (e->name == name)
        return e;
    size_t n = strlen(name);
    if (6 * n + 3 > sizeof e->text)
        return NULL;
    e->len = (uint8_t)(json_string_to(e->text, name, n) - e->text);
    e->text[e->len++] = ':';
    e->name = name;
    return e;
}

/* Starts a member of the JSON object: ,"name": with room for vmax more
 * bytes after it; where the value goes, or NULL (out of memory). */
static char *json_member(struct walk *w, const struct ntl_etl_field *f, size_t vmax)
{
    struct etl_text *j = &w->out->json;
    const struct etl_key_seen *key =
        w->static_names && !f->in_array ? key_seen(w->out, f->name) : NULL;
    size_t nlen = key || f->in_array ? 0 : strlen(f->name);
    char *d = room(j, 6 * nlen + vmax + 8 + (key ? sizeof key->text : 0));
    if (!d)
        return NULL;
    if (!w->first[f->depth])
        *d++ = ',';
    w->first[f->depth] = false;
    if (key) { /* all of text: a fixed-size copy is a few moves, not `rep movsb` */
        memcpy(d, key->text, sizeof key->text);
        d += key->len;
    } else if (!f->in_array) {
        d = json_string_to(d, f->name, nlen);
        *d++ = ':';
    }
    return d;
}

/* A value's member of the JSON object: ,"name":value in one reservation. */
static void json_value(struct walk *w, const struct ntl_etl_field *f, const char *v,
                       enum ntl_etl_value_class cls)
{
    size_t vlen = strlen(v);
    char *d = json_member(w, f, 6 * vlen);
    if (!d)
        return;
    if (cls == NTL_ETL_VALUE_TEXT)
        d = json_string_to(d, v, vlen);
    else if (cls == NTL_ETL_VALUE_FLOAT && !isfinite(ntl_etl_field_f64(f)))
        memcpy(d, "null", 4), d += 4; /* JSON has no NaN or infinity; the text keeps them */
    else
        memcpy(d, v, vlen), d += vlen;
    done(&w->out->json, d);
}

/* An integer shown as text: "0x" and hex digits (pointers, HEX, status
 * codes) or a dotted IPv4 address, nothing JSON escapes; a CHAR is not. */
static bool hex_number(const struct ntl_etl_field *f)
{
    switch (f->in_type) {
    case NTL_ETL_IN_INT8: case NTL_ETL_IN_UINT8: case NTL_ETL_IN_INT16: case NTL_ETL_IN_UINT16:
    case NTL_ETL_IN_INT32: case NTL_ETL_IN_UINT32: case NTL_ETL_IN_INT64: case NTL_ETL_IN_UINT64:
    case NTL_ETL_IN_POINTER: case NTL_ETL_IN_HEXINT32: case NTL_ETL_IN_HEXINT64:
        return f->out_type != NTL_ETL_OUT_STRING && f->size <= 8;
    default:
        return false;
    }
}

/* Four UTF-16 units in w, in each 16-bit lane at once (a lane's value +
 * 0x7fe0 reaches bit 15 when it is >= 0x20, and so on; no lane carries into
 * the next): whether all are printable ASCII, and whether JSON escapes none. */
#define LANES(v) ((v) * 0x0001000100010001ull)
static bool printable4(uint64_t w)
{
    const uint64_t top = LANES(0x8000);
    return !(w & LANES(0xff00)) && ((w + LANES(0x7fe0)) & ~(w + LANES(0x7f81)) & top) == top;
}

static bool plain4(uint64_t w)
{
    const uint64_t top = LANES(0x8000);
    uint64_t no_quote = (w ^ LANES('"')) + LANES(0x7fff);
    uint64_t no_bslash = (w ^ LANES('\\')) + LANES(0x7fff);
    return printable4(w) && (no_quote & no_bslash & top) == top;
}

/* Four printable units of w as bytes at d (each lane's high byte is 0). */
static void store4(char *d, uint64_t w)
{
    w = (w | w >> 8) & 0x0000ffff0000ffffull;
    w |= w >> 16;
    d[0] = (char)w, d[1] = (char)(w >> 8), d[2] = (char)(w >> 16), d[3] = (char)(w >> 24);
}

/* The n UTF-16 units at s as a JSON string at d, '"' and '\\' escaped
 * (paths: every separator), checked as written: the end, or NULL when a
 * unit is not printable ASCII (what was written is then left unused). */
static char *ascii_to(char *d, const uint8_t *s, size_t n)
{
    size_t k = 0;
    *d++ = '"';
    while (k < n) {
        uint64_t w;
        if (n - k >= 4 && plain4(w = ntl_le64(s + 2 * k))) {
            store4(d, w);
            d += 4;
            k += 4;
            continue;
        }
        unsigned c = ntl_le16(s + 2 * k++);
        if (c < 0x20 || c >= 0x7f)
            return NULL;
        if (c == '"' || c == '\\')
            *d++ = '\\';
        *d++ = (char)c;
    }
    *d++ = '"';
    return d;
}

/* Each byte's two hex digits, so a value takes one lookup and one 2-byte
 * store per byte (a digit at a time was a third of etl_fields_decode). */
#define HEXD(n) (char)((n) < 10 ? '0' + (n) : 'a' + (n) - 10)
#define HEX2(b) HEXD((b) >> 4), HEXD((b) & 15)
#define HEX8(b) HEX2(b), HEX2(b + 1), HEX2(b + 2), HEX2(b + 3), HEX2(b + 4), HEX2(b + 5), \
                HEX2(b + 6), HEX2(b + 7)
#define HEX32(b) HEX8(b), HEX8(b + 8), HEX8(b + 16), HEX8(b + 24)
static const char hex_pairs[512] = {HEX32(0), HEX32(32), HEX32(64), HEX32(96),
                                    HEX32(128), HEX32(160), HEX32(192), HEX32(224)};

/* The n little-endian bytes at p in hex at d, the last byte first; the end. */
static inline char *hex_bytes(char *d, const uint8_t *p, size_t n)
{
    for (size_t k = n; k--; d += 2)
        memcpy(d, hex_pairs + 2 * p[k], 2);
    return d;
}

/* The common values of JSON-only output written straight into the object,
 * as json_value would write them: integers, and UTF-16 strings of printable
 * ASCII (file and image names, their backslashes escaped). false when v must take the general path. */
static bool json_direct(struct walk *w, const struct ntl_etl_field *f)
{
    enum ntl_etl_value_class cls = ntl_etl_field_class(f);
    char *d;
    if (f->map_text)
        return false;
    if (cls == NTL_ETL_VALUE_UNSIGNED || cls == NTL_ETL_VALUE_SIGNED) {
        int64_t i = cls == NTL_ETL_VALUE_SIGNED ? ntl_etl_field_i64(f) : 0;
        if (!(d = json_member(w, f, 24)))
            return true; /* out of memory: json.failed says so */
        if (i < 0)
            *d++ = '-';
        d = etl_decimal_to(d, cls == NTL_ETL_VALUE_UNSIGNED ? ntl_etl_field_u64(f)
                          : i < 0 ? 0 - (uint64_t)i : (uint64_t)i);
        done(&w->out->json, d);
        return true;
    }
    if (cls != NTL_ETL_VALUE_TEXT || f->custom)
        return false;
    if (hex_number(f)) {
        if (!(d = json_member(w, f, 48)))
            return true;
        *d++ = '"';
        if (f->out_type != NTL_ETL_OUT_IPV4 && f->out_type != NTL_ETL_OUT_PORT &&
            (f->size == 8 || f->size == 4 || f->size == 2 || f->size == 1)) {
            /* What ntl_etl_field_text writes, 0x and 2 * size digits, without
             * its digit-at-a-time loop (StackWalk's addresses, 10% of a trace). */
            memcpy(d, "0x", 2);
            d = hex_bytes(d + 2, f->data, f->size);
        } else {
            d += ntl_etl_field_text(f, d, 45);
        }
        *d++ = '"';
        done(&w->out->json, d);
        return true;
    }
    if (f->in_type != NTL_ETL_IN_UNICODESTRING && f->in_type != NTL_ETL_IN_COUNTEDSTRING)
        return false;
    bool first = w->first[f->depth];
    if (!(d = json_member(w, f, 2 * (f->size / 2) + 2)))
        return true;
    if (!(d = ascii_to(d, f->data, f->size / 2))) {
        w->first[f->depth] = first; /* nothing kept: the general path writes it */
        return false;
    }
    done(&w->out->json, d);
    return true;
}

static int value(struct walk *w, const struct ntl_etl_field *f)
{
    char small[128], *big = NULL;
    if (w->out->text.off && json_direct(w, f))
        return 0;
    const char *v = value_text(f, small, sizeof small, &big);
    if (!v)
        return -1;
    enum ntl_etl_value_class cls = ntl_etl_field_class(f);
    if (f->map_text) /* a manifest map's name for the value */
        v = f->map_text, cls = NTL_ETL_VALUE_TEXT;
    json_value(w, f, v, cls);
    if (w->out->text.off) { /* JSON only: the text's quoting check is skipped */
        free(big);
        return 0;
    }
    text_key(w, f);
    if (needs_quotes(v))
        json_string(&w->out->text, v);
    else
        puts_(&w->out->text, v);
    free(big);
    return 0;
}

/* A pointer in an array (StackWalk's return addresses, 35% of net.4.5.2's
 * fields) written straight into a JSON-only object, as json_direct writes
 * it (same reservation), without its class and member lookups: they were
 * three quarters of such a value's instructions. false for any other item. */
static bool array_pointer(struct walk *w, const struct ntl_etl_field *f)
{
    if (!w->out->text.off || f->item != NTL_ETL_ITEM_VALUE || !f->in_array ||
        f->in_type != NTL_ETL_IN_POINTER || f->custom || f->map_text ||
        (f->out_type != NTL_ETL_OUT_NULL && f->out_type != NTL_ETL_OUT_HEX) ||
        (f->size != 8 && f->size != 4))
        return false;
    char *d = room(&w->out->json, 48 + 8);
    if (!d)
        return true; /* out of memory: json.failed says so */
    if (!w->first[f->depth])
        *d++ = ',';
    w->first[f->depth] = false;
    memcpy(d, "\"0x", 3);
    d = f->size == 8 ? hex_bytes(d + 3, f->data, 8) : hex_bytes(d + 3, f->data, 4);
    *d++ = '"';
    done(&w->out->json, d);
    return true;
}

static int item(struct walk *w, const struct ntl_etl_field *f)
{
    struct etl_text *j = &w->out->json;
    switch (f->item) {
    case NTL_ETL_ITEM_VALUE:
        return value(w, f);
    case NTL_ETL_ITEM_STRUCT_BEGIN:
    case NTL_ETL_ITEM_ARRAY_BEGIN:
        json_key(w, f);
        put(j, f->item == NTL_ETL_ITEM_STRUCT_BEGIN ? "{" : "[", 1);
        w->first[f->depth + 1] = true;
        /* Members show as struct.member or array[i].member. */
        w->path[f->depth] = NULL;
        if (f->item == NTL_ETL_ITEM_STRUCT_BEGIN && f->in_array) {
            snprintf(w->elem[f->depth], sizeof w->elem[0], "%s[%u]", f->name, f->index);
            w->path[f->depth] = w->elem[f->depth];
        } else if (f->item == NTL_ETL_ITEM_STRUCT_BEGIN) {
            w->path[f->depth] = f->name;
        }
        return 0;
    case NTL_ETL_ITEM_STRUCT_END:
        put(j, "}", 1);
        return 0;
    case NTL_ETL_ITEM_ARRAY_END:
        put(j, "]", 1);
        return 0;
    }
    return 0;
}

/* s after the n bytes in buf, cut as snprintf cuts; the new length. */
static size_t append(char *buf, size_t size, size_t n, const char *s)
{
    size_t len = strlen(s);
    if (len > size - 1 - n)
        len = size - 1 - n;
    memcpy(buf + n, s, len);
    buf[n + len] = '\0';
    return n + len;
}

/* "Group/Opcode" in buf (64 bytes), without snprintf. */
static void group_opcode(char *buf, const struct ntl_etl_event *ev)
{
    char g[32], o[32];
    size_t n = append(buf, 64, 0, etl_cli_group(ev->group, g, sizeof g));
    n = append(buf, 64, n, "/");
    append(buf, 64, n, etl_cli_opcode(ev->group, ev->opcode, o, sizeof o));
}

/* A kernel event's names: "Group/Opcode" kept in its template t (made once
 * a template: 22,630 changes between runs of events in net.4.5.2 each made
 * it anew), or without one from the last event's when they share it. */
static void kernel_names(struct etl_fields *f, const struct ntl_etl_event *ev,
                         struct etl_mof_tpl *t)
{
    unsigned key = 1u << 16 | (unsigned)ev->group << 8 | ev->opcode;
    f->provider = "Windows Kernel";
    if (t) {
        if (!t->event[0])
            group_opcode(t->event, ev);
        f->event = t->event;
        return;
    }
    f->event = f->event_buf;
    if (f->event_key == key)
        return;
    f->event_key = key;
    group_opcode(f->event_buf, ev);
}

/* What `= {0}` gives a struct ntl_error for every reader of it (its
 * strings empty) without clearing its 320 bytes per event (`rep stos`). */
static void error_clear(struct ntl_error *e)
{
    e->status = 0;
    e->offset = 0;
    e->structure[0] = e->message[0] = '\0';
}

/* PERFINFO headers carry no process id; the payload's tells it. */
static void payload_pid(struct etl_fields *f, const struct ntl_etl_field *it)
{
    if (f->pid == UINT32_MAX && it->depth == 0 && it->size == 4 &&
        (!strcmp(it->name, "ProcessId") || !strcmp(it->name, "PID") ||
         !strcmp(it->name, "StackProcess")))
        f->pid = (uint32_t)ntl_etl_field_u64(it);
}

static int mof_next(void *d, struct ntl_etl_field *f, struct ntl_error *err);

/* Starts a walk's object: w set for its fields. */
static void walk_begin(struct etl_fields *f, struct walk *w, bool static_names)
{
    /* Not zeroed whole: its 1.4 KB of element names were 7% of a kernel trace's
     * JSON; each depth's entries are set where it begins. */
    w->out = f;
    w->static_names = static_names;
    w->first[0] = true;
    put(&f->json, "{", 1);
    put(&f->text, "", 0);
}

/* A kernel class's pointer array (StackWalk's return addresses) after its
 * ARRAY_BEGIN a: its elements as the decoder would give them, written by
 * array_pointer, the decoder moved past them (a decoder call each was a
 * third of such an element's instructions). Nothing when JSON is not the
 * only form or a is no pointer array. */
static void kernel_pointers(struct walk *w, struct ntl_etl_mof *dec, const struct ntl_etl_field *a)
{
    const uint8_t *data;
    int size;
    if (!w->out->text.off || a->in_type != NTL_ETL_IN_POINTER ||
        (size = ntl_etl_mof_skip_pointers(dec, &data)) < 0)
        return;
    struct ntl_etl_field e = {.item = NTL_ETL_ITEM_VALUE, .name = a->name, .depth = 1,
                              .in_array = true, .in_type = NTL_ETL_IN_POINTER,
                              .size = (size_t)size};
    for (uint32_t i = 0; i < a->count; i++) {
        e.index = i;
        e.payload_offset = a->payload_offset + i * e.size;
        e.data = data + i * e.size;
        array_pointer(w, &e);
    }
}

/* Walks the rest of a decoder's items (TraceLogging or MOF) into json and
 * text and ends the object. */
static int walk_rest(struct etl_fields *f, struct walk *w, void *dec,
                     int (*next)(void *, struct ntl_etl_field *, struct ntl_error *))
{
    struct ntl_etl_field it;
    struct ntl_error err;
    error_clear(&err);
    int rc;
    while ((rc = next(dec, &it, &err)) > 0) {
        if (!array_pointer(w, &it) && item(w, &it) < 0)
            return -1;
        payload_pid(f, &it);
        if (next == mof_next && it.item == NTL_ETL_ITEM_ARRAY_BEGIN)
            kernel_pointers(w, dec, &it);
    }
    put(&f->json, "}", 1);
    if (rc < 0)
        ntl_error_format(&err, f->error, sizeof f->error);
    else
        f->has_fields = true;
    return 0;
}

static int walk_items(struct etl_fields *f, void *dec,
                      int (*next)(void *, struct ntl_etl_field *, struct ntl_error *),
                      bool static_names)
{
    struct walk w;
    walk_begin(f, &w, static_names);
    return walk_rest(f, &w, dec, next);
}

/* How a template's fixed field is written straight into a JSON-only row,
 * as json_direct writes it. */
enum member_how { HOW_GENERAL, HOW_UNSIGNED, HOW_SIGNED, HOW_HEX };

static enum member_how member_how(const struct ntl_etl_field *f)
{
    enum ntl_etl_value_class cls = ntl_etl_field_class(f);
    if (f->map_text || f->custom || f->in_array ||
        (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8))
        return HOW_GENERAL;
    if (cls == NTL_ETL_VALUE_UNSIGNED && f->out_type != NTL_ETL_OUT_PORT)
        return HOW_UNSIGNED;
    if (cls == NTL_ETL_VALUE_SIGNED && f->out_type != NTL_ETL_OUT_PORT)
        return HOW_SIGNED;
    if (cls == NTL_ETL_VALUE_TEXT && hex_number(f) &&
        (f->out_type == NTL_ETL_OUT_NULL || f->out_type == NTL_ETL_OUT_HEX))
        return HOW_HEX; /* ntl_etl_field_text: 0x and 2 * size digits */
    return HOW_GENERAL;
}

static bool pid_name(const struct ntl_etl_field *f)
{
    return f->depth == 0 && f->size == 4 &&
           (!strcmp(f->name, "ProcessId") || !strcmp(f->name, "PID") ||
            !strcmp(f->name, "StackProcess"));
}

/* Fills t's members once its fixed fields are known. */
static void prepare(struct etl_mof_tpl *t)
{
    t->prepared = true;
    t->direct = true;
    t->direct_max = 2 + sizeof t->m[0].key; /* each key is copied whole */
    for (size_t i = 0; i < t->p.n; i++) {
        struct etl_tpl_member *m = &t->m[i];
        const struct ntl_etl_field *fi = &t->p.f[i];
        char key[6 * 64 + 3];
        size_t n = strlen(fi->name), len;
        m->how = (uint8_t)member_how(fi);
        m->pid = pid_name(fi);
        if (m->how == HOW_GENERAL || n > 64 ||
            (len = (size_t)(json_string_to(key, fi->name, n) - key)) + 1 > sizeof m->key) {
            t->direct = false;
            return;
        }
        memcpy(m->key, key, len);
        m->key[len] = ':';
        m->key_len = (uint8_t)(len + 1);
        t->direct_max += 1 + m->key_len + 24;
    }
}

/* One fixed member's value at d, as json_direct writes it; the end. */
static char *member_value(char *d, const struct etl_tpl_member *m, const uint8_t *p, size_t size)
{
    uint64_t v = size == 1 ? p[0] : size == 2 ? ntl_le16(p) : size == 4 ? ntl_le32(p) : ntl_le64(p);
    if (m->how == HOW_HEX) {
        memcpy(d, "\"0x", 3);
        d += 3;
        /* A constant count for each size: unrolled, no loop branch to mispredict. */
        d = size == 8 ? hex_bytes(d, p, 8) : size == 4 ? hex_bytes(d, p, 4) : hex_bytes(d, p, size);
        *d++ = '"';
        return d;
    }
    if (m->how == HOW_SIGNED) {
        int64_t i = size == 1 ? (int8_t)v : size == 2 ? (int16_t)v : size == 4 ? (int32_t)v
                  : (int64_t)v;
        if (i < 0)
            *d++ = '-';
        v = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
    }
    return etl_decimal_to(d, v);
}

/* The fixed members of a JSON-only row in one reservation; false when
 * out of memory (json.failed says so). */
static bool direct_members(struct etl_fields *f, const struct etl_mof_tpl *t,
                           const struct ntl_etl_event *ev)
{
    char *d = room(&f->json, t->direct_max);
    if (!d)
        return false;
    *d++ = '{';
    for (size_t i = 0; i < t->p.n; i++) {
        const struct etl_tpl_member *m = &t->m[i];
        const uint8_t *p = ev->payload + t->p.f[i].payload_offset;
        if (i)
            *d++ = ',';
        /* All of key's bytes: a fixed-size copy is two moves, key_len's
         * was `rep movsq` and half of this function's time. */
        memcpy(d, m->key, sizeof m->key);
        d = member_value(d + m->key_len, m, p, t->p.f[i].size);
        if (m->pid && f->pid == UINT32_MAX)
            f->pid = ntl_le32(p);
    }
    done(&f->json, d);
    return true;
}

/* What walk_items writes for ev, from its layout's template t (ev's
 * payload holds t's fixed fields): them, then the decoder resumed after
 * them unless they were the whole payload. */
static int walk_template(struct etl_fields *f, struct etl_mof_tpl *t,
                         const struct ntl_etl_event *ev)
{
    struct walk w;
    struct ntl_etl_mof rest;
    size_t i = 0;
    if (!t->prepared)
        prepare(t);
    if (f->text.off && t->direct && direct_members(f, t, ev)) {
        w.out = f;
        w.static_names = true;
        w.first[0] = !t->p.n;
        put(&f->text, "", 0);
        i = t->p.n;
    } else {
        walk_begin(f, &w, true);
    }
    for (; i < t->p.n; i++) {
        struct ntl_etl_field it = t->p.f[i];
        it.data = ev->payload + it.payload_offset;
        if (value(&w, &it) < 0)
            return -1;
        payload_pid(f, &it);
    }
    if (t->p.whole && ev->payload_size == t->p.total) {
        put(&f->json, "}", 1);
        f->has_fields = true;
        return 0;
    }
    ntl_etl_mof_resume(&rest, &t->p, ev);
    return walk_rest(f, &w, &rest, mof_next);
}

/* A kernel event's fields: from its layout's template when its payload
 * holds the fixed fields, else walked. */
static int kernel_fields(struct etl_fields *f, const struct ntl_etl_event *ev,
                         struct etl_mof_tpl *t)
{
    struct ntl_etl_mof m;
    if (t && !t->known)
        return 0;
    if (t && ev->payload_size >= t->p.total)
        return walk_template(f, t, ev);
    if (ntl_etl_mof_begin(&m, ev) <= 0)
        return 0;
    return walk_items(f, &m, mof_next, true);
}

static int tl_next(void *d, struct ntl_etl_field *f, struct ntl_error *err)
{
    return ntl_etl_tl_next(d, f, err);
}

static int mof_next(void *d, struct ntl_etl_field *f, struct ntl_error *err)
{
    return ntl_etl_mof_next(d, f, err);
}

static int mf_next(void *d, struct ntl_etl_field *f, struct ntl_error *err)
{
    return ntl_etl_mf_next(d, f, err);
}

int etl_fields_add_manifest(struct etl_fields *f, struct ntl_etl_manifest *m)
{
    struct ntl_etl_manifest **p = realloc(f->manifests, (f->nmanifests + 1) * sizeof *p);
    if (!p || (!f->mf && !(f->mf = ntl_etl_mf_new()))) {
        if (p)
            f->manifests = p;
        ntl_etl_manifest_free(m);
        return -1;
    }
    f->manifests = p;
    p[f->nmanifests++] = m;
    memset(f->seen, 0, sizeof f->seen); /* the new manifest may name a provider */
    return 0;
}

int etl_fields_load_manifests(struct etl_fields *f, const struct opt_list *paths, const char *cmd)
{
    for (size_t i = 0; i < paths->n; i++) {
        struct ntl_etl_manifest *m;
        struct ntl_error err = {0};
        if (ntl_etl_manifest_load(paths->items[i], &m, &err) < 0)
            return cli_fail(cmd, &err, paths->items[i]);
        if (etl_fields_add_manifest(f, m) < 0)
            return cli_failf(cmd, "out of memory");
    }
    return 0;
}

/* The compiled manifest of the PE file at path. */
static int load_binary(const char *path, struct ntl_etl_manifest **m, struct ntl_error *err)
{
    struct ntl_buf b = {0};
    struct ntl_pe pe;
    const uint8_t *wevt, *msgs = NULL;
    size_t nwevt, nmsgs = 0;
    int rc = ntl_file_read(path, 1024u << 20, &b, err);
    if (rc < 0)
        return rc;
    if ((rc = ntl_pe_parse(b.data, b.len, &pe, err)) < 0) {
        ntl_buf_free(&b);
        return rc;
    }
    rc = ntl_pe_resource_find(&pe, "WEVT_TEMPLATE", 0, &wevt, &nwevt, err);
    if (rc == 0)
        rc = ntl_error_set(err, NTL_ERR_NOT_FOUND, "WEVT_TEMPLATE", NTL_NO_OFFSET,
                           "the binary has no WEVT_TEMPLATE resource");
    if (rc > 0)
        rc = ntl_pe_resource_find(&pe, NULL, NTL_PE_RT_MESSAGETABLE, &msgs, &nmsgs, err);
    if (rc >= 0)
        rc = ntl_etl_manifest_parse_wevt(wevt, nwevt, msgs, nmsgs, m, err);
    ntl_pe_free(&pe);
    ntl_buf_free(&b);
    return rc;
}

int etl_fields_load_binaries(struct etl_fields *f, const struct opt_list *paths, const char *cmd)
{
    for (size_t i = 0; i < paths->n; i++) {
        struct ntl_etl_manifest *m;
        struct ntl_error err = {0};
        if (load_binary(paths->items[i], &m, &err) < 0)
            return cli_fail(cmd, &err, paths->items[i]);
        if (etl_fields_add_manifest(f, m) < 0)
            return cli_failf(cmd, "out of memory");
    }
    return 0;
}

/* 1 when a manifest defines ev (decoded into f), 0 when none does, -1 out of memory. */
static int manifest_event(struct etl_fields *f, const struct ntl_etl_event *ev)
{
    struct ntl_error err;
    error_clear(&err);
    for (size_t i = 0; i < f->nmanifests; i++) {
        int rc = ntl_etl_mf_begin(f->mf, f->manifests[i], ev, &err);
        if (rc < 0)
            return -1;
        if (rc == 0)
            continue;
        f->provider = ntl_etl_mf_provider_name(f->mf);
        f->event = ntl_etl_mf_event_name(f->mf);
        return walk_items(f, f->mf, mf_next, false) < 0 ? -1 : 1;
    }
    return 0;
}

/* The provider's name from the well-known table or a manifest, looked up
 * once per GUID (the table is searched by GUID text). */
static const char *provider_name(struct etl_fields *f, const struct ntl_guid *g)
{
    /* Two independent products: a byte-by-byte chain of 16 multiplies was
     * 2-4% of etl events on a trace of CLR events. The slot only caches. */
    uint64_t h = ntl_le64(g->b) * 0x9e3779b97f4a7c15ull ^ ntl_le64(g->b + 8) * 0xc2b2ae3d27d4eb4full;
    h ^= h >> 29;
    struct etl_provider_seen *e = &f->seen[(h >> 32) % ETL_PROVIDERS_SEEN];
    if (e->known && ntl_guid_equal(&e->guid, g))
        return e->name;
    const char *name = ntl_etl_provider_name(g);
    for (size_t i = 0; !name && i < f->nmanifests; i++)
        name = ntl_etl_manifest_provider_name(f->manifests[i], g);
    *e = (struct etl_provider_seen){*g, name, true};
    return name;
}

int etl_fields_decode(struct etl_fields *f, const struct ntl_etl_event *ev)
{
    struct ntl_etl_tl d;
    struct ntl_error err;
    error_clear(&err);
    int rc = 0;

    f->provider = f->event = NULL;
    f->tpl = NULL;
    f->has_fields = f->self_named = false;
    f->pid = ev->pid;
    f->error[0] = '\0';
    f->json.len = f->text.len = 0;
    f->json.failed = f->text.failed = false;
    if (ev->kind <= NTL_ETL_KIND_PERFINFO) {
        f->tpl = etl_mof_tpl_find(&f->mof_tpls, ev);
        kernel_names(f, ev, f->tpl);
        rc = kernel_fields(f, ev, f->tpl);
    } else {
        if (ev->has_guid)
            f->provider = provider_name(f, &ev->guid);
        if (f->nmanifests && ev->has_guid && (rc = manifest_event(f, ev)) != 0) {
            rc = rc < 0 ? -1 : 0;
        } else if (ev->ext && ev->ext_size && /* TraceLogging's schema is an extended item */
                   (rc = ntl_etl_tl_begin(&d, ev, &err)) > 0) {
            f->self_named = true;
            f->event = d.event_name;
            if (d.provider_name)
                f->provider = d.provider_name;
            rc = walk_items(f, &d, tl_next, false);
        } else if (rc < 0) {
            ntl_error_format(&err, f->error, sizeof f->error);
            rc = 0;
        }
    }
    return rc < 0 || f->json.failed || f->text.failed ? -1 : 0;
}

void etl_fields_free(struct etl_fields *f)
{
    for (size_t i = 0; i < f->nmanifests; i++)
        ntl_etl_manifest_free(f->manifests[i]);
    free(f->manifests);
    ntl_etl_mf_free(f->mf);
    etl_mof_tpl_free(f->mof_tpls);
    free(f->json.s);
    free(f->text.s);
}
