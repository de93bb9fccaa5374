/* lib/profile: bucket arithmetic, ranges in address spaces, samples and
 * their attribution, stacks, symbol tables and the report. */
#include "check.h"
#include "ntlens/profile.h"
#include "ntlens/profile_report.h"
#include "ntlens/profile_symbols.h"

static void test_bucket_count(void)
{
    /* NtCreateProfile's buffer: RangeSize >> (BucketSize - 2) ULONGs, one
     * more for a partial bucket. */
    CHECK_EQ_U64(ntl_profile_bucket_count(0x1000, 2), 0x400);
    CHECK_EQ_U64(ntl_profile_bucket_count(0x1001, 2), 0x401);
    CHECK_EQ_U64(ntl_profile_bucket_count(1, 31), 1);
    CHECK_EQ_U64(ntl_profile_bucket_count(0x100000000ull, 31), 2);
}

static void test_ranges(void)
{
    struct ntl_profile *p;
    struct ntl_error err = {0};
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    CHECK_EQ_INT(ntl_profile_add_range(p, 1, "a", "", 0x1000, 0, 2, &err), NTL_ERR_ARGUMENT);
    CHECK_EQ_INT(ntl_profile_add_range(p, 1, "a", "", 0x1000, 0x100, 1, &err), NTL_ERR_ARGUMENT);
    CHECK_EQ_INT(ntl_profile_add_range(p, 1, "a", "", UINT64_MAX, 2, 2, &err), NTL_ERR_ARGUMENT);
    CHECK_EQ_INT(ntl_profile_add_range(p, 1, "a", "", 0, 1ull << 40, 2, &err), NTL_ERR_ARGUMENT);
    CHECK_EQ_INT(ntl_profile_add_range(p, 1, "a", "/a", 0x1000, 0x1000, 4, &err), 0);
    CHECK_EQ_INT(ntl_profile_add_range(p, NTL_PROFILE_KERNEL_PID, "k", "", 0xff000, 0x1000, 2,
                                       &err), 1);
    CHECK_EQ_INT(ntl_profile_set_thread(p, 7, 1, &err), 0);
    CHECK_EQ_INT(ntl_profile_set_process(p, 1, "one", &err), 0);

    struct ntl_profile_sample s = {.ip = 0x1013, .pid = NTL_PROFILE_NO_PID, .tid = 7};
    CHECK_EQ_INT(ntl_profile_add_sample(p, &s, &err), 1);   /* a, bucket 1 */
    s.ip = 0xff004;
    CHECK_EQ_INT(ntl_profile_add_sample(p, &s, &err), 1);   /* the kernel's, from pid 1 */
    s.ip = 0x2000;
    CHECK_EQ_INT(ntl_profile_add_sample(p, &s, &err), 0);   /* just past a: unknown */
    s.ip = 0x1010;
    s.pid = 2;                                              /* another space: unknown */
    CHECK_EQ_INT(ntl_profile_add_sample(p, &s, &err), 0);
    CHECK_EQ_U64(ntl_profile_total(p), 4);
    CHECK_EQ_U64(ntl_profile_unknown(p), 2);

    /* b replaces a where it overlaps; a keeps its hits. */
    CHECK_EQ_INT(ntl_profile_add_range(p, 1, "b", "", 0x1800, 0x1000, 2, &err), 2);
    CHECK(!ntl_profile_range(p, 0)->active);
    CHECK_EQ_U64(ntl_profile_range(p, 0)->hits, 1);
    s = (struct ntl_profile_sample){.ip = 0x1010, .pid = 1, .tid = 8, .weight = 5};
    CHECK_EQ_INT(ntl_profile_add_sample(p, &s, &err), 0);   /* a is gone */
    s.ip = 0x2000;
    CHECK_EQ_INT(ntl_profile_add_sample(p, &s, &err), 1);   /* b */
    CHECK_EQ_U64(ntl_profile_range(p, 2)->hits, 5);
    CHECK_EQ_INT(ntl_profile_end_range(p, 1, 0x1800), 0);
    CHECK_EQ_INT(ntl_profile_end_range(p, 1, 0x1800), NTL_ERR_NOT_FOUND);
    CHECK_EQ_INT(ntl_profile_add_sample(p, &s, &err), 0);
    CHECK_EQ_INT(ntl_profile_add_hits(p, 1, 0x400, 1, &err), NTL_ERR_ARGUMENT);
    CHECK_EQ_INT(ntl_profile_add_hits(p, 1, 0x3ff, 3, &err), 0);

    struct ntl_profile_module_row *m;
    size_t n;
    CHECK_EQ_INT(ntl_profile_modules(p, &m, &n, &err), 0);
    CHECK_EQ_U64(n, 4);
    if (n == 4) {
        /* b 5, k 1 + 3, a 1; the unknown row last: 1 + 1 + 5 + 5. */
        CHECK_EQ_STR(m[0].r ? m[0].r->name : "", "b");
        CHECK_EQ_STR(m[1].r ? m[1].r->name : "", "k");
        CHECK_EQ_U64(m[1].hits, 4);
        CHECK_EQ_STR(m[2].r ? m[2].r->name : "", "a");
        CHECK(m[3].range == NTL_PROFILE_NO_RANGE && !m[3].r);
        CHECK_EQ_U64(m[3].hits, 12);
    }
    free(m);

    struct ntl_profile_process_row *pr;
    CHECK_EQ_INT(ntl_profile_processes(p, &pr, &n, &err), 0);
    CHECK_EQ_U64(n, 2);
    if (n == 2) {
        CHECK_EQ_U64(pr[0].pid, 1);
        CHECK_EQ_STR(pr[0].name, "one");
        CHECK_EQ_U64(pr[0].hits, 18);
        CHECK_EQ_U64(pr[1].pid, 2);
        CHECK(pr[1].name == NULL);
    }
    free(pr);
    ntl_profile_free(p);
}

