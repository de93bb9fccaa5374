/* `ntlens sample`'s run: titles, the first snapshot of every host, the
 * columns its paths select there, then one row per later snapshot. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli-stop.h"
#include "cli.h"
#include "ntlens/source_perf.h"
#include "sample.h"

static int load_titles(const char *cmd, const struct sample_opts *o, struct sample_host *hosts,
                       size_t nhosts)
{
    enum ntl_source_titles_fill fill =
        o->std_titles ? NTL_SOURCE_TITLES_STANDARD : NTL_SOURCE_TITLES_OWN;
    for (size_t h = 0; h < nhosts; h++) {
        struct ntl_error err;
        if (!(hosts[h].titles = ntl_perf_titles_new()))
            return cli_failf(cmd, "out of memory");
        if (ntl_source_load_titles(hosts[h].src, NTL_TITLES_COUNTER, o->lang, fill,
                                   hosts[h].titles, &hosts[h].no_titles, &err) < 0)
            return cli_fail(cmd, &err, ntl_source_describe(hosts[h].src));
    }
    return EXIT_OK;
}

/* Takes the next snapshot of every host. NTL_ERR_EOF when a capture ends. */
static int snapshot_all(const char *cmd, const struct sample_opts *o, struct sample_host *hosts,
                        size_t nhosts)
{
    struct ntl_error err;
    for (size_t h = 0; h < nhosts; h++) {
        ntl_perf_block_free(hosts[h].block);
        int r = ntl_source_snapshot(hosts[h].src, o->query, &hosts[h].raw, &hosts[h].block, &err);
        if (r == NTL_ERR_EOF)
            return r;
        if (r < 0) {
            cli_fail(cmd, &err, ntl_source_describe(hosts[h].src));
            return NTL_ERR_IO;
        }
    }
    return 0;
}

static bool is_unnamed_machine(const char *m)
{
    return !m[0] || !strcmp(m, ".") || !strcasecmp(m, "localhost");
}

/* Whether host h serves path p: a host opened for a \\MACHINE serves that
 * machine's paths; -S or the local source serves paths without a machine
 * and those naming its own system name (this machine's, for the local one). */
static bool host_serves(const struct sample_host *h, const struct ntl_perf_path *p)
{
    if (h->machine)
        return !strcasecmp(h->machine, p->machine);
    return is_unnamed_machine(p->machine) || !strcasecmp(h->block->system_name, p->machine) ||
           (ntl_source_is_this_machine(p->machine) &&
            ntl_source_is_this_machine(h->block->system_name));
}

static int no_match(const char *cmd, const char *path, const struct sample_host *h)
{
    if (h->no_titles)
        return cli_failf(cmd, "no counter matches %s in %s, which gives no title database: "
                         "name counters by index (\\230(*)\\784), or use --std-titles for "
                         "Windows' standard names", path, ntl_source_describe(h->src));
    return cli_failf(cmd, "no counter matches %s in %s", path, ntl_source_describe(h->src));
}

/* The columns of host h, in path order; marks the paths it serves. */
static int host_columns(const char *cmd, struct sample_host *hosts, size_t h, char **paths,
                        size_t npaths, bool *served, struct sample_columns *cols)
{
    for (size_t i = 0; i < npaths; i++) {
        struct ntl_perf_path p;
        struct ntl_error err;
        ntl_perf_path_parse(paths[i], &p, NULL); /* checked before the sources were opened */
        if (!host_serves(&hosts[h], &p))
            continue;
        served[i] = true;
        if (is_unnamed_machine(p.machine))
            p.machine[0] = '\0';
        long n = sample_columns_expand(cols, &p, h, hosts[h].block, hosts[h].titles, &err);
        if (n < 0)
            return cli_fail(cmd, &err, paths[i]);
        if (n == 0)
            return no_match(cmd, paths[i], &hosts[h]);
    }
    return EXIT_OK;
}

/* The columns, grouped by host (so a row indexes one block at a time), in
 * path order within each. */
