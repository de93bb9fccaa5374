/* The records of `ntlens counters` (cmd-counters.h): objects, an object's
 * counters, instances, or counter paths for `ntlens sample`. Keys are the
 * ones sample uses where the two overlap: host, path, object, counter,
 * instance. */
#include <stdio.h>

#include "cmd-counters.h"
#include "ntlens/perf_path.h"
#include "ntlens/perf_value.h"

static bool object_selected(const struct counters_opts *o, const struct ntl_perf_object *obj,
                            const char *name)
{
    if (!ntl_perf_detail_visible(obj->detail_level, o->detail))
        return false;
    if (o->nobjects == 0)
        return true;
    for (int i = 0; i < o->nobjects; i++)
        if (ntl_perf_spec_matches(o->objects[i], obj->name_index, name))
            return true;
    return false;
}

static void help_cell(struct out *t, const struct ntl_perf_titles *help, uint32_t index)
{
    const char *h = ntl_perf_titles_help(help, index);
    if (h)
        out_str(t, h);
    else
        out_null(t);
}

void counters_columns(struct out *t, const struct counters_opts *o)
{
    if (o->host_column)
        out_column(t, "host", "Host", OUT_LEFT);
    switch (o->view) {
    case VIEW_OBJECTS:
        out_column(t, "index", "Index", OUT_RIGHT);
        out_column(t, "object", "Object", OUT_LEFT);
        out_column(t, "detail", "Detail", OUT_LEFT);
        out_column(t, "instances", "Instances", OUT_RIGHT);
        out_column(t, "counters", "Counters", OUT_RIGHT);
        break;
    case VIEW_COUNTERS:
        out_column(t, "object", "Object", OUT_LEFT);
        out_column(t, "index", "Index", OUT_RIGHT);
        out_column(t, "counter", "Counter", OUT_LEFT);
        out_column(t, "type", "Type", OUT_LEFT);
        out_column(t, "size", "Size", OUT_RIGHT);
        out_column(t, "detail", "Detail", OUT_LEFT);
        out_column(t, "scale", "Scale", OUT_RIGHT);
        break;
    case VIEW_INSTANCES:
        out_column(t, "object", "Object", OUT_LEFT);
        out_column(t, "number", "#", OUT_RIGHT);
        out_column(t, "instance", "Instance", OUT_LEFT);
        out_column(t, "path_name", "Path Name", OUT_LEFT);
        out_column(t, "parent_object", "Parent Object", OUT_LEFT);
        out_column(t, "parent_instance", "Parent #", OUT_RIGHT);
        out_column(t, "unique_id", "Unique ID", OUT_RIGHT);
        return;
    case VIEW_PATHS:
        out_column(t, "path", "Path", OUT_LEFT);
        out_column(t, "object", "Object", OUT_LEFT);
        out_column(t, "instance", "Instance", OUT_LEFT);
        out_column(t, "counter", "Counter", OUT_LEFT);
        out_column(t, "index", "Index", OUT_RIGHT);
        out_column(t, "type", "Type", OUT_LEFT);
        return;
    }
    if (o->explain)
        out_column(t, "help", "Help", OUT_LEFT);
}

static size_t object_rows(struct out *t, const struct counters_opts *o,
                          const struct counters_source *s)
{
    const struct ntl_perf_block *b = s->block;
    char buf[16];
    size_t n = 0;

    for (size_t i = 0; i < b->nobjects; i++) {
        const struct ntl_perf_object *obj = &b->objects[i];
        const char *name = ntl_perf_name(s->titles, obj->name_index, buf, sizeof buf);
        if (!object_selected(o, obj, name))
            continue;
        if (o->host_column)
            out_str(t, s->host);
        out_u64(t, obj->name_index);
        out_str(t, name);
        out_str(t, ntl_perf_detail_name(obj->detail_level));
        if (obj->num_instances == NTL_PERF_NO_INSTANCES)
            out_null(t);
        else
            out_u64(t, obj->ninstances);
        out_u64(t, obj->ncounters);
        if (o->explain)
            help_cell(t, s->help, obj->help_index);
        out_row_end(t);
        n++;
    }
    return n;
}

static void counter_row(struct out *t, const struct counters_opts *o,
                        const struct counters_source *s, const char *oname,
                        const struct ntl_perf_counter_def *d)
{
    char cbuf[16], tbuf[48];
    if (o->host_column)
        out_str(t, s->host);
    out_str(t, oname);
    out_u64(t, d->name_index);
    out_str(t, ntl_perf_name(s->titles, d->name_index, cbuf, sizeof cbuf));
    out_str(t, ntl_perf_type_format(d->type, tbuf, sizeof tbuf));
    out_u64(t, d->size);
    out_str(t, ntl_perf_detail_name(d->detail_level));
    out_i64(t, d->default_scale);
    if (o->explain)
        help_cell(t, s->help, d->help_index);
    out_row_end(t);
}

