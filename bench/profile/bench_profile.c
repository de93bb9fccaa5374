/* The profile report on synthetic samples: 300 modules of 1 MiB, each with
 * a symbol table of 2,000 functions, and 1,000,000 samples (an ip and an
 * 8-deep stack, skewed toward a few hot modules and functions as real
 * profiles are) from 64 threads. Times, separately: building the symbol
 * tables, adding the samples (without their stacks, as `ntlens profile`
 * does for a report), Kernrate's report (modules, processes, threads, then
 * functions and buckets of every module), and, on a second profile that
 * keeps the stacks, naming every frame of every sample (what --format
 * folded and speedscope do), in CPU seconds. The
 * rival, `perf report --stdio` on a perf.data of as many samples, runs in
 * bench/profile/profile.sh, which reads the "total" line. The samples and
 * the symbol names are made before the clock starts; the checksums (of
 * every report row, and of every frame's name) tell whether two builds
 * report the same, and the report's are summed with the clock paused.
 * With --threads, only the report, in wall time: lib/profile's loader
 * (ntl_profile_symbols_start) builds and sorts the symbol tables on a
 * second thread while the samples are added, as `ntlens profile` loads
 * them; report_vs_perf.sh --wall reads its "total".
 *   bench_profile [SAMPLES [MODULES [--no-frames | --threads]]] */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <time.h>
#include <sys/resource.h>

#include "ntlens/profile.h"
#include "ntlens/profile_report.h"
#include "ntlens/profile_symbols.h"
#include "ntlens/thread.h"

#define MODULE_SIZE (1u << 20)
#define FUNCTIONS 2000u
#define DEPTH 8u
#define PID 4242u
#define NAME_SIZE 32u

/* CPU time (steady on a shared machine), or wall time with --threads. */
static clockid_t clock_id = CLOCK_PROCESS_CPUTIME_ID;

