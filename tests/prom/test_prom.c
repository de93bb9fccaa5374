/* The metric writer (ntlens/prom.h) on blocks built with ntlens/perf_build.h:
 * escaping, the generic mapping of each raw type, windows_exporter's names,
 * and hostile names and instances. With an argument it also writes both
 * pages of the test block to that file, for promtool (promtool_check.py). */
#include <math.h>

#include "check.h"
#include "ntlens/perf_build.h"
#include "ntlens/perf_value.h"
#include "ntlens/prom.h"

enum { OBJ_ODD = 5000, C_FRAC = 5002, C_AVG = 5004, C_UP = 5006, C_DUP1 = 5008, C_DUP2 = 5010 };

static const struct ntl_perf_build_counter proc_counters[] = {
    {784, 785, 0, 100, NTL_PERF_COUNTER_RAWCOUNT, 4},
    {6, 7, 0, 100, NTL_PERF_100NSEC_TIMER, 8},
    {142, 143, 0, 100, NTL_PERF_100NSEC_TIMER, 8},
    {144, 145, 0, 100, NTL_PERF_100NSEC_TIMER, 8},
    {180, 181, 0, 100, NTL_PERF_COUNTER_LARGE_RAWCOUNT, 8},
    {28, 29, 0, 100, NTL_PERF_COUNTER_COUNTER, 4},
};
static const struct ntl_perf_build_counter mem_counters[] = {
    {1380, 1381, 0, 100, NTL_PERF_COUNTER_RAWCOUNT, 4},
    {24, 25, 0, 100, NTL_PERF_COUNTER_LARGE_RAWCOUNT, 8},
    {26, 27, 0, 100, NTL_PERF_COUNTER_LARGE_RAWCOUNT, 8},
    {30, 31, 0, 100, NTL_PERF_COUNTER_LARGE_RAWCOUNT, 8},
};
static const struct ntl_perf_build_counter odd_counters[] = {
    {C_FRAC, 0, 0, 100, NTL_PERF_RAW_FRACTION, 4},
    {C_FRAC + 1, 0, 0, 100, NTL_PERF_RAW_BASE, 4},
    {C_AVG, 0, 0, 100, NTL_PERF_AVERAGE_TIMER, 4},
    {C_AVG + 1, 0, 0, 100, NTL_PERF_AVERAGE_BASE, 4},
    {C_UP, 0, 0, 100, NTL_PERF_ELAPSED_TIME, 8},
    {C_DUP1, 0, 0, 100, NTL_PERF_COUNTER_RAWCOUNT, 4},
    {C_DUP2, 0, 0, 100, NTL_PERF_COUNTER_RAWCOUNT, 4},
    {4242, 0, 0, 100, NTL_PERF_COUNTER_TEXT, 4},
    {5020, 0, 0, 400, NTL_PERF_COUNTER_RAWCOUNT, 4},
};

static void build(struct ntl_buf *raw)
{
    struct ntl_perf_builder b;
    struct ntl_error err;
    struct ntl_perf_build_header h = {.system_time = {2024, 2, 4, 29, 23, 59, 58, 500},
                                      .perf_time = 1000, .perf_freq = 1000,
                                      .perf_time_100ns = 20 * 10000000LL, .system_name = "HOST"};
    struct ntl_perf_build_object proc = {230, 231, 100, -1, true, 0, 0, 0, proc_counters, 6};
    struct ntl_perf_build_object mem = {4, 5, 100, -1, false, 0, 0, 0, mem_counters, 4};
    struct ntl_perf_build_object odd = {OBJ_ODD, 0, 100, -1, true, 0, 50 * 10000000LL, 10000000,
                                        odd_counters, 9};
    const struct {
        const char *name;
        uint64_t v[6];
    } procs[] = {
        {"svchost", {10, 30000000, 20000000, 10000000, 4096, 7}},
        {"svchost", {20, 5000000, 5000000, 0, 8192, 1}},
        {"evil\"} x{\n\\", {30, 0, 0, 0, 1, 0}},
        {"_Total", {0, 35000000, 25000000, 10000000, 12289, 8}},
    };
    CHECK_EQ_INT(ntl_perf_build_begin(&b, raw, &h, &err), 0);
    CHECK_EQ_INT(ntl_perf_build_object(&b, &proc, &err), 0);
    for (size_t i = 0; i < 4; i++) {
        struct ntl_perf_build_instance in = {procs[i].name, 0, 0, NTL_PERF_BUILD_NO_UNIQUE_ID};
        CHECK_EQ_INT(ntl_perf_build_instance(&b, &in, procs[i].v, &err), 0);
    }
    CHECK_EQ_INT(ntl_perf_build_end_object(&b, &err), 0);
    CHECK_EQ_INT(ntl_perf_build_object(&b, &mem, &err), 0);
    CHECK_EQ_INT(ntl_perf_build_counters(&b, (const uint64_t[]){3, 5000, 600, 1000}, &err), 0);
    CHECK_EQ_INT(ntl_perf_build_end_object(&b, &err), 0);
    CHECK_EQ_INT(ntl_perf_build_object(&b, &odd, &err), 0);
    const uint64_t ov[] = {1, 4, 3000, 6, 20 * 10000000LL, 11, 12, 0, 13};
    struct ntl_perf_build_instance a = {"a", 0, 0, NTL_PERF_BUILD_NO_UNIQUE_ID};
    CHECK_EQ_INT(ntl_perf_build_instance(&b, &a, ov, &err), 0);
    CHECK_EQ_INT(ntl_perf_build_instance(&b, &a, ov, &err), 0);
    CHECK_EQ_INT(ntl_perf_build_end_object(&b, &err), 0);
    CHECK(ntl_perf_build_finish(&b, &err) > 0);
}

