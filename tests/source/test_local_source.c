/* The "local" source against the real peer of each platform: on Linux the
 * built-in provider against this process's own /proc facts; under Wine the
 * HKEY_PERFORMANCE_DATA producer against Wine's advapi32. */
#include "check.h"

#include "ntlens/perf.h"
#include "ntlens/perf_value.h"
#include "ntlens/source.h"

static void print_err(const char *what, const struct ntl_error *err)
{
    char msg[512];
    fprintf(stderr, "%s: %s\n", what, ntl_error_format(err, msg, sizeof msg));
}

#ifdef _WIN32

#include <windows.h>

static void test_wine(void)
{
    struct ntl_source *s = NULL;
    struct ntl_source_options opt = {0};
    struct ntl_error err;
    struct ntl_buf buf;
    struct ntl_perf_titles *t;
    struct ntl_perf_block *b = NULL;

    ntl_buf_init(&buf, 0);
    CHECK_EQ_INT(ntl_source_open("local", NULL, &s, &err), 0);
    if (!s)
        return;
    CHECK(strstr(ntl_source_describe(s), "HKEY_PERFORMANCE_DATA") != NULL);
    CHECK(ntl_source_is_live(s));

    /* Wine 8's fixed title table: "1","1847","1846","End Marker". */
    CHECK_EQ_INT(ntl_source_titles(s, NTL_TITLES_COUNTER, 9, &buf, &err), 0);
    t = ntl_perf_titles_new();
    CHECK(t != NULL);
    if (t) {
        int rc = ntl_perf_titles_add(t, false, buf.data, buf.len, &err);
        CHECK_EQ_INT(rc, 0);
        if (rc < 0)
            print_err("Counter 009", &err);
        CHECK_EQ_U64(ntl_perf_titles_last_index(t), 1847);
        CHECK_EQ_STR(ntl_perf_titles_name(t, 1846), "End Marker");
        ntl_perf_titles_free(t);
    }

    /* A data query answers a PERF_DATA_BLOCK the parser accepts. */
    CHECK_EQ_INT(ntl_source_query(s, "Global", &buf, &err), 0);
    CHECK(buf.len >= 88 && !memcmp(buf.data, "P\0E\0R\0F\0", 8));
    CHECK_EQ_INT(ntl_perf_block_parse(buf.data, buf.len, &b, &err), 0);
    ntl_perf_block_free(b);
    ntl_source_close(s);

    /* ERROR_MORE_DATA with nowhere left to grow: a clear limit error. */
    opt.max_block = 16;
    CHECK_EQ_INT(ntl_source_open("local", &opt, &s, &err), 0);
    if (s) {
        CHECK_EQ_INT(ntl_source_query(s, "Global", &buf, &err), NTL_ERR_LIMIT);
        CHECK(strstr(err.message, "16-byte limit") != NULL);
        ntl_source_close(s);
    }
    ntl_buf_free(&buf);
}

#else

#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static const struct ntl_perf_instance *find_pid(const struct ntl_perf_object *o, int c, uint64_t pid,
                                                size_t *index)
{
    for (size_t i = 0; i < o->ninstances; i++)
        if (ntl_perf_counter_u64(o, (size_t)c, i) == pid && strcmp(o->instances[i].name, "_Total")) {
            *index = i;
            return &o->instances[i];
        }
    return NULL;
}

/* Every index the block uses has a name and a help text, and where Windows'
 * standard table knows the index, the same name. */
