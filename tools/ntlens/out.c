/* The output writer (out.h): cells are kept as the text each format shows,
 * so rendering is copying; only a table waits for its widths. */
#include "out.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "progress.h"

enum cell_kind { CELL_STR, CELL_NUM, CELL_NULL };

struct cell {
    enum cell_kind kind;
    char *text;   /* what table, CSV and TSV show */
    char *json;   /* the JSON literal when it differs (numbers shown as text) */
};

struct column {
    char *key;
    char *title;
    enum out_align align;
    int width;    /* 0: measured from the rows */
};

struct out {
    FILE *f;
    enum out_format fmt;
    struct column *cols;
    size_t ncols;
    struct cell *cells;      /* row-major: buffered table rows, else the row being built */
    size_t ncells, capcells;
    int *indent;             /* per buffered row */
    size_t capindent;
    int next_indent;
    unsigned sections;       /* named sections begun */
    bool opened;             /* JSON's opening bracket is out */
    bool header_done;        /* the header of this section is out (every format but JSON) */
    uint64_t rows;
    bool failed;             /* out of memory or a write error */
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
    for (size_t i = 0; i < o->ncells; i++) {
        free(o->cells[i].text);
        free(o->cells[i].json);
    }
    o->ncells = 0;
}

static void free_columns(struct out *o)
{
    for (size_t i = 0; i < o->ncols; i++) {
        free(o->cols[i].key);
        free(o->cols[i].title);
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

void out_column(struct out *o, const char *key, const char *title, enum out_align align)
{
    struct column *c = realloc(o->cols, (o->ncols + 1) * sizeof *c);
    if (!c) {
        o->failed = true;
        return;
    }
    o->cols = c;
    c[o->ncols] = (struct column){dup_text(o, key), title ? dup_text(o, title) : title_from_key(o, key),
                                  align, 0};
    if (!c[o->ncols].key || !c[o->ncols].title) {
        free(c[o->ncols].key);
        free(c[o->ncols].title);
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

static void add_cell(struct out *o, enum cell_kind kind, const char *text, const char *json)
{
    char *t, *j = NULL;
    if (o->ncells == o->capcells) {
        size_t cap = o->capcells ? 2 * o->capcells : 64;
        struct cell *c = realloc(o->cells, cap * sizeof *c);
        if (!c) {
            o->failed = true;
            return;
        }
        o->cells = c;
        o->capcells = cap;
    }
    if (!(t = dup_text(o, text)) || (json && !(j = dup_text(o, json)))) {
        free(t);
        return;
    }
    o->cells[o->ncells++] = (struct cell){kind, t, j};
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

void out_u64(struct out *o, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    add_cell(o, CELL_NUM, buf, NULL);
}

void out_i64(struct out *o, int64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    add_cell(o, CELL_NUM, buf, NULL);
}

/* The fewest significant digits that read back as v, in plain notation
 * where its exponent is from -4 to 15 (as Python's repr and JavaScript do:
 * 120, not 1.2e+02), else as an exponent. */
char *out_format_double(char *buf, size_t size, double v)
{
    int digits, exp;
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
    out_format_double(json, sizeof json, v);
    if (decimals < 0)
        add_cell(o, CELL_NUM, json, NULL);
    else {
        snprintf(text, sizeof text, "%.*f", decimals, v);
        add_cell(o, CELL_NUM, text, json);
    }
}

void out_num_text(struct out *o, double v, const char *text)
{
    char json[40];
    add_cell(o, CELL_NUM, text, is_finite(v) ? out_format_double(json, sizeof json, v) : "null");
}

void out_addr(struct out *o, uint64_t v, int digits)
{
    char buf[24];
    snprintf(buf, sizeof buf, "0x%0*llx", digits, (unsigned long long)v);
    add_cell(o, CELL_STR, buf, NULL);
}

void out_duration(struct out *o, uint64_t hundred_ns)
{
    char text[48];
    out_num_text(o, (double)hundred_ns / 1e7, out_format_duration(text, sizeof text, hundred_ns));
}

void out_time(struct out *o, int64_t unix_seconds, uint32_t fraction, int digits)
{
    char buf[64];
    add_cell(o, CELL_STR, out_format_time(buf, sizeof buf, unix_seconds, fraction, digits), NULL);
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
    add_cell(o, CELL_NULL, "", NULL);
}

void out_indent(struct out *o, int depth)
{
    o->next_indent = depth;
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

char *out_format_time(char *buf, size_t size, int64_t t, uint32_t fraction, int digits)
{
    long offset = local_time ? utc_offset(t) : 0;
    int64_t s = t + offset, days = (s >= 0 ? s : s - 86399) / 86400, rem = s - days * 86400;
    int y;
    unsigned m, d;
    size_t n;

    civil_from_days(days, &y, &m, &d);
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

/* TSV has no quoting: tabs and line breaks inside a field become spaces. */
static void tsv_field(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
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

static void table_cell(FILE *f, const struct column *c, const char *s, size_t width, size_t indent,
                       bool last)
{
    size_t w = text_width(s) + indent, pad = width > w ? width - w : 0;
    fprintf(f, "%*s", (int)indent, "");
    if (c->align == OUT_RIGHT)
        fprintf(f, "%*s%s", (int)pad, "", s);
    else
        fprintf(f, "%s%*s", s, last ? 0 : (int)pad, "");
    if (!last)
        fputc(' ', f);
}

static void table_header(const struct out *o, const size_t *width)
{
    for (size_t c = 0; c < o->ncols; c++)
        table_cell(o->f, &o->cols[c], o->cols[c].title, width[c], 0, c + 1 == o->ncols);
    fputc('\n', o->f);
}

static void table_row(const struct out *o, const struct cell *row, const size_t *width, int indent)
{
    for (size_t c = 0; c < o->ncols; c++)
        table_cell(o->f, &o->cols[c], row[c].text, width[c], c ? 0 : 2 * (size_t)indent,
                   c + 1 == o->ncols);
    fputc('\n', o->f);
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
            size_t w = text_width(o->cells[r * o->ncols + c].text) + (c ? 0 : 2 * (size_t)o->indent[r]);
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
        if (c)
            fputc(o->fmt == OUT_TSV ? '\t' : ',', o->f);
        if (o->fmt == OUT_TSV)
            tsv_field(o->f, o->cols[c].key);
        else
            out_csv_field(o->f, o->cols[c].key, false);
    }
    fputc('\n', o->f);
}

static void separated_row(struct out *o, const struct cell *row)
{
    for (size_t c = 0; c < o->ncols; c++) {
        if (c)
            fputc(o->fmt == OUT_TSV ? '\t' : ',', o->f);
        if (o->fmt == OUT_TSV)
            tsv_field(o->f, row[c].text);
        else
            out_csv_field(o->f, row[c].text, false);
    }
    fputc('\n', o->f);
}

static void json_object(struct out *o, const struct cell *row)
{
    fputc('{', o->f);
    for (size_t c = 0; c < o->ncols; c++) {
        if (c)
            fputc(',', o->f);
        out_json_string(o->f, o->cols[c].key);
        fputc(':', o->f);
        if (row[c].kind == CELL_STR)
            out_json_string(o->f, row[c].text);
        else if (row[c].kind == CELL_NULL)
            fputs("null", o->f);
        else
            fputs(row[c].json ? row[c].json : row[c].text, o->f);
    }
    fputc('}', o->f);
}

/* JSON's "[" (or "{" and the first section's name) before the first row. */
static void json_open(struct out *o, const char *section)
{
    if (o->opened)
        return;
    o->opened = true;
    if (section) {
        fputs("{", o->f);
        out_json_string(o->f, section);
        fputs(":[", o->f);
    } else {
        fputs("[", o->f);
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

static int write_status(struct out *o)
{
    if (ferror(o->f))
        o->failed = true;
    return o->failed ? -1 : 0;
}

int out_row_end(struct out *o)
{
    size_t width[64];

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
        if (o->opened && o->rows > 1)
            fputc(',', o->f);
        json_open(o, NULL);
        fputc('\n', o->f);
        json_object(o, o->cells);
        free_cells(o);
        break;
    case OUT_JSONL:
        json_object(o, o->cells);
        fputc('\n', o->f);
        free_cells(o);
        break;
    }
    o->next_indent = 0;
    return write_status(o);
}

int out_flush(struct out *o)
{
    if (o->fmt == OUT_TABLE && !table_streams(o)) {
        progress_clear();
        render_table(o);
    }
    fflush(o->f);
    return write_status(o);
}

int out_section(struct out *o, const char *name)
{
    if (o->sections && (o->fmt == OUT_CSV || o->fmt == OUT_TSV || o->fmt == OUT_JSONL))
        return -1;
    if (o->fmt == OUT_TABLE) {
        if (o->sections)
            out_flush(o);
        if (o->sections)
            fputc('\n', o->f);
    } else if (o->fmt == OUT_JSON) {
        if (!o->opened)
            json_open(o, name);
        else {
            fputs(o->rows ? "\n]," : "],", o->f);
            out_json_string(o->f, name);
            fputs(":[", o->f);
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
        fputs(o->rows ? "\n]" : "]", o->f);
        fputs(o->sections ? "}\n" : "\n", o->f);
    }
    fflush(o->f);
    rc = write_status(o);
    free_cells(o);
    free_columns(o);
    free(o->cells);
    free(o->indent);
    free(o);
    return rc;
}
