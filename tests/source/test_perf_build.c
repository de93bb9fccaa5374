/* The PERF_DATA_BLOCK writer: byte layout checked field by field against
 * WinPerf.h offsets, then round-tripped through the parser (ntlens/perf.h)
 * and the title database. Runs natively and under Wine. */
#include "check.h"

#include "ntlens/perf.h"
#include "ntlens/perf_build.h"
#include "ntlens/perf_value.h"
#include "ntlens/reader.h"
#include "ntlens/utf16.h"

static const struct ntl_perf_build_counter proc_defs[] = {
    {784, 785, -1, 100, NTL_PERF_COUNTER_RAWCOUNT, 4},
    {6, 7, 0, 100, NTL_PERF_100NSEC_TIMER, 8},
    {1410, 1411, 0, 200, NTL_PERF_COUNTER_RAWCOUNT, 4},
    {684, 685, -4, 200, NTL_PERF_ELAPSED_TIME, 8},
};

static const struct ntl_perf_build_counter thread_defs[] = {
    {804, 805, 0, 100, NTL_PERF_COUNTER_RAWCOUNT, 4},
    {146, 147, -2, 100, NTL_PERF_COUNTER_COUNTER, 4},
};

static const struct ntl_perf_build_counter mem_defs[] = {
    {24, 25, -6, 100, NTL_PERF_COUNTER_LARGE_RAWCOUNT, 8},
    {28, 29, -1, 100, NTL_PERF_COUNTER_COUNTER, 4},
};

#define NOW_FT 133000000000000000ll /* some FILETIME */

/* A block with an object without instances (Memory), Process with three
 * instances (two named "svchost"), Thread with parents. */
static int build_sample(struct ntl_buf *out, struct ntl_error *err, int64_t perf_time,
                        uint64_t cpu_of_svchost)
{
    struct ntl_perf_builder b;
    struct ntl_perf_build_header h = {0};
    struct ntl_perf_build_object mem = {4, 5, 100, 0, false, 0, 0, 0, mem_defs, 2};
    struct ntl_perf_build_object proc = {230, 231, 100, 0, true, 0, NOW_FT, 10000000, proc_defs, 4};
    struct ntl_perf_build_object thr = {232, 233, 200, 0, true, 0, NOW_FT, 10000000, thread_defs, 2};
    const char *names[3] = {"Idle", "svchost", "svchost"};
    uint64_t pids[3] = {0, 600, 812};
    int rc;

    ntl_perf_build_systemtime(h.system_time, 1763780000, 250);
    h.perf_time = perf_time;
    h.perf_freq = 10000000;
    h.perf_time_100ns = NOW_FT + perf_time; /* both clocks in 100 ns */
    h.system_name = "HÖST";
    h.default_object = 238;
    if ((rc = ntl_perf_build_begin(&b, out, &h, err)) < 0)
        return rc;
    if ((rc = ntl_perf_build_object(&b, &mem, err)) < 0)
        return rc;
    if ((rc = ntl_perf_build_counters(&b, (uint64_t[]){0x123456789ull, 77}, err)) < 0)
        return rc;
    if ((rc = ntl_perf_build_end_object(&b, err)) < 0)
        return rc;
    if ((rc = ntl_perf_build_object(&b, &proc, err)) < 0)
        return rc;
    for (int i = 0; i < 3; i++) {
        struct ntl_perf_build_instance in = {names[i], 0, 0, NTL_PERF_BUILD_NO_UNIQUE_ID};
        uint64_t v[4] = {pids[i], i == 1 ? cpu_of_svchost : 1000u * (unsigned)i, 4,
                         (uint64_t)(NOW_FT - 10000000ll * (i + 1))};
        if ((rc = ntl_perf_build_instance(&b, &in, v, err)) < 0)
            return rc;
    }
    if ((rc = ntl_perf_build_end_object(&b, err)) < 0)
        return rc;
    if ((rc = ntl_perf_build_object(&b, &thr, err)) < 0)
        return rc;
    for (int i = 0; i < 4; i++) {
        struct ntl_perf_build_instance in = {i < 3 ? "0" : "1", 230, i == 0 ? 0u : i == 3 ? 2u : 1u,
                                             NTL_PERF_BUILD_NO_UNIQUE_ID};
        if ((rc = ntl_perf_build_instance(&b, &in, (uint64_t[]){100u + (unsigned)i, 5}, err)) < 0)
            return rc;
    }
    if ((rc = ntl_perf_build_end_object(&b, err)) < 0)
        return rc;
    return ntl_perf_build_finish(&b, err);
}

