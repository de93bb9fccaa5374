/* The title database: index -> name/help through an array, name -> index
 * through a chained hash over case-folded names. Both stay O(1). */
#include "ntlens/perf.h"

#include <stdlib.h>
#include <string.h>

#include "ntlens/buf.h"
#include "ntlens/reader.h"
#include "ntlens/utf16.h"

#define NO_ENTRY UINT32_MAX
/* Indices up to this many are always accepted; beyond it the array may grow
 * only in proportion to the bytes added, so a tiny answer naming index
 * 4,000,000 cannot make us allocate megabytes. */
#define FREE_INDICES 65536u

struct ntl_perf_titles {
    char **names;          /* [cap] */
    char **helps;          /* [cap] */
    uint32_t *next;        /* [cap] name-hash chain */
    uint32_t cap;
    uint32_t *buckets;     /* [nbuckets] first index in each chain */
    uint32_t nbuckets;     /* power of two */
    uint32_t *used;        /* indices holding a name or help, in insertion order */
    size_t nused, used_cap;
    uint32_t last_index;
    uint32_t max_index;
    size_t nnames, nhelps;
    size_t bytes_added;
};

/* Case folding for names: ASCII and the Latin-1 letters of UTF-8 (U+00C0 to
 * U+00DE, except U+00D7). Enough for Windows' counter names in the European
 * languages; other scripts compare exactly. */
static size_t fold_next(const char *s, size_t i, unsigned *c)
{
    unsigned char b = (unsigned char)s[i];
    if (b >= 'A' && b <= 'Z') {
        *c = b + 32u;
        return i + 1;
    }
    if (b == 0xc3) {
        unsigned char b2 = (unsigned char)s[i + 1];
        if (b2 >= 0x80 && b2 <= 0xbf) {
            if (b2 <= 0x9e && b2 != 0x97)
                b2 += 0x20;
            *c = 0xc300u | b2;
            return i + 2;
        }
    }
    *c = b;
    return i + 1;
}

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    size_t i = 0;
    unsigned c;
    while (s[i]) {
        i = fold_next(s, i, &c);
        h = (h ^ c) * 16777619u;
    }
    return h;
}

static bool name_equal(const char *a, const char *b)
{
    size_t i = 0, j = 0;
    unsigned ca, cb;
    while (a[i] && b[j]) {
        i = fold_next(a, i, &ca);
        j = fold_next(b, j, &cb);
        if (ca != cb)
            return false;
    }
    return !a[i] && !b[j];
}

struct ntl_perf_titles *ntl_perf_titles_new(void)
{
    struct ntl_perf_titles *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->nbuckets = 1024;
    t->buckets = malloc(t->nbuckets * sizeof *t->buckets);
    if (!t->buckets) {
        free(t);
        return NULL;
    }
    memset(t->buckets, 0xff, t->nbuckets * sizeof *t->buckets);
    return t;
}

void ntl_perf_titles_free(struct ntl_perf_titles *t)
{
    if (!t)
        return;
    for (size_t k = 0; k < t->nused; k++) {
        free(t->names[t->used[k]]);
        free(t->helps[t->used[k]]);
    }
    free(t->used);
    free(t->names);
    free(t->helps);
    free(t->next);
    free(t->buckets);
    free(t);
}

static int grow_to(struct ntl_perf_titles *t, uint32_t index)
{
    uint64_t allowed = FREE_INDICES + 4 * (uint64_t)t->bytes_added;
    if (index >= NTL_PERF_TITLES_MAX_INDEX || index >= allowed)
        return NTL_ERR_LIMIT;
    if (index < t->cap)
        return 0;
    uint64_t cap = t->cap ? t->cap : 1024;
    while (cap <= index)
        cap *= 2;
    char **names = realloc(t->names, cap * sizeof *names);
    if (!names)
        return NTL_ERR_NOMEM;
    t->names = names;
    char **helps = realloc(t->helps, cap * sizeof *helps);
    if (!helps)
        return NTL_ERR_NOMEM;
    t->helps = helps;
    uint32_t *next = realloc(t->next, cap * sizeof *next);
    if (!next)
        return NTL_ERR_NOMEM;
    t->next = next;
    size_t grown = (size_t)(cap - t->cap);
    memset(t->names + t->cap, 0, grown * sizeof *names);
    memset(t->helps + t->cap, 0, grown * sizeof *helps);
    memset(t->next + t->cap, 0xff, grown * sizeof *next);
    t->cap = (uint32_t)cap;
    return 0;
}

static void rehash(struct ntl_perf_titles *t, uint32_t nbuckets)
{
    uint32_t *b = malloc(nbuckets * sizeof *b);
    if (!b)
        return; /* keep the smaller table: slower chains, still correct */
    memset(b, 0xff, nbuckets * sizeof *b);
    for (size_t k = 0; k < t->nused; k++) {
        uint32_t i = t->used[k];
        if (!t->names[i])
            continue;
        uint32_t h = name_hash(t->names[i]) & (nbuckets - 1);
        t->next[i] = b[h];
        b[h] = i;
    }
    free(t->buckets);
    t->buckets = b;
    t->nbuckets = nbuckets;
}