static void test_stacks(void)
{
    struct ntl_profile *p;
    struct ntl_error err = {0};
    uint64_t st[3] = {0x10, 0x20, 0x30};
    struct ntl_profile_sample s = {.ip = 5, .pid = 3, .tid = 4, .stack = st, .depth = 3};
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    CHECK_EQ_INT(ntl_profile_add_sample(p, &s, &err), 0);
    s.depth = 0;
    CHECK_EQ_INT(ntl_profile_add_sample(p, &s, &err), 0);
    size_t pos = 0;
    struct ntl_profile_sample got;
    CHECK_EQ_INT(ntl_profile_stack_next(p, &pos, &got), 1);
    CHECK_EQ_U64(got.ip, 5);
    CHECK_EQ_U64(got.depth, 3);
    CHECK_EQ_U64(got.stack[2], 0x30);
    CHECK_EQ_U64(got.weight, 1);
    CHECK_EQ_INT(ntl_profile_stack_next(p, &pos, &got), 1);   /* kept without a stack too */
    CHECK_EQ_U64(got.depth, 0);
    CHECK_EQ_INT(ntl_profile_stack_next(p, &pos, &got), 0);
    ntl_profile_free(p);
}

/* A report that does not read them keeps no stacks (ntl_profile_keep_stacks). */
static void test_stacks_dropped(void)
{
    struct ntl_profile *p;
    struct ntl_error err = {0};
    uint64_t st[3] = {0x10, 0x20, 0x30};
    struct ntl_profile_sample s = {.ip = 5, .pid = 3, .tid = 4, .stack = st, .depth = 3}, got;
    size_t pos = 0;
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    ntl_profile_keep_stacks(p, false);
    CHECK_EQ_INT(ntl_profile_add_sample(p, &s, &err), 0);
    CHECK_EQ_INT(ntl_profile_set_stack(p, 0, st, 3, &err), 0);
    CHECK_EQ_INT(ntl_profile_set_stack(p, 1, st, 3, &err), NTL_ERR_ARGUMENT);
    /* A sample a range held in a known process is counted, not kept:
     * ntl_profile_place_late would leave it as it is. */
    CHECK_EQ_INT(ntl_profile_add_range(p, 3, "m", "", 0x1000, 0x1000, 2, &err), 0);
    struct ntl_profile_sample in = {.ip = 0x1004, .pid = 3, .tid = 4, .stack = st, .depth = 3};
    CHECK_EQ_INT(ntl_profile_add_sample(p, &in, &err), 1);
    CHECK_EQ_U64(ntl_profile_sample_count(p), 2);
    CHECK_EQ_INT(ntl_profile_set_stack(p, 1, st, 3, &err), 0);
    ntl_profile_keep_stacks(p, true);
    CHECK_EQ_INT(ntl_profile_add_sample(p, &s, &err), 0);
    CHECK_EQ_INT(ntl_profile_set_stack(p, 2, st, 3, &err), NTL_ERR_ARGUMENT);
    CHECK_EQ_INT(ntl_profile_stack_next(p, &pos, &got), 1);
    CHECK_EQ_U64(got.ip, 5);          /* the unknown sample is kept, its stack is not */
    CHECK_EQ_U64(got.depth, 0);
    CHECK_EQ_INT(ntl_profile_stack_next(p, &pos, &got), 1);
    CHECK_EQ_U64(got.depth, 3);
    CHECK_EQ_INT(ntl_profile_stack_next(p, &pos, &got), 0);
    CHECK_EQ_U64(ntl_profile_total(p), 3);
    ntl_profile_free(p);
}

/* Bucket rows: in offset order across every radix digit of the key, hits
 * summed over several adds, and current after hits that added no bucket. */