static double now(void)
{
    struct timespec ts;
    clock_gettime(clock_id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* First-touch page faults so far: much of the profile's time is the
 * kernel handing it fresh pages, so the phases print theirs. */
static long faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A skewed pick in [0, n): the lower of two uniform picks, so index 0 is
 * twice as likely as the average and the last almost never picked. */
static uint64_t skewed(uint64_t n)
{
    uint64_t a = next() % n, b = next() % n;
    return a < b ? a : b;
}

static uint64_t base_of(unsigned m) { return 0x7f0000000000ull + (uint64_t)m * 2 * MODULE_SIZE; }

/* An address in a function of module m: a skewed function, a random byte
 * in it. */
static uint64_t addr(unsigned nmod)
{
    unsigned m = (unsigned)skewed(nmod);
    uint64_t f = skewed(FUNCTIONS), fsize = MODULE_SIZE / FUNCTIONS;
    return base_of(m) + f * fsize + next() % fsize;
}

static void die(const char *what, const struct ntl_error *err)
{
    fprintf(stderr, "bench_profile: %s: %s\n", what, err->message);
    exit(1);
}

/* The symbol names, made before the clock starts (as the samples are):
 * formatting 600,000 names took longer than the profile's own work. */
static char *make_names(unsigned nmod)
{
    char *names = malloc((size_t)nmod * FUNCTIONS * NAME_SIZE);
    if (!names) {
        fprintf(stderr, "bench_profile: out of memory\n");
        exit(1);
    }
    for (unsigned m = 0; m < nmod; m++)
        for (unsigned f = 0; f < FUNCTIONS; f++)
            snprintf(names + ((size_t)m * FUNCTIONS + f) * NAME_SIZE, NAME_SIZE,
                     "lib%03u_function_%04u", m, f);
    return names;
}

static void add_range(struct ntl_profile *p, unsigned m)
{
    struct ntl_error err = {0};
    char name[64], path[64];
    snprintf(name, sizeof name, "lib%03u.so", m);
    snprintf(path, sizeof path, "/usr/lib/bench/lib%03u.so", m);
    if (ntl_profile_add_range(p, PID, name, path, base_of(m), MODULE_SIZE, 2, &err) < 0)
        die("module", &err);
}

static struct ntl_profile_symtab *make_table(unsigned m, const char *names)
{
    struct ntl_error err = {0};
    struct ntl_profile_symtab *t;
    if (ntl_profile_symtab_new(&t, &err) < 0 || ntl_profile_symtab_reserve(t, FUNCTIONS, &err) < 0)
        die("symbols", &err);
    for (unsigned f = 0; f < FUNCTIONS; f++)
        if (ntl_profile_symtab_add(t, names + ((size_t)m * FUNCTIONS + f) * NAME_SIZE,
                                   (uint64_t)f * (MODULE_SIZE / FUNCTIONS), 0, &err) < 0)
            die("symbol", &err);
    return t;
}

static void use_table(struct ntl_profile *p, unsigned m, struct ntl_profile_symtab *t)
{
    struct ntl_error err = {0};
    char path[64];
    snprintf(path, sizeof path, "/usr/lib/bench/lib%03u.so", m);
    if (ntl_profile_use_symbols(p, path, t, &err) < 0)
        die("symbols", &err);
}

static void add_modules(struct ntl_profile *p, unsigned nmod, const char *names)
{
    for (unsigned m = 0; m < nmod; m++) {
        add_range(p, m);
        use_table(p, m, make_table(m, names));
    }
}

/* --threads: lib/profile's loader makes the tables (and sorts them) on a
 * second thread while the first adds the samples, as `ntlens profile`
 * loads ELF or PE symbols. */
struct tables {
    const char *names;
    double cpu;            /* the loads' CPU time (one at a time) */
};

static int load_table(void *ctx, const char *name, const char *path,
                      struct ntl_profile_symtab **out, struct ntl_error *err)
{
    struct tables *tt = ctx;
    struct ntl_profile_symbol sym;
    uint64_t disp;
    unsigned m;
    (void)name;
    (void)err;
    double c0 = ntl_thread_cpu();
    if (sscanf(path, "/usr/lib/bench/lib%u.so", &m) != 1)
        return 0;
    *out = make_table(m, tt->names);
    ntl_profile_symtab_lookup(*out, 0, &sym, &disp);
    tt->cpu += ntl_thread_cpu() - c0;
    return 0;
}

/* The input: every sample's ip, thread and stack, drawn before the clock
 * starts, so that what is timed is the profile's work, not the draws. */
struct input {
    uint64_t *addrs;   /* per sample: the ip, then DEPTH return addresses */
    uint32_t *tids;
};

static struct input draw(unsigned long nsamples, unsigned nmod)
{
    struct input in = {malloc(nsamples * (DEPTH + 1) * sizeof *in.addrs),
                       malloc(nsamples * sizeof *in.tids)};
    if (!in.addrs || !in.tids) {
        fprintf(stderr, "bench_profile: out of memory\n");
        exit(1);
    }
    for (unsigned long i = 0; i < nsamples; i++) {
        uint64_t *a = in.addrs + i * (DEPTH + 1);
        for (unsigned d = 0; d < DEPTH; d++)
            a[1 + d] = addr(nmod) + 1;
        a[0] = addr(nmod);
        in.tids[i] = PID + 1 + (uint32_t)(next() % 64);
    }
    return in;
}

static void add_samples(struct ntl_profile *p, const struct input *in, unsigned long nsamples)
{
    struct ntl_error err = {0};
    for (unsigned t = 0; t < 64; t++)
        if (ntl_profile_set_thread(p, PID + 1 + t, PID, &err) < 0)
            die("thread", &err);
    for (unsigned long i = 0; i < nsamples; i++) {
        const uint64_t *a = in->addrs + i * (DEPTH + 1);
        struct ntl_profile_sample s = {.ip = a[0], .pid = PID, .tid = in->tids[i],
                                       .stack = a + 1, .depth = DEPTH};
        if (ntl_profile_add_sample(p, &s, &err) < 0)
            die("sample", &err);
    }
}

/* FNV-1a over a row's fields, so that runs of two builds can be compared.
 * Summing the report's rows (a dependent multiply a byte, 70 MB of rows)
 * takes longer than making them: that time, paused, is not the report's. */
static uint64_t sum;
static double paused, cpu_paused;

static void mix(const void *data, size_t n)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++)
        sum = (sum ^ b[i]) * 0x100000001b3ull;
}

