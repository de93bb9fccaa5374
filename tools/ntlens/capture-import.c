/* ntlens capture --import: a capture built from raw QueryValue answers saved
 * by other tools. Each block and title database is checked with the parser
 * that will read it, so a bad input is refused here rather than later. The
 * capture stores the databases it is given, unchanged: which names fill the
 * gaps is chosen when the capture is read (counters --std-titles). */
#include <stdio.h>

#include "capture.h"
#include "cli.h"
#include "ntlens/perf.h"
#include "ntlens/perf_path.h"

int capture_check_block(const char *cmd, const char *what, const uint8_t *data, size_t size,
                        int64_t *ns)
{
    struct ntl_perf_block *b;
    struct ntl_error err;
    int64_t secs;

    if (ntl_perf_block_parse(data, size, &b, &err) < 0)
        return cli_fail(cmd, &err, what);
    *ns = 0;
    if (ntl_perf_systemtime_to_unix(&b->system_time, &secs))
        *ns = secs * 1000000000 + (int64_t)b->system_time.milliseconds * 1000000;
    ntl_perf_block_free(b);
    return EXIT_OK;
}

static int import_titles(const char *cmd, struct ntl_capture_writer *w, const char *path,
                         bool help, unsigned lang)
{
    struct ntl_perf_titles *t;
    struct ntl_buf raw;
    struct ntl_error err;
    int rc;

    if (ntl_file_read(path, CAPTURE_RAW_LIMIT, &raw, &err) < 0)
        return cli_fail(cmd, &err, path);
    /* refuse what the reader would refuse later */
    t = ntl_perf_titles_new();
    rc = t ? ntl_perf_titles_add(t, help, raw.data, raw.len, &err) : NTL_ERR_NOMEM;
    ntl_perf_titles_free(t);
    if (rc == NTL_ERR_NOMEM && !t)
        ntl_error_set(&err, rc, NULL, NTL_NO_OFFSET, "out of memory");
    if (rc >= 0 && (rc = ntl_capture_writer_titles(w, help, lang, raw.data, raw.len, &err)) >= 0)
        rc = EXIT_OK;
    ntl_buf_free(&raw);
    return rc < 0 ? cli_fail(cmd, &err, path) : EXIT_OK;
}

static int import_block(const char *cmd, struct ntl_capture_writer *w, const char *path)
{
    struct ntl_buf raw;
    struct ntl_error err;
    int64_t ns = 0;
    int rc;

    if (ntl_file_read(path, CAPTURE_RAW_LIMIT, &raw, &err) < 0)
        return cli_fail(cmd, &err, path);
    rc = capture_check_block(cmd, path, raw.data, raw.len, &ns);
    if (rc == EXIT_OK && ntl_capture_writer_snapshot(w, ns, "Global", raw.data, raw.len, &err) < 0)
        rc = cli_fail(cmd, &err, path);
    ntl_buf_free(&raw);
    return rc;
}

int capture_import(const char *cmd, const struct capture_opts *o, char **files, int nfiles)
{
    struct ntl_capture_writer *w =
        ntl_capture_writer_new(o->description ? o->description : "imported raw answers");
    int rc = EXIT_OK;

    if (!w)
        return cli_failf(cmd, "out of memory");
    if (o->titles)
        rc = import_titles(cmd, w, o->titles, false, o->langs[0]);
    if (rc == EXIT_OK && o->help_titles)
        rc = import_titles(cmd, w, o->help_titles, true, o->langs[0]);
    for (int i = 0; i < nfiles && rc == EXIT_OK; i++)
        rc = import_block(cmd, w, files[i]);
    if (rc == EXIT_OK)
        rc = capture_save(cmd, o, w, false);
    ntl_capture_writer_free(w);
    return rc;
}