static void test_bucket_rows(void)
{
    static const uint64_t buckets[] = {(1u << 29) - 1, 0, 2048, 1u << 22, 2047, 1, 4095,
                                       (1u << 22) + 3};
    const size_t nb = sizeof buckets / sizeof buckets[0];
    struct ntl_profile *p;
    struct ntl_profile_bucket_row *rows;
    struct ntl_error err = {0};
    size_t n;
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    for (unsigned r = 0; r < 3; r++)
        CHECK_EQ_INT(ntl_profile_add_range(p, 1, "m", "", (uint64_t)(r + 1) << 32, 1u << 31, 2,
                                           &err), (int)r);
    for (unsigned round = 0; round < 5; round++)
        for (size_t i = 0; i < nb; i++)
            for (unsigned r = 0; r < 3; r += 2)
                CHECK_EQ_INT(ntl_profile_add_hits(p, r, buckets[i], i + 1, &err), 0);
    CHECK_EQ_U64(ntl_profile_total(p), 2 * 5 * nb * (nb + 1) / 2);
    for (unsigned r = 0; r < 3; r++) {
        CHECK_EQ_INT(ntl_profile_buckets(p, r, &rows, &n, &err), 0);
        CHECK_EQ_U64(n, (r == 1 ? 0 : nb));
        for (size_t i = 0; i < n; i++) {
            if (i)
                CHECK(rows[i - 1].offset < rows[i].offset);
            size_t k = 0;
            while (k < nb && buckets[k] << 2 != rows[i].offset)
                k++;
            CHECK(k < nb);
            CHECK_EQ_U64(rows[i].hits, 5 * (k + 1));
        }
        free(rows);
    }
    CHECK_EQ_INT(ntl_profile_add_hits(p, 2, 0, 100, &err), 0);
    CHECK_EQ_INT(ntl_profile_buckets(p, 2, &rows, &n, &err), 0);
    CHECK_EQ_U64(n, nb);
    CHECK_EQ_U64(rows[0].offset, 0);
    CHECK_EQ_U64(rows[0].hits, 5 * 2 + 100);
    free(rows);
    ntl_profile_free(p);
}

/* Two ranges of one file (one table) read in turns: each range's rows
 * named by its own walk, not the other's (the report keeps one range's
 * names at a time). */
static void test_shared_table(void)
{
    struct ntl_profile *p;
    struct ntl_profile_symtab *t;
    struct ntl_profile_bucket_row *b;
    struct ntl_profile_function_row *f;
    struct ntl_error err = {0};
    size_t n;
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    CHECK_EQ_INT(ntl_profile_symtab_new(&t, &err), 0);
    CHECK_EQ_INT(ntl_profile_symtab_add(t, "lo", 0, 0, &err), 0);
    CHECK_EQ_INT(ntl_profile_symtab_add(t, "hi", 0x800, 0, &err), 0);
    CHECK_EQ_INT(ntl_profile_add_range(p, 1, "m", "/m", 0x10000, 0x1000, 2, &err), 0);
    CHECK_EQ_INT(ntl_profile_add_range(p, 2, "m", "/m", 0x10000, 0x1000, 2, &err), 1);
    CHECK_EQ_INT(ntl_profile_use_symbols(p, "/m", t, &err), 0);
    CHECK_EQ_INT(ntl_profile_add_hits(p, 0, 0x10, 3, &err), 0);     /* lo+0x40 */
    CHECK_EQ_INT(ntl_profile_add_hits(p, 1, 0x3ff, 1, &err), 0);    /* hi+0x7fc */
    CHECK_EQ_INT(ntl_profile_add_hits(p, 1, 0x200, 2, &err), 0);    /* hi */
    for (unsigned round = 0; round < 2; round++)
        for (size_t r = 0; r < 2; r++) {
            CHECK_EQ_INT(ntl_profile_functions(p, r, &f, &n, &err), 0);
            CHECK(n == 1 && !strcmp(f[0].symbol, r ? "hi" : "lo") && f[0].hits == 3);
            free(f);
            CHECK_EQ_INT(ntl_profile_buckets(p, r, &b, &n, &err), 0);
            CHECK_EQ_U64(n, r ? 2 : 1);
            CHECK(n && !strcmp(b[n - 1].symbol, r ? "hi" : "lo"));
            CHECK_EQ_U64(n ? b[n - 1].disp : 0, r ? 0x7fc : 0x40);
            free(b);
        }
    ntl_profile_free(p);
}

/* Buckets with 2^32 - 1 hits or more (a row holds 32 bits, the rest are
 * kept aside): weighted and single hits, read, added to and read again. */