static void check_titles(struct ntl_source *s, const struct ntl_perf_block *b)
{
    struct ntl_buf raw;
    struct ntl_error err;
    struct ntl_perf_titles *t = ntl_perf_titles_new();
    size_t nstd;
    const struct ntl_perf_std_title *std = ntl_perf_std_titles(&nstd);

    ntl_buf_init(&raw, 0);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ_INT(ntl_source_titles(s, NTL_TITLES_COUNTER, 9, &raw, &err), 0);
    CHECK_EQ_INT(ntl_perf_titles_add(t, false, raw.data, raw.len, &err), 0);
    CHECK_EQ_INT(ntl_source_titles(s, NTL_TITLES_HELP, 9, &raw, &err), 0);
    CHECK_EQ_INT(ntl_perf_titles_add(t, true, raw.data, raw.len, &err), 0);
    CHECK_EQ_INT(ntl_source_titles(s, NTL_TITLES_COUNTER, 7, &raw, &err), NTL_ERR_NOT_FOUND);
    CHECK(ntl_perf_titles_last_index(t) >= ntl_perf_titles_max_index(t) - 1);
    for (size_t i = 0; i < b->nobjects; i++) {
        const struct ntl_perf_object *o = &b->objects[i];
        CHECK(ntl_perf_titles_name(t, o->name_index) != NULL);
        CHECK(ntl_perf_titles_help(t, o->help_index) != NULL);
        for (size_t c = 0; c < o->ncounters; c++) {
            uint32_t idx = o->counters[c].name_index;
            const char *name = ntl_perf_titles_name(t, idx);
            CHECK(name != NULL);
            CHECK(ntl_perf_titles_help(t, o->counters[c].help_index) != NULL);
            for (size_t k = 0; k < nstd && name; k++)
                if (std[k].index == idx && strcmp(std[k].name, name)) {
                    fprintf(stderr, "index %u: provider says '%s', Windows '%s'\n", idx, name,
                            std[k].name);
                    CHECK(!"provider title differs from Windows' standard one");
                }
        }
    }
    ntl_perf_titles_free(t);
    ntl_buf_free(&raw);
}

static int counter(const struct ntl_perf_object *o, uint32_t idx, uint32_t type)
{
    int c = ntl_perf_object_find_counter(o, idx);
    CHECK(c >= 0);
    if (c >= 0)
        CHECK_EQ_U64(o->counters[c].type, type);
    return c;
}

static void test_self(struct ntl_source *s)
{
    struct ntl_buf raw;
    struct ntl_error err;
    struct ntl_perf_block *b = NULL;
    const struct ntl_perf_object *proc, *thr, *cpu, *sys, *mem;
    const struct ntl_perf_instance *me;
    size_t mi = 0;
    int c_pid, c_ppid, c_thd, c_el, c_tid, c_tpid, c_cpu;
    struct ntl_perf_raw r;
    double v;

    ntl_buf_init(&raw, 0);
    CHECK_EQ_INT(ntl_source_query(s, "Global", &raw, &err), 0);
    CHECK_EQ_INT(ntl_perf_block_parse(raw.data, raw.len, &b, &err), 0);
    if (!b) {
        print_err("Global", &err);
        ntl_buf_free(&raw);
        return;
    }
    CHECK_EQ_U64(b->quirks, 0);
    CHECK_EQ_U64(b->nobjects, 5);
    CHECK_EQ_U64(b->perf_freq, 10000000);
    sys = ntl_perf_block_find_object(b, 2);
    mem = ntl_perf_block_find_object(b, 4);
    cpu = ntl_perf_block_find_object(b, 238);
    proc = ntl_perf_block_find_object(b, 230);
    thr = ntl_perf_block_find_object(b, 232);
    CHECK(sys && mem && cpu && proc && thr);
    if (!sys || !mem || !cpu || !proc || !thr)
        goto out;
    check_titles(s, b);

    c_pid = counter(proc, 784, NTL_PERF_COUNTER_RAWCOUNT);
    c_ppid = counter(proc, 1410, NTL_PERF_COUNTER_RAWCOUNT);
    c_thd = counter(proc, 680, NTL_PERF_COUNTER_RAWCOUNT);
    c_el = counter(proc, 684, NTL_PERF_ELAPSED_TIME);
    c_cpu = counter(proc, 6, NTL_PERF_100NSEC_TIMER);
    counter(proc, 28, NTL_PERF_COUNTER_COUNTER);
    counter(proc, 180, NTL_PERF_COUNTER_LARGE_RAWCOUNT);
    c_tid = counter(thr, 804, NTL_PERF_COUNTER_RAWCOUNT);
    c_tpid = counter(thr, 784, NTL_PERF_COUNTER_RAWCOUNT);
    counter(thr, 146, NTL_PERF_COUNTER_COUNTER);
    counter(cpu, 6, NTL_PERF_100NSEC_TIMER_INV);
    counter(sys, 674, NTL_PERF_ELAPSED_TIME);
    counter(mem, 24, NTL_PERF_COUNTER_LARGE_RAWCOUNT);
    if (c_pid < 0 || c_ppid < 0 || c_thd < 0 || c_el < 0 || c_tid < 0 || c_tpid < 0 || c_cpu < 0)
        goto out;

    /* This process, as /proc knows it. */
    me = find_pid(proc, c_pid, (uint64_t)getpid(), &mi);
    CHECK(me != NULL);
    if (me) {
        CHECK_EQ_U64(ntl_perf_counter_u64(proc, (size_t)c_ppid, mi), (uint64_t)getppid());
        CHECK_EQ_U64(ntl_perf_counter_u64(proc, (size_t)c_thd, mi), 1);
        CHECK_EQ_STR(me->name, "test_local_source");
        CHECK_EQ_INT(ntl_perf_raw_get(b, proc, (size_t)c_el, mi, &r, &err), 0);
        CHECK_EQ_INT(ntl_perf_value_compute(&r, NULL, &v), NTL_PERF_VALUE_OK);
        CHECK(v >= 0 && v < 600);
    }
    /* Idle (pid 0) first, _Total last, as on Windows. */
    CHECK_EQ_STR(proc->instances[0].name, "Idle");
    CHECK_EQ_STR(proc->instances[proc->ninstances - 1].name, "_Total");
    CHECK_EQ_STR(cpu->instances[cpu->ninstances - 1].name, "_Total");
    CHECK_EQ_U64(cpu->ninstances, (uint64_t)sysconf(_SC_NPROCESSORS_ONLN) + 1);

    /* Windows' _Total/_Total thread closes the Thread object. */
    CHECK_EQ_STR(thr->instances[thr->ninstances - 1].name, "_Total");
    CHECK(thr->instances[thr->ninstances - 1].parent == &proc->instances[proc->ninstances - 1]);

    /* Our one thread: ID Thread = pid, parented to our Process instance. */
    {
        bool found = false;
        for (size_t i = 0; i < thr->ninstances; i++)
            if (ntl_perf_counter_u64(thr, (size_t)c_tid, i) == (uint64_t)getpid()) {
                found = true;
                CHECK(thr->instances[i].parent == me);
                CHECK_EQ_U64(ntl_perf_counter_u64(thr, (size_t)c_tpid, i), (uint64_t)getpid());
                CHECK_EQ_STR(thr->instances[i].name, "0");
            }
        CHECK(found);
    }
out:
    ntl_perf_block_free(b);
    ntl_buf_free(&raw);
}

