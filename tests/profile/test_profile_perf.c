/* perf ring-buffer records: parsing (whole, truncated, malformed) and what
 * they add to a profile; /proc/PID/maps lines.
 *   test_profile_perf [SEED]   also writes the records to SEED (the fuzz
 *                              harness's corpus) */
#include "check.h"
#include "ntlens/buf.h"
#include "ntlens/profile_perf.h"
#include "ntlens/profile_report.h"

static void header(struct ntl_buf *b, uint32_t type, uint16_t size)
{
    ntl_buf_put_u32(b, type);
    ntl_buf_put_u16(b, 0);
    ntl_buf_put_u16(b, size);
}

static void mmap2(struct ntl_buf *b, uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff,
                  uint32_t prot, const char *name)
{
    size_t n = strlen(name) + 1, padded = (n + 7) & ~(size_t)7;
    header(b, NTL_PROFILE_PERF_MMAP2, (uint16_t)(8 + 64 + padded));
    ntl_buf_put_u32(b, pid);
    ntl_buf_put_u32(b, pid);
    ntl_buf_put_u64(b, addr);
    ntl_buf_put_u64(b, len);
    ntl_buf_put_u64(b, pgoff);
    for (int i = 0; i < 3; i++)
        ntl_buf_put_u64(b, 0);        /* maj, min, ino, ino_generation */
    ntl_buf_put_u32(b, prot);
    ntl_buf_put_u32(b, 2);            /* MAP_PRIVATE */
    ntl_buf_append(b, name, n);
    for (size_t i = n; i < padded; i++)
        ntl_buf_append(b, "", 1);
}

static void sample(struct ntl_buf *b, uint64_t ip, uint32_t pid, uint32_t tid, uint64_t time,
                   const uint64_t *chain, uint64_t nr)
{
    header(b, NTL_PROFILE_PERF_SAMPLE, (uint16_t)(8 + 32 + 8 * nr));
    ntl_buf_put_u64(b, ip);
    ntl_buf_put_u32(b, pid);
    ntl_buf_put_u32(b, tid);
    ntl_buf_put_u64(b, time);
    ntl_buf_put_u64(b, nr);
    for (uint64_t i = 0; i < nr; i++)
        ntl_buf_put_u64(b, chain[i]);
}

/* The records a ring holds for a short run of "app" (pid 50). */
static void ring(struct ntl_buf *b)
{
    const uint64_t user = (uint64_t)-512; /* PERF_CONTEXT_USER */
    const uint64_t chain[] = {user, 0x401010, 0x401100, 0x7f0000001234};
    header(b, NTL_PROFILE_PERF_COMM, 8 + 16);
    ntl_buf_put_u32(b, 50);
    ntl_buf_put_u32(b, 50);
    ntl_buf_append(b, "app\0\0\0\0\0", 8);
    mmap2(b, 50, 0x401000, 0x1000, 0x1000, 5, "/usr/bin/app");
    mmap2(b, 50, 0x7f0000000000, 0x2000, 0, 5, "/usr/lib/libc.so.6");
    mmap2(b, 50, 0x600000, 0x1000, 0, 3, "/usr/bin/app"); /* data: no range */
    sample(b, 0x401010, 50, 51, 1000, chain, 4);
    sample(b, 0x401020, 50, 51, 2000, chain, 2);
    sample(b, 0x7f0000000010, 50, 52, 3000, NULL, 0);
    sample(b, 0x999, 50, 52, 4000, NULL, 0);
    header(b, NTL_PROFILE_PERF_LOST, 8 + 16);
    ntl_buf_put_u64(b, 1);
    ntl_buf_put_u64(b, 7);
    header(b, NTL_PROFILE_PERF_THROTTLE, 8 + 24);
    for (int i = 0; i < 3; i++)
        ntl_buf_put_u64(b, 5000);
    header(b, 99, 16);                   /* a type not asked for: skipped */
    ntl_buf_put_u64(b, 0);
}

