/* typeperf's counter paths: parsing, matching and expansion against a block. */
#include "ntlens/perf_path.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ntlens/perf_value.h"

static bool copy_part(char *dst, size_t size, const char *src, size_t n)
{
    if (n >= size)
        return false;
    memcpy(dst, src, n);
    dst[n] = '\0';
    return true;
}

static int bad_path(struct ntl_error *err, const char *why)
{
    return ntl_error_set(err, NTL_ERR_ARGUMENT, "counter path", NTL_NO_OFFSET, "%s", why);
}

int ntl_perf_path_parse(const char *s, struct ntl_perf_path *p, struct ntl_error *err)
{
    memset(p, 0, sizeof *p);
    if (!strncmp(s, "\\\\", 2)) {
        const char *end = strchr(s + 2, '\\');
        if (!end || end == s + 2)
            return bad_path(err, "\\\\MACHINE must be followed by \\OBJECT");
        if (!copy_part(p->machine, sizeof p->machine, s + 2, (size_t)(end - s - 2)))
            return bad_path(err, "machine name too long");
        s = end;
    }
    if (*s != '\\')
        return bad_path(err, "a counter path starts with \\ (\\OBJECT(INSTANCE)\\COUNTER)");
    s++;
    const char *last = strrchr(s, '\\');
    if (!last)
        return bad_path(err, "no \\COUNTER after the object");
    if (!last[1])
        return bad_path(err, "empty counter name");
    if (!copy_part(p->counter, sizeof p->counter, last + 1, strlen(last + 1)))
        return bad_path(err, "counter name too long");
    size_t objlen = (size_t)(last - s);
    const char *open = memchr(s, '(', objlen);
    if (open) {
        if (objlen == 0 || s[objlen - 1] != ')')
            return bad_path(err, "an instance in ( ) must end right before \\COUNTER");
        if (!copy_part(p->instance, sizeof p->instance, open + 1,
                       (size_t)(s + objlen - 1 - (open + 1))))
            return bad_path(err, "instance name too long");
        p->has_instance = true;
        objlen = (size_t)(open - s);
    }
    if (objlen == 0)
        return bad_path(err, "empty object name");
    if (!copy_part(p->object, sizeof p->object, s, objlen))
        return bad_path(err, "object name too long");
    return 0;
}

const char *ntl_perf_name(const struct ntl_perf_titles *t, uint32_t index, char *buf,
                          size_t size)
{
    const char *n = ntl_perf_titles_name(t, index);
    if (n)
        return n;
    snprintf(buf, size, "%u", index);
    return buf;
}

bool ntl_perf_has_wildcard(const char *s)
{
    return strpbrk(s, "*?") != NULL;
}

/* Iterative glob with single-star backtracking. */
bool ntl_perf_glob(const char *p, const char *s)
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

bool ntl_perf_spec_matches(const char *spec, uint32_t index, const char *name)
{
    if (all_digits(spec))
        return strtoul(spec, NULL, 10) == index;
    return name && ntl_perf_glob(spec, name);
}

bool ntl_perf_instance_matches(const char *pattern, const struct ntl_perf_instance *in)
{
    char name[1024];
    if (strchr(pattern, '/')) {
        ntl_perf_instance_path_name(in, name, sizeof name);
    } else if (in->dup_index) {
        snprintf(name, sizeof name, "%s#%u", in->name, in->dup_index);
    } else {
        if (ntl_perf_glob(pattern, in->name))
            return true;
        snprintf(name, sizeof name, "%s#0", in->name);
    }
    return ntl_perf_glob(pattern, name);
}

bool ntl_perf_parse_lang(const char *s, unsigned *lang)
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

bool ntl_perf_parse_detail(const char *s, uint32_t *level)
{
    static const char *names[] = {"novice", "advanced", "expert", "wizard"};
    for (unsigned i = 0; i < 4; i++)
        if (!strcasecmp(s, names[i])) {
            *level = 100 * (i + 1);
            return true;
        }
    if (!all_digits(s) || strlen(s) > 3)
        return false;
    unsigned long v = strtoul(s, NULL, 10);
    if (v < 1 || v > 400)
        return false;
    *level = (uint32_t)((v + 99) / 100 * 100);
    return true;
}

