/* The metric writer fed with parsed performance data: the input is a title
 * database (2-byte length, then a "Counter 009" MULTI_SZ answer, laid over
 * Windows' standard names) and a PERF_DATA_BLOCK, both from the server in
 * real use. Both pages are written, then checked line by line against the
 * exposition format's grammar: a server string must never break a page. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/perf.h"
#include "ntlens/prom.h"

static bool name_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && c >= '0' && c <= '9');
}

/* Skips a label value after its opening quote; NULL when malformed. */
static const char *label_value(const char *p, const char *end)
{
    for (; p < end; p++) {
        if (*p == '"')
            return p + 1;
        if (*p == '\\' && (p + 1 >= end || !strchr("\\\"n", p[1])))
            return NULL;
        if (*p == '\\')
            p++;
    }
    return NULL;
}

static bool sample_ok(const char *p, const char *end)
{
    const char *s = p;
    while (p < end && name_char(*p, p == s))
        p++;
    if (p == s)
        return false;
    if (p < end && *p == '{') {
        do {
            const char *n = ++p;
            while (p < end && name_char(*p, p == n) && *p != ':')
                p++;
            if (p == n || p + 1 >= end || p[0] != '=' || p[1] != '"')
                return false;
            if (!(p = label_value(p + 2, end)) || p >= end)
                return false;
        } while (*p == ',');
        if (*p++ != '}')
            return false;
    }
    return p < end && *p == ' ' && p + 1 < end;
}

static void check_page(const struct ntl_buf *b)
{
    if (!b->len)
        return;
    const char *p = (const char *)b->data, *end = p + b->len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl || memchr(p, '\0', (size_t)(nl - p)) || (*p != '#' && !sample_ok(p, nl)))
            abort();
        p = nl + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_perf_titles *t = ntl_perf_titles_new();
    struct ntl_perf_block *blk;
    struct ntl_error err;
    size_t tn = size >= 2 ? (size_t)(data[0] | data[1] << 8) : 0;
    if (!t || tn > size - 2 || size < 2) {
        ntl_perf_titles_free(t);
        return 0;
    }
    ntl_perf_titles_add(t, false, data + 2, tn, &err);
    ntl_perf_titles_add_standard(t);
    size_t bn = size - 2 - tn;
    uint8_t *copy = malloc(bn ? bn : 1);
    if (copy && (memcpy(copy, data + 2 + tn, bn), ntl_perf_block_parse(copy, bn, &blk, &err)) == 0) {
        struct ntl_prom_label host = {"host", blk->system_name};
        struct ntl_prom_page pg = {.block = blk, .titles = t, .labels = &host, .nlabels = 1};
        struct ntl_buf b;
        ntl_buf_init(&b, 1 << 22);
        if (ntl_prom_write_windows(&pg, NTL_PROM_ALL, &b, &err) == 0 &&
            ntl_prom_write_generic(&pg, NULL, &b, &err) == 0)
            check_page(&b);
        ntl_buf_free(&b);
        ntl_perf_block_free(blk);
    }
    free(copy);
    ntl_perf_titles_free(t);
    return 0;
}
