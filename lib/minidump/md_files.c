/* Module file names: base names, matching a trace's names to files, and
 * finding a module file in search directories. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/minidump_build.h"

const char *ntl_md_base_name(const char *path)
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

bool ntl_md_same_module(const char *a, const char *b)
{
    const char *x = ntl_md_base_name(a), *y = ntl_md_base_name(b);
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

char *ntl_md_find_file(const char *const *dirs, size_t ndirs, const char *name)
{
    const char *want = ntl_md_base_name(name);
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

const char *ntl_md_status_name(int status)
{
    switch (status) {
    case NTL_MD_INCOMPLETE: return "incomplete dump";
    case NTL_MD_NO_MODULE_FILE: return "no module file";
    case NTL_MD_NO_BASE: return "no load address";
    case NTL_MD_NO_MODULES: return "no module found";
    default: return ntl_status_name(status);
    }
}
