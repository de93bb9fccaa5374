/* The Linux local provider against the floor of its job, in one process:
 * ntlens builds a full PERF_DATA_BLOCK (Process, or Process + Thread) from
 * /proc and parses it back; the rival only reads /proc/PID/stat (and
 * /proc/PID/task/TID/stat), which is what procps' `ps -e` / `ps -eL` read.
 * A helper thread group makes the thread listing large.
 *   bench_local [RUNS] [THREADS]                                        */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ntlens/perf.h"
#include "ntlens/source.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static size_t read_stat(const char *path)
{
    char buf[1024];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;
    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof buf);
    close(fd);
    return n > 0 ? 1 : 0;
}

/* What `ps -e` (threads false) or `ps -eL` (threads true) must read. */
static size_t rival(int threads)
{
    DIR *d = opendir("/proc"), *t;
    struct dirent *e, *te;
    char path[600];
    size_t n = 0;

    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        if (!threads) {
            snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
            n += read_stat(path);
            continue;
        }
        snprintf(path, sizeof path, "/proc/%s/task", e->d_name);
        if (!(t = opendir(path)))
            continue;
        while ((te = readdir(t)) != NULL)
            if (te->d_name[0] != '.') {
                snprintf(path, sizeof path, "/proc/%s/task/%s/stat", e->d_name, te->d_name);
                n += read_stat(path);
            }
        closedir(t);
    }
    closedir(d);
    return n;
}

static size_t ours(struct ntl_source *s, const char *query, struct ntl_buf *raw)
{
    struct ntl_error err;
    struct ntl_perf_block *b = NULL;
    size_t n = 0;

    if (ntl_source_query(s, query, raw, &err) < 0 || ntl_perf_block_parse(raw->data, raw->len, &b, &err) < 0) {
        char msg[512];
        fprintf(stderr, "bench_local: %s\n", ntl_error_format(&err, msg, sizeof msg));
        exit(1);
    }
    for (size_t i = 0; i < b->nobjects; i++)
        n += b->objects[i].ninstances;
    ntl_perf_block_free(b);
    return n;
}

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;

static void *park(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&gate);
    pthread_mutex_unlock(&gate);
    return NULL;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 20, nthreads = argc > 2 ? atoi(argv[2]) : 2000;
    pthread_t *tids = calloc((size_t)nthreads, sizeof *tids);
    struct ntl_source *s;
    struct ntl_error err;
    struct ntl_buf raw;
    const char *queries[2] = {"230", "232"};
    const char *labels[2] = {"processes (Process 230)", "threads (Thread 232 + Process)"};
    int started = 0;

    pthread_mutex_lock(&gate);
    for (; tids && started < nthreads; started++)
        if (pthread_create(&tids[started], NULL, park, NULL))
            break;
    if (ntl_source_open("local", NULL, &s, &err) < 0) {
        fprintf(stderr, "bench_local: cannot open the local source\n");
        return 1;
    }
    ntl_buf_init(&raw, 0);
    printf("helper threads: %d, runs: %d\n", started, runs);
    for (int q = 0; q < 2; q++) {
        size_t inst = 0, files = 0;
        double t0, t1, t2;
        ours(s, queries[q], &raw); /* warm the dentry cache for both */
        rival(q);
        t0 = now();
        for (int i = 0; i < runs; i++)
            inst = ours(s, queries[q], &raw);
        t1 = now();
        for (int i = 0; i < runs; i++)
            files = rival(q);
        t2 = now();
        printf("%-32s ntlens %7.2f ms (%zu instances, %zu-byte block)  stat-only reader %7.2f ms "
               "(%zu files)  ratio %.2fx\n",
               labels[q], (t1 - t0) / runs * 1e3, inst, raw.len, (t2 - t1) / runs * 1e3, files,
               (t1 - t0) / (t2 - t1));
    }
    pthread_mutex_unlock(&gate);
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    free(tids);
    ntl_buf_free(&raw);
    ntl_source_close(s);
    return 0;
}
