/* A parsed manifest's names resolved: maps and length/count fields of
 * template items, event templates and names, map messages, and the events
 * sorted for lookup by provider, id and version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest-internal.h"

static int missing(struct ntl_error *err, size_t offset, const char *what, const char *name)
{
    return ntl_error_set(err, NTL_ERR_FORMAT, "manifest", offset, "%s '%s' is not defined", what,
                         name);
}

static char *own(struct ntl_etl_manifest *m, size_t n)
{
    char **o = m->nowned < m->capowned ? m->owned : realloc(m->owned, (m->capowned * 2 + 16) * sizeof *o);
    char *s;
    if (!o)
        return NULL;
    if (o != m->owned)
        m->owned = o, m->capowned = m->capowned * 2 + 16;
    if (!(s = malloc(n)))
        return NULL;
    return m->owned[m->nowned++] = s;
}

/* "$(string.X)": the string table's text for X; other messages as they are. */
static const char *message(const struct ntl_etl_manifest *m, const char *s)
{
    size_t n = strlen(s);
    if (n < 11 || strncmp(s, "$(string.", 9) || s[n - 1] != ')')
        return s;
    for (size_t i = 0; i < m->nstrings; i++)
        if (strlen(m->strings[i].id) == n - 10 && !strncmp(m->strings[i].id, s + 9, n - 10))
            return m->strings[i].value;
    return s;
}

/* The earlier value field of the template named `name` (a length or count). */
static uint32_t field_ref(const struct ntl_etl_manifest *m, const struct mf_template *t, uint32_t i,
                          const char *name)
{
    while (i-- > t->first)
        if (!m->items[i].is_struct && !strcmp(m->items[i].name, name))
            return i;
    return MF_NONE;
}

static int items(struct ntl_etl_manifest *m, struct ntl_error *err)
{
    for (size_t t = 0; t < m->ntemplates; t++) {
        const struct mf_template *tp = &m->templates[t];
        for (uint32_t i = tp->first; i < tp->end; i++) {
            struct mf_item *it = &m->items[i];
            if (it->length_name && (it->length_ref = field_ref(m, tp, i, it->length_name)) == MF_NONE)
                return missing(err, it->offset, "length field", it->length_name);
            if (it->count_name && (it->count_ref = field_ref(m, tp, i, it->count_name)) == MF_NONE)
                return missing(err, it->offset, "count field", it->count_name);
            if (!it->map_name)
                continue;
            for (uint32_t k = 0; k < m->nmaps && it->map == MF_NONE; k++)
                if (m->maps[k].provider == tp->provider && !strcmp(m->maps[k].name, it->map_name))
                    it->map = k;
            if (it->map == MF_NONE)
                return missing(err, it->offset, "map", it->map_name);
        }
    }
    for (size_t i = 0; i < m->nentries; i++)
        m->entries[i].text = message(m, m->entries[i].text);
    return 0;
}

/* "Task/Opcode" ("win:" dropped), the task alone, or the symbol. */
static int event_name(struct ntl_etl_manifest *m, struct mf_event *e)
{
    const char *op = e->opcode;
    char *s;
    if (!e->task) {
        e->name = e->symbol;
        return 0;
    }
    if (op && !strncmp(op, "win:", 4))
        op += 4;
    if (!op || !strcmp(op, "Info")) {
        e->name = e->task;
        return 0;
    }
    if (!(s = own(m, strlen(e->task) + strlen(op) + 2)))
        return NTL_ERR_NOMEM;
    sprintf(s, "%s/%s", e->task, op);
    e->name = s;
    return 0;
}

static int by_key(const void *a, const void *b)
{
    const struct mf_event *x = a, *y = b;
    if (x->provider != y->provider)
        return x->provider < y->provider ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->version > y->version) - (x->version < y->version);
}

int mf_resolve(struct ntl_etl_manifest *m, struct ntl_error *err)
{
    int rc = items(m, err);
    for (size_t i = 0; rc == 0 && i < m->nevents; i++) {
        struct mf_event *e = &m->events[i];
        for (uint32_t t = 0; e->tmpl_name && t < m->ntemplates && e->tmpl == MF_NONE; t++)
            if (m->templates[t].provider == e->provider && !strcmp(m->templates[t].tid, e->tmpl_name))
                e->tmpl = t;
        if (e->tmpl_name && e->tmpl == MF_NONE)
            return missing(err, e->offset, "template", e->tmpl_name);
        if (event_name(m, e) < 0)
            return ntl_error_set(err, NTL_ERR_NOMEM, "manifest", NTL_NO_OFFSET, "out of memory");
    }
    if (rc < 0)
        return rc;
    if (m->nevents)
        qsort(m->events, m->nevents, sizeof *m->events, by_key);
    for (uint32_t p = 0, i = 0; p < m->nproviders; p++) {
        m->providers[p].first_event = i;
        while (i < m->nevents && m->events[i].provider == p)
            i++;
        m->providers[p].end_event = i;
    }
    return 0;
}