const char *ntl_perf_detail_name(uint32_t level)
{
    switch (level) {
    case 100: return "novice";
    case 200: return "advanced";
    case 300: return "expert";
    case 400: return "wizard";
    default: return "custom";
    }
}

void ntl_perf_path_iter_begin(struct ntl_perf_path_iter *it, const struct ntl_perf_path *path,
                              const struct ntl_perf_block *block,
                              const struct ntl_perf_titles *titles)
{
    memset(it, 0, sizeof *it);
    it->path = path;
    it->block = block;
    it->titles = titles;
}

/* Whether the path's instance part fits object o (checked once per object). */
static int check_instances(const struct ntl_perf_path *p, const struct ntl_perf_object *o,
                           const char *oname, struct ntl_error *err)
{
    bool has_instances = o->num_instances != NTL_PERF_NO_INSTANCES;
    if (has_instances && !p->has_instance)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "counter path", NTL_NO_OFFSET,
                             "object %s has instances; name one, e.g. \\%s(*)\\%s", oname,
                             oname, p->counter);
    if (!has_instances && p->has_instance && strcmp(p->instance, "*"))
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "counter path", NTL_NO_OFFSET,
                             "object %s has no instances", oname);
    return 0;
}

/* Base counters share their counter's name; only an explicit index selects one. */
static bool counter_selected(const struct ntl_perf_path *p, const struct ntl_perf_counter_def *d,
                             const char *cname)
{
    if (!ntl_perf_spec_matches(p->counter, d->name_index, cname))
        return false;
    return !ntl_perf_type_is_hidden(d->type) || strtoul(p->counter, NULL, 10) == d->name_index;
}

int ntl_perf_path_next(struct ntl_perf_path_iter *it, const char *machine,
                       struct ntl_perf_path_match *m, struct ntl_error *err)
{
    const struct ntl_perf_path *p = it->path;
    const struct ntl_perf_block *b = it->block;
    char obuf[16], cbuf[16];
    int rc;

    for (; it->object < b->nobjects; it->object++, it->counter = 0, it->instance = 0) {
        const struct ntl_perf_object *o = &b->objects[it->object];
        const char *oname = ntl_perf_name(it->titles, o->name_index, obuf, sizeof obuf);
        if (!ntl_perf_spec_matches(p->object, o->name_index, oname))
            continue;
        if (it->counter == 0 && it->instance == 0 && (rc = check_instances(p, o, oname, err)) < 0)
            return rc;
        bool has_instances = o->num_instances != NTL_PERF_NO_INSTANCES;
        for (; it->counter < o->ncounters; it->counter++, it->instance = 0) {
            const struct ntl_perf_counter_def *d = &o->counters[it->counter];
            const char *cname = ntl_perf_name(it->titles, d->name_index, cbuf, sizeof cbuf);
            if (!counter_selected(p, d, cname))
                continue;
            m->object = o;
            m->counter = it->counter;
            if (!has_instances) {
                m->instance = NULL;
                m->instance_name[0] = '\0';
                snprintf(m->path, sizeof m->path, "\\\\%s\\%s\\%s", machine, oname, cname);
                it->counter++;
                return 1;
            }
            for (; it->instance < o->ninstances; it->instance++) {
                const struct ntl_perf_instance *in = &o->instances[it->instance];
                if (!ntl_perf_instance_matches(p->instance, in))
                    continue;
                m->instance = in;
                ntl_perf_instance_path_name(in, m->instance_name, sizeof m->instance_name);
                snprintf(m->path, sizeof m->path, "\\\\%s\\%s(%s)\\%s", machine, oname,
                         m->instance_name, cname);
                it->instance++;
                return 1;
            }
        }
    }
    return 0;
}
