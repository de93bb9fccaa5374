/* `etl events` records (etl-record.h): cell by cell through the writer for
 * CSV, TSV and JSON with extra columns; JSON rows otherwise from per-layout
 * templates. A trace has a few hundred layouts and hundreds of thousands of
 * events; the cell path spent 40% of the command on 27 cells a row. */
#include "etl-record.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "etl-decimal.h"
#include "etl-keywords.h"
#include "etl-mof-tpl.h"
#include "ntlens/reader.h"

static const char *const keys[] = {
    "timestamp", "clock", "cpu", "pid", "tid", "kind", "provider", "group", "hook_id",
    "opcode", "opcode_name", "event_id", "message_number", "level", "task", "keyword",
    "extended_types", "pebs_index", "pmc_count", "version", "payload_size", "offset",
};
enum { KEY_KIND = 5, KEY_PROVIDER = 6, KEY_EXTENDED = 16, NKEYS = 22 };

/* keys[from..to), with the provider's name before its GUID unless raw. */
static void columns(struct out *o, bool raw, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        if (!raw && i == KEY_PROVIDER)
            out_column(o, "provider", NULL, OUT_LEFT);
        out_column(o, !raw && i == KEY_PROVIDER ? "provider_guid" : keys[i], NULL, OUT_LEFT);
    }
}

static void name_columns(struct out *o)
{
    out_column(o, "event", NULL, OUT_LEFT);
    out_column(o, "level_name", NULL, OUT_LEFT);
    out_column(o, "keyword_names", NULL, OUT_LEFT);
}

void etl_record_columns(struct out *o, bool hex, bool raw)
{
    columns(o, raw, 0, NKEYS);
    if (!raw) {
        name_columns(o);
        out_column(o, "fields", NULL, OUT_LEFT);
        out_column(o, "decode_error", NULL, OUT_LEFT);
    }
    if (hex)
        out_column(o, "payload", NULL, OUT_LEFT);
}

static void cell_id(struct out *o, uint32_t v)
{
    if (v == UINT32_MAX)
        out_null(o);
    else
        out_u64(o, v);
}

void etl_cell_provider(struct out *o, const struct ntl_etl_event *ev, const char *name)
{
    char buf[64];
    if (name)
        out_str(o, name);
    else if (ev->has_guid)
        out_str(o, ntl_guid_format(&ev->guid, buf, sizeof buf));
    else
        out_null(o);
}

/* "12,11": the types of an event's extended data items, in order (at
 * most 256 bytes with the NUL, as the list was always cut); the length. */
static size_t extended_types(const struct ntl_etl_event *ev, char *buf)
{
    struct ntl_etl_ext_item item;
    size_t pos = 0, n = 0;
    /* A malformed item ends the list; the reader checked the items already. */
    for (int i = 0; ntl_etl_ext_next(ev, &pos, &item, NULL) > 0 && n < 256 - 8; i++) {
        if (i)
            buf[n++] = ',';
        n = (size_t)(etl_decimal_to(buf + n, item.type) - buf);
    }
    buf[n] = '\0';
    return n;
}

static void cell_extended_types(struct out *o, const struct ntl_etl_event *ev)
{
    char buf[256];
    if (ev->kind != NTL_ETL_KIND_EVENT) {
        out_null(o);
        return;
    }
    extended_types(ev, buf);
    out_str(o, buf);
}

static void kernel_cells(struct out *o, const struct ntl_etl_event *ev)
{
    static const char hex[] = "0123456789abcdef";
    char buf[64], hook[7] = {'0', 'x', hex[ev->hook_id >> 12], hex[(ev->hook_id >> 8) & 15],
                             hex[(ev->hook_id >> 4) & 15], hex[ev->hook_id & 15], 0};
    out_null(o); /* provider */
    out_str(o, etl_cli_group(ev->group, buf, sizeof buf));
    out_num_text(o, ev->hook_id, hook); /* "0x%04x", printf costing more than the row */
    out_u64(o, ev->opcode);
    out_str(o, etl_cli_opcode(ev->group, ev->opcode, buf, sizeof buf));
    for (int i = 0; i < 5; i++) /* event_id .. keyword */
        out_null(o);
}

