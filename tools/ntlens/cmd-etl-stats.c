/* ntlens etl stats: events per provider and event name, with their bytes,
 * share and rate: what a trace holds, before reading any of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "etl-common.h"
#include "etl-fields.h"

static const struct opt_command stats_command = {
    .name = "etl stats",
    .synopsis = "FILE.etl",
    .summary = "count the events of an ETW trace file by provider and event",
    .description =
        "Count the events of an ETW trace file by provider and event name, most\n"
        "frequent first: events, bytes (whole records, headers included), their share\n"
        "of all events and their rate over the trace's time span. Providers and events\n"
        "are named as `etl events` names them (kernel Group/Opcode, TraceLogging\n"
        "names, well-known providers); others show their GUID and \"id N\" or\n"
        "\"opcode N\".",
};

/* Distinct provider/event pairs kept; the rest are counted under one row. */
#define MAX_KEYS 100000u

struct stat_row {
    char *provider, *event;
    uint64_t events, bytes;
};

struct stats {
    struct stat_row *rows;
    size_t n, cap;
    size_t *slot;          /* open addressing: index + 1, 0 empty */
    size_t nslots;
    struct stat_row other; /* past MAX_KEYS */
    uint64_t total;
};

static size_t hash(const char *a, const char *b)
{
    size_t h = 1469598103934665603u;
    for (; *a; a++)
        h = (h ^ (unsigned char)*a) * 1099511628211u;
    h = (h ^ 0xff) * 1099511628211u;
    for (; *b; b++)
        h = (h ^ (unsigned char)*b) * 1099511628211u;
    return h;
}

static int grow(struct stats *s)
{
    size_t n = s->nslots ? 2 * s->nslots : 1024;
    size_t *slot = calloc(n, sizeof *slot);
    if (!slot)
        return -1;
    for (size_t i = 0; i < s->n; i++) {
        size_t j = hash(s->rows[i].provider, s->rows[i].event) & (n - 1);
        while (slot[j])
            j = (j + 1) & (n - 1);
        slot[j] = i + 1;
    }
    free(s->slot);
    s->slot = slot;
    s->nslots = n;
    return 0;
}

/* The row of provider/event, added when new; NULL when out of memory. */
static struct stat_row *row_of(struct stats *s, const char *provider, const char *event)
{
    if (2 * (s->n + 1) > s->nslots && grow(s) < 0)
        return NULL;
    size_t j = hash(provider, event) & (s->nslots - 1);
    for (; s->slot[j]; j = (j + 1) & (s->nslots - 1)) {
        struct stat_row *r = &s->rows[s->slot[j] - 1];
        if (!strcmp(r->provider, provider) && !strcmp(r->event, event))
            return r;
    }
    if (s->n == MAX_KEYS)
        return &s->other;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        struct stat_row *rows = realloc(s->rows, cap * sizeof *rows);
        if (!rows)
            return NULL;
        s->rows = rows;
        s->cap = cap;
    }
    struct stat_row *r = &s->rows[s->n];
    *r = (struct stat_row){strdup(provider), strdup(event), 0, 0};
    if (!r->provider || !r->event) {
        free(r->provider);
        free(r->event);
        return NULL;
    }
    s->slot[j] = ++s->n;
    return r;
}

static int count(struct stats *s, const struct ntl_etl_event *ev, const struct etl_fields *f)
{
    char prov[64], name[32];
    const char *event = f->event;
    if (!event) {
        if (ev->kind == NTL_ETL_KIND_EVENT)
            snprintf(name, sizeof name, "id %u", ev->event_id);
        else
            snprintf(name, sizeof name, "opcode %u", ev->opcode);
        event = name;
    }
    const char *provider = f->provider;
    if (!provider)
        provider = ev->has_guid ? ntl_guid_format(&ev->guid, prov, sizeof prov) : "";
    struct stat_row *r = row_of(s, provider, event);
    if (!r)
        return -1;
    r->events++;
    r->bytes += ev->size;
    s->total++;
    return 0;
}