static void test_layout(void)
{
    struct ntl_buf buf;
    struct ntl_error err;
    const uint8_t *p;
    uint32_t hdr, obj, total;
    int len;

    ntl_buf_init(&buf, 0);
    len = build_sample(&buf, &err, 5000, 1);
    CHECK(len > 0);
    if (len <= 0)
        return;
    CHECK_EQ_U64(len, buf.len);
    CHECK_EQ_U64(buf.len % 8, 0);
    p = buf.data;
    CHECK(!memcmp(p, "P\0E\0R\0F\0", 8));
    CHECK_EQ_U64(ntl_le32(p + 8), 1);  /* LittleEndian */
    CHECK_EQ_U64(ntl_le32(p + 12), 1); /* Version */
    CHECK_EQ_U64(ntl_le32(p + 16), 1); /* Revision */
    CHECK_EQ_U64(ntl_le32(p + 20), buf.len);
    hdr = ntl_le32(p + 24);
    CHECK_EQ_U64(hdr, 88 + 16); /* "HÖST" + NUL = 10 bytes, padded to 16 */
    CHECK_EQ_U64(ntl_le32(p + 28), 3);
    CHECK_EQ_U64(ntl_le32(p + 32), 238);
    CHECK_EQ_U64(ntl_le16(p + 36), 2025); /* 2025-11-22 02:53:20 UTC, a Saturday */
    CHECK_EQ_U64(ntl_le16(p + 38), 11);
    CHECK_EQ_U64(ntl_le16(p + 40), 6);
    CHECK_EQ_U64(ntl_le16(p + 42), 22);
    CHECK_EQ_U64(ntl_le16(p + 44), 2);
    CHECK_EQ_U64(ntl_le16(p + 46), 53);
    CHECK_EQ_U64(ntl_le16(p + 48), 20);
    CHECK_EQ_U64(ntl_le16(p + 50), 250);
    CHECK_EQ_U64(ntl_le64(p + 56), 5000);
    CHECK_EQ_U64(ntl_le64(p + 64), 10000000);
    CHECK_EQ_U64(ntl_le64(p + 72), NOW_FT + 5000);
    CHECK_EQ_U64(ntl_le32(p + 80), 10);
    CHECK_EQ_U64(ntl_le32(p + 84), 88);
    CHECK_EQ_U64(ntl_le16(p + 88 + 2), 0xD6); /* Ö */

    /* Memory: no instances, one counter block right after the definitions. */
    obj = hdr;
    total = ntl_le32(p + obj);
    CHECK_EQ_U64(ntl_le32(p + obj + 4), 64 + 2 * 40); /* DefinitionLength */
    CHECK_EQ_U64(ntl_le32(p + obj + 8), 64);          /* HeaderLength */
    CHECK_EQ_U64(ntl_le32(p + obj + 12), 4);
    CHECK_EQ_U64(ntl_le32(p + obj + 32), 2);          /* NumCounters */
    CHECK_EQ_U64(ntl_le32(p + obj + 40), 0xFFFFFFFFu); /* PERF_NO_INSTANCES */
    CHECK_EQ_U64(ntl_le32(p + obj + 64 + 36), 8);     /* first counter's offset */
    CHECK_EQ_U64(ntl_le32(p + obj + 104 + 36), 16);   /* 4-byte counter after an 8-byte one */
    CHECK_EQ_U64(total, 64 + 80 + 24);                /* counter block: 4 + pad + 8 + 4, to 24 */
    CHECK_EQ_U64(ntl_le32(p + obj + 144), 24);
    CHECK_EQ_U64(ntl_le64(p + obj + 144 + 8), 0x123456789ull);
    CHECK_EQ_U64(ntl_le32(p + obj + 144 + 16), 77);

    /* Process: offsets 8 (DWORD), 16 (LARGE), 24 (DWORD), 32 (LARGE). */
    obj += total;
    CHECK_EQ_U64(obj % 8, 0);
    CHECK_EQ_U64(ntl_le32(p + obj + 12), 230);
    CHECK_EQ_U64(ntl_le32(p + obj + 40), 3);
    CHECK_EQ_U64(ntl_le64(p + obj + 48), (uint64_t)NOW_FT);
    CHECK_EQ_U64(ntl_le32(p + obj + 64 + 36), 8);
    CHECK_EQ_U64(ntl_le32(p + obj + 104 + 36), 16);
    CHECK_EQ_U64(ntl_le32(p + obj + 144 + 36), 24);
    CHECK_EQ_U64(ntl_le32(p + obj + 184 + 36), 32);
    {
        uint32_t inst = obj + ntl_le32(p + obj + 4);
        /* PERF_INSTANCE_DEFINITION "Idle": 24 + 10 bytes of name, padded to 40. */
        CHECK_EQ_U64(ntl_le32(p + inst), 40);
        CHECK_EQ_U64(ntl_le32(p + inst + 12), 0xFFFFFFFFu);
        CHECK_EQ_U64(ntl_le32(p + inst + 16), 24);
        CHECK_EQ_U64(ntl_le32(p + inst + 20), 10);
        CHECK_EQ_U64(ntl_le16(p + inst + 24), 'I');
        CHECK_EQ_U64(ntl_le16(p + inst + 32), 0);
        CHECK_EQ_U64(ntl_le32(p + inst + 40), 40); /* counter block ByteLength */
    }
    ntl_buf_free(&buf);
}