static void provider_cells(struct out *o, const struct ntl_etl_event *ev)
{
    char buf[64];
    bool event = ev->kind == NTL_ETL_KIND_EVENT;
    if (ev->has_guid)
        out_str(o, ntl_guid_format(&ev->guid, buf, sizeof buf));
    else
        out_null(o);
    out_null(o); /* group */
    out_null(o); /* hook_id */
    out_u64(o, ev->opcode);
    out_null(o); /* opcode_name */
    event ? out_u64(o, ev->event_id) : out_null(o);
    ev->kind == NTL_ETL_KIND_MESSAGE ? out_u64(o, ev->message_number) : out_null(o);
    event ? out_u64(o, ev->level) : out_null(o);
    event ? out_u64(o, ev->task) : out_null(o);
    /* A 64-bit mask: a hex string, as JSON numbers above 2^53 are rounded. */
    event ? out_addr(o, ev->keyword, 16) : out_null(o);
}

/* kind .. keyword: the cells an event's layout fixes. */
static void layout_cells(struct out *o, const struct ntl_etl_event *ev, const struct etl_fields *f,
                         bool raw)
{
    out_str(o, ntl_etl_kind_name(ev->kind));
    if (!raw)
        etl_cell_provider(o, ev, f->provider);
    (etl_is_kernel(ev) ? kernel_cells : provider_cells)(o, ev);
}

/* event, level_name, keyword_names (the last two of EVENT_HEADER events only). */
static void name_cells(struct out *o, const struct etl_fields *f, const struct ntl_etl_event *ev)
{
    char buf[512];
    const char *level = ev->kind == NTL_ETL_KIND_EVENT ? etl_level_name(f, ev) : NULL;
    f->event ? out_str(o, f->event) : out_null(o);
    level ? out_str(o, level) : out_null(o);
    if (ev->kind != NTL_ETL_KIND_EVENT) {
        out_null(o);
        return;
    }
    etl_keyword_names(f, ev, buf, sizeof buf);
    out_str(o, buf);
}

static void cell_fields(struct out *o, const struct etl_fields *f)
{
    if (f->has_fields)
        out_json(o, f->text.s ? f->text.s : "", f->json.s ? f->json.s : "{}");
    else
        out_null(o);
}

static int cells_row(const struct etl_record *r, struct out *o, struct etl_cli *c,
                     const struct ntl_etl_event *ev, const struct etl_fields *f)
{
    etl_cli_out_time(o, c, ev->timestamp);
    out_u64(o, ev->timestamp);
    out_u64(o, ev->cpu);
    cell_id(o, r->raw ? ev->pid : f->pid);
    cell_id(o, ev->tid);
    layout_cells(o, ev, f, r->raw);
    cell_extended_types(o, ev);
    ev->has_pebs ? out_u64(o, ev->pebs_index) : out_null(o);
    ev->pmc_count ? out_u64(o, ev->pmc_count) : out_null(o);
    out_u64(o, ev->version);
    out_u64(o, ev->payload_size);
    out_u64(o, ev->offset);
    if (!r->raw) {
        name_cells(o, f, ev);
        cell_fields(o, f);
        f->error[0] ? out_str(o, f->error) : out_null(o);
    }
    if (r->hex) {
        char *h = etl_cli_hex(ev->payload, ev->payload_size);
        if (!h)
            return cli_failf(c->cmd, "out of memory");
        out_str(o, h);
        free(h);
    }
    return out_row_end(o) < 0 ? EXIT_FAIL : EXIT_OK;
}

/* ---- JSON rows from templates ---- */

/* What fixes a layout's cells. Names come from the header (kernel groups,
 * the provider table, manifests) but for TraceLogging events, whose names
 * travel in the event: those are compared too. */