/* Work the compiler cannot drop. */
static volatile uint64_t spin;

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU % from two samples, with known work in between. The machine may be
 * busy, so the expectation is this process's own CPU time over the
 * samples' interval, bounded by what was measured inside and around the
 * two queries (plus one clock tick each way). */
static void test_rates(struct ntl_source *s)
{
    struct ntl_buf r0, r1;
    struct ntl_error err;
    struct ntl_perf_block *b0 = NULL, *b1 = NULL;
    double c0, c1, c2, c3, tick = 1.0 / (double)sysconf(_SC_CLK_TCK);

    ntl_buf_init(&r0, 0);
    ntl_buf_init(&r1, 0);
    c0 = cpu_seconds();
    CHECK_EQ_INT(ntl_source_query(s, "230 238", &r0, &err), 0);
    c1 = cpu_seconds();
    do {
        for (int i = 0; i < 100000; i++)
            spin += (uint64_t)i;
    } while (cpu_seconds() - c1 < 0.2);
    c2 = cpu_seconds();
    CHECK_EQ_INT(ntl_source_query(s, "230 238", &r1, &err), 0);
    c3 = cpu_seconds();
    CHECK_EQ_INT(ntl_perf_block_parse(r0.data, r0.len, &b0, &err), 0);
    CHECK_EQ_INT(ntl_perf_block_parse(r1.data, r1.len, &b1, &err), 0);
    if (b0 && b1) {
        const struct ntl_perf_object *p0 = ntl_perf_block_find_object(b0, 230);
        const struct ntl_perf_object *p1 = ntl_perf_block_find_object(b1, 230);
        const struct ntl_perf_object *k0 = ntl_perf_block_find_object(b0, 238);
        const struct ntl_perf_object *k1 = ntl_perf_block_find_object(b1, 238);
        CHECK(p0 && p1 && k0 && k1);
        CHECK(!ntl_perf_block_find_object(b0, 232)); /* Thread was not asked for */
        if (p0 && p1 && k0 && k1) {
            int pid0 = ntl_perf_object_find_counter(p0, 784), cpu0 = ntl_perf_object_find_counter(p0, 6);
            double wall = (double)(b1->perf_time_100ns - b0->perf_time_100ns) / 1e7;
            size_t i0 = 0, i1 = 0;
            struct ntl_perf_raw a, z;
            double v = -1;
            CHECK(wall > 0);
            if (find_pid(p0, pid0, (uint64_t)getpid(), &i0) && find_pid(p1, pid0, (uint64_t)getpid(), &i1)) {
                CHECK_EQ_INT(ntl_perf_raw_get(b0, p0, (size_t)cpu0, i0, &a, &err), 0);
                CHECK_EQ_INT(ntl_perf_raw_get(b1, p1, (size_t)cpu0, i1, &z, &err), 0);
                CHECK_EQ_INT(ntl_perf_value_compute(&z, &a, &v), NTL_PERF_VALUE_OK);
                v = v / 100 * wall; /* back to CPU seconds */
                if (!(v >= c2 - c1 - 2 * tick && v <= c3 - c0 + 2 * tick))
                    fprintf(stderr, "CPU %.3f s, measured %.3f..%.3f s\n", v, c2 - c1, c3 - c0);
                CHECK(v >= c2 - c1 - 2 * tick && v <= c3 - c0 + 2 * tick);
            } else {
                CHECK(!"own process missing from a sample");
            }
            /* Processor _Total: a percentage. */
            CHECK_EQ_INT(ntl_perf_raw_get(b0, k0, 0, k0->ninstances - 1, &a, &err), 0);
            CHECK_EQ_INT(ntl_perf_raw_get(b1, k1, 0, k1->ninstances - 1, &z, &err), 0);
            CHECK(ntl_perf_value_compute(&z, &a, &v) <= NTL_PERF_VALUE_ZERO_DELTA);
            CHECK(v >= 0 && v <= 100.0001);
        }
    }
    ntl_perf_block_free(b0);
    ntl_perf_block_free(b1);
    ntl_buf_free(&r0);
    ntl_buf_free(&r1);
}

