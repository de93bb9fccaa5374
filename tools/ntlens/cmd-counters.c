/* ntlens counters: what a source offers, like typeperf -q / -qx: objects with
 * their index, name, detail level and instance count; an object's counters
 * with index, name, symbolic type, size, detail level and help; instances. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-source.h"
#include "cli.h"
#include "commands.h"
#include "ntlens/perf.h"
#include "ntlens/perf_value.h"
#include "output.h"
#include "ntlens/perf_path.h"
#include "ntlens/source_perf.h"

static const char usage_text[] =
    "usage: ntlens counters [-x] [--explain] [--detail LEVEL] [--lang ID] [--paths]\n"
    "                       [--query QUERY] [--format FORMAT] [SOURCE OPTIONS] [OBJECT...]\n"
    "\n"
    "List the performance objects a source offers (index, name, detail level,\n"
    "instance and counter counts), or with OBJECT arguments their counters (index,\n"
    "name, counter type, size, detail level, default scale), like typeperf -q.\n"
    "An OBJECT is a name (case-insensitive, * and ? wildcards) or an index (230).\n"
    "\n"
    "  -x, --instances          list instances instead (like typeperf -qx): name,\n"
    "                           \"parent/name#N\" path name, parent, unique id\n"
    "      --explain            add each object's or counter's help text\n"
    "      --detail LEVEL       novice, advanced, expert or wizard (default), or\n"
    "                           100..400: hide what is above that level\n"
    "      --lang ID            title language, hex registry id (default 009)\n"
    "      --paths              print counter paths \\OBJECT(*)\\COUNTER, one a line\n"
    "                           (with -x, one per instance), for `ntlens sample`\n"
    "      --query QUERY        what to ask the source: Global (default), Costly, or\n"
    "                           object indices (\"230 232\")\n"
    "      --format FORMAT      table (default), csv or json\n"
    "  -h, --help               this help\n"
    "\n"
    "Names a source's title database lacks come from Windows' standard English\n"
    "titles; names still unknown are shown as their index. With several -S sources\n"
    "every row starts with the host (paths with \\\\HOST).\n"
    "\n";

enum { OPT_FORMAT = 0x2000, OPT_EXPLAIN, OPT_DETAIL, OPT_LANG, OPT_PATHS, OPT_QUERY };

struct counters_opts {
    bool instances, explain, paths;
    uint32_t detail;
    unsigned lang;
    const char *query;
    enum out_format fmt;
    char **objects;
    int nobjects;
};

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

static void help_cell(struct out_table *t, const struct ntl_perf_titles *help, uint32_t index)
{
    const char *h = ntl_perf_titles_help(help, index);
    if (h)
        out_table_str(t, h);
    else
        out_table_null(t);
}

/* With several sources every row starts with the host (the block's system
 * name); columns are added with the first source's rows. */
static void host_column(struct out_table *t, const char *host, bool first)
{
    if (host && first)
        out_table_column(t, "host", "Host", OUT_LEFT);
}

static void host_cell(struct out_table *t, const char *host)
{
    if (host)
        out_table_str(t, host);
}

static void list_objects(struct out_table *t, const struct counters_opts *o,
                         const struct ntl_perf_block *b, const struct ntl_perf_titles *titles,
                         const struct ntl_perf_titles *help, const char *host, bool first)
{
    char buf[16];
    host_column(t, host, first);
    if (first) {
        out_table_column(t, "index", "Index", OUT_RIGHT);
        out_table_column(t, "name", "Object", OUT_LEFT);
        out_table_column(t, "detail", "Detail", OUT_LEFT);
        out_table_column(t, "instances", "Instances", OUT_RIGHT);
        out_table_column(t, "counters", "Counters", OUT_RIGHT);
        if (o->explain)
            out_table_column(t, "help", "Help", OUT_LEFT);
    }
    for (size_t i = 0; i < b->nobjects; i++) {
        const struct ntl_perf_object *obj = &b->objects[i];
        const char *name = ntl_perf_name(titles, obj->name_index, buf, sizeof buf);
        if (!object_selected(o, obj, name))
            continue;
        host_cell(t, host);
        out_table_u64(t, obj->name_index);
        out_table_str(t, name);
        out_table_str(t, ntl_perf_detail_name(obj->detail_level));
        if (obj->num_instances == NTL_PERF_NO_INSTANCES)
            out_table_null(t);
        else
            out_table_u64(t, obj->ninstances);
        out_table_u64(t, obj->ncounters);
        if (o->explain)
            help_cell(t, help, obj->help_index);
        out_table_row_end(t);
    }
}