static void test_big_hits(void)
{
    static const uint64_t want[2][4] = {
        {1, 6000000000ull, 0, UINT32_MAX},
        {1, 6000000001ull, 7, 2ull * UINT32_MAX},
    };
    struct ntl_profile *p;
    struct ntl_profile_bucket_row *rows;
    struct ntl_profile_function_row *f;
    struct ntl_error err = {0};
    size_t n;
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    CHECK_EQ_INT(ntl_profile_add_range(p, 1, "m", "/m", 0x10000, 0x10, 2, &err), 0);
    CHECK_EQ_INT(ntl_profile_add_hits(p, 0, 1, 3000000000ull, &err), 0);
    CHECK_EQ_INT(ntl_profile_add_hits(p, 0, 3, UINT32_MAX - 1, &err), 0);
    CHECK_EQ_INT(ntl_profile_add_hits(p, 0, 1, 3000000000ull, &err), 0);
    CHECK_EQ_INT(ntl_profile_add_hits(p, 0, 0, 1, &err), 0);
    CHECK_EQ_INT(ntl_profile_add_hits(p, 0, 3, 1, &err), 0);
    for (unsigned round = 0; round < 2; round++) {
        CHECK_EQ_INT(ntl_profile_buckets(p, 0, &rows, &n, &err), 0);
        CHECK_EQ_U64(n, round ? 4 : 3);
        for (size_t r = 0; r < n; r++)
            CHECK_EQ_U64(rows[r].hits, want[round][rows[r].offset >> 2]);
        free(rows);
        CHECK_EQ_INT(ntl_profile_functions(p, 0, &f, &n, &err), 0);
        CHECK_EQ_U64(n, round ? 4 : 3);
        for (size_t r = 0; r < n; r++) {
            CHECK_EQ_U64(f[r].hits, want[round][f[r].offset >> 2]);
            CHECK(!r || f[r - 1].hits > f[r].hits);
        }
        free(f);
        CHECK_EQ_INT(ntl_profile_add_hits(p, 0, 1, 1, &err), 0);
        CHECK_EQ_INT(ntl_profile_add_hits(p, 0, 2, 7, &err), 0);
        CHECK_EQ_INT(ntl_profile_add_hits(p, 0, 3, UINT32_MAX, &err), 0);
    }
    ntl_profile_free(p);
}

/* Rows of a range of 4-byte buckets: each is one of the distinct buckets
 * with the hits wanted for it, in ascending order, adding up to total. */
static void check_bucket_rows(const struct ntl_profile_bucket_row *rows, size_t n,
                              const uint64_t *bucket, const uint64_t *want, size_t distinct,
                              uint64_t total)
{
    uint64_t sum = 0;
    for (size_t r = 0; r < n; r++) {
        size_t i = 0;
        while (i < distinct && bucket[i] << 2 != rows[r].offset)
            i++;
        CHECK(i < distinct && rows[r].hits == want[i]);
        CHECK(!r || rows[r - 1].offset < rows[r].offset);
        sum += rows[r].hits;
    }
    CHECK_EQ_U64(sum, total);
}

/* The bucket log: hits read, added to and read again, a log long enough
 * to be merged before any read (over 65,536 hits in one range), weighted
 * hits out of order, buckets needing every radix digit; each bucket's hits
 * against a count kept here, and the functions most hits first, ties by
 * offset. */
static void test_bucket_log(void)
{
    enum { DISTINCT = 1000, SYMS = 64 };
    static uint64_t bucket[DISTINCT], want[DISTINCT];
    struct ntl_profile *p;
    struct ntl_profile_symtab *t;
    struct ntl_profile_bucket_row *rows;
    struct ntl_profile_function_row *f;
    struct ntl_error err = {0};
    uint64_t rng = 88172645463325252ull, total = 0;
    size_t n;
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    CHECK_EQ_INT(ntl_profile_symtab_new(&t, &err), 0);
    for (unsigned s = 0; s < SYMS; s++) {
        char name[16];
        snprintf(name, sizeof name, "s%02u", SYMS - 1 - s);  /* added in reverse */
        CHECK_EQ_INT(ntl_profile_symtab_add(t, name, (uint64_t)(SYMS - 1 - s) << 26, 0, &err),
                     0);
    }
    CHECK_EQ_INT(ntl_profile_add_range(p, 1, "m", "/m", 1ull << 40, 1ull << 32, 2, &err), 0);
    CHECK_EQ_INT(ntl_profile_use_symbols(p, "/m", t, &err), 0);
    for (size_t i = 0; i < DISTINCT; i++)
        bucket[i] = (rng = rng * 6364136223846793005ull + 1442695040888963407ull) >> 34;
    for (unsigned round = 0; round < 3; round++) {
        for (unsigned k = 0; k < 70000; k++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            size_t i = (size_t)(rng >> 33) % DISTINCT;
            uint64_t count = k % 97 ? 1 : 1 + (rng & 0xffff);
            CHECK_EQ_INT(ntl_profile_add_hits(p, 0, bucket[i], count, &err), 0);
            want[i] += count;
            total += count;
        }
        CHECK_EQ_INT(ntl_profile_buckets(p, 0, &rows, &n, &err), 0);
        check_bucket_rows(rows, n, bucket, want, DISTINCT, total);
        free(rows);
        CHECK_EQ_INT(ntl_profile_functions(p, 0, &f, &n, &err), 0);
        uint64_t sum = 0;
        for (size_t r = 0; r < n; r++) {
            CHECK(!r || f[r - 1].hits > f[r].hits ||
                  (f[r - 1].hits == f[r].hits && f[r - 1].offset < f[r].offset));
            CHECK(f[r].symbol && f[r].offset % (1ull << 26) == 0);
            sum += f[r].hits;
        }
        CHECK_EQ_U64(sum, total);
        free(f);
    }
    ntl_profile_free(p);
}

