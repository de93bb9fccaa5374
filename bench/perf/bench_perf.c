/* Parse and index a large snapshot (5,000 processes, 100,000 threads, built
 * with the PERF_DATA_BLOCK writer in Windows' layout and counter set), and
 * read every counter value; the rival is a plain memcpy of the same bytes
 * in the same run. Reports MB/s, ns per counter value and the ratio.
 *   bench_perf [PROCESSES [THREADS_PER_PROCESS]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ntlens/buf.h"
#include "ntlens/perf.h"
#include "ntlens/perf_build.h"
#include "ntlens/perf_value.h"

#define C(idx, type, size) {idx, idx + 1, 0, 100, type, size}

/* Windows' Process object (230): 28 counters, as Windows 10 reports them. */
static const struct ntl_perf_build_counter process_counters[] = {
    C(6, NTL_PERF_100NSEC_TIMER, 8), C(142, NTL_PERF_100NSEC_TIMER, 8),
    C(144, NTL_PERF_100NSEC_TIMER, 8), C(172, NTL_PERF_COUNTER_LARGE_RAWCOUNT, 8),
    C(174, NTL_PERF_COUNTER_LARGE_RAWCOUNT, 8), C(28, NTL_PERF_COUNTER_COUNTER, 4),
    C(178, NTL_PERF_COUNTER_LARGE_RAWCOUNT, 8), C(180, NTL_PERF_COUNTER_LARGE_RAWCOUNT, 8),
    C(182, NTL_PERF_COUNTER_LARGE_RAWCOUNT, 8), C(184, NTL_PERF_COUNTER_LARGE_RAWCOUNT, 8),
    C(186, NTL_PERF_COUNTER_LARGE_RAWCOUNT, 8), C(680, NTL_PERF_COUNTER_RAWCOUNT, 4),
    C(682, NTL_PERF_COUNTER_RAWCOUNT, 4), C(684, NTL_PERF_ELAPSED_TIME, 8),
    C(784, NTL_PERF_COUNTER_LARGE_RAWCOUNT, 8), C(1410, NTL_PERF_COUNTER_LARGE_RAWCOUNT, 8),
    C(56, NTL_PERF_COUNTER_RAWCOUNT, 4), C(58, NTL_PERF_COUNTER_RAWCOUNT, 4),
    C(952, NTL_PERF_COUNTER_RAWCOUNT, 4), C(1412, NTL_PERF_COUNTER_BULK_COUNT, 8),
    C(1414, NTL_PERF_COUNTER_BULK_COUNT, 8), C(1416, NTL_PERF_COUNTER_BULK_COUNT, 8),
    C(1418, NTL_PERF_COUNTER_BULK_COUNT, 8), C(1420, NTL_PERF_COUNTER_BULK_COUNT, 8),
    C(1422, NTL_PERF_COUNTER_BULK_COUNT, 8), C(1424, NTL_PERF_COUNTER_BULK_COUNT, 8),
    C(1426, NTL_PERF_COUNTER_BULK_COUNT, 8), C(1478, NTL_PERF_COUNTER_LARGE_RAWCOUNT, 8),
};
/* Windows' Thread object (232): 12 counters. */
static const struct ntl_perf_build_counter thread_counters[] = {
    C(146, NTL_PERF_COUNTER_COUNTER, 4), C(6, NTL_PERF_100NSEC_TIMER, 8),
    C(142, NTL_PERF_100NSEC_TIMER, 8), C(144, NTL_PERF_100NSEC_TIMER, 8),
    C(684, NTL_PERF_ELAPSED_TIME, 8), C(694, NTL_PERF_COUNTER_RAWCOUNT, 4),
    C(682, NTL_PERF_COUNTER_RAWCOUNT, 4), C(706, NTL_PERF_COUNTER_LARGE_RAWCOUNT_HEX, 8),
    C(46, NTL_PERF_COUNTER_RAWCOUNT, 4), C(336, NTL_PERF_COUNTER_RAWCOUNT, 4),
    C(784, NTL_PERF_COUNTER_RAWCOUNT, 4), C(804, NTL_PERF_COUNTER_RAWCOUNT, 4),
};
#define NPC (sizeof process_counters / sizeof process_counters[0])
#define NTC (sizeof thread_counters / sizeof thread_counters[0])

static const char *names[] = {"svchost", "chrome", "RuntimeBroker", "conhost", "explorer",
                              "MsMpEng", "sqlservr", "w3wp", "dllhost", "powershell"};