static void mix_u64(uint64_t v) { mix(&v, sizeof v); }
static void mix_str(const char *s) { mix(s ? s : "", s ? strlen(s) + 1 : 1); }

static void mix_rows(const struct ntl_profile_function_row *f, size_t nf,
                     const struct ntl_profile_bucket_row *b, size_t nb)
{
    for (size_t i = 0; i < nf; i++) {
        mix_str(f[i].symbol);
        mix_u64(f[i].offset);
        mix_u64(f[i].hits);
    }
    for (size_t i = 0; i < nb; i++) {
        mix_str(b[i].symbol);
        mix_u64(b[i].offset);
        mix_u64(b[i].hits);
        mix_u64(b[i].disp);
    }
}

/* Kernrate's report, every table of every module; returns the rows made. */
static size_t report(struct ntl_profile *p)
{
    struct ntl_profile_module_row *mods;
    struct ntl_profile_process_row *procs;
    struct ntl_profile_thread_row *threads;
    struct ntl_error err = {0};
    size_t nm, np, nt, rows = 0;
    if (ntl_profile_modules(p, &mods, &nm, &err) < 0 ||
        ntl_profile_processes(p, &procs, &np, &err) < 0 ||
        ntl_profile_threads(p, &threads, &nt, &err) < 0)
        die("report", &err);
    rows = nm + np + nt;
    for (size_t i = 0; i < nt; i++) {
        mix_u64(threads[i].tid);
        mix_u64(threads[i].hits);
    }
    for (size_t i = 0; i < nm; i++) {
        struct ntl_profile_function_row *f;
        struct ntl_profile_bucket_row *b;
        size_t nf, nb;
        if (mods[i].range == NTL_PROFILE_NO_RANGE)
            continue;
        if (ntl_profile_functions(p, mods[i].range, &f, &nf, &err) < 0 ||
            ntl_profile_buckets(p, mods[i].range, &b, &nb, &err) < 0)
            die("functions", &err);
        rows += nf + nb;
        double t = now(), c = ntl_thread_cpu();
        mix_u64(mods[i].range);
        mix_u64(mods[i].hits);
        mix_rows(f, nf, b, nb);
        paused += now() - t;
        cpu_paused += ntl_thread_cpu() - c;
        free(f);
        free(b);
    }
    free(mods);
    free(procs);
    free(threads);
    return rows;
}

/* Names every frame of every sample; returns the bytes of names. */
static uint64_t name_frames(struct ntl_profile *p)
{
    struct ntl_profile_sample s;
    char name[512];
    size_t pos = 0;
    uint64_t bytes = 0;
    while (ntl_profile_stack_next(p, &pos, &s) > 0) {
        ntl_profile_symbolize(p, s.pid, s.ip, name, sizeof name);
        bytes += name[0] != 0;
        mix_str(name);
        for (size_t d = 0; d < s.depth; d++) {
            ntl_profile_symbolize(p, s.pid, s.stack[d] - 1, name, sizeof name);
            bytes += name[0] != 0;
            mix_str(name);
        }
    }
    return bytes;
}

/* The report in wall time, the tables made beside the samples. A loaded
 * machine stretches wall times, so it prints each thread's CPU time too:
 * on two free cores the wall time would be the adding thread's CPU time
 * while the tables' thread takes no longer than the samples. */