/* A layout's identity as six words, each built whole: the hash reads them
 * from registers (byte-wide stores into a struct then read as words stalled
 * store forwarding, 40% of the lookup). */
struct layout_key {
    uint64_t w[6];
};

struct layout {
    struct layout_key key;
    uint64_t hash;
    bool used;
    char *provider, *event;       /* the names rendered (non-kernel events) */
    bool by_pointer;              /* the names were a table's or a manifest's constants: */
    const char *provider_at, *event_at; /* the same pointers are the same names */
    struct etl_row_frags row;
};

/* Layouts beyond this (a trace of TraceLogging events each named anew) go
 * cell by cell: the table's memory stays bounded. */
#define MAX_LAYOUTS 32768u
/* Names longer than this are rendered cell by cell (a scratch writer holds
 * a fragment in its 64 KiB buffer). */
#define MAX_NAMES 4096u

/* An event's time text: the seconds' part is the same for runs of events. */
struct time_text {
    int64_t secs;
    bool valid;
    size_t len, dot;              /* the text's length, its '.' (SIZE_MAX: none) */
    char text[64];                /* as out_format_time writes secs with fraction 0 */
};

/* A cell's digits kept from the last row: in net.4.5.2 a row's pid is the
 * last row's in 84% of rows, its tid in 90%. (Its offset, a compressed
 * buffer's for all its events, is in 50%: kept, it was no faster, a branch
 * taken at random.) */
struct kept_number {
    uint64_t v;
    size_t len;                   /* 0: nothing kept yet */
    char text[20];                /* the most digits a uint64_t has */
};

struct etl_layouts {
    struct time_text time;
    struct kept_number clock_high, pid, tid; /* clock_high: the clock / 10^4 */
    struct out *head_w, *names_w; /* scratch writers (JSON lines, rows held) */
    struct layout *slots;
    size_t cap, n;
};

int etl_record_templates(struct etl_record *r, enum out_format fmt, bool file_column)
{
    struct etl_layouts *l;
    if ((fmt != OUT_JSON && fmt != OUT_JSONL) || r->hex || file_column)
        return 0;
    if (!(l = calloc(1, sizeof *l)))
        return -1;
    r->layouts = l;
    l->cap = 256;
    if (!(l->slots = calloc(l->cap, sizeof *l->slots)) || !(l->head_w = out_new(stdout, OUT_JSONL)) ||
        !(l->names_w = out_new(stdout, OUT_JSONL)))
        return -1;
    out_hold_rows(l->head_w);
    out_hold_rows(l->names_w);
    columns(l->head_w, r->raw, KEY_KIND, KEY_EXTENDED);
    name_columns(l->names_w);
    return 0;
}

static void free_layout(struct layout *s)
{
    free(s->provider);
    free(s->event);
    free(s->row.head);
    free(s->row.names);
}

void etl_record_free(struct etl_record *r)
{
    struct etl_layouts *l = r->layouts;
    if (!l)
        return;
    for (size_t i = 0; l->slots && i < l->cap; i++)
        free_layout(&l->slots[i]);
    free(l->slots);
    /* Nothing is held: each fragment was taken. */
    out_close(l->head_w);
    out_close(l->names_w);
    free(l);
    r->layouts = NULL;
}

static bool self_named(const struct ntl_etl_event *ev, const struct etl_fields *f)
{
    return !etl_is_kernel(ev) && f->self_named;
}

static void make_key(struct layout_key *k, const struct ntl_etl_event *ev)
{
    k->w[0] = (uint64_t)ev->kind | (uint64_t)ev->version << 32 | (uint64_t)ev->opcode << 48;
    if (etl_is_kernel(ev)) {
        k->w[1] = k->w[2] = k->w[3] = k->w[4] = 0;
        k->w[5] = ev->group | (uint64_t)ev->hook_id << 8;
        return;
    }
    k->w[1] = ev->has_guid | (uint64_t)ev->event_id << 8 | (uint64_t)ev->message_number << 24 |
              (uint64_t)ev->level << 40 | (uint64_t)ev->task << 48;
    k->w[2] = ev->keyword;
    k->w[3] = ntl_le64(ev->guid.b);
    k->w[4] = ntl_le64(ev->guid.b + 8);
    k->w[5] = 0;
}

