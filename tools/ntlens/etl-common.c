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
    /* No thread for a first opening that may be closed at once. */
    bool reopen = c->sort_if_fits && !c->sorted;
    opt.decompress_ahead = c->decompress_ahead && !reopen;
    opt.sorted_reload = c->sorted_reload;
    opt.progress = on_progress;
    opt.progress_ctx = c;
    c->path = path;
    /* The bar starts once the size is known; the first buffer is read at open. */
    c->progress.active = false;
    if (ntl_etl_open_file(path, &opt, &c->t, &err) < 0)
        return cli_fail(c->cmd, &err, path);
    /* Time order when the trace is small enough to hold: reopened sorted. */
    bool fits = ntl_etl_input_size(c->t) <= ETL_CLI_SORT_MAX;
    if (reopen && (fits || c->decompress_ahead)) {
        ntl_etl_close(c->t);
        c->t = NULL;
        c->sorted = opt.sorted = fits;
        opt.decompress_ahead = c->decompress_ahead;
        if (ntl_etl_open_file(path, &opt, &c->t, &err) < 0)
            return cli_fail(c->cmd, &err, path);
    }
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

int etl_cli_next_error(struct etl_cli *c, struct ntl_etl_event *ev, int rc)
{
    for (; rc < 0; rc = ntl_etl_next(c->t, ev, &c->err)) {
        if (!etl_cli_recover(c, rc, &c->err))
            return -1;
        progress_start(&c->progress, "reading", ntl_etl_input_size(c->t));
    }
    return rc;
}

/* What the reader read past (ntl_etl_irregularities), one warning each. */
static void warn_irregular(struct etl_cli *c)
{
    const struct ntl_etl_irregularity *list;
    size_t n = ntl_etl_irregularities(c->t, &list);
    struct ntl_etl_stats st;
    ntl_etl_get_stats(c->t, &st);
    for (size_t i = 0; i < n; i++)
        cli_warn(c->cmd, "%s: %s at offset 0x%" PRIx64 ": %s", c->path, list[i].structure,
                 list[i].offset, list[i].message);
    if (st.irregularities > n)
        cli_warn(c->cmd, "%s: %" PRIu64 " more irregularities", c->path, st.irregularities - n);
}

void etl_cli_close(struct etl_cli *c)
{
    progress_end(&c->progress);
    if (c->t)
        warn_irregular(c);
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

/* Days from 1601-01-01 to y-m-d (proleptic Gregorian; H. Hinnant's days_from_civil, shifted). */
static int64_t days_since_1601(int y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468 + 134774; /* 1970 is day 134774 since 1601 */
}

bool etl_cli_parse_time(const char *s, struct etl_time *t)
{
    int y, n = 0;
    unsigned mo, d, h, mi, sec;
    char *end;
    if (*s == '+') { /* seconds from the trace's start */
        double v = strtod(s + 1, &end);
        if (end == s + 1 || *end || !(v >= 0 && v < 1e10))
            return false;
        t->relative = true;
        t->value = (uint64_t)(v * 1e7 + 0.5);
        return true;
    }
    if (sscanf(s, "%4d-%2u-%2uT%2u:%2u:%2u%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n != 19 ||
        y < 1601 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return false;
    uint64_t frac = 0, scale = 10000000;
    s += n;
    if (*s == '.') {
        for (s++; *s >= '0' && *s <= '9'; s++)
            if (scale > 1)
                scale /= 10, frac += (uint64_t)(*s - '0') * scale;
    }
    if (*s == 'Z')
        s++;
    if (*s)
        return false;
    t->relative = false;
    t->value = ((uint64_t)days_since_1601(y, mo, d) * 86400 + h * 3600u + mi * 60u + sec) * 10000000 + frac;
    return true;
}

uint64_t etl_cli_time_filetime(const struct etl_cli *c, const struct etl_time *t)
{
    return t->relative ? ntl_etl_logfile(c->t)->start_time + t->value : t->value;
}
