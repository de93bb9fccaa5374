/* Shared by the performance-data commands; see perf-cli.h. */
#include "perf-cli.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

int perf_titles_load(const char *cmd, struct ntl_source *src, unsigned lang, bool help,
                     struct ntl_perf_titles *t, bool *missing)
{
    struct ntl_buf raw;
    struct ntl_error err;
    int rc;

    ntl_error_clear(&err);
    ntl_buf_init(&raw, 64u << 20);
    if (missing)
        *missing = false;
    rc = ntl_source_titles(src, help ? NTL_TITLES_HELP : NTL_TITLES_COUNTER, lang, &raw, &err);
    if (rc >= 0) {
        rc = ntl_perf_titles_add(t, help, raw.data, raw.len, &err);
        if (rc < 0) {
            char ctx[64];
            snprintf(ctx, sizeof ctx, "%s %03x", help ? "Help" : "Counter", lang);
            ntl_buf_free(&raw);
            return cli_fail(cmd, &err, ctx);
        }
    } else if (missing) {
        *missing = true;
    }
    ntl_buf_free(&raw);
    if (ntl_perf_titles_add_standard(t) < 0)
        return cli_failf(cmd, "out of memory");
    return EXIT_OK;
}

int perf_snapshot(struct ntl_source *src, const char *query, struct ntl_buf *raw,
                  struct ntl_perf_block **block, struct ntl_error *err)
{
    *block = NULL;
    raw->len = 0;
    int rc = ntl_source_query(src, query, raw, err);
    if (rc < 0)
        return rc;
    return ntl_perf_block_parse(raw->data, raw->len, block, err);
}

const char *perf_name(const struct ntl_perf_titles *t, uint32_t index, char *buf, size_t size)
{
    const char *n = ntl_perf_titles_name(t, index);
    if (n)
        return n;
    snprintf(buf, size, "%u", index);
    return buf;
}

bool perf_has_wildcard(const char *s)
{
    return strpbrk(s, "*?") != NULL;
}

/* Iterative glob with single-star backtracking: linear in practice and
 * never exponential. */
bool perf_glob(const char *p, const char *s)
{
    const char *star = NULL, *mark = NULL;
    while (*s) {
        if (*p == '*') {
            star = p++;
            mark = s;
        } else if (*p == '?' || (*p && tolower((unsigned char)*p) == tolower((unsigned char)*s))) {
            p++;
            s++;
        } else if (star) {
            p = star + 1;
            s = ++mark;
        } else {
            return false;
        }
    }
    while (*p == '*')
        p++;
    return !*p;
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

bool perf_spec_matches(const char *spec, uint32_t index, const char *name)
{
    if (all_digits(spec))
        return strtoul(spec, NULL, 10) == index;
    return name && perf_glob(spec, name);
}

bool perf_parse_lang(const char *s, unsigned *lang)
{
    char *end;
    if (!*s || strlen(s) > 10)
        return false;
    unsigned long v = strtoul(s, &end, 16);
    if (*end || v == 0 || v > 0xffff)
        return false;
    *lang = (unsigned)v;
    return true;
}

bool perf_parse_detail(const char *s, uint32_t *level)
{
    static const char *names[] = {"novice", "advanced", "expert", "wizard"};
    for (unsigned i = 0; i < 4; i++)
        if (!strcasecmp(s, names[i])) {
            *level = 100 * (i + 1);
            return true;
        }
    long v;
    if (!cli_parse_int(s, 1, 400, &v))
        return false;
    *level = (uint32_t)((v + 99) / 100 * 100);
    return true;
}

const char *perf_detail_name(uint32_t level)
{
    switch (level) {
    case 100: return "novice";
    case 200: return "advanced";
    case 300: return "expert";
    case 400: return "wizard";
    default: return "custom";
    }
}

static bool copy_part(char *dst, size_t size, const char *src, size_t n)
{
    if (n >= size)
        return false;
    memcpy(dst, src, n);
    dst[n] = '\0';
    return true;
}

const char *perf_path_parse(const char *s, struct perf_path *p)
{
    memset(p, 0, sizeof *p);
    if (!strncmp(s, "\\\\", 2)) {
        const char *end = strchr(s + 2, '\\');
        if (!end || end == s + 2)
            return "\\\\MACHINE must be followed by \\OBJECT";
        if (!copy_part(p->machine, sizeof p->machine, s + 2, (size_t)(end - s - 2)))
            return "machine name too long";
        s = end;
    }
    if (*s != '\\')
        return "a counter path starts with \\ (\\OBJECT(INSTANCE)\\COUNTER)";
    s++;
    const char *last = strrchr(s, '\\');
    if (!last)
        return "no \\COUNTER after the object";
    if (!last[1])
        return "empty counter name";
    if (!copy_part(p->counter, sizeof p->counter, last + 1, strlen(last + 1)))
        return "counter name too long";
    size_t objlen = (size_t)(last - s);
    const char *open = memchr(s, '(', objlen);
    if (open) {
        if (objlen == 0 || s[objlen - 1] != ')')
            return "an instance in ( ) must end right before \\COUNTER";
        if (!copy_part(p->instance, sizeof p->instance, open + 1,
                       (size_t)(s + objlen - 1 - (open + 1))))
            return "instance name too long";
        p->has_instance = true;
        objlen = (size_t)(open - s);
    }
    if (objlen == 0)
        return "empty object name";
    if (!copy_part(p->object, sizeof p->object, s, objlen))
        return "object name too long";
    return NULL;
}

bool perf_instance_matches(const char *pattern, const struct ntl_perf_instance *in)
{
    char name[1024];
    if (strchr(pattern, '/')) {
        ntl_perf_instance_path_name(in, name, sizeof name);
    } else if (in->dup_index) {
        snprintf(name, sizeof name, "%s#%u", in->name, in->dup_index);
    } else {
        /* the first of same-named instances is "name", also "name#0" */
        if (perf_glob(pattern, in->name))
            return true;
        snprintf(name, sizeof name, "%s#0", in->name);
    }
    return perf_glob(pattern, name);
}