static uint64_t mix_string(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static uint64_t key_hash(const struct layout_key *k, const struct ntl_etl_event *ev,
                         const struct etl_fields *f)
{
    /* Independent products, one mix: a chain of six was 3% of the command. */
    static const uint64_t odd[6] = {0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull,
                                    0xd6e8feb86659fd93ull, 0xff51afd7ed558ccdull, 0xc4ceb9fe1a85ec53ull};
    uint64_t h = 0;
    for (int i = 0; i < 6; i++)
        h += k->w[i] * odd[i];
    h ^= h >> 32;
    if (self_named(ev, f))
        h = mix_string(mix_string(h, f->provider) * 31, f->event);
    return h;
}

static bool same_name(const char *a, const char *b)
{
    return a && b ? !strcmp(a, b) : a == b;
}

static bool matches(const struct layout *s, const struct layout_key *k, uint64_t h,
                    const struct ntl_etl_event *ev, const struct etl_fields *f)
{
    if (s->hash != h || memcmp(&s->key, k, sizeof *k))
        return false;
    if (etl_is_kernel(ev) || (s->by_pointer && !f->self_named && s->provider_at == f->provider &&
                              s->event_at == f->event))
        return true;
    return same_name(s->provider, f->provider) && same_name(s->event, f->event);
}

/* The row the scratch writer holds, "{...}\n", as ",..." in *frag. */
static int take_fragment(struct out *w, char **frag, size_t *len)
{
    char buf[2 * MAX_NAMES * 6 + 4096];
    out_row_end(w); /* out of memory shows as nothing taken */
    size_t n = out_take(w, buf, sizeof buf);
    if (n < 3 || !(*frag = malloc(n - 2)))
        return -1;
    (*frag)[0] = ',';
    memcpy(*frag + 1, buf + 1, n - 3);
    *len = n - 2;
    return 0;
}

static char *copy_name(const char *s, bool *failed)
{
    char *p = s ? strdup(s) : NULL;
    if (s && !p)
        *failed = true;
    return p;
}

/* Renders ev's layout into s by the cells' own code, so the fragments are
 * what the cells would write. */
static int render(struct etl_layouts *l, bool raw, struct layout *s, const struct ntl_etl_event *ev,
                  const struct etl_fields *f)
{
    bool failed = false;
    layout_cells(l->head_w, ev, f, raw);
    if (take_fragment(l->head_w, &s->row.head, &s->row.head_len) < 0)
        return -1;
    if (!raw) {
        name_cells(l->names_w, f, ev);
        if (take_fragment(l->names_w, &s->row.names, &s->row.names_len) < 0)
            return -1;
    }
    if (!etl_is_kernel(ev)) {
        s->provider = copy_name(f->provider, &failed);
        s->event = copy_name(f->event, &failed);
        s->by_pointer = !f->self_named;
        s->provider_at = f->provider;
        s->event_at = f->event;
    }
    s->used = true;
    return failed ? -1 : 0;
}

static int grow(struct etl_layouts *l)
{
    size_t cap = 2 * l->cap;
    struct layout *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < l->cap; i++) {
        if (!l->slots[i].used)
            continue;
        size_t j = l->slots[i].hash & (cap - 1);
        while (slots[j].used)
            j = (j + 1) & (cap - 1);
        slots[j] = l->slots[i];
    }
    free(l->slots);
    l->slots = slots;
    l->cap = cap;
    return 0;
}

/* ev's layout, rendered on first sight; NULL when it goes cell by cell
 * (too many layouts, names too long); *failed when out of memory. */