static size_t counter_rows(struct out *t, const struct counters_opts *o,
                           const struct counters_source *s)
{
    const struct ntl_perf_block *b = s->block;
    char buf[16];
    size_t n = 0;

    for (size_t i = 0; i < b->nobjects; i++) {
        const struct ntl_perf_object *obj = &b->objects[i];
        const char *oname = ntl_perf_name(s->titles, obj->name_index, buf, sizeof buf);
        if (!object_selected(o, obj, oname))
            continue;
        for (size_t c = 0; c < obj->ncounters; c++)
            if (ntl_perf_detail_visible(obj->counters[c].detail_level, o->detail)) {
                counter_row(t, o, s, oname, &obj->counters[c]);
                n++;
            }
    }
    return n;
}

static void instance_row(struct out *t, const struct counters_opts *o,
                         const struct counters_source *s, const char *oname, size_t j,
                         const struct ntl_perf_instance *in)
{
    char pbuf[16], path[1024];
    if (o->host_column)
        out_str(t, s->host);
    out_str(t, oname);
    out_u64(t, j);
    out_str(t, in->name);
    ntl_perf_instance_path_name(in, path, sizeof path);
    out_str(t, path);
    if (in->parent_object_index) {
        out_str(t, ntl_perf_name(s->titles, in->parent_object_index, pbuf, sizeof pbuf));
        out_u64(t, in->parent_instance_number);
    } else {
        out_null(t);
        out_null(t);
    }
    if (in->unique_id == -1)
        out_null(t);
    else
        out_i64(t, in->unique_id);
    out_row_end(t);
}

static size_t instance_rows(struct out *t, const struct counters_opts *o,
                            const struct counters_source *s)
{
    const struct ntl_perf_block *b = s->block;
    char buf[16];
    size_t n = 0;

    for (size_t i = 0; i < b->nobjects; i++) {
        const struct ntl_perf_object *obj = &b->objects[i];
        const char *oname = ntl_perf_name(s->titles, obj->name_index, buf, sizeof buf);
        if (!object_selected(o, obj, oname))
            continue;
        for (size_t j = 0; j < obj->ninstances; j++, n++)
            instance_row(t, o, s, oname, j, &obj->instances[j]);
    }
    return n;
}

/* One counter path: typeperf -q's line in the default format, a record in
 * the others. instance is NULL for an object without instances. */
static void path_row(struct out *t, const struct counters_opts *o,
                     const struct counters_source *s, const char *oname, const char *instance,
                     const char *cname, const struct ntl_perf_counter_def *d)
{
    char path[1400], tbuf[48];
    snprintf(path, sizeof path, "%s%s\\%s%s%s%s\\%s", o->host_column ? "\\\\" : "",
             o->host_column ? s->host : "", oname, instance ? "(" : "", instance ? instance : "",
             instance ? ")" : "", cname);
    if (o->fmt == OUT_TABLE) {
        puts(path);
        return;
    }
    if (o->host_column)
        out_str(t, s->host);
    out_str(t, path);
    out_str(t, oname);
    if (instance)
        out_str(t, instance);
    else
        out_null(t);
    out_str(t, cname);
    out_u64(t, d->name_index);
    out_str(t, ntl_perf_type_format(d->type, tbuf, sizeof tbuf));
    out_row_end(t);
}

/* A counter's paths: one, or with --instances one per instance. */
static size_t counter_paths(struct out *t, const struct counters_opts *o,
                            const struct counters_source *s, const struct ntl_perf_object *obj,
                            const char *oname, const struct ntl_perf_counter_def *d)
{
    char cbuf[16], inst[1024];
    const char *cname = ntl_perf_name(s->titles, d->name_index, cbuf, sizeof cbuf);

    if (obj->num_instances == NTL_PERF_NO_INSTANCES || !o->instances) {
        path_row(t, o, s, oname, obj->num_instances == NTL_PERF_NO_INSTANCES ? NULL : "*",
                 cname, d);
        return 1;
    }
    for (size_t j = 0; j < obj->ninstances; j++) {
        ntl_perf_instance_path_name(&obj->instances[j], inst, sizeof inst);
        path_row(t, o, s, oname, inst, cname, d);
    }
    return obj->ninstances;
}

static size_t path_rows(struct out *t, const struct counters_opts *o,
                        const struct counters_source *s)
{
    const struct ntl_perf_block *b = s->block;
    char buf[16];
    size_t n = 0;

    for (size_t i = 0; i < b->nobjects; i++) {
        const struct ntl_perf_object *obj = &b->objects[i];
        const char *oname = ntl_perf_name(s->titles, obj->name_index, buf, sizeof buf);
        if (!object_selected(o, obj, oname))
            continue;
        for (size_t c = 0; c < obj->ncounters; c++) {
            const struct ntl_perf_counter_def *d = &obj->counters[c];
            if (ntl_perf_detail_visible(d->detail_level, o->detail) &&
                !ntl_perf_type_is_hidden(d->type))
                n += counter_paths(t, o, s, obj, oname, d);
        }
    }
    return n;
}

size_t counters_rows(struct out *t, const struct counters_opts *o, const struct counters_source *s)
{
    switch (o->view) {
    case VIEW_OBJECTS:
        return object_rows(t, o, s);
    case VIEW_COUNTERS:
        return counter_rows(t, o, s);
    case VIEW_INSTANCES:
        return instance_rows(t, o, s);
    case VIEW_PATHS:
        return path_rows(t, o, s);
    }
    return 0;
}