/* Hits of weight 1 alone: a range's first settle collapses its sorted log
 * straight into the rows (hits.c's settle_first), the next ones merge.
 * 150,000 hits over 3,000 buckets (the log settles itself at 65,536, the
 * first time by that path), read after each of three rounds: every row's
 * hits, the rows in order, none missing. */
static void test_first_settle(void)
{
    enum { DISTINCT = 3000 };
    static uint64_t bucket[DISTINCT], want[DISTINCT];
    struct ntl_profile *p;
    struct ntl_profile_bucket_row *rows;
    struct ntl_error err = {0};
    uint64_t rng = 0x2545f4914f6cdd1dull, total = 0;
    size_t n;
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    CHECK_EQ_INT(ntl_profile_add_range(p, 1, "m", "/m", 1ull << 40, 1ull << 32, 2, &err), 0);
    for (size_t i = 0; i < DISTINCT; i++)
        bucket[i] = (rng = rng * 6364136223846793005ull + 1442695040888963407ull) >> 34;
    for (unsigned round = 0; round < 3; round++) {
        for (unsigned k = 0; k < (round ? 5000u : 150000u); k++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            size_t i = (size_t)(rng >> 33) % (round == 1 ? DISTINCT / 2 : DISTINCT);
            CHECK_EQ_INT(ntl_profile_add_hits(p, 0, bucket[i], 1, &err), 0);
            want[i]++;
            total++;
        }
        CHECK_EQ_INT(ntl_profile_buckets(p, 0, &rows, &n, &err), 0);
        size_t hit = 0;
        for (size_t i = 0; i < DISTINCT; i++)
            hit += want[i] != 0;
        CHECK_EQ_U64(n, hit);
        check_bucket_rows(rows, n, bucket, want, DISTINCT, total);
        free(rows);
    }
    ntl_profile_free(p);
}

/* A sample's range through its space's grid (built after 4,096 lookups,
 * dropped when the ranges change), against ntl_profile_range_of's plain
 * search: ranges of many sizes with gaps, one ending at the top of the
 * address space, samples in them, between them and outside them, then
 * ranges ended and added over others, and the same again. */
static void test_range_grid(void)
{
    struct ntl_profile *p;
    struct ntl_error err = {0};
    uint64_t rng = 0x2545f4914f6cdd1dull, base = 0x10000, bases[60];
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    for (unsigned i = 0; i < 60; i++) {
        uint64_t size = 0x1000ull << (i % 13);
        CHECK(ntl_profile_add_range(p, 7, "m", "", bases[i] = base, size, 2, &err) >= 0);
        base += size + (i % 3 ? 0 : 0x5000);
    }
    CHECK(ntl_profile_add_range(p, 7, "top", "", 0xfffffffffff00000ull, 0x100000, 4, &err) >= 0);
    for (unsigned round = 0; round < 3; round++) {
        for (unsigned k = 0; k < 12000; k++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            uint64_t ip = k % 50 == 0 ? ~(rng % 0x200000) : rng % (base + 0x10000);
            struct ntl_profile_sample s = {.ip = ip, .pid = 7, .tid = 8};
            long r = ntl_profile_range_of(p, 7, ip);  /* an active range, else one gone */
            CHECK_EQ_INT(ntl_profile_add_sample(p, &s, &err),
                         r >= 0 && ntl_profile_range(p, (size_t)r)->active);
        }
        uint64_t sum = ntl_profile_unknown(p);
        for (size_t r = 0; r < ntl_profile_range_count(p); r++)
            sum += ntl_profile_range(p, r)->hits;
        CHECK_EQ_U64(sum, ntl_profile_total(p));
        CHECK_EQ_INT(ntl_profile_end_range(p, 7, bases[round * 7]), 0);
        CHECK(ntl_profile_add_range(p, 7, "over", "", 0x30000 + round * 0x8000, 0x9000, 2,
                                    &err) >= 0);
    }
    ntl_profile_free(p);
}

/* Cells of the grid held whole by one range (model_space's whole): ranges
 * much larger than a cell, some adjacent, some apart, a sample's hit
 * counted in the range ntl_profile_range_of finds, range by range, before
 * and after ranges end and come over others. */
