/* `etl events` with fields, in process: the command's own code (decoding,
 * the output writer, JSON to /dev/null) against the library's scan of the
 * same file in the same run, as issue 16 measures it. Process start is left
 * out (etl.sh times the whole command); CPU time, best of 5 (the process's:
 * the decompressing thread's counts), and for the command also the wall
 * time and the main thread's CPU time (ntl_thread_cpu): what the wall time
 * is with the second core free, less any wait for the thread. Each round
 * starts with the heap's free memory given back to the system, as a new
 * process starts with none: a round reusing the pages of the last one
 * skipped the page faults every run of the command pays.
 *   bench_etl_events [FORMAT [MANIFEST]]   (default json, no manifest) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "commands.h"
#include "ntlens/etl.h"
#include "ntlens/thread.h"

static double now(void)
{
    return (double)clock() / CLOCKS_PER_SEC;
}

static double wall(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *data_path(const char *rel)
{
    static char buf[4096];
    const char *root = getenv("NTLENS_SHARED_DATA");
    snprintf(buf, sizeof buf, "%s/etl/%s", root ? root : "../shared/data", rel);
    return buf;
}

/* The library's scan: every event of the file, read and decompressed. */
static int scan(const char *path, long *size)
{
    struct ntl_etl *t;
    struct ntl_error err;
    struct ntl_etl_event ev;
    int rc;
    if (ntl_etl_open_file(path, NULL, &t, &err) < 0)
        return -1;
    while ((rc = ntl_etl_next(t, &ev, &err)) > 0)
        ;
    *size = (long)ntl_etl_input_size(t);
    ntl_etl_close(t);
    return rc;
}

static int events(const char *path, const char *format, const char *manifest)
{
    char *argv[] = {"etl events", "--format", (char *)format, (char *)path, "--manifest",
                    (char *)manifest, NULL};
    return cmd_etl_events(manifest ? 6 : 4, argv);
}

int main(int argc, char **argv)
{
    static const char *const files[] = {"ShutdownPerfDiagLogger.etl", "net.4.5.2.x64.etl"};
    const char *format = argc > 1 ? argv[1] : "json", *manifest = argc > 2 ? argv[2] : NULL;
    if (!freopen("/dev/null", "w", stdout))
        return 1;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        const char *path = data_path(files[i]);
        double best_scan = 1e9, best_events = 1e9, best_wall = 1e9, best_main = 1e9;
        long size = 0;
        for (int round = 0; round < 5; round++) {
#ifdef __GLIBC__
            malloc_trim(0);
#endif
            double t0 = now();
            if (scan(path, &size) < 0) {
                fprintf(stderr, "%s: cannot scan\n", path);
                return 1;
            }
            double t1 = now(), w1 = wall(), m1 = ntl_thread_cpu();
            if (events(path, format, manifest) != 0) {
                fprintf(stderr, "%s: etl events failed\n", path);
                return 1;
            }
            double t2 = now(), w2 = wall(), m2 = ntl_thread_cpu();
            best_scan = t1 - t0 < best_scan ? t1 - t0 : best_scan;
            best_events = t2 - t1 < best_events ? t2 - t1 : best_events;
            best_wall = w2 - w1 < best_wall ? w2 - w1 : best_wall;
            best_main = m2 - m1 < best_main ? m2 - m1 : best_main;
        }
        fprintf(stderr, "%-28s scan %7.1f MB/s  etl events -f %s%s %7.1f MB/s  (%.2fx the scan)"
                "  wall %7.1f MB/s  main thread %7.1f MB/s\n",
                files[i], size / best_scan / 1e6, format, manifest ? " --manifest" : "",
                size / best_events / 1e6, best_scan / best_events, size / best_wall / 1e6,
                size / best_main / 1e6);
    }
    return 0;
}
