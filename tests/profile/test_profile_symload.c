/* lib/profile's symbol loader (ntl_profile_symbols_start/join): the report
 * with tables loaded on a second thread while samples are added, and on
 * the fallback without one, equals the report with tables loaded after
 * the samples, as the CLI did on one thread (the join settles the ranges'
 * logs on both threads too); failures are told in the modules table's
 * order; the join waits for a load still under way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ntlens/profile.h"
#include "ntlens/profile_report.h"
#include "ntlens/profile_symbols.h"
#include "ntlens/thread.h"

#define MODULES 40u
#define SAMPLES 200000u
#define SYMBOLS 500u

/* The loader's table for a path "/m/N" (none for "/none/N", a failure for
 * "/bad/N"), the same whichever thread makes it. */
static int make(const char *path, struct ntl_profile_symtab **out, struct ntl_error *err)
{
    unsigned m;
    char name[32];
    if (sscanf(path, "/bad/%u", &m) == 1)
        return ntl_error_set(err, NTL_ERR_FORMAT, "test", 0, "bad %u", m);
    if (sscanf(path, "/m/%u", &m) != 1)
        return 0;
    if (ntl_profile_symtab_new(out, err) < 0)
        return err->status;
    /* Out of order, so the loader's sort has work. */
    for (unsigned f = SYMBOLS; f-- > 0;) {
        snprintf(name, sizeof name, "m%u_f%u", m, f);
        if (ntl_profile_symtab_add(*out, name, (uint64_t)f * 0x100 + m % 7, 0, err) < 0)
            return err->status;
    }
    return 0;
}

static int loader(void *ctx, const char *name, const char *path, struct ntl_profile_symtab **out,
                  struct ntl_error *err)
{
    (void)ctx;
    (void)name;
    return make(path, out, err);
}

/* Module m's path: most have tables, some none, some fail; pids share
 * paths (a module loaded in several processes is loaded once). */
static void path_of(unsigned m, char *buf, size_t size)
{
    unsigned f = m % 30;   /* a failing file too is in two ranges with hits (3, 33) */
    const char *dir = f % 9 == 3 ? "bad" : f % 11 == 3 ? "none" : "m";
    snprintf(buf, size, "/%s/%u", dir, f);
}

static uint64_t rng;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void add_ranges(struct ntl_profile *p)
{
    struct ntl_error err = {0};
    char path[32], name[32];
    for (unsigned m = 0; m < MODULES; m++) {
        path_of(m, path, sizeof path);
        snprintf(name, sizeof name, "mod%u", m % 30);
        CHECK(ntl_profile_add_range(p, 1 + m % 3, name, path, 0x10000000ull * (m + 1),
                                    SYMBOLS * 0x100, 2, &err) >= 0);
    }
}

/* Skewed samples; the last modules never get any (their tables are not
 * wanted). */
static void add_samples(struct ntl_profile *p)
{
    struct ntl_error err = {0};
    rng = 0x9e3779b97f4a7c15ull;
    for (unsigned i = 0; i < SAMPLES; i++) {
        unsigned m = (unsigned)(next() % (MODULES - 5));
        m = m < (unsigned)(next() % (MODULES - 5)) ? m : m / 2;
        struct ntl_profile_sample s = {.ip = 0x10000000ull * (m + 1) + next() % (SYMBOLS * 0x100),
                                       .pid = 1 + m % 3, .tid = 100 + i % 5,
                                       .weight = i % 97 ? 1 : 3};
        CHECK(ntl_profile_add_sample(p, &s, &err) >= 0);
    }
}

/* The failures as told: "path@base:message;...", the base telling which
 * of the ranges sharing a path the join took (the first in the modules
 * table, as the one-thread CLI did). */
static char told[4096];

static void failed(void *ctx, const struct ntl_profile_range *r, const struct ntl_error *e)
{
    (void)ctx;
    size_t n = strlen(told);
    snprintf(told + n, sizeof told - n, "%s@%llx:%s;", r->path, (unsigned long long)r->base,
             e->message);
}

/* What the CLI did on one thread: after the samples, each path with hits
 * once, in the modules table's order. */
static void load_after(struct ntl_profile *p)
{
    struct ntl_profile_module_row *rows;
    struct ntl_error err = {0};
    size_t n;
    CHECK_EQ_INT(ntl_profile_modules(p, &rows, &n, &err), 0);
    for (size_t i = 0; i < n; i++) {
        const struct ntl_profile_range *g = rows[i].r;
        for (size_t k = 0; g && k < i; k++)
            if (rows[k].r && !strcmp(rows[k].r->path, g->path))
                g = NULL;
        struct ntl_profile_symtab *t = NULL;
        if (!g)
            continue;
        if (make(g->path, &t, &err) < 0)
            failed(NULL, g, &err);
        else if (t)
            CHECK_EQ_INT(ntl_profile_use_symbols(p, g->path, t, &err), 0);
    }
    free(rows);
}

/* FNV-1a over every module's function and bucket rows. */
static uint64_t sum;

static void mix(const void *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sum = (sum ^ ((const unsigned char *)d)[i]) * 0x100000001b3ull;
}

static void mix_str(const char *s) { mix(s ? s : "-", s ? strlen(s) + 1 : 1); }

