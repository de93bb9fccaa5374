/* Writes a PERF_DATA_BLOCK shaped like a Windows host's answer to "230 232"
 * (Idle, System, smss, two svchost, _Total; threads parented by instance
 * number; no Handle Count counter) for test_ps_windows.py, which replays it
 * through `ntlens capture --import` into `ntlens ps`.
 *   gen_ps_block OUT.bin                                                   */
#include <stdio.h>

#include "ntlens/perf_build.h"
#include "ntlens/perf_value.h"

#define FT_NOW 134000000000000000ll
#define SEC 10000000ll

static const struct ntl_perf_build_counter proc_defs[] = {
    {6, 7, 0, 100, NTL_PERF_100NSEC_TIMER, 8},
    {784, 785, -1, 100, NTL_PERF_COUNTER_RAWCOUNT, 4},
    {1410, 1411, -1, 100, NTL_PERF_COUNTER_RAWCOUNT, 4},
    {680, 681, 0, 200, NTL_PERF_COUNTER_RAWCOUNT, 4},
    {682, 683, 0, 200, NTL_PERF_COUNTER_RAWCOUNT, 4},
    {684, 685, -4, 200, NTL_PERF_ELAPSED_TIME, 8},
    {186, 187, -5, 200, NTL_PERF_COUNTER_LARGE_RAWCOUNT, 8},
};

static const struct ntl_perf_build_counter thread_defs[] = {
    {804, 805, 0, 100, NTL_PERF_COUNTER_RAWCOUNT, 4},
    {784, 785, 0, 100, NTL_PERF_COUNTER_RAWCOUNT, 4},
    {694, 695, 0, 200, NTL_PERF_COUNTER_RAWCOUNT, 4},
    {46, 47, 0, 400, NTL_PERF_COUNTER_RAWCOUNT, 4},
    {336, 337, 0, 400, NTL_PERF_COUNTER_RAWCOUNT, 4},
    {146, 147, -2, 100, NTL_PERF_COUNTER_COUNTER, 4},
    {142, 143, 0, 200, NTL_PERF_100NSEC_TIMER, 8},
    {144, 145, 0, 200, NTL_PERF_100NSEC_TIMER, 8},
    {684, 685, -4, 200, NTL_PERF_ELAPSED_TIME, 8},
};

struct proc {
    const char *name;
    uint64_t cpu, pid, ppid, threads, pri, age_s, priv;
};

static const struct proc procs[] = {
    {"Idle", 3600 * SEC, 0, 0, 2, 0, 7200, 0},
    {"System", 15 * SEC / 10, 4, 0, 1, 8, 7200, 20480},
    {"smss", 0, 248, 4, 0, 11, 7199, 4096},
    {"svchost", 2 * SEC, 600, 248, 1, 8, 7100, 1048576},
    {"svchost", 0, 812, 248, 2, 8, 60, 2048},
    {"_Total", 3600 * SEC + 35 * SEC / 10, 0, 0, 6, 0, 7200, 1075200},
};

struct thread {
    uint32_t parent;  /* Process instance number */
    const char *name; /* number within the process */
    uint64_t tid, pid, pri, state, wait, cswitch, user, kernel, age_s;
};

static const struct thread threads[] = {
    {0, "0", 0, 0, 0, 2, 0, 100, 0, 1800 * SEC, 7200},
    {0, "1", 0, 0, 0, 2, 0, 100, 0, 1800 * SEC, 7200},
    {1, "0", 8, 4, 13, 5, 6, 5000, 0, 15 * SEC / 10, 7200},
    {3, "0", 640, 600, 9, 2, 0, 70, SEC, SEC, 7100},
    {4, "0", 900, 812, 8, 5, 6, 3, 0, 0, 60},
    {4, "1", 904, 812, 8, 1, 0, 4, 0, 0, 30},
};

int main(int argc, char **argv)
{
    struct ntl_buf out;
    struct ntl_error err;
    struct ntl_perf_builder b;
    struct ntl_perf_build_header h = {0};
    struct ntl_perf_build_object po = {230, 231, 100, 0, true, 0, FT_NOW, SEC, proc_defs, 7};
    struct ntl_perf_build_object to = {232, 233, 200, 0, true, 0, FT_NOW, SEC, thread_defs, 9};
    int rc;

    if (argc != 2) {
        fprintf(stderr, "usage: gen_ps_block OUT.bin\n");
        return 2;
    }
    ntl_buf_init(&out, 0);
    ntl_perf_build_systemtime(h.system_time, 1763780000, 0);
    h.perf_time = 123456789;
    h.perf_freq = SEC;
    h.perf_time_100ns = FT_NOW;
    h.system_name = "WINHOST";
    h.default_object = 238;
    rc = ntl_perf_build_begin(&b, &out, &h, &err);
    if (rc >= 0)
        rc = ntl_perf_build_object(&b, &po, &err);
    for (size_t i = 0; rc >= 0 && i < sizeof procs / sizeof procs[0]; i++) {
        const struct proc *p = &procs[i];
        struct ntl_perf_build_instance in = {p->name, 0, 0, NTL_PERF_BUILD_NO_UNIQUE_ID};
        uint64_t v[7] = {p->cpu, p->pid, p->ppid, p->threads, p->pri,
                         (uint64_t)(FT_NOW - (int64_t)p->age_s * SEC), p->priv};
        rc = ntl_perf_build_instance(&b, &in, v, &err);
    }
    if (rc >= 0)
        rc = ntl_perf_build_end_object(&b, &err);
    if (rc >= 0)
        rc = ntl_perf_build_object(&b, &to, &err);
    for (size_t i = 0; rc >= 0 && i < sizeof threads / sizeof threads[0]; i++) {
        const struct thread *t = &threads[i];
        struct ntl_perf_build_instance in = {t->name, 230, t->parent, NTL_PERF_BUILD_NO_UNIQUE_ID};
        uint64_t v[9] = {t->tid, t->pid, t->pri, t->state, t->wait, t->cswitch, t->user, t->kernel,
                         (uint64_t)(FT_NOW - (int64_t)t->age_s * SEC)};
        rc = ntl_perf_build_instance(&b, &in, v, &err);
    }
    if (rc >= 0)
        rc = ntl_perf_build_end_object(&b, &err);
    if (rc >= 0)
        rc = ntl_perf_build_finish(&b, &err);
    if (rc >= 0)
        rc = ntl_file_write(argv[1], out.data, out.len, &err);
    if (rc < 0) {
        char msg[512];
        fprintf(stderr, "gen_ps_block: %s\n", ntl_error_format(&err, msg, sizeof msg));
    }
    ntl_buf_free(&out);
    return rc < 0 ? 1 : 0;
}