static void test_grid_whole(void)
{
    enum { N = 40 };
    struct ntl_profile *p;
    struct ntl_error err = {0};
    static uint64_t want[N + 3];
    uint64_t rng = 0x9e3779b97f4a7c15ull, base = 0x400000, bases[N];
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    for (unsigned i = 0; i < N; i++) {
        uint64_t size = 0x10000ull << (i % 7);
        CHECK_EQ_INT(ntl_profile_add_range(p, 7, "m", "", bases[i] = base, size, 2 + i % 5, &err),
                     (int)i);
        base += size + (i % 4 ? 0 : 0x3000);
    }
    for (unsigned round = 0; round < 3; round++) {
        for (unsigned k = 0; k < 20000; k++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            uint64_t ip = 0x3f0000 + rng % (base - 0x3f0000 + 0x10000);
            struct ntl_profile_sample s = {.ip = ip, .pid = 7, .tid = 8};
            long r = ntl_profile_range_of(p, 7, ip);
            bool active = r >= 0 && ntl_profile_range(p, (size_t)r)->active;
            CHECK_EQ_INT(ntl_profile_add_sample(p, &s, &err), active);
            if (active)
                want[r]++;
        }
        for (size_t r = 0; r < ntl_profile_range_count(p); r++)
            CHECK_EQ_U64(ntl_profile_range(p, r)->hits, want[r]);
        CHECK_EQ_INT(ntl_profile_end_range(p, 7, bases[round * 5 + 1]), 0);
        CHECK(ntl_profile_add_range(p, 7, "over", "", bases[round * 5 + 3] + 0x8000, 0x20000, 2,
                                    &err) >= 0);
    }
    ntl_profile_free(p);
}

/* ntl_profile_symtab_reserve on a table that has symbols already, below
 * and past what is added after: the same lookups as a table grown one add
 * at a time (a reservation sized without the symbols there writes past
 * its end). */
static void test_symtab_reserve(void)
{
    struct ntl_profile_symtab *grown, *reserved;
    struct ntl_error err = {0};
    CHECK_EQ_INT(ntl_profile_symtab_new(&grown, &err), 0);
    CHECK_EQ_INT(ntl_profile_symtab_new(&reserved, &err), 0);
    for (unsigned i = 0; i < 3000; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%u", i);
        if (i == 40)
            CHECK_EQ_INT(ntl_profile_symtab_reserve(reserved, 1000, &err), 0);
        if (i == 1040)
            CHECK_EQ_INT(ntl_profile_symtab_reserve(reserved, 10, &err), 0);
        CHECK_EQ_INT(ntl_profile_symtab_add(grown, name, i * 0x10ull, 0, &err), 0);
        CHECK_EQ_INT(ntl_profile_symtab_add(reserved, name, i * 0x10ull, 0, &err), 0);
    }
    CHECK_EQ_INT(ntl_profile_symtab_reserve(reserved, 0, &err), 0);
    CHECK_EQ_U64(ntl_profile_symtab_count(reserved), 3000);
    for (uint64_t off = 0; off < 3000 * 0x10 + 0x40; off += 0x7) {
        struct ntl_profile_symbol a, b;
        uint64_t da, db;
        int fa = ntl_profile_symtab_lookup(grown, off, &a, &da),
            fb = ntl_profile_symtab_lookup(reserved, off, &b, &db);
        CHECK_EQ_INT(fa, fb);
        if (fa && fb) {
            CHECK_EQ_STR(a.name, b.name);
            CHECK_EQ_U64(da, db);
        }
    }
    ntl_profile_symtab_free(grown);
    ntl_profile_symtab_free(reserved);
}

/* A table added in ascending order without aliases (symtab.c's one-pass
 * sizes) and the same symbols added out of order (the general sort): equal
 * lookups everywhere, a gap of 4 GiB or more leaving a symbol unsized. */
static void test_ascending_sizes(void)
{
    static const uint64_t off[] = {0x0, 0x100, 0x180, 0x1000, 0x100001000ull, 0x100001010ull};
    static const uint64_t size[] = {0, 0x10, 0, 0, 0x8, 0};
    const size_t n = sizeof off / sizeof off[0];
    struct ntl_profile_symtab *up, *mixed;
    struct ntl_error err = {0};
    CHECK_EQ_INT(ntl_profile_symtab_new(&up, &err), 0);
    CHECK_EQ_INT(ntl_profile_symtab_new(&mixed, &err), 0);
    for (size_t i = 0; i < n; i++) {
        char name[8];
        snprintf(name, sizeof name, "s%zu", i);
        CHECK_EQ_INT(ntl_profile_symtab_add(up, name, off[i], size[i], &err), 0);
        size_t j = (i * 5 + 3) % n;   /* 3, 2, 1, 0, 5, 4 */
        snprintf(name, sizeof name, "s%zu", j);
        CHECK_EQ_INT(ntl_profile_symtab_add(mixed, name, off[j], size[j], &err), 0);
    }
    for (size_t i = 0; i < n; i++)
        for (uint64_t d = 0; d < 0x300; d += 0x7) {
            struct ntl_profile_symbol a, b;
            uint64_t da, db;
            int fa = ntl_profile_symtab_lookup(up, off[i] + d, &a, &da),
                fb = ntl_profile_symtab_lookup(mixed, off[i] + d, &b, &db);
            CHECK_EQ_INT(fa, fb);
            if (fa && fb) {
                CHECK_EQ_STR(a.name, b.name);
                CHECK_EQ_U64(a.size, b.size);
                CHECK_EQ_U64(da, db);
            }
        }
    struct ntl_profile_symbol s;
    uint64_t disp;
    CHECK_EQ_INT(ntl_profile_symtab_lookup(up, 0x17f, &s, &disp), 0);  /* past sized s1 */
    CHECK_EQ_INT(ntl_profile_symtab_lookup(up, 0x10f, &s, &disp), 1);
    CHECK_EQ_STR(s.name, "s1");
    CHECK_EQ_INT(ntl_profile_symtab_lookup(up, 0x80000000ull, &s, &disp), 1);
    CHECK_EQ_STR(s.name, "s3");   /* its next is 4 GiB away: unsized, to the end */
    CHECK_EQ_U64(s.size, 0);
    CHECK_EQ_INT(ntl_profile_symtab_lookup(up, 0xff, &s, &disp), 1);
    CHECK_EQ_U64(s.size, 0x100);
    ntl_profile_symtab_free(up);
    ntl_profile_symtab_free(mixed);
}

