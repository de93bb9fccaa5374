/* The ETW profile path in process (no process start, no report): the
 * trace in memory read as `ntlens profile --etl` reads it (decompressing
 * ahead on a second thread, the log, its time-ordered feed, the late
 * samples and the stack count), against lib/etl's plain scan of the same
 * bytes (bench_etl's "scan": one thread, every event, nothing kept) and
 * the profile path without the second thread, in
 * turn for a number of rounds. Prints the least wall time of each (the
 * round least slowed by a loaded machine), the median CPU time and the
 * median CPU time of the reading thread, in MB/s of trace, and the
 * profile path's MB/s over the scan's.
 *   usage: bench_profile_etl [ROUNDS [TRACE]]   (default 20, net.4.5.2.x64.etl) */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ntlens/buf.h"
#include "ntlens/etl.h"
#include "ntlens/profile.h"
#include "ntlens/profile_etl.h"
#include "ntlens/reader.h"

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu(void)
{
    return (double)clock() / CLOCKS_PER_SEC;
}

/* The calling thread's CPU time: the reader's share, what the wall time
 * would be with a second core free for the decompressing thread (less any
 * wait for it). Where the clock is missing, the process's. */
static double thread_cpu(void)
{
#ifdef CLOCK_THREAD_CPUTIME_ID
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
#else
    return cpu();
#endif
}

static int scan(const struct ntl_buf *f, uint64_t *n)
{
    struct ntl_etl *t;
    struct ntl_etl_event ev;
    struct ntl_error err;
    int rc;
    if (ntl_etl_open_mem(f->data, f->len, NULL, &t, &err) < 0)
        return -1;
    for (*n = 0; (rc = ntl_etl_next(t, &ev, &err)) > 0;)
        ++*n;
    ntl_etl_close(t);
    return rc;
}

/* The events into the log, then the log into p; the samples fed in *n. */
static int read_log(struct ntl_etl *t, struct ntl_profile *p, struct ntl_profile_etl_log *log,
                    struct ntl_profile_etl_stacks *st, uint64_t *n)
{
    struct ntl_profile_etl_options opt = {0};
    struct ntl_profile_etl_fed fed;
    struct ntl_etl_event ev;
    struct ntl_error err;
    int rc;
    while ((rc = ntl_etl_next(t, &ev, &err)) > 0)
        if (ntl_profile_etl_log_add(log, st, t, &ev, &opt, &err) < 0)
            return -1;
    if (rc < 0)
        return rc;
    for (*n = 0; (rc = ntl_profile_etl_log_feed(log, p, st, &opt, &fed, &err)) > 0;)
        *n += fed.kind == NTL_PROFILE_ETL_SAMPLE;
    return rc;
}

static int profile_with(const struct ntl_buf *f, uint64_t *n, bool ahead)
{
    struct ntl_etl_options eo = {.decompress_ahead = ahead};
    struct ntl_etl *t = NULL;
    struct ntl_profile *p = NULL;
    struct ntl_profile_etl_stacks *st = NULL;
    struct ntl_profile_etl_log *log = NULL;
    struct ntl_profile_etl_stack_counts counts;
    struct ntl_error err;
    int rc = -1;
    if (ntl_etl_open_mem(f->data, f->len, &eo, &t, &err) >= 0 && ntl_profile_new(&p, &err) >= 0 &&
        ntl_profile_etl_stacks_new(&st, &err) >= 0 && ntl_profile_etl_log_new(&log, &err) >= 0) {
        ntl_profile_etl_stacks_counts_only(st);
        rc = read_log(t, p, log, st, n);
        if (rc == 0)
            rc = ntl_profile_place_late(p, &err) < 0 ||
                         ntl_profile_etl_stacks_finish(p, st, &counts, &err) < 0
                     ? -1
                     : 0;
    }
    ntl_profile_etl_log_free(log);
    ntl_profile_etl_stacks_free(st);
    ntl_profile_free(p);
    ntl_etl_close(t);
    return rc;
}

static int profile(const struct ntl_buf *f, uint64_t *n)
{
    return profile_with(f, n, true);
}

static int profile_1(const struct ntl_buf *f, uint64_t *n)
{
    return profile_with(f, n, false);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    const char *root = getenv("NTLENS_SHARED_DATA");
    char path[4096];
    snprintf(path, sizeof path, "%s/etl/net.4.5.2.x64.etl", root ? root : "../shared/data");
    struct ntl_buf f;
    struct ntl_error err;
    ntl_buf_init(&f, 0);
    if (rounds < 1 || rounds > 1000 || ntl_file_read(argc > 2 ? argv[2] : path, 1u << 30, &f, &err) < 0) {
        fprintf(stderr, "usage: bench_profile_etl [ROUNDS 1-1000 [TRACE]] (%s)\n", path);
        return 2;
    }
    int (*fn[3])(const struct ntl_buf *, uint64_t *) = {scan, profile, profile_1};
    const char *name[3] = {"scan (lib/etl, 1 thread)", "profile --etl path", "the same, 1 thread"};
    double w[3] = {1e9, 1e9, 1e9}, c[3][1000], rd[3][1000];
    uint64_t n[3] = {0, 0, 0};
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < 3; i++) {
            double w0 = wall(), c0 = cpu(), r0 = thread_cpu();
            if (fn[i](&f, &n[i]) < 0) {
                fprintf(stderr, "%s: read error\n", name[i]);
                return 1;
            }
            double dw = wall() - w0;
            c[i][r] = cpu() - c0;
            rd[i][r] = thread_cpu() - r0;
            w[i] = dw < w[i] ? dw : w[i];
        }
    double mb = (double)f.len / 1e6, mc[3];
    for (int i = 0; i < 3; i++) {
        qsort(c[i], (size_t)rounds, sizeof c[i][0], cmp);
        qsort(rd[i], (size_t)rounds, sizeof rd[i][0], cmp);
        mc[i] = c[i][rounds / 2];
        printf("%-26s least wall %6.2f ms %6.1f MB/s  median CPU %6.2f ms %6.1f MB/s, reader"
               " %6.2f ms %6.1f MB/s (%" PRIu64 " %s)\n", name[i], w[i] * 1e3, mb / w[i],
               mc[i] * 1e3, mb / mc[i], rd[i][rounds / 2] * 1e3, mb / rd[i][rounds / 2], n[i],
               i ? "samples" : "events");
    }
    printf("profile MB/s / scan MB/s: wall %.2fx, CPU %.2fx (%.1f MB, %d rounds)\n", w[0] / w[1], mc[0] / mc[1],
           mb, rounds);
    ntl_buf_free(&f);
    return 0;
}