static void list_counters(struct out_table *t, const struct counters_opts *o,
                          const struct ntl_perf_block *b, const struct ntl_perf_titles *titles,
                          const struct ntl_perf_titles *help, const char *host, bool first)
{
    char buf[16], cbuf[16], tbuf[48];
    host_column(t, host, first);
    if (first) {
        out_table_column(t, "object", "Object", OUT_LEFT);
        out_table_column(t, "index", "Index", OUT_RIGHT);
        out_table_column(t, "name", "Counter", OUT_LEFT);
        out_table_column(t, "type", "Type", OUT_LEFT);
        out_table_column(t, "size", "Size", OUT_RIGHT);
        out_table_column(t, "detail", "Detail", OUT_LEFT);
        out_table_column(t, "scale", "Scale", OUT_RIGHT);
        if (o->explain)
            out_table_column(t, "help", "Help", OUT_LEFT);
    }
    for (size_t i = 0; i < b->nobjects; i++) {
        const struct ntl_perf_object *obj = &b->objects[i];
        const char *oname = ntl_perf_name(titles, obj->name_index, buf, sizeof buf);
        if (!object_selected(o, obj, oname))
            continue;
        for (size_t c = 0; c < obj->ncounters; c++) {
            const struct ntl_perf_counter_def *d = &obj->counters[c];
            if (!ntl_perf_detail_visible(d->detail_level, o->detail))
                continue;
            host_cell(t, host);
            out_table_str(t, oname);
            out_table_u64(t, d->name_index);
            out_table_str(t, ntl_perf_name(titles, d->name_index, cbuf, sizeof cbuf));
            out_table_str(t, ntl_perf_type_format(d->type, tbuf, sizeof tbuf));
            out_table_u64(t, d->size);
            out_table_str(t, ntl_perf_detail_name(d->detail_level));
            out_table_i64(t, d->default_scale);
            if (o->explain)
                help_cell(t, help, d->help_index);
            out_table_row_end(t);
        }
    }
}

static void list_instances(struct out_table *t, const struct counters_opts *o,
                           const struct ntl_perf_block *b, const struct ntl_perf_titles *titles,
                           const char *host, bool first)
{
    char buf[16], pbuf[16], path[1024];
    host_column(t, host, first);
    if (first) {
        out_table_column(t, "object", "Object", OUT_LEFT);
        out_table_column(t, "number", "#", OUT_RIGHT);
        out_table_column(t, "name", "Instance", OUT_LEFT);
        out_table_column(t, "path_name", "Path name", OUT_LEFT);
        out_table_column(t, "parent_object", "Parent object", OUT_LEFT);
        out_table_column(t, "parent_instance", "Parent #", OUT_RIGHT);
        out_table_column(t, "unique_id", "Unique ID", OUT_RIGHT);
    }
    for (size_t i = 0; i < b->nobjects; i++) {
        const struct ntl_perf_object *obj = &b->objects[i];
        const char *oname = ntl_perf_name(titles, obj->name_index, buf, sizeof buf);
        if (!object_selected(o, obj, oname))
            continue;
        for (size_t j = 0; j < obj->ninstances; j++) {
            const struct ntl_perf_instance *in = &obj->instances[j];
            host_cell(t, host);
            out_table_str(t, oname);
            out_table_u64(t, j);
            out_table_str(t, in->name);
            ntl_perf_instance_path_name(in, path, sizeof path);
            out_table_str(t, path);
            if (in->parent_object_index) {
                out_table_str(t, ntl_perf_name(titles, in->parent_object_index, pbuf, sizeof pbuf));
                out_table_u64(t, in->parent_instance_number);
            } else {
                out_table_null(t);
                out_table_null(t);
            }
            if (in->unique_id == -1)
                out_table_null(t);
            else
                out_table_i64(t, in->unique_id);
            out_table_row_end(t);
        }
    }
}