/* Function rows made without a branch on a run's end (report.c): runs of
 * one symbol summed, unnamed buckets side by side kept apart, a symbol's
 * runs on both sides of an unnamed bucket kept apart too (its size ends
 * before the gap). */
static void test_function_runs(void)
{
    struct ntl_profile *p;
    struct ntl_profile_symtab *t;
    struct ntl_profile_function_row *f;
    struct ntl_error err = {0};
    size_t n;
    CHECK_EQ_INT(ntl_profile_symtab_new(&t, &err), 0);
    CHECK_EQ_INT(ntl_profile_symtab_add(t, "a", 0x100, 0x10, &err), 0);
    CHECK_EQ_INT(ntl_profile_symtab_add(t, "b", 0x110, 0x10, &err), 0);
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    CHECK_EQ_INT(ntl_profile_add_range(p, 1, "m", "/m", 0x10000, 0x1000, 2, &err), 0);
    CHECK_EQ_INT(ntl_profile_use_symbols(p, "/m", t, &err), 0);
    /* unnamed 0x0 x1, 0x4 x2, 0x8 x3; a: 0x100 x1, 0x104 x2, 0x10c x4; b: 0x110 x5; unnamed
     * 0x200 x6 */
    static const uint64_t at[] = {0x0, 0x4, 0x8, 0x100, 0x104, 0x10c, 0x110, 0x200};
    static const unsigned times[] = {1, 2, 3, 1, 2, 4, 5, 6};
    for (size_t i = 0; i < 8; i++)
        for (unsigned k = 0; k < times[i]; k++) {
            struct ntl_profile_sample s = {.ip = 0x10000 + at[i], .pid = 1, .tid = 1};
            CHECK_EQ_INT(ntl_profile_add_sample(p, &s, &err), 1);
        }
    CHECK_EQ_INT(ntl_profile_functions(p, 0, &f, &n, &err), 0);
    CHECK_EQ_U64(n, 6);
    if (n == 6) {   /* most hits first, ties by offset */
        CHECK_EQ_STR(f[0].symbol, "a");
        CHECK_EQ_U64(f[0].hits, 7);
        CHECK(f[1].symbol == NULL && f[1].offset == 0x200 && f[1].hits == 6);
        CHECK_EQ_STR(f[2].symbol, "b");
        CHECK_EQ_U64(f[2].hits, 5);
        CHECK(f[3].symbol == NULL && f[3].offset == 0x8 && f[3].hits == 3);
        CHECK(f[4].symbol == NULL && f[4].offset == 0x4 && f[4].hits == 2);
        CHECK(f[5].symbol == NULL && f[5].offset == 0x0 && f[5].hits == 1);
    }
    free(f);
    ntl_profile_free(p);
}

