#include "etl-common.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ntlens/compress.h"

int etl_cli_compression_cb(const struct opt *o, const char *arg, void *ctx)
{
    struct etl_cli *c = ctx;
    int f = ntl_compress_format_parse(arg);
    if (f < 0)
        return opt_error(o, "needs FORMAT, one of xpress, xpress-huff, lznt1, not '%s'", arg);
    c->compression = f;
    return 0;
}

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    struct etl_cli *c = ctx;
    (void)total;
    progress_update(&c->progress, done);
}

int etl_cli_open(struct etl_cli *c, const char *path)
{
    struct ntl_etl_options opt = {0};
    struct ntl_error err = {0};
    opt.compression_format = c->compression;
    opt.sorted = c->sorted;
    opt.progress = on_progress;
    opt.progress_ctx = c;
    c->path = path;
    /* The bar starts once the size is known; the first buffer is read at open. */
    c->progress.active = false;
    if (ntl_etl_open_file(path, &opt, &c->t, &err) < 0)
        return cli_fail(c->cmd, &err, path);
    progress_start(&c->progress, "reading", ntl_etl_input_size(c->t));
    return 0;
}

void etl_cli_error(struct etl_cli *c, const struct ntl_error *err, const char *hint)
{
    char buf[512];
    progress_end(&c->progress);
    ntl_error_format(err, buf, sizeof buf);
    fprintf(stderr, "ntlens %s: %s: %s%s\n", c->cmd, c->path, buf, hint ? hint : "");
}

void etl_cli_skip(struct etl_cli *c, const struct ntl_error *err, const char *what)
{
    char buf[512];
    progress_end(&c->progress);
    ntl_error_format(err, buf, sizeof buf);
    cli_warn(c->cmd, "%s: %s; %s", c->path, buf, what);
}

bool etl_cli_recover(struct etl_cli *c, int rc, const struct ntl_error *err)
{
    if (rc == NTL_ETL_TRUNCATED) {
        if (!c->keep_going) {
            etl_cli_error(c, err, " (--keep-going reads what comes before the cut)");
            return false;
        }
        etl_cli_skip(c, err, "read up to the cut");
        return true;
    }
    if (!ntl_etl_can_continue(c->t)) {
        etl_cli_error(c, err, NULL);
        return false;
    }
    if (!c->keep_going) {
        etl_cli_error(c, err, " (--keep-going skips bad buffers)");
        return false;
    }
    etl_cli_skip(c, err, "skipping the rest of that buffer");
    c->skipped++;
    return true;
}

int etl_cli_next(struct etl_cli *c, struct ntl_etl_event *ev)
{
    struct ntl_error err = {0};
    for (;;) {
        int rc = ntl_etl_next(c->t, ev, &err);
        if (rc >= 0)
            return rc;
        if (!etl_cli_recover(c, rc, &err))
            return -1;
        progress_start(&c->progress, "reading", ntl_etl_input_size(c->t));
    }
}

void etl_cli_close(struct etl_cli *c)
{
    progress_end(&c->progress);
    if (c->skipped)
        cli_warn(c->cmd, "%s: %" PRIu64 " bad buffer(s) skipped", c->path, c->skipped);
    ntl_etl_close(c->t);
    c->t = NULL;
}

void etl_cli_out_time(struct out *o, const struct etl_cli *c, uint64_t ts)
{
    out_filetime(o, ntl_etl_time_to_filetime(c->t, ts));
}

const char *etl_cli_time(const struct etl_cli *c, uint64_t ts, char *buf, size_t size)
{
    uint64_t ft = ntl_etl_time_to_filetime(c->t, ts);
    if (!ft) {
        snprintf(buf, size, "%s", "");
        return buf;
    }
    return ntl_filetime_format(ft, buf, size);
}

const char *etl_cli_group(uint8_t group, char *buf, size_t size)
{
    const char *n = ntl_etl_group_name(group);
    if (n)
        return n;
    snprintf(buf, size, "0x%02x", group);
    return buf;
}

const char *etl_cli_opcode(uint8_t group, uint8_t opcode, char *buf, size_t size)
{
    const char *n = ntl_etl_opcode_name(group, opcode);
    if (n)
        return n;
    snprintf(buf, size, "%u", opcode);
    return buf;
}

char *etl_cli_hex(const uint8_t *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    char *s = malloc(2 * n + 1);
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        s[2 * i] = digits[p[i] >> 4];
        s[2 * i + 1] = digits[p[i] & 15];
    }
    s[2 * n] = '\0';
    return s;
}

int etl_cli_out_close(struct etl_cli *c, struct out *o, int rc)
{
    if (out_close(o) < 0)
        return cli_failf(c->cmd, "write error");
    return rc;
}