static void unlink_name(struct ntl_perf_titles *t, uint32_t index)
{
    uint32_t h = name_hash(t->names[index]) & (t->nbuckets - 1);
    uint32_t *p = &t->buckets[h];
    while (*p != NO_ENTRY) {
        if (*p == index) {
            *p = t->next[index];
            return;
        }
        p = &t->next[*p];
    }
}

/* Takes ownership of text. */
static int store(struct ntl_perf_titles *t, bool help, uint32_t index, char *text)
{
    int rc = grow_to(t, index);
    if (rc == 0 && !t->names[index] && !t->helps[index]) {
        if (t->nused == t->used_cap) {
            size_t cap = t->used_cap ? 2 * t->used_cap : 256;
            uint32_t *u = realloc(t->used, cap * sizeof *u);
            if (!u)
                rc = NTL_ERR_NOMEM;
            else {
                t->used = u;
                t->used_cap = cap;
            }
        }
        if (rc == 0)
            t->used[t->nused++] = index;
    }
    if (rc < 0) {
        free(text);
        return rc;
    }
    if (help) {
        if (!t->helps[index])
            t->nhelps++;
        free(t->helps[index]);
        t->helps[index] = text;
    } else {
        if (t->names[index]) {
            unlink_name(t, index);
            free(t->names[index]);
        } else {
            t->nnames++;
        }
        t->names[index] = text;
        uint32_t h = name_hash(text) & (t->nbuckets - 1);
        t->next[index] = t->buckets[h];
        t->buckets[h] = index;
        if (t->nnames > 2u * t->nbuckets && t->nbuckets < (1u << 22))
            rehash(t, t->nbuckets * 4);
    }
    if (index > t->max_index)
        t->max_index = index;
    return 0;
}

int ntl_perf_titles_set(struct ntl_perf_titles *t, bool help, uint32_t index, const char *text)
{
    if (index == 0)
        return NTL_ERR_ARGUMENT;
    char *copy = strdup(text);
    if (!copy)
        return NTL_ERR_NOMEM;
    return store(t, help, index, copy);
}