static struct ntl_perf_titles *titles(void)
{
    struct ntl_perf_titles *t = ntl_perf_titles_new();
    CHECK(t && ntl_perf_titles_add_standard(t) == 0);
    ntl_perf_titles_set(t, false, OBJ_ODD, "Odd Things");
    ntl_perf_titles_set(t, false, C_FRAC, "% Free Space");
    ntl_perf_titles_set(t, false, C_AVG, "Avg. Disk sec/Read");
    ntl_perf_titles_set(t, false, C_UP, "Up Time");
    ntl_perf_titles_set(t, false, C_DUP1, "Same Name");
    ntl_perf_titles_set(t, false, C_DUP2, "Same-Name!");
    ntl_perf_titles_set(t, false, 5020, "Wizard Only");
    return t;
}

static bool has(const struct ntl_buf *b, const char *line)
{
    return strstr((const char *)b->data, line) != NULL;
}

static size_t count(const struct ntl_buf *b, const char *s)
{
    size_t n = 0;
    for (const char *p = (const char *)b->data; (p = strstr(p, s)) != NULL; p++)
        n++;
    return n;
}

static void test_text(void)
{
    struct ntl_buf b;
    struct ntl_error err;
    char s[64];
    ntl_buf_init(&b, 0);
    struct ntl_prom_label l[] = {{"a", "q\"b\\c\nd"}, {"b", ""}};
    CHECK_EQ_INT(ntl_prom_family(&b, "m_total", "help \\ with\nnewline \"q\"", NTL_PROM_COUNTER,
                                 &err), 0);
    CHECK_EQ_INT(ntl_prom_sample(&b, "m_total", l, 2, 1.5, &err), 0);
    CHECK_EQ_INT(ntl_prom_sample(&b, "m_total", NULL, 0, 0.1, &err), 0);
    CHECK_EQ_INT(ntl_prom_sample(&b, "m_total", NULL, 0, NAN, &err), 0);
    CHECK_EQ_INT(ntl_prom_sample(&b, "m_total", NULL, 0, -INFINITY, &err), 0);
    ntl_buf_append(&b, "", 1);
    CHECK_EQ_STR((const char *)b.data,
                 "# HELP m_total help \\\\ with\\nnewline \"q\"\n# TYPE m_total counter\n"
                 "m_total{a=\"q\\\"b\\\\c\\nd\",b=\"\"} 1.5\nm_total 0.1\nm_total NaN\nm_total -Inf\n");
    CHECK_EQ_INT(ntl_prom_sample(&b, "1bad", NULL, 0, 1, &err), NTL_ERR_ARGUMENT);
    CHECK_EQ_INT(ntl_prom_family(&b, "a-b", NULL, NTL_PROM_GAUGE, &err), NTL_ERR_ARGUMENT);
    struct ntl_prom_label bad[] = {{"__name__", "x"}};
    CHECK_EQ_INT(ntl_prom_sample(&b, "ok", bad, 1, 1, &err), NTL_ERR_ARGUMENT);
    struct ntl_prom_label colon[] = {{"a:b", "x"}};
    CHECK_EQ_INT(ntl_prom_sample(&b, "ok:sub", colon, 1, 1, &err), NTL_ERR_ARGUMENT);
    CHECK_EQ_U64(ntl_prom_sanitize("% Disk Read Time", s, sizeof s), 14);
    CHECK_EQ_STR(s, "disk_read_time");
    CHECK_EQ_U64(ntl_prom_sanitize("Free & Zero Page List Bytes", s, 8), 25);
    CHECK_EQ_STR(s, "free_ze");
    CHECK_EQ_U64(ntl_prom_sanitize("\xc3\xa9t\xc3\xa9 /", s, sizeof s), 1);
    CHECK_EQ_STR(s, "t");
    ntl_buf_free(&b);
}