static void test_symbols_and_report(void)
{
    struct ntl_profile *p;
    struct ntl_profile_symtab *t;
    struct ntl_error err = {0};
    uint64_t disp;
    CHECK_EQ_INT(ntl_profile_symtab_new(&t, &err), 0);
    CHECK_EQ_INT(ntl_profile_symtab_add(t, "g", 0x200, 0, &err), 0);
    CHECK_EQ_INT(ntl_profile_symtab_add(t, "f", 0x100, 0x10, &err), 0);
    CHECK_EQ_INT(ntl_profile_symtab_add(t, "f_alias", 0x100, 0, &err), 0);
    struct ntl_profile_symbol s;
    CHECK_EQ_INT(ntl_profile_symtab_lookup(t, 0xff, &s, &disp), 0);
    CHECK_EQ_INT(ntl_profile_symtab_lookup(t, 0x104, &s, &disp), 1);
    CHECK_EQ_STR(s.name, "f");
    CHECK_EQ_U64(s.offset, 0x100);
    CHECK_EQ_U64(s.size, 0x10);
    CHECK_EQ_U64(disp, 4);
    CHECK_EQ_INT(ntl_profile_symtab_lookup(t, 0x110, &s, &disp), 0);   /* past f's size */
    CHECK_EQ_INT(ntl_profile_symtab_lookup(t, 0x5000, &s, &disp), 1);
    CHECK_EQ_STR(s.name, "g");
    CHECK_EQ_U64(s.size, 0);   /* the last unsized symbol: to the module's end */

    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    CHECK_EQ_INT(ntl_profile_add_range(p, 1, "m", "/m", 0x10000, 0x1000, 2, &err), 0);
    CHECK_EQ_INT(ntl_profile_use_symbols(p, "/m", t, &err), 0);
    uint64_t ips[] = {0x10100, 0x10104, 0x10104, 0x10120, 0x10200, 0x10300, 0x10300};
    for (size_t i = 0; i < sizeof ips / sizeof *ips; i++) {
        struct ntl_profile_sample s = {.ip = ips[i], .pid = 1, .tid = 1};
        CHECK_EQ_INT(ntl_profile_add_sample(p, &s, &err), 1);
    }
    struct ntl_profile_function_row *f;
    size_t n;
    CHECK_EQ_INT(ntl_profile_functions(p, 0, &f, &n, &err), 0);
    CHECK_EQ_U64(n, 3);
    if (n == 3) {
        CHECK_EQ_STR(f[0].symbol, "f");
        CHECK_EQ_U64(f[0].hits, 3);
        CHECK_EQ_STR(f[1].symbol, "g");       /* 0x200 and 0x300: one function */
        CHECK_EQ_U64(f[1].hits, 3);
        CHECK(f[2].symbol == NULL);           /* 0x120: between f's end and g */
        CHECK_EQ_U64(f[2].offset, 0x120);
    }
    free(f);
    struct ntl_profile_bucket_row *b;
    CHECK_EQ_INT(ntl_profile_buckets(p, 0, &b, &n, &err), 0);
    CHECK_EQ_U64(n, 5);
    if (n == 5) {
        CHECK_EQ_U64(b[1].offset, 0x104);
        CHECK_EQ_U64(b[1].hits, 2);
        CHECK_EQ_U64(b[1].disp, 4);
    }
    free(b);
    CHECK_EQ_INT(ntl_profile_buckets(p, 9, &b, &n, &err), NTL_ERR_ARGUMENT);
    ntl_profile_free(p);
}

#ifndef _WIN32
/* GNU ld's symbol at the start of the first segment: file offset 0. */
extern char __executable_start;

/* Aliases of one function, as glibc has them (_exit, its weak _Exit, its
 * internal __GI__exit): perf names the address aliased_fn (global, fewest
 * leading underscores); sorted by name, __aliased_fn or a_local came first. */
void aliased_fn(void);
void aliased_fn(void) { __asm__ volatile(""); }
void __aliased_fn(void) __attribute__((alias("aliased_fn")));
void zz_weak_alias(void) __attribute__((weak, alias("aliased_fn")));
static void a_local(void) __attribute__((alias("aliased_fn"), used));
#endif

static void test_elf(const char *self)
{
    struct ntl_profile_symtab *t = NULL;
    struct ntl_error err = {0};
#ifdef _WIN32
    (void)self;
    CHECK_EQ_INT(ntl_profile_symtab_from_elf("x", &t, &err), NTL_ERR_UNSUPPORTED);
#else
    uint64_t disp;
    /* This test program: its own functions, at offsets from its load base. */
    CHECK_EQ_INT(ntl_profile_symtab_from_elf(self, &t, &err), 0);
    CHECK(t && ntl_profile_symtab_count(t) > 5);
    if (t) {
        uint64_t off = (uint64_t)(uintptr_t)test_elf - (uint64_t)(uintptr_t)&__executable_start;
        struct ntl_profile_symbol s = {0};
        CHECK_EQ_INT(ntl_profile_symtab_lookup(t, off + 1, &s, &disp), 1);
        CHECK_EQ_STR(s.name ? s.name : "", "test_elf");
        CHECK_EQ_U64(disp, 1);
        off = (uint64_t)(uintptr_t)aliased_fn - (uint64_t)(uintptr_t)&__executable_start;
        s.name = NULL;
        CHECK_EQ_INT(ntl_profile_symtab_lookup(t, off, &s, &disp), 1);
        CHECK_EQ_STR(s.name ? s.name : "", "aliased_fn");
    }
    ntl_profile_symtab_free(t);
    CHECK_EQ_INT(ntl_profile_symtab_from_elf("/nonexistent", &t, &err), NTL_ERR_IO);
    CHECK_EQ_INT(ntl_profile_symtab_from_elf("/proc/self/status", &t, &err), NTL_ERR_FORMAT);
#endif
}

int main(int argc, char **argv)
{
    (void)argc;
    test_bucket_count();
    test_ranges();
    test_stacks();
    test_stacks_dropped();
    test_bucket_rows();
    test_bucket_log();
    test_first_settle();
    test_big_hits();
    test_shared_table();
    test_range_grid();
    test_grid_whole();
    test_ascending_sizes();
    test_symtab_reserve();
    test_function_runs();
    test_symbols_and_report();
    test_elf(argv[0]);
    return check_exit();
}