static void test_round_trip(void)
{
    struct ntl_buf a, b;
    struct ntl_error err;
    struct ntl_perf_block *pa = NULL, *pb = NULL;
    const struct ntl_perf_object *mem, *proc, *thr;
    struct ntl_perf_raw r0, r1;
    double v;
    char name[64];

    ntl_buf_init(&a, 0);
    ntl_buf_init(&b, 0);
    CHECK(build_sample(&a, &err, 10000000, 1000000) > 0);
    CHECK(build_sample(&b, &err, 30000000, 2000000) > 0); /* 2 s later, 0.1 s of CPU more */
    CHECK_EQ_INT(ntl_perf_block_parse(a.data, a.len, &pa, &err), 0);
    CHECK_EQ_INT(ntl_perf_block_parse(b.data, b.len, &pb, &err), 0);
    if (!pa || !pb) {
        char msg[512];
        fprintf(stderr, "parse: %s\n", ntl_error_format(&err, msg, sizeof msg));
        goto out;
    }
    CHECK_EQ_STR(pa->system_name, "HÖST");
    CHECK_EQ_U64(pa->nobjects, 3);
    CHECK_EQ_U64(pa->quirks, 0);
    CHECK_EQ_U64(pa->system_time.year, 2025);
    mem = ntl_perf_block_find_object(pa, 4);
    proc = ntl_perf_block_find_object(pa, 230);
    thr = ntl_perf_block_find_object(pa, 232);
    CHECK(mem && proc && thr);
    if (!mem || !proc || !thr)
        goto out;
    CHECK_EQ_INT(mem->num_instances, NTL_PERF_NO_INSTANCES);
    CHECK_EQ_U64(ntl_perf_counter_u64(mem, 0, 0), 0x123456789ull);
    CHECK_EQ_U64(ntl_perf_counter_u64(mem, 1, 0), 77);
    CHECK_EQ_U64(proc->ninstances, 3);
    CHECK_EQ_STR(proc->instances[1].name, "svchost");
    CHECK_EQ_STR(proc->instances[2].name, "svchost");
    CHECK_EQ_U64(proc->instances[2].dup_index, 1);
    CHECK_EQ_U64(ntl_perf_counter_u64(proc, 0, 2), 812);
    CHECK_EQ_U64(ntl_perf_counter_u64(proc, 2, 1), 4);
    CHECK_EQ_U64(thr->ninstances, 4);
    CHECK(thr->instances[3].parent == &proc->instances[2]);
    CHECK(thr->instances[0].parent == &proc->instances[0]);
    ntl_perf_instance_path_name(&thr->instances[3], name, sizeof name);
    CHECK_EQ_STR(name, "svchost/1"); /* PDH: "#N" counts same-named threads */
    CHECK_EQ_U64(ntl_perf_counter_u64(thr, 0, 3), 103);

    /* Elapsed Time: (object PerfTime - value) / PerfFreq = 3 s for instance 2. */
    CHECK_EQ_INT(ntl_perf_raw_get(pa, proc, 3, 2, &r0, &err), 0);
    CHECK_EQ_INT(ntl_perf_value_compute(&r0, NULL, &v), NTL_PERF_VALUE_OK);
    CHECK_NEAR(v, 3.0, 1e-9);
    /* % Processor Time over two samples: 1e6 of 100 ns in 2e7 = 5 %. */
    CHECK_EQ_INT(ntl_perf_raw_get(pa, proc, 1, 1, &r0, &err), 0);
    {
        const struct ntl_perf_object *proc_b = ntl_perf_block_find_object(pb, 230);
        CHECK(proc_b != NULL);
        if (proc_b) {
            CHECK_EQ_INT(ntl_perf_raw_get(pb, proc_b, 1, 1, &r1, &err), 0);
            CHECK_EQ_INT(ntl_perf_value_compute(&r1, &r0, &v), NTL_PERF_VALUE_OK);
            CHECK_NEAR(v, 5.0, 1e-9);
        }
    }
out:
    ntl_perf_block_free(pa);
    ntl_perf_block_free(pb);
    ntl_buf_free(&a);
    ntl_buf_free(&b);
}