static void test_generic(const struct ntl_prom_page *pg)
{
    struct ntl_buf b;
    struct ntl_error err;
    ntl_buf_init(&b, 0);
    CHECK_EQ_INT(ntl_prom_write_generic(pg, NULL, &b, &err), 0);
    ntl_buf_append(&b, "", 1);
    CHECK(has(&b, "# TYPE windows_perf_process_processor_time_seconds_total counter\n"));
    CHECK(has(&b, "windows_perf_process_processor_time_seconds_total{job_host=\"h\","
                  "perf_instance=\"svchost#1\"} 0.5\n"));
    CHECK(has(&b, "windows_perf_process_page_faults_total{job_host=\"h\","
                  "perf_instance=\"svchost\"} 7\n"));
    CHECK(has(&b, "perf_instance=\"evil\\\"} x{\\n\\\\\"} 30\n"));
    CHECK(has(&b, "# TYPE windows_perf_memory_available_bytes gauge\n"
                  "windows_perf_memory_available_bytes{job_host=\"h\"} 3072\n"));
    CHECK(has(&b, "windows_perf_memory_available_bytes_24{job_host=\"h\"} 5000\n"));
    CHECK(has(&b, "windows_perf_odd_things_free_space_ratio{job_host=\"h\",perf_instance=\"a\"} "
                  "0.25\n"));
    CHECK(has(&b, "windows_perf_odd_things_avg_disk_read_seconds_total{job_host=\"h\","
                  "perf_instance=\"a\"} 3\n"));
    CHECK(has(&b, "windows_perf_odd_things_avg_disk_read_base_total{job_host=\"h\","
                  "perf_instance=\"a#1\"} 6\n"));
    CHECK(has(&b, "windows_perf_odd_things_up_time_seconds{job_host=\"h\",perf_instance=\"a\"} "
                  "30\n"));
    CHECK(has(&b, "windows_perf_odd_things_same_name{job_host=\"h\",perf_instance=\"a\"} 11\n"));
    CHECK(has(&b, "windows_perf_odd_things_same_name_5010{job_host=\"h\",perf_instance=\"a\"} "
                  "12\n"));
    CHECK(!has(&b, "4242"));
    CHECK(has(&b, "wizard_only"));
    CHECK_EQ_U64(count(&b, "# TYPE windows_perf_process_working_set "), 1);
    ntl_buf_free(&b);

    struct ntl_prom_generic opt = {.prefix = "x", .instance_label = "inst",
                                   .detail = NTL_PERF_DETAIL_NOVICE,
                                   .objects = (const uint32_t[]){OBJ_ODD}, .nobjects = 1};
    ntl_buf_init(&b, 0);
    CHECK_EQ_INT(ntl_prom_write_generic(pg, &opt, &b, &err), 0);
    ntl_buf_append(&b, "", 1);
    CHECK(has(&b, "x_odd_things_same_name{job_host=\"h\",inst=\"a\"} 11\n"));
    CHECK(!has(&b, "process"));
    CHECK(!has(&b, "wizard_only"));
    opt.prefix = "bad prefix";
    CHECK_EQ_INT(ntl_prom_write_generic(pg, &opt, &b, &err), NTL_ERR_ARGUMENT);
    ntl_buf_free(&b);

    ntl_buf_init(&b, 300);
    CHECK_EQ_INT(ntl_prom_write_generic(pg, NULL, &b, &err), NTL_ERR_LIMIT);
    CHECK(strstr(err.message, "300") != NULL);
    ntl_buf_free(&b);
}

