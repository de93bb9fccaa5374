/* ipt flow --jobs: the split decoder (ntlens/ipt_flow_split.h) on N
 * threads against itself on one, in the same run, on the kAFL recordings:
 * wall time (threads are what is measured), best of ROUNDS taken in
 * turn with one thread's, each round
 * with its decoders made afresh (cold caches, as one `ipt flow` run has):
 *   runs: instructions counted in runs (`ipt flow --quiet --stat`'s path);
 *   insn: every instruction returned (--no-inst's path, nothing printed).
 * Prints the ratio of N threads' wall time to one's, the ratio of the CPU
 * time they take (what splitting costs: caches warmed per thread, the
 * overlap at seams, records kept and handed out), the ratio to be had on
 * free cores (one thread's CPU time over that of the busiest thread of an
 * N-thread run, the caller's included, best of each: on a shared machine the wall
 * time says more about the other load), and the seams taken. "plain" is one
 * decoder without the split (what `ipt flow --jobs 1` runs), in the same
 * turns: the ratio the command line shows, but for its start (loading
 * the image; about 6 ms on kafl-mruby).
 * Memory freed stays with the process (mallopt): else each thread's
 * arena gives its tables back to the system and faults them in afresh the
 * next round while the one-thread runs reuse the main arena's, and which
 * run follows a split decode shifts the ratios by up to 2x. So these are
 * warm figures; a cold run (a process per decode) is `perf stat` on the
 * command (docs/performance.md).
 * -r COPIES decodes the recording repeated COPIES times in memory (each
 * copy starts at its PSB): a trace of seconds, as a long fuzzing or
 * profiling session records, where a thread's cold start is paid once
 * (the recordings alone decode in milliseconds). Rounds then fall to
 * ROUNDS / COPIES, at least 3.
 *   bench_ipt_jobs [-j N] [-p PARTS_PER_JOB] [-r COPIES] [RECORDING_DIR...]
 * default: -j 2, the split's own parts per job, one copy, the kafl-* recordings */
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ntlens/buf.h"
#include "ntlens/ipt_flow_split.h"
#include "ntlens/ipt_image.h"

#define ROUNDS 25

static unsigned parts_per_job; /* -p; 0: the split's default */
static unsigned copies = 1;    /* -r */