/* Parses a decimal index made of ASCII digits in UTF-16LE. */
static bool parse_index(const uint8_t *p, size_t units, uint32_t *out)
{
    uint64_t v = 0;
    if (units == 0 || units > 10)
        return false;
    for (size_t i = 0; i < units; i++) {
        uint16_t c = ntl_le16(p + 2 * i);
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + (c - '0');
    }
    if (v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

int ntl_perf_titles_add(struct ntl_perf_titles *t, bool help, const void *data, size_t size,
                        struct ntl_error *err)
{
    const char *what = help ? "help title database" : "counter title database";
    const uint8_t *p = data;
    size_t units = size / 2, pos = 0, pairs = 0;

    if (size % 2)
        return ntl_error_set(err, NTL_ERR_FORMAT, what, size - 1,
                             "odd length %zu: not UTF-16", size);
    t->bytes_added += size;
    while (pos < units) {
        size_t ilen = ntl_utf16_unit_len(p + 2 * pos, units - pos);
        if (ilen == 0)
            break; /* the final empty string */
        size_t tpos = pos + ilen + 1;
        uint64_t ioff = 2 * (uint64_t)pos;
        uint32_t index;
        if (!parse_index(p + 2 * pos, ilen, &index) || index == 0)
            return ntl_error_set(err, NTL_ERR_FORMAT, what, ioff,
                                 "index string is not a number from 1 to %u",
                                 NTL_PERF_TITLES_MAX_INDEX - 1);
        if (tpos > units)
            return ntl_error_set(err, NTL_ERR_TRUNCATED, what, ioff,
                                 "index %u has no text", index);
        size_t tlen = ntl_utf16_unit_len(p + 2 * tpos, units - tpos);
        pos = tpos + tlen + 1;
        if (!help && pairs == 0 && index == 1) {
            /* (1, last index): the database size, not a name. */
            uint32_t last;
            if (parse_index(p + 2 * tpos, tlen, &last))
                t->last_index = last;
            pairs++;
            continue;
        }
        char *text = ntl_utf16_to_utf8_dup(p + 2 * tpos, tlen);
        if (!text)
            return ntl_error_set(err, NTL_ERR_NOMEM, what, ioff, NULL);
        int rc = store(t, help, index, text);
        if (rc == NTL_ERR_LIMIT)
            return ntl_error_set(err, rc, what, ioff,
                                 "index %u is out of proportion to the database size", index);
        if (rc < 0)
            return ntl_error_set(err, rc, what, ioff, NULL);
        pairs++;
    }
    if (pairs == 0)
        return ntl_error_set(err, NTL_ERR_FORMAT, what, 0, "no index/text pair");
    return 0;
}

const char *ntl_perf_titles_name(const struct ntl_perf_titles *t, uint32_t index)
{
    return t && index < t->cap ? t->names[index] : NULL;
}

const char *ntl_perf_titles_help(const struct ntl_perf_titles *t, uint32_t help_index)
{
    return t && help_index < t->cap ? t->helps[help_index] : NULL;
}

size_t ntl_perf_titles_find_all(const struct ntl_perf_titles *t, const char *name,
                                uint32_t *indices, size_t max)
{
    size_t n = 0;
    if (!t || !name)
        return 0;
    uint32_t h = name_hash(name) & (t->nbuckets - 1);
    for (uint32_t i = t->buckets[h]; i != NO_ENTRY; i = t->next[i]) {
        if (!name_equal(t->names[i], name))
            continue;
        /* insertion sort: chains are short */
        if (n < max) {
            size_t j = n;
            while (j > 0 && indices[j - 1] > i) {
                indices[j] = indices[j - 1];
                j--;
            }
            indices[j] = i;
        } else if (max > 0 && i < indices[max - 1]) {
            size_t j = max - 1;
            while (j > 0 && indices[j - 1] > i) {
                indices[j] = indices[j - 1];
                j--;
            }
            indices[j] = i;
        }
        n++;
    }
    return n;
}

int ntl_perf_titles_find(const struct ntl_perf_titles *t, const char *name, uint32_t *index)
{
    uint32_t first;
    if (ntl_perf_titles_find_all(t, name, &first, 1) == 0)
        return NTL_ERR_NOT_FOUND;
    *index = first;
    return 0;
}

uint32_t ntl_perf_titles_last_index(const struct ntl_perf_titles *t)
{
    return t->last_index;
}

uint32_t ntl_perf_titles_max_index(const struct ntl_perf_titles *t)
{
    return t->max_index;
}

size_t ntl_perf_titles_count(const struct ntl_perf_titles *t, bool help)
{
    return help ? t->nhelps : t->nnames;
}

int ntl_perf_titles_add_standard(struct ntl_perf_titles *t)
{
    size_t n;
    const struct ntl_perf_std_title *std = ntl_perf_std_titles(&n);
    for (size_t i = 0; i < n; i++) {
        int rc;
        if (!ntl_perf_titles_name(t, std[i].index) &&
            (rc = ntl_perf_titles_set(t, false, std[i].index, std[i].name)) < 0)
            return rc;
        if (std[i].help && !ntl_perf_titles_help(t, std[i].index + 1) &&
            (rc = ntl_perf_titles_set(t, true, std[i].index + 1, std[i].help)) < 0)
            return rc;
    }
    return 0;
}

static int put_string(struct ntl_buf *out, const char *s)
{
    size_t units = ntl_utf8_to_utf16(s, NULL, 0);
    uint8_t *p;
    int rc = ntl_buf_grow_zero(out, 2 * (units + 1), &p);
    if (rc < 0)
        return rc;
    ntl_utf8_to_utf16(s, p, units);
    return 0;
}

static int put_number(struct ntl_buf *out, uint32_t v)
{
    char num[16];
    size_t n = 0;
    do {
        num[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    char s[16];
    for (size_t i = 0; i < n; i++)
        s[i] = num[n - 1 - i];
    s[n] = '\0';
    return put_string(out, s);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int ntl_perf_titles_encode(const struct ntl_perf_titles *t, bool help, struct ntl_buf *out,
                           struct ntl_error *err)
{
    int rc = 0;
    size_t start = out->len;
    uint32_t top = 0;
    if (!help) {
        uint32_t last = t->last_index > t->max_index ? t->last_index : t->max_index;
        if ((rc = put_number(out, 1)) < 0 || (rc = put_number(out, last)) < 0)
            goto fail;
    }
    uint32_t *order = malloc((t->nused ? t->nused : 1) * sizeof *order);
    if (!order) {
        rc = NTL_ERR_NOMEM;
        goto fail;
    }
    memcpy(order, t->used, t->nused * sizeof *order);
    qsort(order, t->nused, sizeof *order, cmp_u32);
    for (size_t k = 0; k < t->nused; k++) {
        uint32_t i = order[k];
        const char *s = help ? t->helps[i] : t->names[i];
        if (!s)
            continue;
        top = i;
        if ((rc = put_number(out, i)) < 0 || (rc = put_string(out, s)) < 0) {
            free(order);
            goto fail;
        }
    }
    free(order);
    if ((rc = ntl_buf_append(out, "\0\0", 2)) < 0)
        goto fail;
    /* Never write what the reader refuses: a database read from names and
     * help texts together may hold an index out of proportion to its
     * names alone (grow_to's bound). */
    size_t written = out->len - start;
    if (top >= FREE_INDICES + 4 * (uint64_t)written) {
        out->len = start;
        return ntl_error_set(err, NTL_ERR_LIMIT,
                             help ? "help title database" : "counter title database",
                             NTL_NO_OFFSET, "index %u is out of proportion to the %zu bytes "
                             "it would be written in", top, written);
    }
    return 0;
fail:
    return ntl_error_set(err, rc, help ? "help title database" : "counter title database",
                         NTL_NO_OFFSET, NULL);
}