static void test_queries(struct ntl_source *s)
{
    struct ntl_buf raw;
    struct ntl_error err;
    struct ntl_perf_block *b = NULL;
    struct ntl_source *small = NULL;
    struct ntl_source_options opt = {0};

    ntl_buf_init(&raw, 0);
    CHECK_EQ_INT(ntl_source_query(s, "232", &raw, &err), 0);
    CHECK_EQ_INT(ntl_perf_block_parse(raw.data, raw.len, &b, &err), 0);
    if (b) { /* a Thread request comes with its Process */
        CHECK_EQ_U64(b->nobjects, 2);
        CHECK(ntl_perf_block_find_object(b, 230) && ntl_perf_block_find_object(b, 232));
    }
    ntl_perf_block_free(b);
    b = NULL;
    CHECK_EQ_INT(ntl_source_query(s, "2 9999", &raw, &err), 0);
    CHECK_EQ_INT(ntl_perf_block_parse(raw.data, raw.len, &b, &err), 0);
    if (b) {
        CHECK_EQ_U64(b->nobjects, 1);
        CHECK(b->nobjects == 1 && b->objects[0].num_instances == NTL_PERF_NO_INSTANCES);
    }
    ntl_perf_block_free(b);
    b = NULL;
    CHECK_EQ_INT(ntl_source_query(s, "Costly", &raw, &err), 0);
    CHECK_EQ_INT(ntl_perf_block_parse(raw.data, raw.len, &b, &err), 0);
    if (b)
        CHECK_EQ_U64(b->nobjects, 0);
    ntl_perf_block_free(b);
    CHECK_EQ_INT(ntl_source_query(s, "Foreign", &raw, &err), NTL_ERR_UNSUPPORTED);

    /* A cap smaller than the answer is a clear error, not a partial block. */
    opt.max_block = 4096;
    CHECK_EQ_INT(ntl_source_open("local", &opt, &small, &err), 0);
    if (small) {
        CHECK_EQ_INT(ntl_source_query(small, "Global", &raw, &err), NTL_ERR_LIMIT);
        CHECK(strstr(err.message, "4096-byte limit") != NULL);
        ntl_source_close(small);
    }
    ntl_buf_free(&raw);
}

static void test_linux(void)
{
    struct ntl_source *s = NULL;
    struct ntl_error err;

    CHECK_EQ_INT(ntl_source_open("local", NULL, &s, &err), 0);
    if (!s)
        return;
    CHECK_EQ_STR(ntl_source_describe(s), "local (Linux /proc)");
    CHECK(ntl_source_is_live(s));
    CHECK_EQ_U64(ntl_source_snapshot_count(s), 0);
    test_self(s);
    test_rates(s);
    test_queries(s);
    ntl_source_close(s);
}

#endif

int main(void)
{
#ifdef _WIN32
    test_wine();
#else
    test_linux();
#endif
    return check_exit();
}