static const struct layout *find(struct etl_layouts *l, bool raw, const struct ntl_etl_event *ev,
                                 const struct etl_fields *f, bool *failed)
{
    struct layout_key k;
    make_key(&k, ev);
    uint64_t h = key_hash(&k, ev, f);
    size_t i = h & (l->cap - 1);
    for (; l->slots[i].used; i = (i + 1) & (l->cap - 1))
        if (matches(&l->slots[i], &k, h, ev, f))
            return &l->slots[i];
    if (l->n >= MAX_LAYOUTS || (f->provider && strlen(f->provider) > MAX_NAMES) ||
        (f->event && strlen(f->event) > MAX_NAMES))
        return NULL;
    if (2 * (l->n + 1) > l->cap) {
        if (grow(l) < 0) {
            *failed = true;
            return NULL;
        }
        for (i = h & (l->cap - 1); l->slots[i].used; i = (i + 1) & (l->cap - 1))
            ;
    }
    struct layout *s = &l->slots[i];
    s->key = k;
    s->hash = h;
    l->n++;
    if (render(l, raw, s, ev, f) < 0)
        *failed = true;
    return s;
}

#define LIT(d, s) (memcpy((d), (s), sizeof(s) - 1), (d) + sizeof(s) - 1)

/* v in decimal: the last row's digits when it is the same. All 20 bytes
 * are copied (one fixed-size move): the row's reservation (ROW_FIXED) has
 * room past them, and the next cells overwrite them. */
static char *kept_to(char *d, uint64_t v, struct kept_number *t)
{
    if (!t->len || t->v != v) {
        t->len = (size_t)(etl_decimal_to(t->text, v) - t->text);
        t->v = v;
    }
    memcpy(d, t->text, sizeof t->text);
    return d + t->len;
}

/* "clock": rows in time order share all but its last digits (net.4.5.2:
 * 10 digits in 100 ns, the next row ~80 us on), so those before the last
 * four are kept, the last four written as two pairs. */
static char *clock_to(char *d, uint64_t v, struct kept_number *high)
{
    uint64_t h = v / 10000;
    if (!h)
        return etl_decimal_to(d, v);
    d = kept_to(d, h, high);
    uint32_t low = (uint32_t)(v - h * 10000);
    memcpy(d, etl_digit_pairs + 2 * (low / 100), 2);
    memcpy(d + 2, etl_digit_pairs + 2 * (low % 100), 2);
    return d + 4;
}

static char *id_to(char *d, uint32_t v, struct kept_number *t)
{
    return v == UINT32_MAX ? LIT(d, "null") : kept_to(d, v, t);
}

/* "timestamp": as out_filetime writes it. */
static char *time_to(char *d, uint64_t ft, struct time_text *t)
{
    const int64_t unix_epoch = 116444736000000000ll; /* 1970-01-01 in 100 ns since 1601 */
    if (!ft || ft > INT64_MAX)
        return LIT(d, "null");
    int64_t rel = (int64_t)ft - unix_epoch, secs = (rel >= 0 ? rel : rel - 9999999) / 10000000;
    uint32_t frac = (uint32_t)(rel - secs * 10000000);
    if (!t->valid || t->secs != secs) {
        out_format_time(t->text, sizeof t->text, secs, 0, 7);
        t->len = strlen(t->text);
        const char *dot = memchr(t->text, '.', t->len);
        t->dot = dot ? (size_t)(dot - t->text) : SIZE_MAX;
        t->secs = secs;
        t->valid = true;
    }
    *d++ = '"';
    if (t->dot == SIZE_MAX) {
        out_format_time(d, 64, secs, frac, 7);
        d += strlen(d);
    } else {
        memcpy(d, t->text, t->len);
        char *q = d + t->dot + 8; /* after the 7 digits of 100 ns */
        for (int i = 0; i < 3; i++, frac /= 100) {
            q -= 2;
            memcpy(q, etl_digit_pairs + 2 * (frac % 100), 2);
        }
        q[-1] = (char)('0' + frac);
        d += t->len;
    }
    *d++ = '"';
    return d;
}

