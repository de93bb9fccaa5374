/* The output writer (out.h): cells are kept as the text each format shows,
 * in one arena per row, so rendering is copying into a buffer that goes to
 * the FILE once per row (or once per 64 KiB, out_hold_rows); only a table
 * waits for its widths. JSON cells skip the arena: each goes straight to
 * the buffer. */
#include "out.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "progress.h"

/* CELL_PLAIN: a string that needs no JSON escaping (times, addresses). */
enum cell_kind { CELL_STR, CELL_PLAIN, CELL_NUM, CELL_NULL };

/* No cell owns memory: its texts are offsets into the writer's arena, which
 * holds the row being built (or every row of a buffered table). */
#define NO_TEXT SIZE_MAX

struct cell {
    enum cell_kind kind;
    size_t text, text_len;   /* what table, CSV and TSV show */
    size_t json, json_len;   /* the JSON literal when it differs (numbers shown as text) */
};

struct column {
    char *key;
    char *title;
    char *json_key;   /* "key": as JSON writes it */
    size_t json_key_len;
    enum out_align align;
    int width;    /* 0: measured from the rows */
};

/* Rendered text goes to a buffer that is handed to the FILE in one fwrite
 * at the end of each call that writes, so callers interleave their own
 * writes (hex dumps under table rows) exactly as before. */
#define OUT_BUF 65536

struct out {
    FILE *f;
    enum out_format fmt;
    struct column *cols;
    size_t ncols;
    struct cell *cells;      /* row-major: buffered table rows, else the row being built */
    size_t ncells, capcells;
    char *arena;             /* the cells' texts, each NUL-terminated */
    size_t arena_len, arena_cap;
    int *indent;             /* per buffered row */
    size_t capindent;
    int next_indent;
    unsigned sections;       /* named sections begun */
    bool opened;             /* JSON's opening bracket is out */
    bool header_done;        /* the header of this section is out (every format but JSON) */
    uint64_t rows;
    bool failed;             /* out of memory or a write error */
    bool hold;               /* rows wait in buf until it fills (out_hold_rows) */
    /* The FILE written since its error flag was last asked, and the answer:
     * holding rows, nothing else writes to it, so the flag (sticky) is
     * asked only after a write; ferror takes the FILE's lock once a
     * program has a second thread (etl events decompressing ahead). */
    bool wrote, file_error;
    size_t buf_len;
    char buf[OUT_BUF];
};

const char *const out_format_names[] = {"table", "csv", "tsv", "json", "jsonl", NULL};

static bool local_time;

void out_set_local_time(bool local)
{
    local_time = local;
}

int out_local_time_cb(const struct opt *o, const char *arg, void *ctx)
{
    (void)o, (void)arg, (void)ctx;
    local_time = true;
    return 0;
}

static char *dup_text(struct out *o, const char *s)
{
    char *p = strdup(s);
    if (!p)
        o->failed = true;
    return p;
}

struct out *out_new(FILE *f, enum out_format fmt)
{
    struct out *o = calloc(1, sizeof *o);
    if (o) {
        o->f = f;
        o->fmt = fmt;
    }
    return o;
}

static void free_cells(struct out *o)
{
    o->ncells = 0;
    o->arena_len = 0;
}

static void free_columns(struct out *o)
{
    for (size_t i = 0; i < o->ncols; i++) {
        free(o->cols[i].key);
        free(o->cols[i].title);
        free(o->cols[i].json_key);
    }
    free(o->cols);
    o->cols = NULL;
    o->ncols = 0;
}

/* "elapsed_time" -> "Elapsed Time". */
static char *title_from_key(struct out *o, const char *key)
{
    char *t = dup_text(o, key);
    for (char *p = t; p && *p; p++) {
        if (*p == '_')
            *p = ' ';
        else if ((p == t || p[-1] == ' ') && *p >= 'a' && *p <= 'z')
            *p = (char)(*p - 'a' + 'A');
    }
    return t;
}

static char *json_key_text(struct out *o, const char *key, size_t *len);