static uint64_t report(struct ntl_profile *p, size_t *named)
{
    struct ntl_profile_module_row *mods;
    struct ntl_error err = {0};
    size_t nm;
    sum = 0xcbf29ce484222325ull;
    *named = 0;
    CHECK_EQ_INT(ntl_profile_modules(p, &mods, &nm, &err), 0);
    for (size_t i = 0; i < nm; i++) {
        struct ntl_profile_function_row *f;
        struct ntl_profile_bucket_row *b;
        size_t nf, nb;
        mix(&mods[i].hits, sizeof mods[i].hits);
        if (mods[i].range == NTL_PROFILE_NO_RANGE)
            continue;
        CHECK_EQ_INT(ntl_profile_functions(p, mods[i].range, &f, &nf, &err), 0);
        CHECK_EQ_INT(ntl_profile_buckets(p, mods[i].range, &b, &nb, &err), 0);
        for (size_t k = 0; k < nf; k++) {
            mix_str(f[k].symbol);
            mix(&f[k].offset, sizeof f[k].offset);
            mix(&f[k].hits, sizeof f[k].hits);
            *named += f[k].symbol != NULL;
        }
        for (size_t k = 0; k < nb; k++) {
            mix_str(b[k].symbol);
            mix(&b[k].disp, sizeof b[k].disp);
            mix(&b[k].hits, sizeof b[k].hits);
        }
        free(f);
        free(b);
    }
    free(mods);
    return sum;
}

/* threaded: the loader on a thread (-1: tables after the samples, the
 * reference). Returns the report's sum; *told_out the failures told. */
static uint64_t run(int threaded, bool join, size_t *named, char *told_out)
{
    struct ntl_profile *p;
    struct ntl_error err = {0};
    told[0] = 0;
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    ntl_profile_keep_stacks(p, false);
    if (threaded >= 0) {
        CHECK_EQ_INT(ntl_profile_symbols_start(p, loader, NULL, threaded, &err), 0);
        CHECK(ntl_profile_symbols_threaded(p) == (threaded == 1));
    }
    add_ranges(p);
    add_samples(p);
    if (threaded < 0)
        load_after(p);
    else if (join)
        CHECK_EQ_INT(ntl_profile_symbols_join(p, failed, NULL, &err), 0);
    CHECK(!ntl_profile_symbols_threaded(p) || !join);
    uint64_t s = report(p, named);
    strcpy(told_out, told);
    ntl_profile_free(p);  /* frees a loader never joined */
    return s;
}

static void test_same_as_one_thread(void)
{
    static char t_ref[4096], t_thr[4096], t_inl[4096], t_no[4096];
    size_t n_ref, n_thr, n_inl, n_no;
    uint64_t ref = run(-1, true, &n_ref, t_ref);
    CHECK(n_ref > 1000);
    CHECK(strstr(t_ref, "/bad/3@") != NULL && strstr(t_ref, ":bad 3;") != NULL);
    /* Several rounds: the thread's timing differs from run to run. */
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_U64(run(1, true, &n_thr, t_thr), ref);
        CHECK_EQ_STR(t_thr, t_ref);
        CHECK_EQ_U64(n_thr, n_ref);
    }
    /* The fallback (no thread: loads at the join). */
    CHECK_EQ_U64(run(0, true, &n_inl, t_inl), ref);
    CHECK_EQ_STR(t_inl, t_ref);
    /* Without the join no table reaches the report: this test sees it. */
    CHECK(run(1, false, &n_no, t_no) != ref);
    CHECK_EQ_U64(n_no, 0);
}

/* A loader that starts while the samples are being added and finishes
 * only after the join has begun: the join must wait for it. */
struct gate {
    struct ntl_lock *lock;
    bool started, open;
};

static int slow_loader(void *ctx, const char *name, const char *path,
                       struct ntl_profile_symtab **out, struct ntl_error *err)
{
    struct gate *g = ctx;
    (void)name;
    ntl_lock_take(g->lock);
    g->started = true;
    ntl_lock_wake(g->lock);
    while (!g->open)
        ntl_lock_wait(g->lock);
    ntl_lock_drop(g->lock);
    return make(path, out, err);
}

static void test_join_waits(void)
{
    struct gate g = {ntl_lock_new(), false, false};
    struct ntl_profile *p;
    struct ntl_error err = {0};
    size_t named, n_ref;
    char t[4096];
    uint64_t ref = run(-1, true, &n_ref, t);
    CHECK(g.lock != NULL);
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    ntl_profile_keep_stacks(p, false);
    CHECK_EQ_INT(ntl_profile_symbols_start(p, slow_loader, &g, true, &err), 0);
    add_ranges(p);
    if (ntl_profile_symbols_threaded(p)) {
        /* The loader runs beside the samples (else this waits forever). */
        ntl_lock_take(g.lock);
        while (!g.started)
            ntl_lock_wait(g.lock);
        ntl_lock_drop(g.lock);
    }
    add_samples(p);
    ntl_lock_take(g.lock);
    g.open = true;
    ntl_lock_wake(g.lock);
    ntl_lock_drop(g.lock);
    told[0] = 0;
    CHECK_EQ_INT(ntl_profile_symbols_join(p, failed, NULL, &err), 0);
    CHECK_EQ_U64(report(p, &named), ref);
    CHECK_EQ_U64(named, n_ref);
    CHECK_EQ_STR(told, t);
    ntl_profile_free(p);
    ntl_lock_free(g.lock);
}

static void test_misuse(void)
{
    struct ntl_profile *p;
    struct ntl_error err = {0};
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    /* A join with nothing started does nothing. */
    CHECK_EQ_INT(ntl_profile_symbols_join(p, failed, NULL, &err), 0);
    CHECK_EQ_INT(ntl_profile_symbols_start(p, loader, NULL, true, &err), 0);
    CHECK_EQ_INT(ntl_profile_symbols_start(p, loader, NULL, true, &err), NTL_ERR_ARGUMENT);
    CHECK_EQ_INT(ntl_profile_symbols_join(p, failed, NULL, &err), 0);
    ntl_profile_free(p);
}

int main(void)
{
    test_same_as_one_thread();
    test_join_waits();
    test_misuse();
    return check_exit();
}