static void test_records(struct ntl_buf *b)
{
    struct ntl_profile *p;
    struct ntl_profile_perf_record r;
    struct ntl_profile_perf_stats st = {0};
    struct ntl_error err = {0};
    size_t pos = 0;
    int rc, records = 0;
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    /* Until perf records come, a caller is named in its call... */
    CHECK_EQ_U64(ntl_profile_frame_address(p, 0x401100), 0x4010ff);
    while ((rc = ntl_profile_perf_next(b->data, b->len, &pos, 0, &r, &err)) > 0) {
        records++;
        CHECK_EQ_INT(ntl_profile_perf_feed(p, &r, 2, &st, &err), 0);
    }
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(records, 11);
    CHECK_EQ_U64(st.samples, 4);
    CHECK_EQ_U64(st.lost, 7);
    CHECK_EQ_U64(st.throttled, 1);
    CHECK_EQ_U64(st.first_time, 1000);
    CHECK_EQ_U64(st.last_time, 4000);
    CHECK_EQ_U64(ntl_profile_range_count(p), 2);
    const struct ntl_profile_range *app = ntl_profile_range(p, 0);
    CHECK_EQ_STR(app->name, "app");
    CHECK_EQ_U64(app->base, 0x400000);     /* where file offset 0 lies */
    CHECK_EQ_U64(app->size, 0x2000);
    CHECK_EQ_U64(app->hits, 2);
    CHECK_EQ_U64(ntl_profile_range(p, 1)->hits, 1);
    CHECK_EQ_U64(ntl_profile_unknown(p), 1);

    /* The stack without the context marker and the repeated ip. */
    struct ntl_profile_sample s;
    size_t sp = 0;
    CHECK_EQ_INT(ntl_profile_stack_next(p, &sp, &s), 1);
    CHECK_EQ_U64(s.depth, 2);
    CHECK_EQ_U64(s.stack[0], 0x401100);
    CHECK_EQ_U64(s.stack[1], 0x7f0000001234);
    /* ...then at its address, as perf names a callchain: _start's first
     * byte read as the outermost entry is _start, not what precedes it. */
    CHECK(ntl_profile_info(p)->frames_as_is);
    CHECK_EQ_U64(ntl_profile_frame_address(p, 0x401100), 0x401100);
    /* The second's chain does not start with its ip: all of it is kept. */
    CHECK_EQ_INT(ntl_profile_stack_next(p, &sp, &s), 1);
    CHECK_EQ_U64(s.depth, 1);
    CHECK_EQ_U64(s.stack[0], 0x401010);
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_INT(ntl_profile_stack_next(p, &sp, &s), 1);
        CHECK_EQ_U64(s.depth, 0);
    }
    CHECK_EQ_INT(ntl_profile_stack_next(p, &sp, &s), 0);

    struct ntl_profile_process_row *pr;
    size_t n;
    CHECK_EQ_INT(ntl_profile_processes(p, &pr, &n, &err), 0);
    CHECK(n == 1 && pr[0].pid == 50 && pr[0].name && !strcmp(pr[0].name, "app"));
    free(pr);
    ntl_profile_free(p);
}

