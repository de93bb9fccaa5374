#include "dump-common.h"

#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

bool dump_parse_base(const char *arg, struct dump_base *b)
{
    const char *eq = strrchr(arg, '=');
    if (!eq || eq == arg || !cli_parse_u64(eq + 1, &b->addr))
        return false;
    b->name = malloc((size_t)(eq - arg) + 1);
    if (!b->name)
        return false;
    memcpy(b->name, arg, (size_t)(eq - arg));
    b->name[eq - arg] = 0;
    b->used = false;
    return true;
}

const char *dump_base_name(const char *path)
{
    const char *b = path;
    for (const char *p = path; *p; p++)
        if (*p == '/' || *p == '\\')
            b = p + 1;
    return b;
}

static bool eq_nocase(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]))
            return false;
    return true;
}

bool dump_same_module(const char *a, const char *b)
{
    const char *x = dump_base_name(a), *y = dump_base_name(b);
    size_t lx = strlen(x), ly = strlen(y);
    const char *dx = strrchr(x, '.'), *dy = strrchr(y, '.');
    if (lx == ly && eq_nocase(x, y, lx))
        return true;
    if (!dx && dy && (size_t)(dy - y) == lx)
        return eq_nocase(x, y, lx);
    if (!dy && dx && (size_t)(dx - x) == ly)
        return eq_nocase(x, y, ly);
    return false;
}

void dump_hex_cell(struct out_table *t, enum out_format fmt, uint64_t v, int digits)
{
    if (fmt == OUT_TABLE)
        out_table_strf(t, "0x%0*" PRIx64, digits, v);
    else
        out_table_u64(t, v);
}

char *dump_find_file(const char *const *dirs, size_t ndirs, const char *name)
{
    const char *want = dump_base_name(name);
    size_t lw = strlen(want);
    for (size_t i = 0; i < ndirs; i++) {
        DIR *d = opendir(dirs[i]);
        struct dirent *e;
        if (!d)
            continue;
        while ((e = readdir(d)) != NULL) {
            if (strlen(e->d_name) == lw && eq_nocase(e->d_name, want, lw)) {
                size_t n = strlen(dirs[i]) + lw + 2;
                char *path = malloc(n);
                if (path)
                    snprintf(path, n, "%s/%s", dirs[i], e->d_name);
                closedir(d);
                return path;
            }
        }
        closedir(d);
    }
    return NULL;
}