static int threaded(struct input *in, unsigned long nsamples, unsigned nmod, char *names)
{
    struct ntl_profile *p;
    struct ntl_error err = {0};
    struct tables tt = {names, 0};
    clock_id = CLOCK_MONOTONIC;
    if (ntl_profile_new(&p, &err) < 0)
        die("profile", &err);
    ntl_profile_keep_stacks(p, false);
    double t0 = now(), c0 = ntl_thread_cpu();
    if (ntl_profile_symbols_start(p, load_table, &tt, true, &err) < 0)
        die("loader", &err);
    if (!ntl_profile_symbols_threaded(p))
        fprintf(stderr, "bench_profile: no thread; the tables load at the join\n");
    for (unsigned m = 0; m < nmod; m++)
        add_range(p, m);
    add_samples(p, in, nsamples);
    double t1 = now(), c1 = ntl_thread_cpu();
    if (ntl_profile_symbols_join(p, NULL, NULL, &err) < 0)
        die("symbols", &err);
    double t2 = now(), c2 = ntl_thread_cpu();
    size_t rows = report(p);
    double t3 = now() - paused;
    double c3 = ntl_thread_cpu() - cpu_paused;
    ntl_profile_free(p);
    printf("%lu samples (depth %u) over %u modules of %u functions, wall time, tables on a "
           "second thread\n", nsamples, DEPTH, nmod, FUNCTIONS);
    printf("add samples    %8.3f s  CPU %.3f s (ranges, then the samples)\n", t1 - t0, c1 - c0);
    printf("tables         CPU %.3f s in the loader; join %.3f s, CPU %.3f s (with the logs "
           "settled and named on both threads)\n", tt.cpu, t2 - t1, c2 - c1);
    printf("report         %8.3f s  CPU %.3f s, %zu rows\n", t3 - t2, c3 - c2, rows);
    printf("total          %8.3f s  wall, %.3f s CPU of the adding thread\n", t3 - t0, c3 - c0);
    printf("checksums      report %016" PRIx64 "\n", sum);
    free(in->addrs);
    free(in->tids);
    free(names);
    return 0;
}

int main(int argc, char **argv)
{
    unsigned long nsamples = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
    unsigned nmod = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 300;
    bool frames = !(argc > 3 && !strcmp(argv[3], "--no-frames"));
    struct ntl_profile *p;
    struct ntl_error err = {0};
    if (!nmod)
        return 1;
    struct input in = draw(nsamples, nmod);
    char *names = make_names(nmod);
    if (argc > 3 && !strcmp(argv[3], "--threads"))
        return threaded(&in, nsamples, nmod, names);
    /* The report, as `ntlens profile` makes it for a table: no stacks. */
    if (ntl_profile_new(&p, &err) < 0)
        die("profile", &err);
    ntl_profile_keep_stacks(p, false);
    long f0 = faults();
    double t0 = now();
    add_modules(p, nmod, names);
    double t1 = now();
    long f1 = faults();
    add_samples(p, &in, nsamples);
    double t2 = now();
    long f2 = faults();
    size_t rows = report(p);
    double t3 = now() - paused;
    long f3 = faults();
    ntl_profile_free(p);
    uint64_t report_sum = sum;
    printf("%lu samples (depth %u) over %u modules of %u functions\n", nsamples, DEPTH, nmod,
           FUNCTIONS);
    printf("symbol tables  %8.3f s\n", t1 - t0);
    printf("add samples    %8.3f s  %.1f M samples/s\n", t2 - t1, nsamples / (t2 - t1) / 1e6);
    printf("report         %8.3f s  %zu rows (modules, processes, threads, functions and "
           "buckets of every module)\n", t3 - t2, rows);
    printf("total          %8.3f s  (tables + samples + report)\n", t3 - t0);
    printf("page faults    %ld tables, %ld samples, %ld report\n", f1 - f0, f2 - f1, f3 - f2);
    /* Every frame named, as --format folded does: the stacks kept. */
    sum = 0;
    if (frames) {
        if (ntl_profile_new(&p, &err) < 0)
            die("profile", &err);
        t0 = now();
        add_modules(p, nmod, names);
        t1 = now();
        add_samples(p, &in, nsamples);
        t2 = now();
        uint64_t named = name_frames(p);
        t3 = now();
        ntl_profile_free(p);
        printf("with stacks    %8.3f s  %.1f M samples/s\n", t2 - t1,
               nsamples / (t2 - t1) / 1e6);
        printf("name frames    %8.3f s  %.1f M frames/s (%" PRIu64 " frames)\n", t3 - t2,
               named / (t3 - t2) / 1e6, named);
        printf("total stacks   %8.3f s  (tables + samples with stacks + every frame named)\n",
               t3 - t0);
    }
    printf("checksums      report %016" PRIx64 ", frames %016" PRIx64 "\n", report_sum, sum);
    free(in.addrs);
    free(in.tids);
    free(names);
    return 0;
}