void out_column(struct out *o, const char *key, const char *title, enum out_align align)
{
    struct column *c = realloc(o->cols, (o->ncols + 1) * sizeof *c);
    if (!c) {
        o->failed = true;
        return;
    }
    o->cols = c;
    c += o->ncols;
    size_t json_len = 0;
    char *json = json_key_text(o, key, &json_len);
    *c = (struct column){dup_text(o, key), title ? dup_text(o, title) : title_from_key(o, key),
                         json, json_len, align, 0};
    if (!c->key || !c->title || !c->json_key) {
        free(c->key);
        free(c->title);
        free(c->json_key);
        return;
    }
    o->ncols++;
}

void out_column_width(struct out *o, int width)
{
    if (o->ncols)
        o->cols[o->ncols - 1].width = width;
}

/* ---- cells ---- */

/* Copies s (n bytes and a NUL) to the arena; NO_TEXT when out of memory. */
static size_t arena_add(struct out *o, const char *s, size_t n)
{
    if (o->arena_len + n + 1 > o->arena_cap) {
        size_t cap = o->arena_cap ? o->arena_cap : 4096;
        while (cap < o->arena_len + n + 1)
            cap *= 2;
        char *a = realloc(o->arena, cap);
        if (!a) {
            o->failed = true;
            return NO_TEXT;
        }
        o->arena = a;
        o->arena_cap = cap;
    }
    size_t at = o->arena_len;
    memcpy(o->arena + at, s, n);
    o->arena[at + n] = '\0';
    o->arena_len += n + 1;
    return at;
}

static bool json_streams(const struct out *o)
{
    return (o->fmt == OUT_JSON || o->fmt == OUT_JSONL) && o->ncols;
}

static void json_cell(struct out *o, enum cell_kind kind, const char *text, size_t text_len,
                      const char *json);

static void add_cell_n(struct out *o, enum cell_kind kind, const char *text, size_t text_len,
                       const char *json)
{
    struct cell c = {kind, 0, text_len, NO_TEXT, 0};
    if (json_streams(o)) {
        json_cell(o, kind, text, text_len, json);
        return;
    }
    if (o->ncells == o->capcells) {
        size_t cap = o->capcells ? 2 * o->capcells : 64;
        struct cell *p = realloc(o->cells, cap * sizeof *p);
        if (!p) {
            o->failed = true;
            return;
        }
        o->cells = p;
        o->capcells = cap;
    }
    if ((c.text = arena_add(o, text, text_len)) == NO_TEXT)
        return;
    if (json && (c.json = arena_add(o, json, c.json_len = strlen(json))) == NO_TEXT)
        return;
    o->cells[o->ncells++] = c;
}

static void add_cell(struct out *o, enum cell_kind kind, const char *text, const char *json)
{
    add_cell_n(o, kind, text, strlen(text), json);
}

static const char *cell_text(const struct out *o, const struct cell *c)
{
    return o->arena + c->text;
}

void out_str(struct out *o, const char *s)
{
    add_cell(o, CELL_STR, s ? s : "", NULL);
}

void out_strf(struct out *o, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    out_str(o, buf);
}

/* v in decimal, ending at end (written backwards, no NUL); returns its start.
 * printf's general machinery costs more than the rest of a cell. */
static char *decimal(char *end, uint64_t v)
{
    do
        *--end = (char)('0' + v % 10);
    while (v /= 10);
    return end;
}

void out_u64(struct out *o, uint64_t v)
{
    char buf[24], *s = decimal(buf + sizeof buf, v);
    add_cell_n(o, CELL_NUM, s, (size_t)(buf + sizeof buf - s), NULL);
}