static void test_errors(void)
{
    struct ntl_buf buf;
    struct ntl_error err;
    struct ntl_perf_builder b;
    struct ntl_perf_build_header h = {0};
    struct ntl_perf_build_counter bad = {2, 3, 0, 100, NTL_PERF_COUNTER_RAWCOUNT, 6};
    struct ntl_perf_build_object o = {230, 231, 100, 0, true, 0, 0, 0, proc_defs, 4};
    struct ntl_perf_build_object obad = {2, 3, 100, 0, false, 0, 0, 0, &bad, 1};
    struct ntl_perf_build_instance in = {"x", 0, 0, -1};
    uint64_t v[4] = {0};
    int rc = 0;

    /* A 4 KiB cap: the writer stops with NTL_ERR_LIMIT, it never grows past. */
    ntl_buf_init(&buf, 4096);
    CHECK_EQ_INT(ntl_perf_build_begin(&b, &buf, &h, &err), 0);
    CHECK_EQ_INT(ntl_perf_build_object(&b, &o, &err), 0);
    for (int i = 0; i < 1000 && rc == 0; i++)
        rc = ntl_perf_build_instance(&b, &in, v, &err);
    CHECK_EQ_INT(rc, NTL_ERR_LIMIT);
    CHECK(buf.len <= 4096);
    /* The instances that fitted still make a valid block. */
    CHECK_EQ_INT(ntl_perf_build_end_object(&b, &err), 0);
    CHECK(ntl_perf_build_finish(&b, &err) > 0);
    {
        struct ntl_perf_block *pb = NULL;
        CHECK_EQ_INT(ntl_perf_block_parse(buf.data, buf.len, &pb, &err), 0);
        CHECK(pb && pb->nobjects == 1 && pb->objects[0].ninstances > 10);
        ntl_perf_block_free(pb);
    }
    ntl_buf_free(&buf);

    ntl_buf_init(&buf, 0);
    CHECK_EQ_INT(ntl_perf_build_begin(&b, &buf, &h, &err), 0);
    CHECK_EQ_INT(ntl_perf_build_object(&b, &obad, &err), NTL_ERR_ARGUMENT);
    CHECK_EQ_INT(ntl_perf_build_counters(&b, v, &err), NTL_ERR_ARGUMENT); /* no object open */
    CHECK_EQ_INT(ntl_perf_build_object(&b, &o, &err), 0);
    CHECK_EQ_INT(ntl_perf_build_counters(&b, v, &err), NTL_ERR_ARGUMENT); /* has instances */
    CHECK_EQ_INT(ntl_perf_build_finish(&b, &err), NTL_ERR_ARGUMENT);      /* object open */
    {   /* Names are bounded: 1024 UTF-16 units pass, 1025 do not. */
        static char name[1026];
        memset(name, 'a', 1024);
        in.name = name;
        CHECK_EQ_INT(ntl_perf_build_instance(&b, &in, v, &err), 0);
        name[1024] = 'a';
        CHECK_EQ_INT(ntl_perf_build_instance(&b, &in, v, &err), NTL_ERR_ARGUMENT);
        memcpy(name + 1020, "\xc3\xa9", 3); /* non-ASCII: 1021 units */
        CHECK_EQ_INT(ntl_perf_build_instance(&b, &in, v, &err), 0);
    }
    CHECK_EQ_INT(ntl_perf_build_end_object(&b, &err), 0);
    /* A rejected instance leaves no trace. */
    CHECK(ntl_perf_build_finish(&b, &err) > 0);
    {
        struct ntl_perf_block *pb = NULL;
        CHECK_EQ_INT(ntl_perf_block_parse(buf.data, buf.len, &pb, &err), 0);
        if (pb) {
            CHECK_EQ_U64(pb->nobjects, 1);
            CHECK_EQ_U64(pb->objects[0].ninstances, 2);
            if (pb->objects[0].ninstances == 2) {
                CHECK_EQ_U64(strlen(pb->objects[0].instances[0].name), 1024);
                CHECK_EQ_STR(pb->objects[0].instances[1].name + 1019, "a\xc3\xa9");
            }
            CHECK_EQ_STR(pb->system_name, "");
        }
        ntl_perf_block_free(pb);
    }
    ntl_buf_free(&buf);
}