static int resolve_columns(const char *cmd, struct sample_host *hosts, size_t nhosts,
                           char **paths, size_t npaths, struct sample_columns *cols)
{
    bool *served = calloc(npaths, sizeof *served);
    int rc = served ? EXIT_OK : cli_failf(cmd, "out of memory");

    for (size_t h = 0; h < nhosts && rc == EXIT_OK; h++)
        rc = host_columns(cmd, hosts, h, paths, npaths, served, cols);
    for (size_t i = 0; i < npaths && rc == EXIT_OK; i++)
        if (!served[i])
            rc = cli_failf(cmd, "%s: no source is that machine (its name is not the -S "
                                "source's system name)", paths[i]);
    free(served);
    return rc;
}

static int write_error(const char *cmd, const struct sample_opts *o)
{
    return cli_failf(cmd, "cannot write %s", o->output ? o->output : "the output");
}

/* Rows until the count, the end of a capture, or Ctrl-C. Rates and timers
 * need two snapshots, so the first one only primes them when any column
 * is one. */
static int sample_loop(const char *cmd, const struct sample_opts *o, struct sample_host *hosts,
                       size_t nhosts, struct sample_columns *cols, struct sample_output *so)
{
    double *v = malloc((cols->n ? cols->n : 1) * sizeof *v);
    bool *ok = malloc((cols->n ? cols->n : 1) * sizeof *ok);
    bool live = true, prime = sample_columns_need_priming(cols, hosts);
    long rows = 0;
    int rc = v && ok ? EXIT_OK : cli_failf(cmd, "out of memory");

    for (size_t h = 0; h < nhosts; h++)
        live = live && ntl_source_is_live(hosts[h].src);
    if (rc == EXIT_OK) {
        sample_values(cols, hosts, o->scale, v, ok);
        if (!prime && sample_output_row(so, hosts[0].block, v, ok, cols->n) < 0)
            rc = write_error(cmd, o);
        rows += !prime;
    }
    while (rc == EXIT_OK && (o->count == 0 || rows < o->count) && !cli_stop_requested()) {
        if (live)
            cli_sleep_ms((unsigned)(o->interval * 1000.0 + 0.5));
        if (cli_stop_requested())
            break;
        int r = snapshot_all(cmd, o, hosts, nhosts);
        if (r == NTL_ERR_EOF)
            break;
        if (r < 0) {
            rc = EXIT_FAIL;
            break;
        }
        sample_values(cols, hosts, o->scale, v, ok); /* the row's time is the first host's */
        if (sample_output_row(so, hosts[0].block, v, ok, cols->n) < 0)
            rc = write_error(cmd, o);
        rows++;
    }
    if (rc == EXIT_OK && rows == 0 && !cli_stop_requested())
        cli_warn(cmd, "the source ended before a second snapshot: rates need two");
    free(v);
    free(ok);
    return rc;
}

/* Opens -o FILE (or takes stdout), runs the loop, closes the output whole. */
static int sample_write(const char *cmd, const struct sample_opts *o, struct sample_host *hosts,
                        size_t nhosts, struct sample_columns *cols)
{
    FILE *f = o->output ? fopen(o->output, "w") : stdout;
    struct sample_output *so;
    int rc;

    if (!f)
        return cli_failf(cmd, "cannot open %s: %s", o->output, strerror(errno));
    if (!(so = sample_output_new(f, (enum out_format)o->fmt, cols))) {
        rc = cli_failf(cmd, "out of memory");
    } else {
        cli_stop_catch_signals();
        rc = sample_loop(cmd, o, hosts, nhosts, cols, so);
        if (sample_output_close(so) < 0 && rc == EXIT_OK)
            rc = write_error(cmd, o);
    }
    if (o->output && fclose(f) != 0 && rc == EXIT_OK)
        rc = write_error(cmd, o);
    return rc;
}

int sample_run(const char *cmd, const struct sample_opts *o, struct sample_host *hosts,
               size_t nhosts, char **paths, size_t npaths)
{
    struct sample_columns cols = {0};
    int rc = load_titles(cmd, o, hosts, nhosts);

    if (rc != EXIT_OK)
        return rc;
    rc = snapshot_all(cmd, o, hosts, nhosts);
    if (rc == NTL_ERR_EOF)
        return cli_failf(cmd, "a capture source holds no snapshot");
    if (rc < 0)
        return EXIT_FAIL;
    rc = resolve_columns(cmd, hosts, nhosts, paths, npaths, &cols);
    if (rc == EXIT_OK)
        rc = sample_write(cmd, o, hosts, nhosts, &cols);
    sample_columns_free(&cols);
    return rc;
}
