/* ntlens capture from a source: the title and help databases as the source
 * gives them, then snapshots until the count is reached, a capture source
 * ends, or Ctrl-C / SIGTERM stops the recording; the file is written whole
 * in every case (ntl_capture_writer_save renames a finished temporary). */
#include <stdio.h>

#include "capture.h"
#include "cli-stop.h"
#include "cli.h"
#include "perf-cli.h"
#include "progress.h"

static int store_titles(const char *cmd, struct ntl_capture_writer *w, struct ntl_source *src,
                        unsigned lang, bool help)
{
    struct ntl_buf raw;
    struct ntl_error err;
    int rc;

    ntl_buf_init(&raw, CAPTURE_RAW_LIMIT);
    if (ntl_source_titles(src, help ? NTL_TITLES_HELP : NTL_TITLES_COUNTER, lang, &raw, &err) < 0) {
        cli_warn(cmd, "%s titles %03x not stored: %s", help ? "help" : "counter", lang,
                 err.message);
        ntl_buf_free(&raw);
        return EXIT_OK;
    }
    rc = ntl_capture_writer_titles(w, help, lang, raw.data, raw.len, &err);
    ntl_buf_free(&raw);
    return rc < 0 ? cli_fail(cmd, &err, NULL) : EXIT_OK;
}

/* Takes snapshot number i (from 0) into w. Returns EXIT_OK, the exit code of
 * a failure, or CLI_CONTINUE when a capture source has no more. */
static int take_snapshot(const char *cmd, const struct capture_opts *o, struct ntl_source *src,
                         struct ntl_capture_writer *w, struct ntl_buf *raw, size_t i)
{
    int64_t now = perf_now_unix_ns(), block_ns = 0;
    struct ntl_error err;
    char what[64];
    int r, rc;

    raw->len = 0;
    r = ntl_source_query(src, o->query, raw, &err);
    if (r == NTL_ERR_EOF)
        return i == 0 ? cli_failf(cmd, "%s holds no snapshot", ntl_source_describe(src))
                      : CLI_CONTINUE;
    if (r < 0)
        return cli_fail(cmd, &err, ntl_source_describe(src));
    snprintf(what, sizeof what, "snapshot %zu", i + 1);
    if ((rc = capture_check_block(cmd, what, raw->data, raw->len, &block_ns)) != EXIT_OK)
        return rc;
    /* a capture source keeps the times it was recorded with */
    if (!ntl_source_is_live(src) && block_ns)
        now = block_ns;
    if (ntl_capture_writer_snapshot(w, now, o->query, raw->data, raw->len, &err) < 0)
        return cli_fail(cmd, &err, NULL);
    return EXIT_OK;
}

/* Snapshots until o->count, the end of a capture source, or a signal.
 * Returns the exit code; *interrupted says a signal ended it. */
static int take_snapshots(const char *cmd, const struct capture_opts *o, struct ntl_source *src,
                          struct ntl_capture_writer *w, bool *interrupted)
{
    size_t limit = o->count ? (size_t)o->count : NTL_CAPTURE_MAX_SNAPSHOTS;
    bool live = ntl_source_is_live(src);
    struct progress bar;
    struct ntl_buf raw;
    int rc = EXIT_OK;
    size_t i;

    ntl_buf_init(&raw, 0);
    progress_start(&bar, "capture", (uint64_t)o->count);
    for (i = 0; i < limit && rc == EXIT_OK; i++) {
        if (i > 0 && live)
            cli_sleep_ms((unsigned)(o->interval * 1000.0 + 0.5));
        if ((*interrupted = cli_stop_requested()))
            break;
        rc = take_snapshot(cmd, o, src, w, &raw, i);
        progress_update(&bar, (uint64_t)i + 1);
    }
    progress_end(&bar);
    ntl_buf_free(&raw);
    if (rc == EXIT_OK && i == limit && !o->count)
        cli_warn(cmd, "stopped at %u snapshots, the most a capture holds",
                 NTL_CAPTURE_MAX_SNAPSHOTS);
    return rc == CLI_CONTINUE ? EXIT_OK : rc;
}

int capture_record(const char *cmd, const struct capture_opts *o, struct ntl_source *src)
{
    struct ntl_capture_writer *w = ntl_capture_writer_new(ntl_source_describe(src));
    bool interrupted = false;
    int rc = EXIT_OK;

    if (!w)
        return cli_failf(cmd, "out of memory");
    cli_stop_catch_signals();
    for (size_t i = 0; i < o->nlangs && rc == EXIT_OK; i++) {
        rc = store_titles(cmd, w, src, o->langs[i], false);
        if (rc == EXIT_OK)
            rc = store_titles(cmd, w, src, o->langs[i], true);
    }
    if (rc == EXIT_OK)
        rc = take_snapshots(cmd, o, src, w, &interrupted);
    if (rc == EXIT_OK && interrupted && ntl_capture_writer_count(w) == 0)
        rc = cli_failf(cmd, "interrupted before the first snapshot; %s not written", o->output);
    if (rc == EXIT_OK)
        rc = capture_save(cmd, o, w, interrupted);
    ntl_capture_writer_free(w);
    return rc;
}

int capture_save(const char *cmd, const struct capture_opts *o, struct ntl_capture_writer *w,
                 bool interrupted)
{
    size_t n = ntl_capture_writer_count(w), bytes = ntl_capture_writer_bytes(w)->len;
    struct ntl_error err;

    if (ntl_capture_writer_save(w, o->output, &err) < 0)
        return cli_fail(cmd, &err, NULL);
    if (!o->quiet)
        fprintf(stderr, "wrote %s: %zu snapshot%s, %zu bytes%s\n", o->output, n,
                n == 1 ? "" : "s", bytes, interrupted ? " (interrupted)" : "");
    return EXIT_OK;
}