static size_t print_paths(const struct counters_opts *o, const struct ntl_perf_block *b,
                          const struct ntl_perf_titles *titles, const char *host)
{
    char buf[16], cbuf[16], path[1024], prefix[300] = "";
    if (host)
        snprintf(prefix, sizeof prefix, "\\\\%s", host);
    size_t n = 0;
    for (size_t i = 0; i < b->nobjects; i++) {
        const struct ntl_perf_object *obj = &b->objects[i];
        const char *oname = ntl_perf_name(titles, obj->name_index, buf, sizeof buf);
        if (!object_selected(o, obj, oname))
            continue;
        for (size_t c = 0; c < obj->ncounters; c++) {
            const struct ntl_perf_counter_def *d = &obj->counters[c];
            if (!ntl_perf_detail_visible(d->detail_level, o->detail) ||
                ntl_perf_type_is_hidden(d->type))
                continue;
            const char *cname = ntl_perf_name(titles, d->name_index, cbuf, sizeof cbuf);
            if (obj->num_instances == NTL_PERF_NO_INSTANCES) {
                printf("%s\\%s\\%s\n", prefix, oname, cname);
                n++;
            } else if (!o->instances) {
                printf("%s\\%s(*)\\%s\n", prefix, oname, cname);
                n++;
            } else {
                for (size_t j = 0; j < obj->ninstances; j++) {
                    ntl_perf_instance_path_name(&obj->instances[j], path, sizeof path);
                    printf("%s\\%s(%s)\\%s\n", prefix, oname, path, cname);
                    n++;
                }
            }
        }
    }
    return n;
}

/* Lists one source into t (or prints its paths). */
static int list_source(const char *cmd, const struct counters_opts *o, struct ntl_source *src,
                       bool several, bool first, struct out_table *t, size_t *paths)
{
    struct ntl_perf_titles *titles = ntl_perf_titles_new(), *help = ntl_perf_titles_new();
    struct ntl_buf raw;
    struct ntl_perf_block *b = NULL;
    struct ntl_error err;
    int rc = EXIT_OK;
    bool missing;

    ntl_buf_init(&raw, 0);
    if (!titles || !help) {
        rc = cli_failf(cmd, "out of memory");
        goto out;
    }
    if (ntl_source_load_titles(src, NTL_TITLES_COUNTER, o->lang, NTL_SOURCE_TITLES_STANDARD,
                               titles, &missing, &err) < 0) {
        rc = cli_fail(cmd, &err, ntl_source_describe(src));
        goto out;
    }
    if (missing)
        cli_warn(cmd, "%s has no title database for language %03x; using standard names",
                 ntl_source_describe(src), o->lang);
    if (o->explain && ntl_source_load_titles(src, NTL_TITLES_HELP, o->lang,
                                             NTL_SOURCE_TITLES_STANDARD, help, NULL, &err) < 0) {
        rc = cli_fail(cmd, &err, ntl_source_describe(src));
        goto out;
    }
    if (ntl_source_snapshot(src, o->query, &raw, &b, &err) < 0) {
        rc = cli_fail(cmd, &err, ntl_source_describe(src));
        goto out;
    }
    const char *host = !several ? NULL : b->system_name[0] ? b->system_name
                                                            : ntl_source_describe(src);
    if (o->paths)
        *paths += print_paths(o, b, titles, host);
    else if (o->instances)
        list_instances(t, o, b, titles, host, first);
    else if (o->nobjects)
        list_counters(t, o, b, titles, help, host, first);
    else
        list_objects(t, o, b, titles, help, host, first);
out:
    ntl_perf_block_free(b);
    ntl_buf_free(&raw);
    ntl_perf_titles_free(titles);
    ntl_perf_titles_free(help);
    return rc;
}