static void test_bad_records(const struct ntl_buf *b)
{
    struct ntl_profile_perf_record r;
    struct ntl_error err = {0};
    uint8_t rec[64];
    size_t pos = 0;
    /* Cut inside the first record's body, then inside a header. */
    CHECK_EQ_INT(ntl_profile_perf_next(b->data, 20, &pos, 100, &r, &err), NTL_ERR_TRUNCATED);
    CHECK_EQ_U64(err.offset, 100);
    CHECK_EQ_INT(ntl_profile_perf_next(b->data, 5, &pos, 0, &r, &err), NTL_ERR_TRUNCATED);
    /* Size 12: not a multiple of 8. */
    memset(rec, 0, sizeof rec);
    rec[0] = NTL_PROFILE_PERF_SAMPLE;
    rec[6] = 12;
    CHECK_EQ_INT(ntl_profile_perf_next(rec, sizeof rec, &pos, 0, &r, &err), NTL_ERR_FORMAT);
    /* A sample whose callchain claims more entries than the record holds. */
    rec[6] = 40;
    rec[8 + 24] = 1;
    CHECK_EQ_INT(ntl_profile_perf_next(rec, sizeof rec, &pos, 0, &r, &err), NTL_ERR_FORMAT);
    /* A COMM without its NUL. */
    memset(rec, 'x', sizeof rec);
    memset(rec, 0, 8);
    rec[0] = NTL_PROFILE_PERF_COMM;
    rec[6] = 24;
    CHECK_EQ_INT(ntl_profile_perf_next(rec, sizeof rec, &pos, 0, &r, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(pos, 0);
}

static void test_maps(void)
{
    static const char maps[] =
        "55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 131 /usr/bin/prog\n"
        "55d0c0a02000-55d0c0a05000 r-xp 00002000 08:01 131 /usr/bin/prog\n"
        "7f1200000000-7f1200021000 rw-p 00000000 00:00 0 \n"
        "7f1200100000-7f1200180000 r-xp 00028000 08:01 77   /usr/lib/x86_64-linux-gnu/libc.so.6\n"
        "7ffd1c3fe000-7ffd1c400000 r-xp 00000000 00:00 0                          [vdso]\n";
    struct ntl_profile *p;
    struct ntl_error err = {0};
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    CHECK_EQ_INT(ntl_profile_maps_parse(p, 9, maps, sizeof maps - 1, 2, &err), 3);
    CHECK_EQ_U64(ntl_profile_range(p, 0)->base, 0x55d0c0a00000);
    CHECK_EQ_U64(ntl_profile_range(p, 0)->size, 0x5000);
    CHECK_EQ_STR(ntl_profile_range(p, 1)->name, "libc.so.6");
    CHECK_EQ_U64(ntl_profile_range(p, 1)->base, 0x7f12000d8000);
    CHECK_EQ_STR(ntl_profile_range(p, 2)->name, "[vdso]");
    CHECK_EQ_INT(ntl_profile_maps_parse(p, 9, "garbage\n", 8, 2, &err), NTL_ERR_FORMAT);
    CHECK_EQ_INT(ntl_profile_maps_parse(p, 9, "1000-2000 r-xp 5000 0 0 /x\n", 27, 2, &err),
                 NTL_ERR_ARGUMENT);   /* offset past the address: no base */
    /* A 64 GiB executable reserve (seen from an ASan process during a
     * system-wide run): 2^34 buckets of 4 bytes, so its buckets widen. */
    static const char huge[] = "7e0000000000-7e1002401000 r-xp 00000000 00:01 7 /memfd:jit\n";
    CHECK_EQ_INT(ntl_profile_maps_parse(p, 9, huge, sizeof huge - 1, 2, &err), 1);
    const struct ntl_profile_range *r = ntl_profile_range(p, 3);
    CHECK_EQ_U64(r->size, 0x1002401000);
    CHECK_EQ_INT((int)r->bucket_shift, 5);
    CHECK_EQ_INT((int)ntl_profile_range(p, 0)->bucket_shift, 2);
    ntl_profile_free(p);
}

static void test_kernel(void)
{
    static const char ks[] =
        "ffffffff81000000 T _stext\n"
        "ffffffff81000100 T do_syscall_64\n"
        "ffffffff81000200 t helper\n"
        "ffffffff81001000 D some_data\n"
        "ffffffff81002000 T _etext\n"
        "ffffffffc0001000 t mod_fn\t[mymod]\n";
    static const char mods[] = "mymod 16384 0 - Live 0xffffffffc0001000\n";
    static const char hidden[] = "0000000000000000 T _stext\n0000000000000000 T _etext\n";
    struct ntl_profile *p;
    struct ntl_error err = {0};
    struct ntl_profile_function_row *f;
    size_t n;
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    CHECK_EQ_INT(ntl_profile_kernel_parse(p, hidden, sizeof hidden - 1, NULL, 0, 2, &err), 0);
    CHECK_EQ_INT(ntl_profile_kernel_parse(p, ks, sizeof ks - 1, mods, sizeof mods - 1, 2, &err),
                 2);
    CHECK_EQ_U64(ntl_profile_range(p, 0)->size, 0x2001);
    CHECK_EQ_STR(ntl_profile_range(p, 1)->name, "[mymod]");
    uint64_t ips[] = {0xffffffff81000104, 0xffffffff81000204, 0xffffffffc0001010};
    for (int i = 0; i < 3; i++) {
        struct ntl_profile_sample s = {.ip = ips[i], .pid = 7, .tid = 7};
        CHECK_EQ_INT(ntl_profile_add_sample(p, &s, &err), 1);
    }
    CHECK_EQ_INT(ntl_profile_functions(p, 0, &f, &n, &err), 0);
    CHECK(n == 2 && f[0].symbol && f[1].symbol);
    if (n == 2)
        CHECK(!strcmp(f[0].symbol, "do_syscall_64") || !strcmp(f[1].symbol, "do_syscall_64"));
    free(f);
    CHECK_EQ_INT(ntl_profile_functions(p, 1, &f, &n, &err), 0);
    CHECK(n == 1 && f[0].symbol && !strcmp(f[0].symbol, "mod_fn"));
    free(f);
    CHECK_EQ_INT(ntl_profile_kernel_parse(p, "zz\n", 3, NULL, 0, 2, &err), NTL_ERR_FORMAT);
    ntl_profile_free(p);
}

int main(int argc, char **argv)
{
    struct ntl_buf b;
    ntl_buf_init(&b, 1u << 20);
    ring(&b);
    test_records(&b);
    test_bad_records(&b);
    test_maps();
    test_kernel();
    if (argc > 1)
        CHECK_EQ_INT(ntl_file_write(argv[1], b.data, b.len, NULL), 0);
    ntl_buf_free(&b);
    return check_exit();
}
