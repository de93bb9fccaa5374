/* The ntlens side of bench/msrpc/msrpc.sh, through the public source API:
 *
 *   msrpc-bench first SPEC N       time to first snapshot (open: connect,
 *                                  authenticate, bind, OpenHKPD; then one
 *                                  "Global"), N times; prints the median
 *   msrpc-bench rate SPEC SECONDS  snapshots per second on one open source
 *   msrpc-bench parallel SPEC N    N sources in N threads, each opened and
 *                                  queried once; total time, and memory
 *                                  with all N open: this process's peak RSS
 *                                  and the proportional set size (PSS) of it
 *                                  plus its N SMB helper processes
 * The password comes from NTLENS_PASSWORD. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "ntlens/msrpc_source.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct ntl_source_options opts;

static int snapshot(const char *spec, size_t *bytes)
{
    struct ntl_source *s;
    struct ntl_error err;
    struct ntl_buf b;
    int rc;

    ntl_buf_init(&b, 0);
    rc = ntl_msrpc_source_open(spec, &opts, &s, &err);
    if (rc >= 0) {
        rc = ntl_source_query(s, "Global", &b, &err);
        ntl_source_close(s);
    }
    if (rc < 0) {
        char msg[512];
        fprintf(stderr, "msrpc-bench: %s\n", ntl_error_format(&err, msg, sizeof msg));
    }
    if (bytes)
        *bytes = b.len;
    ntl_buf_free(&b);
    return rc;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static pthread_barrier_t all_open;

/* Opens, queries once, then holds the source open until the main thread
 * has measured memory. */
static void *worker(void *arg)
{
    struct ntl_source *s;
    struct ntl_error err;
    struct ntl_buf b;
    int rc;

    ntl_buf_init(&b, 0);
    rc = ntl_msrpc_source_open(arg, &opts, &s, &err);
    if (rc >= 0 && (rc = ntl_source_query(s, "Global", &b, &err)) < 0)
        ntl_source_close(s);
    if (rc < 0)
        fprintf(stderr, "msrpc-bench: %s\n", err.message);
    pthread_barrier_wait(&all_open);
    pthread_barrier_wait(&all_open);
    if (rc >= 0)
        ntl_source_close(s);
    ntl_buf_free(&b);
    return (void *)(intptr_t)rc;
}

/* Pss of one process in kB, from /proc/PID/smaps_rollup; 0 if unknown. */
static long pss_kb(long pid)
{
    char path[64], line[256];
    long kb = 0;
    FILE *f;
    snprintf(path, sizeof path, "/proc/%ld/smaps_rollup", pid);
    if (!(f = fopen(path, "r")))
        return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Pss: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* Pss of this process and its children. */
static long family_pss_kb(void)
{
    long total = pss_kb((long)getpid());
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[64], buf[512], *close_paren;
        long pid = atol(e->d_name), ppid = 0;
        FILE *f;
        if (pid <= 0)
            continue;
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        if (!(f = fopen(path, "r")))
            continue;
        if (fgets(buf, sizeof buf, f) && (close_paren = strrchr(buf, ')')))
            sscanf(close_paren + 2, "%*c %ld", &ppid);
        fclose(f);
        if (ppid == (long)getpid())
            total += pss_kb(pid);
    }
    if (d)
        closedir(d);
    return total;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return fprintf(stderr, "usage: msrpc-bench first|rate|parallel SPEC N\n"), 2;
    const char *mode = argv[1], *spec = argv[2];
    long n = atol(argv[3]);
    opts.password = getenv("NTLENS_PASSWORD");

    if (!strcmp(mode, "first")) {
        double *t = calloc((size_t)n, sizeof *t);
        size_t bytes = 0;
        for (long i = 0; i < n; i++) {
            double t0 = now();
            if (snapshot(spec, &bytes) < 0)
                return 1;
            t[i] = now() - t0;
        }
        qsort(t, (size_t)n, sizeof *t, cmp);
        printf("first_ms=%.2f bytes=%zu\n", t[n / 2] * 1e3, bytes);
        return 0;
    }
    if (!strcmp(mode, "rate")) {
        struct ntl_source *s;
        struct ntl_error err;
        struct ntl_buf b;
        long count = 0;
        double t0, end;
        ntl_buf_init(&b, 0);
        if (ntl_msrpc_source_open(spec, &opts, &s, &err) < 0 || ntl_source_query(s, "Global", &b, &err) < 0)
            return fprintf(stderr, "msrpc-bench: %s\n", err.message), 1;
        t0 = now();
        end = t0 + (double)n;
        while (now() < end) {
            if (ntl_source_query(s, "Global", &b, &err) < 0)
                return fprintf(stderr, "msrpc-bench: %s\n", err.message), 1;
            count++;
        }
        printf("snapshots_per_s=%.1f bytes=%zu\n", count / (now() - t0), b.len);
        ntl_source_close(s);
        ntl_buf_free(&b);
        return 0;
    }
    if (!strcmp(mode, "parallel")) {
        pthread_t *th = calloc((size_t)n, sizeof *th);
        struct rusage ru;
        int failed = 0;
        double t0 = now(), total;
        long pss;
        pthread_barrier_init(&all_open, NULL, (unsigned)n + 1);
        for (long i = 0; i < n; i++)
            pthread_create(&th[i], NULL, worker, (void *)spec);
        pthread_barrier_wait(&all_open);
        total = now() - t0;
        pss = family_pss_kb();
        pthread_barrier_wait(&all_open);
        for (long i = 0; i < n; i++) {
            void *rc;
            pthread_join(th[i], &rc);
            failed += (intptr_t)rc < 0;
        }
        getrusage(RUSAGE_SELF, &ru);
        printf("total_s=%.3f peak_rss_mb=%.1f pss_with_helpers_mb=%.1f failed=%d\n", total,
               ru.ru_maxrss / 1024.0, pss / 1024.0, failed);
        return failed ? 1 : 0;
    }
    return 2;
}