static void test_windows(const struct ntl_prom_page *pg)
{
    struct ntl_buf b;
    struct ntl_error err;
    unsigned bit;
    ntl_buf_init(&b, 0);
    CHECK_EQ_INT(ntl_prom_write_windows(pg, NTL_PROM_ALL, &b, &err), 0);
    ntl_buf_append(&b, "", 1);
    CHECK(has(&b, "# TYPE windows_process_cpu_time_total counter\n"));
    CHECK_EQ_U64(count(&b, "# TYPE windows_process_cpu_time_total"), 1);
    CHECK(has(&b, "windows_process_cpu_time_total{job_host=\"h\",process=\"svchost\","
                  "process_id=\"10\",mode=\"privileged\"} 1\n"));
    CHECK(has(&b, "windows_process_cpu_time_total{job_host=\"h\",process=\"svchost\","
                  "process_id=\"20\",mode=\"user\"} 0.5\n"));
    CHECK(has(&b, "windows_process_working_set_bytes{job_host=\"h\",process=\"svchost\","
                  "process_id=\"20\"} 8192\n"));
    CHECK(has(&b, "windows_process_page_faults_total{job_host=\"h\",process=\"evil\\\"} "
                  "x{\\n\\\\\",process_id=\"30\"} 0\n"));
    CHECK(has(&b, "windows_memory_available_bytes{job_host=\"h\"} 5000\n"));
    CHECK(!has(&b, "_Total"));
    CHECK(!has(&b, "windows_cpu"));
    ntl_buf_free(&b);
    ntl_buf_init(&b, 0);
    CHECK_EQ_INT(ntl_prom_write_windows(pg, NTL_PROM_MEMORY, &b, &err), 0);
    ntl_buf_append(&b, "", 1);
    CHECK(!has(&b, "windows_process"));
    ntl_buf_free(&b);
    CHECK_EQ_INT(ntl_prom_collector_parse("logical_disk", &bit), 0);
    CHECK_EQ_INT((int)bit, NTL_PROM_LOGICAL_DISK);
    CHECK_EQ_INT(ntl_prom_collector_parse("disk", &bit), NTL_ERR_NOT_FOUND);
    CHECK_EQ_STR(ntl_prom_collector_name(NTL_PROM_NET), "net");
    CHECK(ntl_prom_collector_name(3) == NULL);
}

/* The os collector writes what the facts and the block give, no more. */
static void test_os(struct ntl_prom_page pg)
{
    struct ntl_prom_os_facts f = {.product = "Windows 10 Pro", .major = "10", .minor = "0",
                                  .build = "22631", .hostname = "pc", .domain = "corp",
                                  .timezone = "W. Europe \"Standard\"\n", .install_time = "1672531200"};
    struct ntl_buf b;
    struct ntl_error err;
    pg.os = &f;
    ntl_buf_init(&b, 0);
    CHECK_EQ_INT(ntl_prom_write_windows(&pg, NTL_PROM_OS, &b, &err), 0);
    ntl_buf_append(&b, "", 1);
    CHECK(has(&b, "windows_os_info{job_host=\"h\",product=\"Windows 11 Pro\","
                  "version=\"10.0.22631\",major_version=\"10\",minor_version=\"0\","
                  "build_number=\"22631\",revision=\"0\",installation_type=\"\"} 1\n"));
    CHECK(has(&b, "windows_os_hostname{job_host=\"h\",domain=\"corp\",fqdn=\"pc.corp\","
                  "hostname=\"pc\"} 1\n"));
    CHECK(has(&b, "windows_os_timezone{job_host=\"h\",timezone=\"W. Europe \\\"Standard\\\"\\n\"} 1\n"));
    CHECK(has(&b, "windows_os_install_time_timestamp_seconds{job_host=\"h\"} 1672531200\n"));
    /* 2024-02-29 23:59:58 UTC (a leap day) */
    CHECK(has(&b, "windows_os_time{job_host=\"h\"} 1709251198\n"));
    CHECK(has(&b, "windows_os_physical_memory_free_bytes{job_host=\"h\"} 5000\n"));
    CHECK(has(&b, "windows_os_virtual_memory_bytes{job_host=\"h\"} 1000\n"));
    CHECK(has(&b, "windows_os_virtual_memory_free_bytes{job_host=\"h\"} 400\n"));
    CHECK(!has(&b, "windows_os_processes")); /* the block has no System object */
    CHECK(!has(&b, "windows_memory"));
    ntl_buf_free(&b);

    /* no build number: no windows_os_info rather than one with a hole */
    f.build = NULL;
    f.hostname = NULL;
    ntl_buf_init(&b, 0);
    CHECK_EQ_INT(ntl_prom_write_windows(&pg, NTL_PROM_OS, &b, &err), 0);
    ntl_buf_append(&b, "", 1);
    CHECK(!has(&b, "windows_os_info"));
    CHECK(!has(&b, "windows_os_hostname"));
    CHECK(has(&b, "windows_os_timezone{"));
    ntl_buf_free(&b);
    CHECK_EQ_INT(ntl_prom_collector_parse("os", &(unsigned){0}), 0);
}