static int build(struct ntl_buf *out, unsigned nproc, unsigned tpp)
{
    struct ntl_perf_builder b;
    struct ntl_error err;
    struct ntl_perf_build_header h = {
        .system_time = {2026, 11, 0, 22, 3, 0, 0, 0}, .perf_time = 123456789,
        .perf_freq = 10000000, .perf_time_100ns = 133000000000000000, .system_name = "BENCH",
        .default_object = 238};
    struct ntl_perf_build_object po = {230, 231, 100, 0, true, 0, 133000000000000000, 10000000,
                                       process_counters, NPC};
    struct ntl_perf_build_object to = {232, 233, 200, -1, true, 0, 133000000000000000, 10000000,
                                       thread_counters, NTC};
    uint64_t v[NPC];
    char name[32];
    if (ntl_perf_build_begin(&b, out, &h, &err) < 0 || ntl_perf_build_object(&b, &po, &err) < 0)
        goto fail;
    for (unsigned p = 0; p < nproc; p++) {
        struct ntl_perf_build_instance in = {names[p % 10], 0, 0, -1};
        for (unsigned c = 0; c < NPC; c++)
            v[c] = (uint64_t)p * 1000 + c;
        if (ntl_perf_build_instance(&b, &in, v, &err) < 0)
            goto fail;
    }
    if (ntl_perf_build_end_object(&b, &err) < 0 || ntl_perf_build_object(&b, &to, &err) < 0)
        goto fail;
    for (unsigned p = 0; p < nproc; p++)
        for (unsigned t = 0; t < tpp; t++) {
            snprintf(name, sizeof name, "%u", t);
            struct ntl_perf_build_instance in = {name, 230, p, -1};
            for (unsigned c = 0; c < NTC; c++)
                v[c] = (uint64_t)t * 100 + c;
            if (ntl_perf_build_instance(&b, &in, v, &err) < 0)
                goto fail;
        }
    if (ntl_perf_build_end_object(&b, &err) < 0 || ntl_perf_build_finish(&b, &err) < 0)
        goto fail;
    return 0;
fail:
    fprintf(stderr, "bench_perf: building the snapshot: %s\n", err.message);
    return -1;
}

static double now(void)
{
    return (double)clock() / CLOCKS_PER_SEC;
}

int main(int argc, char **argv)
{
    unsigned nproc = argc > 1 ? (unsigned)atoi(argv[1]) : 5000;
    unsigned tpp = argc > 2 ? (unsigned)atoi(argv[2]) : 20;
    struct ntl_buf blk;
    struct ntl_error err;
    ntl_buf_init(&blk, 0);
    if (build(&blk, nproc, tpp) < 0)
        return 1;
    size_t nvalues = (size_t)nproc * NPC + (size_t)nproc * tpp * NTC;
    uint8_t *dst = malloc(blk.len);
    if (!dst)
        return 1;
    memset(dst, 1, blk.len);

    /* Best of several rounds, each long enough for clock()'s resolution. */
    const int reps = 10, rounds = 5;
    double best_copy = 1e9, best_parse = 1e9, best_read = 1e9;
    volatile uint64_t sink = 0;
    for (int r = 0; r < rounds; r++) {
        double t0 = now();
        for (int i = 0; i < reps; i++) {
            memcpy(dst, blk.data, blk.len);
            sink += dst[i * 977 % blk.len];
        }
        double t1 = now();
        for (int i = 0; i < reps; i++) {
            struct ntl_perf_block *b;
            if (ntl_perf_block_parse(blk.data, blk.len, &b, &err) < 0) {
                fprintf(stderr, "bench_perf: %s\n", err.message);
                return 1;
            }
            sink += b->nobjects;
            ntl_perf_block_free(b);
        }
        double t2 = now();
        for (int i = 0; i < reps; i++) {
            struct ntl_perf_block *b;
            ntl_perf_block_parse(blk.data, blk.len, &b, &err);
            for (size_t o = 0; o < b->nobjects; o++) {
                const struct ntl_perf_object *obj = &b->objects[o];
                for (size_t in = 0; in < obj->ninstances; in++)
                    for (size_t c = 0; c < obj->ncounters; c++)
                        sink += ntl_perf_counter_u64(obj, c, in);
            }
            ntl_perf_block_free(b);
        }
        double t3 = now();
        if ((t1 - t0) / reps < best_copy)
            best_copy = (t1 - t0) / reps;
        if ((t2 - t1) / reps < best_parse)
            best_parse = (t2 - t1) / reps;
        if ((t3 - t2) / reps < best_read)
            best_read = (t3 - t2) / reps;
    }
    double mb = (double)blk.len / 1e6;
    printf("snapshot: %u processes, %u threads, %zu counter values, %.1f MB\n", nproc,
           nproc * tpp, nvalues, mb);
    printf("memcpy (rival):           %8.3f ms  %8.0f MB/s\n", best_copy * 1e3, mb / best_copy);
    printf("parse + index:            %8.3f ms  %8.0f MB/s  %6.2f ns/counter  %.2fx memcpy\n",
           best_parse * 1e3, mb / best_parse, best_parse * 1e9 / (double)nvalues,
           best_parse / best_copy);
    printf("parse + read every value: %8.3f ms  %8.0f MB/s  %6.2f ns/counter  %.2fx memcpy\n",
           best_read * 1e3, mb / best_read, best_read * 1e9 / (double)nvalues,
           best_read / best_copy);
    free(dst);
    ntl_buf_free(&blk);
    return sink == 42 ? 2 : 0;
}
