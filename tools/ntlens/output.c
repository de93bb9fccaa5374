#include "output.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum cell_kind { CELL_STR, CELL_NUM, CELL_BOOL, CELL_NULL };

struct cell {
    enum cell_kind kind;
    char *text;   /* what table and CSV show; for CELL_NUM, also JSON unless json set */
    char *json;   /* JSON literal when it differs from text */
};

struct column {
    char *key;
    char *title;
    enum out_align align;
};

struct out_table {
    struct column *cols;
    size_t ncols;
    struct cell *cells; /* row-major, ncols per row */
    size_t ncells, capcells;
    int *indent;        /* per row */
    size_t capindent;
    int next_indent;
    bool oom;
};

bool out_format_parse(const char *s, enum out_format *fmt)
{
    if (!strcmp(s, "table")) *fmt = OUT_TABLE;
    else if (!strcmp(s, "csv")) *fmt = OUT_CSV;
    else if (!strcmp(s, "json")) *fmt = OUT_JSON;
    else return false;
    return true;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (!p) {
        fputs("ntlens: out of memory\n", stderr);
        exit(1);
    }
    return memcpy(p, s, n);
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p) {
        fputs("ntlens: out of memory\n", stderr);
        exit(1);
    }
    return p;
}

struct out_table *out_table_new(void)
{
    struct out_table *t = calloc(1, sizeof *t);
    if (!t) {
        fputs("ntlens: out of memory\n", stderr);
        exit(1);
    }
    return t;
}

void out_table_free(struct out_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->ncols; i++) {
        free(t->cols[i].key);
        free(t->cols[i].title);
    }
    for (size_t i = 0; i < t->ncells; i++) {
        free(t->cells[i].text);
        free(t->cells[i].json);
    }
    free(t->cols);
    free(t->cells);
    free(t->indent);
    free(t);
}

void out_table_column(struct out_table *t, const char *key, const char *title, enum out_align align)
{
    t->cols = xrealloc(t->cols, (t->ncols + 1) * sizeof *t->cols);
    t->cols[t->ncols].key = xstrdup(key);
    t->cols[t->ncols].title = xstrdup(title ? title : key);
    t->cols[t->ncols].align = align;
    t->ncols++;
}

static void add_cell(struct out_table *t, enum cell_kind kind, char *text, char *json)
{
    if (t->ncells == t->capcells) {
        t->capcells = t->capcells ? t->capcells * 2 : 64;
        t->cells = xrealloc(t->cells, t->capcells * sizeof *t->cells);
    }
    t->cells[t->ncells++] = (struct cell){kind, text, json};
}

void out_table_str(struct out_table *t, const char *s)
{
    add_cell(t, CELL_STR, xstrdup(s ? s : ""), NULL);
}

void out_table_strf(struct out_table *t, const char *fmt, ...)
{
    va_list ap;
    char buf[1024];
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    out_table_str(t, buf);
}

void out_table_u64(struct out_table *t, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    add_cell(t, CELL_NUM, xstrdup(buf), NULL);
}

void out_table_i64(struct out_table *t, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    add_cell(t, CELL_NUM, xstrdup(buf), NULL);
}

/* JSON has no NaN or infinity; those become null. */
static char *json_number(double v)
{
    char buf[64];
    if (v != v || v > 1.7e308 || v < -1.7e308)
        return xstrdup("null");
    snprintf(buf, sizeof buf, "%.17g", v);
    return xstrdup(buf);
}

void out_table_num(struct out_table *t, double v, int decimals)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.*f", decimals, v);
    add_cell(t, CELL_NUM, xstrdup(buf), json_number(v));
}

void out_table_num_text(struct out_table *t, double v, const char *text)
{
    add_cell(t, CELL_NUM, xstrdup(text), json_number(v));
}

void out_table_bool(struct out_table *t, bool v)
{
    add_cell(t, CELL_BOOL, xstrdup(v ? "true" : "false"), NULL);
}

void out_table_null(struct out_table *t)
{
    add_cell(t, CELL_NULL, xstrdup(""), NULL);
}

