/* `ntlens sample`'s columns: counter paths expanded against the first
 * snapshot (as typeperf does), and each later snapshot's values computed
 * with PDH's formulas (ntlens/perf_value.h). */
#include <stdlib.h>
#include <string.h>

#include "ntlens/perf_value.h"
#include "sample.h"

static int add_column(struct sample_columns *cols, size_t host, const char *path,
                      const struct ntl_perf_object *o, size_t counter, const char *instance)
{
    if (cols->n == cols->cap) {
        size_t cap = cols->cap ? 2 * cols->cap : 16;
        struct sample_column *v = realloc(cols->v, cap * sizeof *v);
        if (!v)
            return -1;
        cols->v = v;
        cols->cap = cap;
    }
    struct sample_column *c = &cols->v[cols->n];
    memset(c, 0, sizeof *c);
    c->path = strdup(path);
    c->instance = instance ? strdup(instance) : NULL;
    if (!c->path || (instance && !c->instance)) {
        free(c->path);
        free(c->instance);
        return -1;
    }
    c->host = host;
    c->object_index = o->name_index;
    c->counter_index = o->counters[counter].name_index;
    c->counter_pos = counter;
    c->scale = o->counters[counter].default_scale;
    cols->n++;
    return 0;
}

void sample_columns_free(struct sample_columns *cols)
{
    for (size_t i = 0; i < cols->n; i++) {
        free(cols->v[i].path);
        free(cols->v[i].instance);
    }
    free(cols->v);
    memset(cols, 0, sizeof *cols);
}

long sample_columns_expand(struct sample_columns *cols, const struct ntl_perf_path *p,
                           size_t host, const struct ntl_perf_block *b,
                           const struct ntl_perf_titles *titles, struct ntl_error *err)
{
    const char *machine = p->machine[0] ? p->machine
                                        : (b->system_name[0] ? b->system_name : ".");
    struct ntl_perf_path_iter it;
    struct ntl_perf_path_match *m = malloc(sizeof *m);
    long added = 0;
    int r;

    if (!m)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    ntl_perf_path_iter_begin(&it, p, b, titles);
    while ((r = ntl_perf_path_next(&it, machine, m, err)) > 0) {
        if (add_column(cols, host, m->path, m->object, m->counter,
                       m->instance ? m->instance_name : NULL) < 0) {
            r = ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
            break;
        }
        added++;
    }
    free(m);
    return r < 0 ? r : added;
}

bool sample_columns_need_priming(const struct sample_columns *cols,
                                 const struct sample_host *hosts)
{
    for (size_t i = 0; i < cols->n; i++) {
        const struct sample_column *c = &cols->v[i];
        const struct ntl_perf_object *ob =
            ntl_perf_block_find_object(hosts[c->host].block, c->object_index);
        if (ntl_perf_type_needs_two_samples(ob->counters[c->counter_pos].type))
            return true;
    }
    return false;
}

/* Per snapshot: the instance of each column's object by path name, through
 * one hash table per object used. */
#define MAX_INDEXED 64 /* objects with instances one row may use */

struct inst_index {
    const struct ntl_perf_object *obj;
    uint32_t *slots; /* instance + 1; 0 empty */
    size_t mask;
};

static uint32_t str_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int index_build(struct inst_index *ix, const struct ntl_perf_object *o)
{
    char name[1024];
    size_t n = 16;
    while (n < 2 * o->ninstances)
        n *= 2;
    ix->obj = o;
    ix->slots = calloc(n, sizeof *ix->slots);
    ix->mask = n - 1;
    if (!ix->slots)
        return -1;
    for (size_t j = 0; j < o->ninstances; j++) {
        ntl_perf_instance_path_name(&o->instances[j], name, sizeof name);
        size_t s = str_hash(name) & ix->mask;
        while (ix->slots[s])
            s = (s + 1) & ix->mask;
        ix->slots[s] = (uint32_t)j + 1;
    }
    return 0;
}

static long index_find(const struct inst_index *ix, const char *key)
{
    char name[1024];
    size_t s = str_hash(key) & ix->mask;
    while (ix->slots[s]) {
        size_t j = ix->slots[s] - 1;
        ntl_perf_instance_path_name(&ix->obj->instances[j], name, sizeof name);
        if (!strcmp(name, key))
            return (long)j;
        s = (s + 1) & ix->mask;
    }
    return -1;
}

struct inst_indices {
    struct inst_index v[MAX_INDEXED];
    size_t n;
    const struct ntl_perf_block *block; /* the one they index */
};

static void indices_reset(struct inst_indices *ixs, const struct ntl_perf_block *b)
{
    for (size_t k = 0; k < ixs->n; k++)
        free(ixs->v[k].slots);
    ixs->n = 0;
    ixs->block = b;
}

/* The instance named key of o, or -1. */
static long find_instance(struct inst_indices *ixs, const struct ntl_perf_object *o,
                          const char *key)
{
    size_t k;
    for (k = 0; k < ixs->n; k++)
        if (ixs->v[k].obj == o)
            break;
    if (k == ixs->n) {
        if (k == MAX_INDEXED || index_build(&ixs->v[k], o) < 0)
            return -1;
        ixs->n++;
    }
    return index_find(&ixs->v[k], key);
}

/* The raw sample of a column in block b; false when it is not there. */
static bool column_raw(const struct sample_column *c, const struct ntl_perf_block *b,
                       struct inst_indices *ixs, struct ntl_perf_raw *raw)
{
    const struct ntl_perf_object *o = ntl_perf_block_find_object(b, c->object_index);
    struct ntl_error err;
    if (!o)
        return false;
    size_t pos = c->counter_pos;
    if (pos >= o->ncounters || o->counters[pos].name_index != c->counter_index) {
        int f = ntl_perf_object_find_counter(o, c->counter_index);
        if (f < 0)
            return false;
        pos = (size_t)f;
    }
    size_t inst = 0;
    if (c->instance) {
        if (o->num_instances == NTL_PERF_NO_INSTANCES)
            return false;
        long j = find_instance(ixs, o, c->instance);
        if (j < 0)
            return false;
        inst = (size_t)j;
    } else if (o->num_instances != NTL_PERF_NO_INSTANCES) {
        return false;
    }
    return ntl_perf_raw_get(b, o, pos, inst, raw, &err) == 0;
}

void sample_values(struct sample_columns *cols, const struct sample_host *hosts, bool scale,
                   double *v, bool *ok)
{
    struct inst_indices ixs = {.n = 0, .block = NULL};

    for (size_t i = 0; i < cols->n; i++) {
        struct sample_column *c = &cols->v[i];
        const struct ntl_perf_block *b = hosts[c->host].block;
        struct ntl_perf_raw raw;
        int st = -1;
        if (b != ixs.block) /* columns are grouped by host: one index set at a time */
            indices_reset(&ixs, b);
        v[i] = 0;
        bool have = column_raw(c, b, &ixs, &raw);
        if (have) {
            st = ntl_perf_value_compute(&raw, c->have_prev ? &c->prev : NULL, &v[i]);
            c->prev = raw;
        }
        c->have_prev = have;
        /* no time passed (the same snapshot twice) gives no value, not 0 */
        ok[i] = have && (st == NTL_PERF_VALUE_OK || st == NTL_PERF_VALUE_UNKNOWN_TYPE);
        if (ok[i] && scale)
            v[i] *= ntl_perf_scale(c->scale);
    }
    indices_reset(&ixs, NULL);
}