static bool keep_svchost(void *arg, const struct ntl_perf_object *o,
                         const struct ntl_perf_instance *in)
{
    (void)arg;
    return o->name_index != 230 || strcmp(in->name, "svchost") == 0;
}

static void test_keep(struct ntl_prom_page pg)
{
    struct ntl_buf b;
    struct ntl_error err;
    pg.keep = keep_svchost;
    ntl_buf_init(&b, 0);
    CHECK_EQ_INT(ntl_prom_write_windows(&pg, NTL_PROM_ALL, &b, &err), 0);
    CHECK_EQ_INT(ntl_prom_write_generic(&pg, NULL, &b, &err), 0);
    ntl_buf_append(&b, "", 1);
    CHECK(has(&b, "process_id=\"20\"} 8192\n"));
    CHECK(!has(&b, "evil"));
    CHECK(has(&b, "perf_instance=\"svchost#1\"} 20\n"));
    CHECK(has(&b, "windows_perf_odd_things_same_name{job_host=\"h\",perf_instance=\"a\"} 11\n"));
    ntl_buf_free(&b);
}

/* A Process object sent without instances (fuzz finding prom_writer: the
 * writer read instance 0 of none): written without series, not a crash. */
static void test_no_instances(const struct ntl_perf_titles *t)
{
    struct ntl_buf raw, b;
    struct ntl_perf_builder pb;
    struct ntl_perf_block *blk;
    struct ntl_error err;
    struct ntl_perf_build_header h = {.perf_freq = 1000, .system_name = "HOST"};
    struct ntl_perf_build_object proc = {230, 231, 100, -1, false, 0, 0, 0, proc_counters, 6};
    ntl_buf_init(&raw, 0);
    CHECK_EQ_INT(ntl_perf_build_begin(&pb, &raw, &h, &err), 0);
    CHECK_EQ_INT(ntl_perf_build_object(&pb, &proc, &err), 0);
    CHECK_EQ_INT(ntl_perf_build_counters(&pb, (const uint64_t[]){10, 1, 2, 3, 4, 5}, &err), 0);
    CHECK_EQ_INT(ntl_perf_build_end_object(&pb, &err), 0);
    CHECK(ntl_perf_build_finish(&pb, &err) > 0);
    CHECK_EQ_INT(ntl_perf_block_parse(raw.data, raw.len, &blk, &err), 0);
    struct ntl_prom_page pg = {.block = blk, .titles = t};
    ntl_buf_init(&b, 0);
    CHECK_EQ_INT(ntl_prom_write_windows(&pg, NTL_PROM_PROCESS, &b, &err), 0);
    ntl_buf_append(&b, "", 1);
    CHECK(!has(&b, "windows_process_cpu_time_total{"));
    ntl_buf_free(&b);
    ntl_perf_block_free(blk);
    ntl_buf_free(&raw);
}

static void write_pages(const struct ntl_prom_page *pg, const char *path)
{
    struct ntl_buf b;
    struct ntl_error err;
    ntl_buf_init(&b, 0);
    CHECK_EQ_INT(ntl_prom_write_windows(pg, NTL_PROM_ALL, &b, &err), 0);
    CHECK_EQ_INT(ntl_prom_write_generic(pg, NULL, &b, &err), 0);
    CHECK_EQ_INT(ntl_file_write(path, b.data, b.len, &err), 0);
    ntl_buf_free(&b);
}

int main(int argc, char **argv)
{
    struct ntl_buf raw;
    struct ntl_perf_block *blk = NULL;
    struct ntl_error err;
    ntl_buf_init(&raw, 0);
    build(&raw);
    CHECK_EQ_INT(ntl_perf_block_parse(raw.data, raw.len, &blk, &err), 0);
    struct ntl_perf_titles *t = titles();
    struct ntl_prom_label host = {"job_host", "h"};
    /* facts with characters the exposition format must escape */
    struct ntl_prom_os_facts os = {.product = "Windows Server\n2022 \"DC\"", .major = "10",
                                   .minor = "0", .build = "20348", .revision = "2700",
                                   .installation_type = "Server\\Core", .hostname = "h"};
    struct ntl_prom_page pg = {.block = blk, .titles = t, .labels = &host, .nlabels = 1,
                               .os = &os};
    test_text();
    if (blk) {
        test_generic(&pg);
        test_windows(&pg);
        test_keep(pg);
        test_os(pg);
        test_no_instances(t);
        if (argc > 1)
            write_pages(&pg, argv[1]);
    }
    ntl_perf_block_free(blk);
    ntl_perf_titles_free(t);
    ntl_buf_free(&raw);
    return check_exit();
}