size_t out_table_rows(const struct out_table *t)
{
    return t->ncols ? t->ncells / t->ncols : 0;
}

void out_table_indent(struct out_table *t, int depth)
{
    t->next_indent = depth;
}

void out_table_row_end(struct out_table *t)
{
    size_t row;
    while (t->ncols && t->ncells % t->ncols)
        out_table_null(t);
    row = out_table_rows(t) - 1;
    if (row >= t->capindent) {
        size_t cap = t->capindent ? t->capindent * 2 : 64;
        while (cap <= row)
            cap *= 2;
        t->indent = xrealloc(t->indent, cap * sizeof *t->indent);
        memset(t->indent + t->capindent, 0, (cap - t->capindent) * sizeof *t->indent);
        t->capindent = cap;
    }
    t->indent[row] = t->next_indent;
    t->next_indent = 0;
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

static void render_table(const struct out_table *t, FILE *f)
{
    size_t rows = out_table_rows(t);
    size_t *width = calloc(t->ncols ? t->ncols : 1, sizeof *width);

    if (!width) {
        fputs("ntlens: out of memory\n", stderr);
        exit(1);
    }
    for (size_t c = 0; c < t->ncols; c++)
        width[c] = text_width(t->cols[c].title);
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            size_t w = text_width(t->cells[r * t->ncols + c].text) + (c == 0 ? 2 * (size_t)t->indent[r] : 0);
            if (w > width[c])
                width[c] = w;
        }
    for (size_t r = 0; r <= rows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = r == 0 ? t->cols[c].title : t->cells[(r - 1) * t->ncols + c].text;
            size_t ind = (r > 0 && c == 0) ? 2 * (size_t)t->indent[r - 1] : 0;
            size_t pad = width[c] - text_width(s) - ind;
            bool last = c + 1 == t->ncols;
            fprintf(f, "%*s", (int)ind, "");
            if (t->cols[c].align == OUT_RIGHT)
                fprintf(f, "%*s%s", (int)pad, "", s);
            else
                fprintf(f, "%s%*s", s, last ? 0 : (int)pad, "");
            if (!last)
                fputc(' ', f);
        }
        fputc('\n', f);
    }
    free(width);
}

static void render_csv(const struct out_table *t, FILE *f)
{
    size_t rows = out_table_rows(t);
    for (size_t c = 0; c < t->ncols; c++) {
        if (c)
            fputc(',', f);
        out_csv_field(f, t->cols[c].key, false);
    }
    fputc('\n', f);
    for (size_t r = 0; r < rows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            if (c)
                fputc(',', f);
            out_csv_field(f, t->cells[r * t->ncols + c].text, false);
        }
        fputc('\n', f);
    }
}

static void render_json_object(const struct out_table *t, size_t r, FILE *f)
{
    fputc('{', f);
    for (size_t c = 0; c < t->ncols; c++) {
        const struct cell *cell = &t->cells[r * t->ncols + c];
        if (c)
            fputc(',', f);
        out_json_string(f, t->cols[c].key);
        fputc(':', f);
        switch (cell->kind) {
        case CELL_STR: out_json_string(f, cell->text); break;
        case CELL_NUM: fputs(cell->json ? cell->json : cell->text, f); break;
        case CELL_BOOL: fputs(cell->text, f); break;
        case CELL_NULL: fputs("null", f); break;
        }
    }
    fputc('}', f);
}

int out_table_render_jsonl(const struct out_table *t, FILE *f)
{
    for (size_t r = 0; r < out_table_rows(t); r++) {
        render_json_object(t, r, f);
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

int out_table_render(const struct out_table *t, FILE *f, enum out_format fmt)
{
    size_t rows = out_table_rows(t);
    switch (fmt) {
    case OUT_TABLE:
        render_table(t, f);
        break;
    case OUT_CSV:
        render_csv(t, f);
        break;
    default:
        fputc('[', f);
        for (size_t r = 0; r < rows; r++) {
            fputs(r ? ",\n" : "\n", f);
            render_json_object(t, r, f);
        }
        fputs(rows ? "\n]\n" : "]\n", f);
        break;
    }
    return ferror(f) ? -1 : 0;
}
