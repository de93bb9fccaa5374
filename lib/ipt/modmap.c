/* Module maps for the quick analysis (ntlens/ipt_modules.h): "BASE SIZE
 * NAME" lines, as `ntlens etl images --map` prints them. */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/ipt_modules.h"

#define MAX_MODULES 1000000

/* Parses a hex number (0x optional) at *p; false when there is none or it
 * does not fit 64 bits. */
static bool parse_hex(const char **p, const char *end, uint64_t *v)
{
    const char *s = *p;
    if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        s += 2;
    uint64_t x = 0;
    int digits = 0;
    while (s < end && isxdigit((unsigned char)*s)) {
        if (digits == 16)
            return false;
        int c = (unsigned char)*s;
        x = (x << 4) | (uint64_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
        digits++;
        s++;
    }
    if (!digits || (s < end && !isspace((unsigned char)*s)))
        return false;
    *p = s;
    *v = x;
    return true;
}

static int cmp_module(const void *a, const void *b)
{
    const struct ntl_ipt_module *x = a, *y = b;
    if (x->base != y->base)
        return x->base < y->base ? -1 : 1;
    return x->size < y->size ? -1 : x->size > y->size;
}

int ntl_ipt_module_map_parse(const char *text, size_t len, struct ntl_ipt_module_map *map,
                             struct ntl_error *err)
{
    memset(map, 0, sizeof *map);
    size_t cap = 0, line_no = 0;
    const char *end = text + len, *line = text;
    while (line < end) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        if (!eol)
            eol = end;
        line_no++;
        const char *cut = memchr(line, '#', (size_t)(eol - line));
        const char *stop = cut ? cut : eol;
        const char *p = line;
        while (p < stop && isspace((unsigned char)*p))
            p++;
        if (p < stop) {
            uint64_t base, size;
            uint64_t off = (uint64_t)(line - text);
            if (memchr(p, '\0', (size_t)(stop - p))) {
                ntl_ipt_module_map_free(map);
                return ntl_error_set(err, NTL_ERR_FORMAT, "module map", off,
                                     "line %zu: NUL byte (not a text file?)", line_no);
            }
            if (!parse_hex(&p, stop, &base))
                goto bad;
            while (p < stop && isspace((unsigned char)*p))
                p++;
            if (!parse_hex(&p, stop, &size))
                goto bad;
            while (p < stop && isspace((unsigned char)*p))
                p++;
            const char *name_end = stop;
            while (name_end > p && isspace((unsigned char)name_end[-1]))
                name_end--;
            if (name_end == p) {
                ntl_ipt_module_map_free(map);
                return ntl_error_set(err, NTL_ERR_FORMAT, "module map", off,
                                     "line %zu: no module name after BASE SIZE", line_no);
            }
            if (size == 0 || base + size - 1 < base) {
                ntl_ipt_module_map_free(map);
                return ntl_error_set(err, NTL_ERR_FORMAT, "module map", off,
                                     "line %zu: empty or wrapping range", line_no);
            }
            if (map->n == cap) {
                if (cap >= MAX_MODULES) {
                    ntl_ipt_module_map_free(map);
                    return ntl_error_set(err, NTL_ERR_LIMIT, "module map", off,
                                         "more than %d modules", MAX_MODULES);
                }
                size_t ncap = cap ? cap * 2 : 64;
                struct ntl_ipt_module *m = realloc(map->mods, ncap * sizeof *m);
                if (!m) {
                    ntl_ipt_module_map_free(map);
                    return ntl_error_set(err, NTL_ERR_NOMEM, "module map", off, "out of memory");
                }
                map->mods = m;
                cap = ncap;
            }
            char *name = malloc((size_t)(name_end - p) + 1);
            if (!name) {
                ntl_ipt_module_map_free(map);
                return ntl_error_set(err, NTL_ERR_NOMEM, "module map", off, "out of memory");
            }
            memcpy(name, p, (size_t)(name_end - p));
            name[name_end - p] = '\0';
            map->mods[map->n].base = base;
            map->mods[map->n].size = size;
            map->mods[map->n].name = name;
            map->n++;
            goto next;
        bad:
            ntl_ipt_module_map_free(map);
            return ntl_error_set(err, NTL_ERR_FORMAT, "module map", off,
                                 "line %zu: expected 'BASE SIZE NAME' with hex BASE and SIZE",
                                 line_no);
        }
    next:
        line = eol + 1;
    }
    if (map->n)
        qsort(map->mods, map->n, sizeof *map->mods, cmp_module);
    return NTL_OK;
}

void ntl_ipt_module_map_free(struct ntl_ipt_module_map *map)
{
    for (size_t i = 0; i < map->n; i++)
        free(map->mods[i].name);
    free(map->mods);
    map->mods = NULL;
    map->n = 0;
}

long ntl_ipt_module_map_find(const struct ntl_ipt_module_map *map, uint64_t ip)
{
    /* The last module whose base is <= ip, then earlier ones in case a
     * smaller module is nested in a larger one. */
    size_t lo = 0, hi = map->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (map->mods[mid].base <= ip)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0;) {
        const struct ntl_ipt_module *m = &map->mods[i];
        if (ip - m->base < m->size)
            return (long)i;
        if (lo - i > 64)
            break;
    }
    return -1;
}