static void test_titles(void)
{
    static const struct ntl_perf_title names[] = {{2, "System"}, {230, "Process"}, {784, "ID Process"}};
    static const struct ntl_perf_title help[] = {{3, "Système"}, {231, "Processes"}};
    struct ntl_buf buf;
    struct ntl_error err;
    struct ntl_perf_titles *t = ntl_perf_titles_new();
    uint32_t idx = 0;

    ntl_buf_init(&buf, 0);
    CHECK_EQ_INT(ntl_perf_build_titles(&buf, names, 3, 1847, &err), 0);
    /* "1\0" "1847\0" "2\0" ... ends with an empty string. */
    CHECK(buf.len > 4 && !memcmp(buf.data, "1\0\0\0001\0008\0004\0007\0\0\0", 14));
    CHECK_EQ_U64(ntl_le16(buf.data + buf.len - 2), 0);
    CHECK_EQ_U64(ntl_le16(buf.data + buf.len - 4), 0);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ_INT(ntl_perf_titles_add(t, false, buf.data, buf.len, &err), 0);
    CHECK_EQ_U64(ntl_perf_titles_last_index(t), 1847);
    CHECK_EQ_STR(ntl_perf_titles_name(t, 230), "Process");
    CHECK_EQ_INT(ntl_perf_titles_find(t, "id process", &idx), 0);
    CHECK_EQ_U64(idx, 784);
    buf.len = 0;
    CHECK_EQ_INT(ntl_perf_build_titles(&buf, help, 2, 0, &err), 0);
    CHECK(!memcmp(buf.data, "3\0\0\0", 4));
    CHECK_EQ_INT(ntl_perf_titles_add(t, true, buf.data, buf.len, &err), 0);
    CHECK_EQ_STR(ntl_perf_titles_help(t, 3), "Système");
    ntl_perf_titles_free(t);
    ntl_buf_free(&buf);
}

static void test_systemtime(void)
{
    uint16_t st[8];
    ntl_perf_build_systemtime(st, 0, 0);
    CHECK(st[0] == 1970 && st[1] == 1 && st[2] == 4 && st[3] == 1 && st[4] == 0);
    ntl_perf_build_systemtime(st, 951782400 + 86399, 999); /* 2000-02-29 23:59:59.999, Tuesday */
    CHECK(st[0] == 2000 && st[1] == 2 && st[2] == 2 && st[3] == 29 && st[4] == 23 && st[5] == 59 &&
          st[6] == 59 && st[7] == 999);
    ntl_perf_build_systemtime(st, -1, 0); /* 1969-12-31 23:59:59, Wednesday */
    CHECK(st[0] == 1969 && st[1] == 12 && st[2] == 3 && st[3] == 31 && st[6] == 59);
}

int main(void)
{
    test_layout();
    test_round_trip();
    test_errors();
    test_titles();
    test_systemtime();
    return check_exit();
}
