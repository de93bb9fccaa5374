/* The "local" source on Windows: RegQueryValueExW on HKEY_PERFORMANCE_DATA.
 * The size that call reports with ERROR_MORE_DATA is not a hint for this
 * key (the data changes between calls), so the buffer doubles until the
 * answer fits or max_block is reached. Every attempt makes Windows collect
 * all the data again, so the size that worked is where the next data query
 * starts (ps -s and capture query the same thing repeatedly). */
#include "ntlens/source.h"

#include <windows.h>

#include <stdio.h>
#include <stdlib.h>

#define FIRST_SIZE (64u << 10)

struct local_win32 {
    size_t max_block;
    size_t data_size; /* buffer size the last data query needed; 0 at first */
};

static int win32_error(struct ntl_error *err, LONG rc, const char *what)
{
    int status = rc == ERROR_FILE_NOT_FOUND ? NTL_ERR_NOT_FOUND
                 : rc == ERROR_ACCESS_DENIED ? NTL_ERR_ACCESS
                                             : NTL_ERR_SYSTEM;
    return ntl_error_set(err, status, NULL, NTL_NO_OFFSET,
                         "RegQueryValueEx(HKEY_PERFORMANCE_DATA, \"%s\") failed with error %ld",
                         what, (long)rc);
}

/* One value of HKEY_PERFORMANCE_DATA into out, growing on ERROR_MORE_DATA
 * from *start (FIRST_SIZE when smaller), which is set to the size that fit. */
static int query_value(const struct local_win32 *l, const char *name, struct ntl_buf *out,
                       size_t *start, struct ntl_error *err)
{
    WCHAR wname[128];
    size_t size = *start > FIRST_SIZE ? *start : FIRST_SIZE;
    size_t limit = l->max_block < out->limit ? l->max_block : out->limit;
    int n = MultiByteToWideChar(CP_UTF8, 0, name, -1, wname, (int)(sizeof wname / sizeof wname[0]));

    if (n <= 0)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET, "query '%s' is too long", name);
    if (size > limit)
        size = limit;
    out->len = 0;
    for (;;) {
        DWORD type = 0, got = (DWORD)size;
        LONG rc;

        if (ntl_buf_reserve(out, size) < 0)
            return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET,
                                 "no memory for a %zu-byte answer", size);
        rc = RegQueryValueExW(HKEY_PERFORMANCE_DATA, wname, NULL, &type, out->data, &got);
        if (rc == ERROR_SUCCESS) {
            out->len = got <= size ? got : size;
            *start = size;
            return 0;
        }
        if (rc != ERROR_MORE_DATA)
            return win32_error(err, rc, name);
        if (size >= limit)
            return ntl_error_set(err, NTL_ERR_LIMIT, NULL, NTL_NO_OFFSET,
                                 "answer to '%s' is larger than the %zu-byte limit", name, limit);
        size = size > limit / 2 ? limit : size * 2;
    }
}

static int local_query(struct ntl_source *src, const char *query, struct ntl_buf *block,
                       struct ntl_error *err)
{
    struct local_win32 *l = ntl_source_impl(src);
    return query_value(l, query && *query ? query : "Global", block, &l->data_size, err);
}

static int local_titles(struct ntl_source *src, enum ntl_title_kind kind, unsigned langid,
                        struct ntl_buf *out, struct ntl_error *err)
{
    char name[32];
    size_t start = 0;
    snprintf(name, sizeof name, "%s %03x", kind == NTL_TITLES_HELP ? "Help" : "Counter", langid);
    return query_value(ntl_source_impl(src), name, out, &start, err);
}

static void local_close(struct ntl_source *src)
{
    /* Releases the performance-data providers HKEY_PERFORMANCE_DATA loaded. */
    RegCloseKey(HKEY_PERFORMANCE_DATA);
    free(ntl_source_impl(src));
}

static const struct ntl_source_ops local_ops = {
    .query = local_query,
    .titles = local_titles,
    .snapshot_count = NULL,
    .close = local_close,
};

/* HKEY_PERFORMANCE_DATA's blocks carry the NetBIOS name. */
int ntl_source_local_hostname(char *buf, size_t size, struct ntl_error *err)
{
    DWORD n = size > 0xffff ? 0xffff : (DWORD)size;
    if (size == 0 || !GetComputerNameExA(ComputerNameNetBIOS, buf, &n)) {
        if (size)
            buf[0] = '\0';
        return ntl_error_set(err, NTL_ERR_SYSTEM, NULL, NTL_NO_OFFSET,
                             "GetComputerNameEx failed with error %lu",
                             (unsigned long)GetLastError());
    }
    return 0;
}

int ntl_source_local_open(const struct ntl_source_options *opt, struct ntl_source **out,
                          struct ntl_error *err)
{
    struct local_win32 *l = calloc(1, sizeof *l);

    *out = NULL;
    if (!l)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    l->max_block = opt && opt->max_block ? opt->max_block : NTL_SOURCE_DEFAULT_MAX_BLOCK;
    if (!(*out = ntl_source_new(&local_ops, l, "local (HKEY_PERFORMANCE_DATA)"))) {
        free(l);
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    }
    return 0;
}