static double clock_s(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int count(void *ctx, const struct ntl_ipt_flow_rec *rec)
{
    uint64_t *n = ctx;
    if (rec->kind == NTL_IPT_REC_ITEM)
        *n += rec->it.kind == NTL_IPT_FL_RUN ? rec->it.b : rec->it.kind == NTL_IPT_FL_INSN;
    return 0;
}

/* One decode on jobs threads: the best wall time into *wall and CPU time
 * of the process into *cpu so far; *insns and *st of it. */
static int once(const struct ntl_ipt_flow_config *cfg, unsigned jobs, uint64_t *insns,
                struct ntl_ipt_split_stats *st, double *wall, double *cpu)
{
    struct ntl_ipt_split_config sc = {.jobs = jobs, .parts_per_job = parts_per_job, .stats = st};
    struct ntl_error err;
    *insns = 0;
    double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    if (ntl_ipt_flow_split(cfg, &sc, count, insns, &err) < 0)
        return fprintf(stderr, "%s\n", err.message), -1;
    double t = clock_s(CLOCK_MONOTONIC) - t0, c = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    *wall = t < *wall ? t : *wall;
    *cpu = c < *cpu ? c : *cpu;
    return 0;
}

/* One decoder over the whole trace, as `ipt flow` without --jobs: the best
 * wall and CPU times into *wall and *cpu. Returns its instructions. */
static uint64_t plain(const struct ntl_ipt_flow_config *cfg, double *wall, double *cpu)
{
    struct ntl_ipt_flow *f;
    struct ntl_ipt_flow_item it;
    struct ntl_error err;
    struct ntl_ipt_flow_rec rec = {.kind = NTL_IPT_REC_ITEM};
    uint64_t n = 0;
    bool enabled;
    double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    if (ntl_ipt_flow_new(&f, cfg, &err) < 0)
        return 0;
    int rc = ntl_ipt_flow_sync(f, &err);
    while (rc >= 0 && (rc = ntl_ipt_flow_next(f, &it, &err)) != 0) {
        rec.it = it;
        if (rc > 0)
            count(&n, &rec);
        else
            rc = ntl_ipt_flow_resync(f, &enabled, &err);
    }
    ntl_ipt_flow_free(f);
    double t = clock_s(CLOCK_MONOTONIC) - t0, c = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    *wall = t < *wall ? t : *wall;
    *cpu = c < *cpu ? c : *cpu;
    return n;
}

/* The trace at path, copies times over, into trace. */
static int read_trace(const char *path, struct ntl_buf *trace, struct ntl_error *err)
{
    if (ntl_file_read(path, (size_t)1 << 30, trace, err) < 0)
        return -1;
    size_t one = trace->len;
    /* Room first: appending from the buffer's own bytes must not move them. */
    int rc = ntl_buf_reserve(trace, one * (copies - 1));
    if (rc < 0)
        return ntl_error_set(err, rc, "trace", 0, "no room for %u copies of %zu bytes", copies, one);
    for (unsigned i = 1; i < copies; i++)
        ntl_buf_append(trace, trace->data, one);
    return 0;
}

static int bench(const char *dir, unsigned jobs)
{
    struct ntl_buf trace;
    struct ntl_ipt_image *img;
    struct ntl_error err;
    char path[4096];
    snprintf(path, sizeof path, "%s/trace.pt", dir);
    ntl_buf_init(&trace, 0);
    if (read_trace(path, &trace, &err) < 0 || ntl_ipt_image_new(&img, &err) < 0)
        return fprintf(stderr, "%s: %s\n", path, err.message), 1;
    snprintf(path, sizeof path, "%s/image", dir);
    if (ntl_ipt_image_add_pages(img, path, &err) < 0)
        return fprintf(stderr, "%s: %s\n", path, err.message), 1;
    const char *name = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    struct ntl_ipt_flow_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.trace.buf = trace.data;
    cfg.trace.size = trace.len;
    cfg.read = ntl_ipt_image_read;
    cfg.read_ctx = img;
    for (int w = 0; w < 2; w++) {
        struct ntl_ipt_split_stats s1, sn;
        uint64_t n1, nn;
        cfg.runs = w == 0;
        double c1 = 1e30, cn = 1e30, t1 = 1e30, tn = 1e30;
        /* One thread and jobs threads in turn: the machine is shared, and
         * each best is taken under the same load. */
        double path = 1e30, tp = 1e30, cp = 1e30;
        uint64_t np = 0;
        unsigned rounds = ROUNDS / copies < 3 ? 3 : ROUNDS / copies;
        for (unsigned i = 0; i < rounds; i++) {
            np = plain(&cfg, &tp, &cp);
            if (once(&cfg, 1, &n1, &s1, &t1, &c1) < 0 || once(&cfg, jobs, &nn, &sn, &tn, &cn) < 0)
                return 1;
            double p = sn.busiest > sn.caller ? sn.busiest : sn.caller;
            path = p < path ? p : path;
        }
        printf("%-16s %s %7.1f KB  1 thread %6.1f ms  %u threads %6.1f ms  ratio %.2fx  "
               "CPU %.2fx  free cores %.2fx  (%" PRIu64 " insns%s, %u parts, %u seams taken, "
               "%u decoded again)\n",
               name, w == 0 ? "runs" : "insn", (double)trace.len / 1e3, t1 * 1e3, jobs, tn * 1e3,
               t1 / tn, cn / c1, c1 / path, nn, nn == n1 ? "" : " DIFFER", sn.parts, sn.taken,
               sn.redecoded);
        printf("%-16s %s plain %6.1f ms  ratio %.2fx  CPU %.2fx  free cores %.2fx%s\n", name,
               w == 0 ? "runs" : "insn", tp * 1e3, tp / tn, cn / cp, cp / path,
               np == n1 ? "" : " DIFFER");
    }
    ntl_ipt_image_free(img);
    ntl_buf_free(&trace);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const defaults[] = {"kafl-foo", "kafl-unzip", "kafl-mruby",
                                           "kafl-avscript32"};
    unsigned jobs = 2;
    int rc = 0, i = 1;
#ifdef __GLIBC__
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
#endif
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (!strcmp(argv[i], "-j"))
            jobs = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-p"))
            parts_per_job = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-r") && atoi(argv[i + 1]) > 0)
            copies = (unsigned)atoi(argv[i + 1]);
        else
            return fprintf(stderr, "bench_ipt_jobs [-j N] [-p PARTS_PER_JOB] [-r COPIES] [DIR...]\n"), 2;
    }
    if (i < argc) {
        for (; i < argc; i++)
            rc |= bench(argv[i], jobs);
        return rc;
    }
    for (size_t k = 0; k < sizeof defaults / sizeof defaults[0]; k++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/ipt/real/%s", NTL_SHARED_DATA, defaults[k]);
        rc |= bench(dir, jobs);
    }
    return rc;
}
