/* The PERF_DATA_BLOCK writer on a large snapshot (5,000 processes with 17
 * counters, 100,000 threads with 11, names like the Linux provider's),
 * against a plain memcpy of the bytes it produces, in the same run.
 *   bench_build [RUNS]                                                     */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ntlens/perf_build.h"
#include "ntlens/perf_value.h"

#define NPROC 5000
#define NTHREAD 100000

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct ntl_perf_build_counter proc_defs[17], thread_defs[11];
static char proc_names[NPROC][24], thread_names[NTHREAD / NPROC][8];

static int build(struct ntl_buf *out, struct ntl_error *err)
{
    struct ntl_perf_builder b;
    struct ntl_perf_build_header h = {0};
    struct ntl_perf_build_object po = {230, 231, 100, 0, true, 0, 0, 10000000, proc_defs, 17};
    struct ntl_perf_build_object to = {232, 233, 100, 0, true, 0, 0, 10000000, thread_defs, 11};
    uint64_t v[17];
    int rc;

    h.system_name = "BENCHHOST";
    out->len = 0;
    if ((rc = ntl_perf_build_begin(&b, out, &h, err)) < 0 || (rc = ntl_perf_build_object(&b, &po, err)) < 0)
        return rc;
    for (int i = 0; i < NPROC; i++) {
        struct ntl_perf_build_instance in = {proc_names[i], 0, 0, NTL_PERF_BUILD_NO_UNIQUE_ID};
        for (int k = 0; k < 17; k++)
            v[k] = (uint64_t)i * 17 + (uint64_t)k;
        if ((rc = ntl_perf_build_instance(&b, &in, v, err)) < 0)
            return rc;
    }
    if ((rc = ntl_perf_build_end_object(&b, err)) < 0 || (rc = ntl_perf_build_object(&b, &to, err)) < 0)
        return rc;
    for (int i = 0; i < NTHREAD; i++) {
        struct ntl_perf_build_instance in = {thread_names[i % (NTHREAD / NPROC)], 230,
                                             (uint32_t)(i / (NTHREAD / NPROC)), NTL_PERF_BUILD_NO_UNIQUE_ID};
        for (int k = 0; k < 11; k++)
            v[k] = (uint64_t)i * 11 + (uint64_t)k;
        if ((rc = ntl_perf_build_instance(&b, &in, v, err)) < 0)
            return rc;
    }
    if ((rc = ntl_perf_build_end_object(&b, err)) < 0)
        return rc;
    return ntl_perf_build_finish(&b, err);
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 10, len = 0;
    struct ntl_buf out;
    struct ntl_error err;
    uint8_t *copy;
    double t0, t1, t2;

    for (int k = 0; k < 17; k++)
        proc_defs[k] = (struct ntl_perf_build_counter){(uint32_t)(2 * k + 2), (uint32_t)(2 * k + 3), 0, 100,
                                                       k % 2 ? NTL_PERF_COUNTER_RAWCOUNT : NTL_PERF_100NSEC_TIMER,
                                                       k % 2 ? 4u : 8u};
    for (int k = 0; k < 11; k++)
        thread_defs[k] = proc_defs[k];
    for (int i = 0; i < NPROC; i++)
        snprintf(proc_names[i], sizeof proc_names[i], "process-%d", i);
    for (int i = 0; i < NTHREAD / NPROC; i++)
        snprintf(thread_names[i], sizeof thread_names[i], "%d", i);
    ntl_buf_init(&out, 0);
    if ((len = build(&out, &err)) < 0) {
        char msg[512];
        fprintf(stderr, "bench_build: %s\n", ntl_error_format(&err, msg, sizeof msg));
        return 1;
    }
    if (!(copy = malloc((size_t)len)))
        return 1;
    t0 = now();
    for (int r = 0; r < runs; r++)
        build(&out, &err);
    t1 = now();
    for (int r = 0; r < runs; r++) {
        memcpy(copy, out.data, out.len);
        __asm__ volatile("" : : "r"(copy) : "memory");
    }
    t2 = now();
    printf("block: %d bytes, %d processes, %d threads, %d runs\n", len, NPROC, NTHREAD, runs);
    printf("writer %.2f ms per block (%.0f MB/s, %.1f ns per instance)  memcpy %.3f ms (%.0f MB/s)  "
           "ratio %.1fx\n",
           (t1 - t0) / runs * 1e3, len / ((t1 - t0) / runs) / 1e6, (t1 - t0) / runs / (NPROC + NTHREAD) * 1e9,
           (t2 - t1) / runs * 1e3, len / ((t2 - t1) / runs) / 1e6, (t1 - t0) / (t2 - t1));
    free(copy);
    ntl_buf_free(&out);
    return 0;
}