void out_i64(struct out *o, int64_t v)
{
    char buf[24], *s = decimal(buf + sizeof buf, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
    if (v < 0)
        *--s = '-';
    add_cell_n(o, CELL_NUM, s, (size_t)(buf + sizeof buf - s), NULL);
}

/* The fewest significant digits that read back as v, in plain notation
 * where its exponent is from -4 to 15 (as Python's repr and JavaScript do:
 * 120, not 1.2e+02), else as an exponent. */
char *out_format_double(char *buf, size_t size, double v)
{
    int digits, exp;
    /* Whole numbers below 1e15 (counts, ids shown as numbers) print as
     * themselves: the search below would find the same text, 20x slower. */
    if (v != 0 && v > -1e15 && v < 1e15 && v == (double)(int64_t)v && size >= 24) {
        char tmp[24], *s = decimal(tmp + sizeof tmp, v < 0 ? (uint64_t)-(int64_t)v : (uint64_t)v);
        if (v < 0)
            *--s = '-';
        memcpy(buf, s, (size_t)(tmp + sizeof tmp - s));
        buf[tmp + sizeof tmp - s] = '\0';
        return buf;
    }
    for (digits = 1; digits < 17; digits++) {
        snprintf(buf, size, "%.*e", digits - 1, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    snprintf(buf, size, "%.*e", digits - 1, v);
    exp = atoi(strchr(buf, 'e') + 1);
    if (exp >= -4 && exp < 16)
        snprintf(buf, size, "%.*f", digits - 1 - exp > 0 ? digits - 1 - exp : 0, v);
    return buf;
}

static bool is_finite(double v)
{
    return v == v && v <= 1.7976931348623157e308 && v >= -1.7976931348623157e308;
}

void out_num(struct out *o, double v, int decimals)
{
    char text[64], json[40];
    if (!is_finite(v)) {
        out_null(o);
        return;
    }
    if (decimals < 0) {
        add_cell(o, CELL_NUM, out_format_double(json, sizeof json, v), NULL);
        return;
    }
    snprintf(text, sizeof text, "%.*f", decimals, v);
    /* Only JSON reads a number's shortest form beside its text: finding
     * it (printf and strtod per digit) was 5% of `ntlens profile --etl`'s
     * instructions, for a table that never prints it. */
    add_cell(o, CELL_NUM, text, json_streams(o) ? out_format_double(json, sizeof json, v) : NULL);
}

void out_num_text(struct out *o, double v, const char *text)
{
    char json[40];
    add_cell(o, CELL_NUM, text,
             !json_streams(o) ? NULL
             : is_finite(v)   ? out_format_double(json, sizeof json, v)
                              : "null");
}

void out_addr(struct out *o, uint64_t v, int digits)
{
    static const char hex[] = "0123456789abcdef";
    char buf[24], *s = buf + sizeof buf;
    int n = 0;
    if (digits > 16) {
        snprintf(buf, sizeof buf, "0x%0*llx", digits, (unsigned long long)v);
        add_cell(o, CELL_PLAIN, buf, NULL);
        return;
    }
    do
        *--s = hex[v & 15], n++;
    while ((v >>= 4) || n < digits);
    *--s = 'x';
    *--s = '0';
    add_cell_n(o, CELL_PLAIN, s, (size_t)(buf + sizeof buf - s), NULL);
}

void out_duration(struct out *o, uint64_t hundred_ns)
{
    char text[48];
    out_num_text(o, (double)hundred_ns / 1e7, out_format_duration(text, sizeof text, hundred_ns));
}

void out_time(struct out *o, int64_t unix_seconds, uint32_t fraction, int digits)
{
    char buf[64];
    add_cell(o, CELL_PLAIN, out_format_time(buf, sizeof buf, unix_seconds, fraction, digits), NULL);
}

void out_filetime(struct out *o, uint64_t ft)
{
    const int64_t unix_epoch = 116444736000000000ll; /* 1970-01-01 in 100 ns since 1601 */
    int64_t rel, secs;
    if (!ft || ft > INT64_MAX) {
        out_null(o);
        return;
    }
    rel = (int64_t)ft - unix_epoch;
    secs = (rel >= 0 ? rel : rel - 9999999) / 10000000;
    out_time(o, secs, (uint32_t)(rel - secs * 10000000), 7);
}

void out_bool(struct out *o, bool v)
{
    add_cell(o, CELL_NUM, v ? "true" : "false", NULL);
}

void out_json(struct out *o, const char *text, const char *json)
{
    add_cell(o, CELL_NUM, text, json);
}

void out_null(struct out *o)
{
    add_cell_n(o, CELL_NULL, "", 0, NULL);
}

void out_indent(struct out *o, int depth)
{
    o->next_indent = depth;
}

void out_hold_rows(struct out *o)
{
    o->hold = true;
}

uint64_t out_rows(const struct out *o)
{
    return o->rows;
}

/* ---- text of times and durations ---- */

/* Days since 1970-01-01 to a civil date (proleptic Gregorian; H. Hinnant's
 * algorithm), so UTC needs no gmtime and works past 2038 on every OS. */
static void civil_from_days(int64_t z, int *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int)(yoe + era * 400 + (*m <= 2));
}

static int64_t days_from_civil(int y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* Seconds east of UTC at t, from the C library's local time. */
static long utc_offset(int64_t t)
{
    time_t tt = (time_t)t;
    struct tm *lt = localtime(&tt);
    if (!lt)
        return 0;
    int64_t local = days_from_civil(lt->tm_year + 1900, (unsigned)lt->tm_mon + 1, (unsigned)lt->tm_mday) * 86400 +
                    lt->tm_hour * 3600 + lt->tm_min * 60 + lt->tm_sec;
    return (long)(local - t);
}

static const uint32_t pow10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                   100000000, 1000000000};

/* v as exactly n decimal digits, zero-padded (v < 10^n). */
static void fixed_digits(char *p, uint32_t v, int n)
{
    while (n--) {
        p[n] = (char)('0' + v % 10);
        v /= 10;
    }
}

char *out_format_time(char *buf, size_t size, int64_t t, uint32_t fraction, int digits)
{
    long offset = local_time ? utc_offset(t) : 0;
    int64_t s = t + offset, days = (s >= 0 ? s : s - 86399) / 86400, rem = s - days * 86400;
    int y;
    unsigned m, d;
    size_t n;

    civil_from_days(days, &y, &m, &d);
    if (!local_time && y >= 0 && y <= 9999 && digits >= 0 && digits <= 9 && size >= 32 &&
        fraction < pow10[digits]) {
        fixed_digits(buf, (uint32_t)y, 4);
        buf[4] = '-', fixed_digits(buf + 5, m, 2);
        buf[7] = '-', fixed_digits(buf + 8, d, 2);
        buf[10] = 'T', fixed_digits(buf + 11, (uint32_t)(rem / 3600), 2);
        buf[13] = ':', fixed_digits(buf + 14, (uint32_t)(rem / 60 % 60), 2);
        buf[16] = ':', fixed_digits(buf + 17, (uint32_t)(rem % 60), 2);
        n = 19;
        if (digits > 0) {
            buf[n++] = '.';
            fixed_digits(buf + n, fraction, digits);
            n += (size_t)digits;
        }
        buf[n] = 'Z', buf[n + 1] = '\0';
        return buf;
    }
    n = (size_t)snprintf(buf, size, "%04d-%02u-%02uT%02u:%02u:%02u", y, m, d, (unsigned)(rem / 3600),
                         (unsigned)(rem / 60 % 60), (unsigned)(rem % 60));
    if (digits > 0 && n < size)
        n += (size_t)snprintf(buf + n, size - n, ".%0*u", digits, (unsigned)fraction);
    if (n < size) {
        if (!local_time)
            snprintf(buf + n, size - n, "Z");
        else
            snprintf(buf + n, size - n, "%c%02ld:%02ld", offset < 0 ? '-' : '+',
                     labs(offset) / 3600, labs(offset) / 60 % 60);
    }
    return buf;
}

char *out_format_duration(char *buf, size_t size, uint64_t hundred_ns)
{
    uint64_t ms = hundred_ns / 10000;
    snprintf(buf, size, "%llu:%02u:%02u.%03u", (unsigned long long)(ms / 3600000),
             (unsigned)(ms / 60000 % 60), (unsigned)(ms / 1000 % 60), (unsigned)(ms % 1000));
    return buf;
}

/* ---- formats ---- */

void out_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

void out_csv_field(FILE *f, const char *s, bool force_quotes)
{
    if (!force_quotes && !strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* ---- the writer's buffer ---- */

/* Hands what is buffered to the FILE. */
static void flush_buf(struct out *o)
{
    if (o->buf_len)
        progress_clear();
    if (o->buf_len && fwrite(o->buf, 1, o->buf_len, o->f) != o->buf_len)
        o->failed = true;
    o->wrote |= o->buf_len != 0;
    o->buf_len = 0;
}

static void put(struct out *o, const char *s, size_t n)
{
    if (o->buf_len + n > OUT_BUF) {
        flush_buf(o);
        if (n > OUT_BUF) {
            o->wrote = true;
            if (fwrite(s, 1, n, o->f) != n)
                o->failed = true;
            return;
        }
    }
    memcpy(o->buf + o->buf_len, s, n);
    o->buf_len += n;
}

static void put_c(struct out *o, char c)
{
    if (o->buf_len == OUT_BUF)
        flush_buf(o);
    o->buf[o->buf_len++] = c;
}

static void put_s(struct out *o, const char *s)
{
    put(o, s, strlen(s));
}

static void put_spaces(struct out *o, size_t n)
{
    static const char spaces[64] = "                                                                ";
    for (; n > sizeof spaces; n -= sizeof spaces)
        put(o, spaces, sizeof spaces);
    put(o, spaces, n);
}

static char *json_string_to(char *d, const char *s, size_t n);

/* What out_json_string writes, into the buffer. For column keys and
 * section names, which are few: through a scratch copy. */
static void json_string_n(struct out *o, const char *s, size_t n)
{
    char *tmp = malloc(6 * n + 2);
    if (!tmp) {
        o->failed = true;
        return;
    }
    put(o, tmp, (size_t)(json_string_to(tmp, s, n) - tmp));
    free(tmp);
}

/* "key": for a column, escaped once. */
static char *json_key_text(struct out *o, const char *key, size_t *len)
{
    char *p;
    flush_buf(o); /* the key is built in buf and taken back out whole */
    size_t saved = o->buf_len;
    json_string_n(o, key, strlen(key));
    put_c(o, ':');
    *len = o->buf_len - saved;
    if ((p = malloc(*len + 1))) {
        memcpy(p, o->buf + saved, *len);
        p[*len] = '\0';
    } else {
        o->failed = true;
    }
    o->buf_len = saved;
    return p;
}

static void csv_field_n(struct out *o, const char *s, size_t n)
{
    const char *q;
    if (!memchr(s, ',', n) && !memchr(s, '"', n) && !memchr(s, '\r', n) && !memchr(s, '\n', n)) {
        put(o, s, n);
        return;
    }
    put_c(o, '"');
    while ((q = memchr(s, '"', n))) {
        put(o, s, (size_t)(q - s) + 1);
        put_c(o, '"');
        n -= (size_t)(q - s) + 1;
        s = q + 1;
    }
    put(o, s, n);
    put_c(o, '"');
}

/* TSV has no quoting: tabs and line breaks inside a field become spaces. */
static void tsv_field_n(struct out *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        put_c(o, s[i] == '\t' || s[i] == '\n' || s[i] == '\r' ? ' ' : s[i]);
}

/* Display width in terminal columns: counts UTF-8 lead bytes. */
static size_t text_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            w++;
    return w;
}

static void table_cell(struct out *o, const struct column *c, const char *s, size_t width,
                       size_t indent, bool last)
{
    size_t w = text_width(s) + indent, pad = width > w ? width - w : 0;
    put_spaces(o, indent);
    if (c->align == OUT_RIGHT)
        put_spaces(o, pad);
    put_s(o, s);
    if (c->align != OUT_RIGHT && !last)
        put_spaces(o, pad);
    if (!last)
        put_c(o, ' ');
}

static void table_header(struct out *o, const size_t *width)
{
    for (size_t c = 0; c < o->ncols; c++)
        table_cell(o, &o->cols[c], o->cols[c].title, width[c], 0, c + 1 == o->ncols);
    put_c(o, '\n');
}

static void table_row(struct out *o, const struct cell *row, const size_t *width, int indent)
{
    for (size_t c = 0; c < o->ncols; c++)
        table_cell(o, &o->cols[c], cell_text(o, &row[c]), width[c], c ? 0 : 2 * (size_t)indent,
                   c + 1 == o->ncols);
    put_c(o, '\n');
}

static bool table_streams(const struct out *o)
{
    for (size_t c = 0; c < o->ncols; c++)
        if (!o->cols[c].width)
            return false;
    return o->ncols > 0;
}

/* The buffered table: widths from the header and every row. */
static void render_table(struct out *o)
{
    size_t rows = o->ncols ? o->ncells / o->ncols : 0;
    size_t *width = calloc(o->ncols ? o->ncols : 1, sizeof *width);

    if (!width) {
        o->failed = true;
        return;
    }
    for (size_t c = 0; c < o->ncols; c++)
        width[c] = text_width(o->cols[c].title);
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < o->ncols; c++) {
            size_t w = text_width(cell_text(o, &o->cells[r * o->ncols + c])) +
                       (c ? 0 : 2 * (size_t)o->indent[r]);
            if (w > width[c])
                width[c] = w;
        }
    table_header(o, width);
    o->header_done = true;
    for (size_t r = 0; r < rows; r++)
        table_row(o, &o->cells[r * o->ncols], width, o->indent[r]);
    free(width);
    free_cells(o);
}

static void separated_header(struct out *o)
{
    if (!o->ncols)
        return;
    for (size_t c = 0; c < o->ncols; c++) {
        const char *k = o->cols[c].key;
        if (c)
            put_c(o, o->fmt == OUT_TSV ? '\t' : ',');
        (o->fmt == OUT_TSV ? tsv_field_n : csv_field_n)(o, k, strlen(k));
    }
    put_c(o, '\n');
}

static void separated_row(struct out *o, const struct cell *row)
{
    for (size_t c = 0; c < o->ncols; c++) {
        if (c)
            put_c(o, o->fmt == OUT_TSV ? '\t' : ',');
        (o->fmt == OUT_TSV ? tsv_field_n : csv_field_n)(o, cell_text(o, &row[c]), row[c].text_len);
    }
    put_c(o, '\n');
}

/* JSON's "[" (or "{" and the first section's name) before the first row. */
static void json_open(struct out *o, const char *section);

/* Copies n bytes to d, which has room; returns the end. Keys and most
 * values are short: two overlapping fixed-size moves are a few
 * instructions where a call to memcpy costs more than the bytes. */
static inline char *copy(char *d, const char *s, size_t n)
{
    if (n >= 8 && n <= 16) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n > 16 && n <= 32) {
        memcpy(d, s, 16);
        memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 4 && n < 8) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else if (n > 32) {
        memcpy(d, s, n);
    } else {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    }
    return d + n;
}

/* The bytes JSON escapes: controls, '"' and '\\'. */
static bool json_escaped(unsigned char c)
{
    return c < 0x20 || c == '"' || c == '\\';
}

/* What json_string_n writes, to d with room for 6n + 2 bytes. */
static char *json_string_to(char *d, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const char *run = s, *end = s + n;
    *d++ = '"';
    for (; s < end; s++) {
        unsigned char c = (unsigned char)*s;
        if (!json_escaped(c))
            continue;
        d = copy(d, run, (size_t)(s - run));
        run = s + 1;
        *d++ = '\\';
        switch (c) {
        case '"': case '\\': *d++ = (char)c; break;
        case '\n': *d++ = 'n'; break;
        case '\r': *d++ = 'r'; break;
        case '\t': *d++ = 't'; break;
        default:
            d = copy(d, "u00", 3);
            *d++ = hex[c >> 4];
            *d++ = hex[c & 15];
        }
    }
    d = copy(d, run, (size_t)(end - run));
    *d++ = '"';
    return d;
}

/* JSON's "[" (or "{" and the first section's name) before the first row. */
static void json_open(struct out *o, const char *section);

/* The JSON text of a cell's value, written to d (room checked by the caller). */
static char *json_value_to(char *d, enum cell_kind kind, const char *text, size_t text_len,
                           const char *json, size_t json_len)
{
    switch (kind) {
    case CELL_STR:
        return json_string_to(d, text, text_len);
    case CELL_PLAIN:
        *d++ = '"';
        d = copy(d, text, text_len);
        *d++ = '"';
        return d;
    case CELL_NULL:
        return copy(d, "null", 4);
    case CELL_NUM:
        break;
    }
    return json ? copy(d, json, json_len) : copy(d, text, text_len);
}

/* JSON rows are written as their cells come, straight into buf: keeping
 * them in the arena first copied every byte twice more (JSON of a trace's
 * events is 20x the trace). A row's first cell opens it. */
static void json_cell(struct out *o, enum cell_kind kind, const char *text, size_t text_len,
                      const char *json)
{
    const struct column *col = &o->cols[o->ncells++ % o->ncols];
    size_t json_len = json ? strlen(json) : 0;
    if (col == o->cols) {
        if (o->fmt == OUT_JSON) {
            if (o->opened && o->rows > 0)
                put_c(o, ',');
            json_open(o, NULL);
            put_c(o, '\n');
        }
        put_c(o, '{');
    } else {
        put_c(o, ',');
    }
    /* Room for the worst case: every byte of a string escaped as \u00XX. */
    size_t need = col->json_key_len + 6 * text_len + json_len + 6;
    if (need > OUT_BUF - o->buf_len)
        flush_buf(o);
    if (need > OUT_BUF) { /* larger than the buffer (--hex of a long payload) */
        char *tmp = malloc(need);
        if (!tmp) {
            o->failed = true;
            return;
        }
        char *d = copy(tmp, col->json_key, col->json_key_len);
        d = json_value_to(d, kind, text, text_len, json, json_len);
        put(o, tmp, (size_t)(d - tmp));
        free(tmp);
        return;
    }
    char *d = copy(o->buf + o->buf_len, col->json_key, col->json_key_len);
    d = json_value_to(d, kind, text, text_len, json, json_len);
    o->buf_len = (size_t)(d - o->buf);
}

static void json_open(struct out *o, const char *section)
{
    if (o->opened)
        return;
    o->opened = true;
    if (section) {
        put_c(o, '{');
        json_string_n(o, section, strlen(section));
        put(o, ":[", 2);
    } else {
        put_c(o, '[');
    }
}

static void write_header_once(struct out *o)
{
    size_t width[64];
    if (o->header_done)
        return;
    o->header_done = true;
    if (o->fmt == OUT_CSV || o->fmt == OUT_TSV) {
        separated_header(o);
    } else if (o->fmt == OUT_TABLE && table_streams(o) && o->ncols <= 64) {
        for (size_t c = 0; c < o->ncols; c++)
            width[c] = (size_t)o->cols[c].width;
        table_header(o, width);
    }
}

/* Ends a call that wrote: the buffer goes to the FILE. */
static int write_status(struct out *o)
{
    if (!o->hold)
        flush_buf(o);
    if (out_file_error(o))
        o->failed = true;
    return o->failed ? -1 : 0;
}

bool out_file_error(struct out *o)
{
    if (!o->hold || o->wrote) {
        o->wrote = false;
        o->file_error = ferror(o->f) != 0;
    }
    return o->file_error;
}

int out_row_end(struct out *o)
{
    size_t width[64];

    if (json_streams(o) && !o->ncells)
        out_null(o); /* an empty row is a row of nulls */
    while (o->ncols && o->ncells % o->ncols)
        out_null(o);
    if (!o->ncols || o->failed)
        return write_status(o);
    progress_clear();
    o->rows++;
    switch (o->fmt) {
    case OUT_TABLE:
        if (table_streams(o) && o->ncols <= 64) {
            write_header_once(o);
            for (size_t c = 0; c < o->ncols; c++)
                width[c] = (size_t)o->cols[c].width;
            table_row(o, o->cells, width, o->next_indent);
            free_cells(o);
        } else {
            size_t row = o->ncells / o->ncols - 1;
            if (row >= o->capindent) {
                size_t cap = o->capindent ? 2 * o->capindent : 64;
                int *ind = realloc(o->indent, cap * sizeof *ind);
                if (!ind) {
                    o->failed = true;
                    return -1;
                }
                o->indent = ind;
                o->capindent = cap;
            }
            o->indent[row] = o->next_indent;
        }
        break;
    case OUT_CSV:
    case OUT_TSV:
        write_header_once(o);
        separated_row(o, o->cells);
        free_cells(o);
        break;
    case OUT_JSON:
        put_c(o, '}');
        free_cells(o);
        break;
    case OUT_JSONL:
        put(o, "}\n", 2);
        free_cells(o);
        break;
    }
    o->next_indent = 0;
    return write_status(o);
}

char *out_json_row_begin(struct out *o, size_t need)
{
    if (!json_streams(o) || o->ncells || o->failed || need > OUT_BUF - 2)
        return NULL;
    if (o->fmt == OUT_JSON) { /* as json_cell opens a row */
        if (o->opened && o->rows > 0)
            put_c(o, ',');
        json_open(o, NULL);
        put_c(o, '\n');
    }
    if (need > OUT_BUF - o->buf_len)
        flush_buf(o);
    return o->buf + o->buf_len;
}

int out_json_row_end(struct out *o, char *end)
{
    o->buf_len = (size_t)(end - o->buf);
    if (o->fmt == OUT_JSONL)
        put_c(o, '\n');
    progress_clear();
    o->rows++;
    o->next_indent = 0;
    return write_status(o);
}

size_t out_take(struct out *o, char *dst, size_t size)
{
    size_t n = o->buf_len < size ? o->buf_len : size;
    memcpy(dst, o->buf, n);
    o->buf_len = 0;
    return n;
}

char *out_json_string_to(char *d, const char *s, size_t n)
{
    return json_string_to(d, s, n);
}

int out_flush(struct out *o)
{
    int rc;
    if (o->fmt == OUT_TABLE && !table_streams(o)) {
        progress_clear();
        render_table(o);
    }
    flush_buf(o);
    rc = write_status(o);
    fflush(o->f);
    o->wrote = true;
    return rc;
}

int out_section(struct out *o, const char *name)
{
    if (o->sections && (o->fmt == OUT_CSV || o->fmt == OUT_TSV || o->fmt == OUT_JSONL))
        return -1;
    if (o->fmt == OUT_TABLE) {
        if (o->sections)
            out_flush(o);
        if (o->sections)
            put_c(o, '\n');
    } else if (o->fmt == OUT_JSON) {
        if (!o->opened)
            json_open(o, name);
        else {
            put_s(o, o->rows ? "\n]," : "],");
            json_string_n(o, name, strlen(name));
            put(o, ":[", 2);
        }
    }
    o->sections++;
    o->rows = 0;
    o->header_done = false;
    free_cells(o);
    free_columns(o);
    return write_status(o);
}

int out_close(struct out *o)
{
    int rc;
    if (!o)
        return 0;
    /* A table with no row still shows its header, once. */
    if (o->fmt == OUT_TABLE && !table_streams(o) && (o->ncells || !o->header_done))
        out_flush(o);
    else if (o->fmt != OUT_JSON && o->fmt != OUT_JSONL)
        write_header_once(o);
    if (o->fmt == OUT_JSON) {
        json_open(o, NULL);
        put_s(o, o->rows ? "\n]" : "]");
        put_s(o, o->sections ? "}\n" : "\n");
    }
    flush_buf(o);
    fflush(o->f);
    o->wrote = true;
    rc = write_status(o);
    free_cells(o);
    free_columns(o);
    free(o->cells);
    free(o->arena);
    free(o->indent);
    free(o);
    return rc;
}