/* The row's cells around the layout's fragments. */
static char *json_row(char *d, const struct etl_row_frags *s, const struct etl_record *r, uint64_t ft,
                      const struct ntl_etl_event *ev, const struct etl_fields *f)
{
    struct etl_layouts *l = r->layouts;
    d = LIT(d, "{\"timestamp\":");
    d = time_to(d, ft, &l->time);
    d = clock_to(LIT(d, ",\"clock\":"), ev->timestamp, &l->clock_high);
    d = etl_decimal_to(LIT(d, ",\"cpu\":"), ev->cpu);
    d = id_to(LIT(d, ",\"pid\":"), r->raw ? ev->pid : f->pid, &l->pid);
    d = id_to(LIT(d, ",\"tid\":"), ev->tid, &l->tid);
    memcpy(d, s->head, s->head_len);
    d = LIT(d + s->head_len, ",\"extended_types\":");
    if (ev->kind == NTL_ETL_KIND_EVENT) {
        *d++ = '"';
        d += extended_types(ev, d);
        *d++ = '"';
    } else {
        d = LIT(d, "null");
    }
    d = LIT(d, ",\"pebs_index\":");
    d = ev->has_pebs ? etl_decimal_to(d, ev->pebs_index) : LIT(d, "null");
    d = LIT(d, ",\"pmc_count\":");
    d = ev->pmc_count ? etl_decimal_to(d, ev->pmc_count) : LIT(d, "null");
    d = etl_decimal_to(LIT(d, ",\"version\":"), ev->version);
    d = etl_decimal_to(LIT(d, ",\"payload_size\":"), ev->payload_size);
    d = etl_decimal_to(LIT(d, ",\"offset\":"), ev->offset);
    if (!r->raw) {
        memcpy(d, s->names, s->names_len);
        d = LIT(d + s->names_len, ",\"fields\":");
        if (!f->has_fields)
            d = LIT(d, "null");
        else if (f->json.s)
            memcpy(d, f->json.s, f->json.len), d += f->json.len;
        else
            d = LIT(d, "{}");
        d = LIT(d, ",\"decode_error\":");
        d = f->error[0] ? out_json_string_to(d, f->error, strlen(f->error)) : LIT(d, "null");
    }
    *d++ = '}';
    return d;
}

/* The most json_row writes besides the fragments, fields and error. */
#define ROW_FIXED 1024

/* ev's row fragments: its kernel template's when kept there, else its
 * layout's, then kept in the template (the reader sets a kernel event's
 * group and opcode from its hook id, which the layout's key holds too);
 * NULL as find. */
static const struct etl_row_frags *row_frags(struct etl_layouts *l, bool raw,
                                             const struct ntl_etl_event *ev,
                                             const struct etl_fields *f, bool *failed)
{
    struct etl_mof_tpl *t = etl_is_kernel(ev) ? f->tpl : NULL;
    if (t && t->row.head)
        return &t->row;
    const struct layout *s = find(l, raw, ev, f, failed);
    if (!s || *failed)
        return NULL;
    if (t && ev->hook_id == (ev->group << 8 | ev->opcode))
        t->row = s->row;
    return &s->row;
}

int etl_record_row(struct etl_record *r, struct out *o, struct etl_cli *c,
                   const struct ntl_etl_event *ev, const struct etl_fields *f, uint64_t ft)
{
    bool failed = false;
    const struct etl_row_frags *s = r->layouts ? row_frags(r->layouts, r->raw, ev, f, &failed)
                                               : NULL;
    char *d;
    if (failed)
        return cli_failf(c->cmd, "out of memory");
    size_t need = s ? ROW_FIXED + s->head_len + s->names_len : 0;
    if (s && !r->raw)
        need += (f->has_fields ? f->json.len : 0) + (f->error[0] ? 6 * strlen(f->error) : 0);
    if (!s || !(d = out_json_row_begin(o, need)))
        return cells_row(r, o, c, ev, f);
    return out_json_row_end(o, json_row(d, s, r, ft, ev, f)) < 0 ? EXIT_FAIL : EXIT_OK;
}