static int by_events(const void *a, const void *b)
{
    const struct stat_row *x = a, *y = b;
    if (x->events != y->events)
        return x->events < y->events ? 1 : -1;
    int c = strcmp(x->provider, y->provider);
    return c ? c : strcmp(x->event, y->event);
}

static void write_row(struct out *o, const struct stat_row *r, const struct stats *s, double secs)
{
    out_str(o, r->provider);
    out_str(o, r->event);
    out_u64(o, r->events);
    out_u64(o, r->bytes);
    out_num(o, s->total ? 100.0 * (double)r->events / (double)s->total : 0, 2);
    if (secs > 0)
        out_num(o, (double)r->events / secs, 1);
    else
        out_null(o);
    out_row_end(o);
}

static int report(struct etl_cli *c, struct stats *s, int fmt)
{
    struct ntl_etl_stats st;
    struct out *o = out_new(stdout, (enum out_format)fmt);
    double secs = 0;
    if (!o)
        return cli_failf(c->cmd, "out of memory");
    ntl_etl_get_stats(c->t, &st);
    if (st.events)
        secs = (double)(ntl_etl_time_to_filetime(c->t, st.last_timestamp) -
                        ntl_etl_time_to_filetime(c->t, st.first_timestamp)) / 1e7;
    out_column(o, "provider", NULL, OUT_LEFT);
    out_column(o, "event", NULL, OUT_LEFT);
    out_column(o, "events", NULL, OUT_RIGHT);
    out_column(o, "bytes", NULL, OUT_RIGHT);
    out_column(o, "percent", "%", OUT_RIGHT);
    out_column(o, "per_second", "Per Second", OUT_RIGHT);
    qsort(s->rows, s->n, sizeof *s->rows, by_events);
    for (size_t i = 0; i < s->n; i++)
        write_row(o, &s->rows[i], s, secs);
    if (s->other.events)
        write_row(o, &s->other, s, secs);
    return etl_cli_out_close(c, o, EXIT_OK);
}

static void stats_free(struct stats *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->rows[i].provider);
        free(s->rows[i].event);
    }
    free(s->rows);
    free(s->slot);
}

int cmd_etl_stats(int argc, char **argv)
{
    struct etl_cli c = {.cmd = argv[0]};
    struct stats s = {.other = {"(other)", "(more distinct events than counted)", 0, 0}};
    struct etl_fields f = {.json.off = true, .text.off = true}; /* names only */
    struct ntl_etl_event ev;
    struct opt_list manifests = {0}, binaries = {0};
    int fmt = OUT_TABLE, rc;
    struct opt opts[] = {
        OPT_MANIFEST(&manifests),
        OPT_MANIFEST_FROM(&binaries),
        OPT_OUTPUT_OPTIONS(&fmt),
        OPT_ETL_OPTIONS(&c),
        OPT_END(),
    };
    int n = parse_options(&stats_command, opts, argc, argv);
    if (n < 0)
        return parse_options_exit(n);
    if (n != 1)
        return opt_usage_error(&stats_command, "expected one trace file");
    if ((rc = etl_fields_load_manifests(&f, &manifests, argv[0])) ||
        (rc = etl_fields_load_binaries(&f, &binaries, argv[0])) ||
        (rc = etl_cli_open(&c, argv[1]))) {
        etl_fields_free(&f);
        return rc;
    }
    while ((rc = etl_cli_next(&c, &ev)) > 0)
        if (etl_fields_decode(&f, &ev) < 0 || count(&s, &ev, &f) < 0) {
            rc = cli_failf(c.cmd, "out of memory");
            break;
        }
    if (rc == 0)
        rc = report(&c, &s, fmt);
    else if (rc < 0)
        rc = EXIT_FAIL;
    etl_cli_close(&c);
    etl_fields_free(&f);
    stats_free(&s);
    return rc;
}