static int run(const char *cmd, const struct counters_opts *o, struct ntl_source **srcs,
               size_t nsrcs)
{
    struct out_table *t = out_table_new();
    size_t paths = 0;
    int rc = EXIT_OK;
    for (size_t i = 0; i < nsrcs && rc == EXIT_OK; i++)
        rc = list_source(cmd, o, srcs[i], nsrcs > 1, i == 0, t, &paths);
    if (rc != EXIT_OK)
        goto out;
    if (o->paths) {
        if (paths == 0 && o->nobjects)
            rc = cli_failf(cmd, "no object matches");
    } else if (o->nobjects && out_table_rows(t) == 0 && !o->instances) {
        rc = cli_failf(cmd, "no object matches %s%s", o->objects[0],
                       o->nobjects > 1 ? " or the others" : "");
    } else if (out_table_render(t, stdout, o->fmt) < 0) {
        rc = cli_failf(cmd, "cannot write the output");
    }
out:
    out_table_free(t);
    return rc;
}

int cmd_counters(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"instances", no_argument, NULL, 'x'},
        {"explain", no_argument, NULL, OPT_EXPLAIN},
        {"detail", required_argument, NULL, OPT_DETAIL},
        {"lang", required_argument, NULL, OPT_LANG},
        {"paths", no_argument, NULL, OPT_PATHS},
        {"query", required_argument, NULL, OPT_QUERY},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"help", no_argument, NULL, 'h'},
        CLI_SOURCE_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    const char *cmd = argv[0];
    struct counters_opts o = {.detail = NTL_PERF_DETAIL_WIZARD, .lang = NTL_PERF_LANG_ENGLISH,
                              .query = "Global", .fmt = OUT_TABLE};
    struct cli_sources cs;
    int c, r;

    cli_sources_init(&cs);
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "xh" CLI_SOURCE_SHORTOPTS, longopts, NULL)) != -1) {
        if ((r = cli_sources_option(&cs, cmd, c, optarg)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            continue;
        }
        switch (c) {
        case 'x': o.instances = true; break;
        case OPT_EXPLAIN: o.explain = true; break;
        case OPT_PATHS: o.paths = true; break;
        case OPT_QUERY: o.query = optarg; break;
        case OPT_DETAIL:
            if (!ntl_perf_parse_detail(optarg, &o.detail))
                return cli_usage_error(cmd, "--detail takes novice, advanced, expert, wizard "
                                            "or 100..400, not '%s'", optarg);
            break;
        case OPT_LANG:
            if (!ntl_perf_parse_lang(optarg, &o.lang))
                return cli_usage_error(cmd, "--lang takes a hex language id such as 009, "
                                            "not '%s'", optarg);
            break;
        case OPT_FORMAT:
            if (!out_format_parse(optarg, &o.fmt))
                return cli_usage_error(cmd, "--format takes table, csv or json, not '%s'",
                                       optarg);
            break;
        case 'h':
            fputs(usage_text, stdout);
            fputs(cli_source_help, stdout);
            return EXIT_OK;
        default:
            return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    o.objects = argv + optind;
    o.nobjects = argc - optind;
    struct ntl_source *srcs[CLI_SOURCE_MAX];
    if ((r = cli_sources_open(&cs, cmd, srcs)) != EXIT_OK) {
        cli_sources_clear(&cs);
        return r;
    }
    cli_sources_clear(&cs);
    r = run(cmd, &o, srcs, cs.nspecs);
    cli_sources_close(srcs, cs.nspecs);
    return r;
}
