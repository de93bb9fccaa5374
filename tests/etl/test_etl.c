/* The .etl reader on the shared real traces (known facts) and on traces the
 * generator builds byte by byte: every header kind, 32- and 64-bit, each
 * compression format, sorted mode, time conversion, image and IPT events,
 * and broken input. Runs natively and under Wine. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/etl/ahead.h"
#include "../../lib/etl/etl-internal.h"
#include "check.h"
#include "etl_gen.h"
#include "ntlens/buf.h"
#include "ntlens/compress.h"
#include "ntlens/etl.h"
#include "ntlens/etl_images.h"
#include "ntlens/utf16.h"
#include "ntlens/etl_ipt.h"
#include "ntlens/reader.h"

#define IPT_GUID "ff1fd2fd-6008-42bb-9e75-00a20051f3be"
#define PROV_GUID "3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c"
#define START_FT 132500000000000000ull

struct counts {
    int rc;
    uint64_t events, by_kind[NTL_ETL_KIND_COUNT], errors;
    struct ntl_etl_stats st;
};

/* Reads a whole trace, skipping bad buffers, counting. */
static struct counts read_all(struct ntl_etl *t)
{
    struct counts c;
    struct ntl_etl_event ev;
    struct ntl_error err = {0};
    int rc;
    memset(&c, 0, sizeof c);
    while ((rc = ntl_etl_next(t, &ev, &err)) != 0) {
        if (rc < 0) {
            c.errors++;
            if (!ntl_etl_can_continue(t)) {
                c.rc = rc;
                break;
            }
            continue;
        }
        c.events++;
        c.by_kind[ev.kind]++;
    }
    ntl_etl_get_stats(t, &c.st);
    return c;
}

/* ---- the shared traces ---- */

struct known {
    const char *file, *logger;
    uint64_t buffers, compressed, events;
    uint64_t kinds[NTL_ETL_KIND_COUNT]; /* system compact perfinfo classic instance event message */
};

static const struct known known[] = {
    {"etl/ShutdownPerfDiagLogger.etl", "PerfDiag Logger", 49, 0, 17078, {8433, 0, 8645, 0, 0, 0, 0}},
    {"etl/lxcore_kernel.etl", "lxcore_kernel", 3, 0, 4, {2, 0, 0, 0, 0, 2, 0}},
    {"etl/net.4.5.2.x64.etl", "Relogger", 360, 359, 179474, {3191, 0, 100157, 7983, 0, 68143, 0}},
    {"etl/SelfDescribingSingleEvent.etl", "Relogger", 3, 2, 23, {4, 0, 0, 18, 0, 1, 0}},
    {"etl/primitive-types.etl", "solar_system", 2, 0, 7, {2, 0, 0, 0, 0, 5, 0}},
    {"etl/PerfViewData-gcevents.etl", "PerfViewSession", 5, 0, 71, {2, 0, 0, 0, 0, 69, 0}},
};

static void test_shared(void)
{
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const struct known *k = &known[i];
        struct ntl_etl *t;
        struct ntl_error err = {0};
        int rc = ntl_etl_open_file(check_data_path(k->file), NULL, &t, &err);
        CHECK_EQ_INT(rc, 0);
        if (rc < 0) {
            fprintf(stderr, "%s: %s\n", k->file, err.message);
            continue;
        }
        CHECK_EQ_STR(ntl_etl_logfile(t)->logger_name, k->logger);
        CHECK_EQ_INT(ntl_etl_logfile(t)->pointer_size, 8);
        CHECK_EQ_U64(ntl_etl_logfile(t)->perf_freq, 10000000);
        struct counts c = read_all(t);
        CHECK_EQ_INT(c.rc, 0);
        CHECK_EQ_U64(c.errors, 0);
        CHECK_EQ_U64(c.st.buffers, k->buffers);
        CHECK_EQ_U64(c.st.buffers_compressed, k->compressed);
        CHECK_EQ_U64(c.events, k->events);
        for (int j = 0; j < NTL_ETL_KIND_COUNT; j++)
            CHECK_EQ_U64(c.by_kind[j], k->kinds[j]);
        CHECK_EQ_U64(c.st.events, c.events);
        CHECK_EQ_U64(c.st.buffers_bad, 0);
        CHECK_EQ_U64(ntl_etl_input_done(t), ntl_etl_input_size(t));
        /* The clock conversion against the header's own EndTime: in traces
         * written by their session (not relogged), the last event falls
         * shortly before the session ended, hours after it started for the
         * PerfDiag trace. */
        if (strcmp(k->logger, "Relogger")) {
            uint64_t first = ntl_etl_time_to_filetime(t, c.st.first_timestamp);
            uint64_t last = ntl_etl_time_to_filetime(t, c.st.last_timestamp);
            uint64_t end = ntl_etl_logfile(t)->end_time;
            CHECK_EQ_U64(first, ntl_etl_logfile(t)->start_time);
            CHECK(last <= end && end - last < 100000000u); /* 10 s */
        }
        ntl_etl_close(t);
    }
}

static void test_shared_images(void)
{
    struct ntl_etl_image *imgs = NULL;
    size_t n = 0, nt = 0, dcstart = 0, kernel = 0;
    struct ntl_etl_salvage sv;
    struct ntl_error err = {0};
    int rc = ntl_etl_images_load(check_data_path("etl/ShutdownPerfDiagLogger.etl"), false, &imgs, &n,
                                 &sv, &err);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_U64(sv.bad_buffers + sv.bad_events, 0);
    CHECK(!sv.truncated);
    CHECK_EQ_U64(n, 13753);
    for (size_t i = 0; i < n; i++) {
        dcstart += imgs[i].kind == NTL_ETL_IMAGE_DCSTART;
        kernel += imgs[i].kernel;
        if (strstr(imgs[i].name, "ntoskrnl.exe") && imgs[i].kind == NTL_ETL_IMAGE_DCSTART) {
            nt++;
            CHECK_EQ_U64(imgs[i].base, 0xfffff802424ab000ull);
            CHECK_EQ_U64(imgs[i].size, 0xab6000);
            CHECK_EQ_U64(imgs[i].pid, 0);
            CHECK_EQ_U64(imgs[i].checksum, 0x00980591);
            CHECK_EQ_U64(imgs[i].time_date_stamp, 0x4269a790);
            CHECK(imgs[i].kernel);
            CHECK_EQ_STR(imgs[i].name, "\\SystemRoot\\system32\\ntoskrnl.exe");
        }
    }
    CHECK_EQ_U64(nt, 1);
    CHECK_EQ_U64(dcstart, 6745);
    CHECK(kernel > 100);
    const struct ntl_etl_image *m = ntl_etl_images_find(imgs, n, 0xfffff802424ab000ull + 0x1234);
    CHECK(m && strstr(m->name, "ntoskrnl.exe"));
    free(imgs);

    /* The compressed trace: every image event comes through decompression. */
    rc = ntl_etl_images_load(check_data_path("etl/net.4.5.2.x64.etl"), false, &imgs, &n, &sv, &err);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_U64(n, 3596);
    nt = 0;
    for (size_t i = 0; i < n; i++)
        nt += strstr(imgs[i].name, "ntoskrnl.exe") != NULL;
    CHECK(nt >= 1);
    free(imgs);
}

/* Sorted mode returns every event, in non-decreasing time. */
static void test_shared_sorted(void)
{
    struct ntl_etl_options opt = {.sorted = true};
    struct ntl_etl *t;
    struct ntl_error err = {0};
    struct ntl_etl_event ev;
    uint64_t n = 0, last = 0, disorder = 0;
    int rc = ntl_etl_open_file(check_data_path("etl/net.4.5.2.x64.etl"), &opt, &t, &err);
    CHECK_EQ_INT(rc, 0);
    if (rc < 0)
        return;
    while ((rc = ntl_etl_next(t, &ev, &err)) > 0) {
        n++;
        disorder += ev.timestamp < last;
        last = ev.timestamp;
    }
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_U64(n, 179474);
    CHECK_EQ_U64(disorder, 0);
    ntl_etl_close(t);
}

/* Opens the shared trace rel sorted, from its file or (mem) a copy in memory. */
static struct ntl_etl *open_sorted(const char *rel, const struct ntl_buf *mem, bool reload)
{
    struct ntl_etl_options opt = {.sorted = true, .sorted_reload = reload};
    struct ntl_error err = {0};
    struct ntl_etl *t = NULL;
    int rc = mem ? ntl_etl_open_mem(mem->data, mem->len, &opt, &t, &err)
                 : ntl_etl_open_file(check_data_path(rel), &opt, &t, &err);
    CHECK_EQ_INT(rc, 0);
    return rc < 0 ? NULL : t;
}

/* sorted_reload against the sorted mode that holds every buffer: the same
 * events with the same bytes, on every shared trace (compressed or not),
 * from its file and from memory. */
static void test_shared_reload(void)
{
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        struct ntl_buf mem = {0};
        struct ntl_error err = {0};
        CHECK_EQ_INT(ntl_file_read(check_data_path(known[i].file), 64u << 20, &mem, &err), 0);
        for (int from_mem = 0; from_mem < 2; from_mem++) {
            struct ntl_etl *a = open_sorted(known[i].file, from_mem ? &mem : NULL, false);
            struct ntl_etl *b = open_sorted(known[i].file, from_mem ? &mem : NULL, true);
            struct ntl_etl_event ea, eb;
            uint64_t n = 0, differ = 0;
            int ra = 0, rb = 0;
            while (a && b && (ra = ntl_etl_next(a, &ea, &err)) > 0 &&
                   (rb = ntl_etl_next(b, &eb, &err)) > 0) {
                n++;
                differ += ea.timestamp != eb.timestamp || ea.offset != eb.offset ||
                          ea.buffer_pos != eb.buffer_pos || ea.size != eb.size ||
                          ea.payload_size != eb.payload_size || ea.ext_size != eb.ext_size ||
                          memcmp(ea.payload, eb.payload, ea.payload_size) ||
                          (ea.ext_size && memcmp(ea.ext, eb.ext, ea.ext_size)) ||
                          ntl_etl_current_buffer(a)->index != ntl_etl_current_buffer(b)->index;
            }
            CHECK_EQ_INT(ra, 0);
            CHECK_EQ_INT(b ? ntl_etl_next(b, &eb, &err) : -1, 0);
            CHECK_EQ_U64(n, known[i].events);
            CHECK_EQ_U64(differ, 0);
            ntl_etl_close(a);
            ntl_etl_close(b);
        }
        ntl_buf_free(&mem);
    }
}

/* ---- generated traces ---- */

static const uint8_t ext_items[] = {
    /* related activity id (type 1, 16 bytes, linkage set) */
    0, 0, 1, 0, 1, 0, 16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
    /* a 3-byte item (type 9), padded to 8, last */
    0, 0, 9, 0, 0, 0, 3, 0, 0xaa, 0xbb, 0xcc, 0, 0, 0, 0, 0,
};

static void build_all_kinds(struct gen *g, int ps, int compress)
{
    gen_init(g, 0x4000, ps, compress ? NTL_ETL_MODE_COMPRESSED : 0, 1000, 10000000, START_FT, 1,
             "Test Logger", "C:\\test.etl");
    g->compress = compress;
    bool is64 = ps == 8;
    uint8_t pay[40];
    for (int i = 0; i < 40; i++)
        pay[i] = (uint8_t)i;
    gen_next_buffer(g, 1);
    gen_system(g, false, is64, 2, 0x0501, 100, 200, 2000, NULL, 0, pay, 8);      /* Thread Start */
    gen_system(g, true, is64, 2, 0x0524, 101, 201, 3000, NULL, 0, pay, 12);      /* compact CSwitch */
    uint8_t ext[8 + 16];
    memset(ext, 0, sizeof ext);
    ntl_put_le64(ext, 0x1122334455667788ull);                                   /* PEBS index */
    ntl_put_le64(ext + 8, 42);                                                   /* PMC 0 */
    ntl_put_le64(ext + 16, 43);                                                  /* PMC 1 */
    gen_perfinfo(g, is64, 0x8000 | 0x0200 | 2, 0x0f2e, 4000, ext, sizeof ext, pay, 16);
    gen_classic(g, false, is64, PROV_GUID, 1, 4, 3, 102, 202, 5000, pay, 20);
    gen_classic(g, true, is64, PROV_GUID, 2, 5, 4, 103, 203, 6000, pay, 4);
    gen_event(g, is64, PROV_GUID, 77, 9, 55, 0x8000000000000001ull, 104, 204, 7000, ext_items,
              sizeof ext_items, pay, 10);
    gen_message(g, 12, 105, 205, 8000, pay, 6);
    gen_finish(g);
}

static void test_all_kinds(int ps, int compress)
{
    struct gen g;
    build_all_kinds(&g, ps, compress);
    struct ntl_etl *t;
    struct ntl_error err = {0};
    struct ntl_etl_event ev;
    int rc = ntl_etl_open_mem(g.file.data, g.file.len, NULL, &t, &err);
    CHECK_EQ_INT(rc, 0);
    if (rc < 0) {
        fprintf(stderr, "open: %s\n", err.message);
        gen_free(&g);
        return;
    }
    const struct ntl_etl_logfile *lf = ntl_etl_logfile(t);
    CHECK_EQ_STR(lf->logger_name, "Test Logger");
    CHECK_EQ_STR(lf->log_file_name, "C:\\test.etl");
    CHECK_EQ_INT(lf->pointer_size, ps);
    CHECK_EQ_U64(lf->events_lost, 7);
    CHECK_EQ_U64(lf->buffers_lost, 3);
    CHECK_EQ_U64(lf->start_time, START_FT);
    CHECK_EQ_U64(lf->perf_freq, 10000000);
    CHECK_EQ_STR(lf->tz_standard_name, "Test Standard Time");
    CHECK_EQ_STR(lf->tz_daylight_name, "Test Daylight Time");
    CHECK_EQ_INT(lf->tz_bias, -60);
    CHECK_EQ_INT(lf->clock, NTL_ETL_CLOCK_QPC);

    /* header event */
    CHECK_EQ_INT(ntl_etl_next(t, &ev, &err), 1);
    CHECK_EQ_INT(ev.kind, NTL_ETL_KIND_SYSTEM);
    CHECK_EQ_U64(ev.hook_id, 0);
    CHECK_EQ_U64(ev.offset, 0x48);
    /* SYSTEM */
    CHECK_EQ_INT(ntl_etl_next(t, &ev, &err), 1);
    CHECK_EQ_INT(ev.kind, NTL_ETL_KIND_SYSTEM);
    CHECK_EQ_INT(ev.is64, ps == 8);
    CHECK_EQ_U64(ev.hook_id, 0x0501);
    CHECK_EQ_U64(ev.group, 5);
    CHECK_EQ_U64(ev.opcode, 1);
    CHECK_EQ_U64(ev.tid, 100);
    CHECK_EQ_U64(ev.pid, 200);
    CHECK_EQ_U64(ev.timestamp, 2000);
    CHECK_EQ_U64(ev.kernel_time, 11);
    CHECK_EQ_U64(ev.user_time, 22);
    CHECK_EQ_U64(ev.payload_size, 8);
    CHECK_EQ_U64(ev.cpu, 1);
    CHECK_EQ_U64(ev.buffer_index, 1);
    CHECK(ev.payload[7] == 7);
    CHECK_EQ_U64(ntl_etl_time_to_filetime(t, ev.timestamp), START_FT + 1000);
    /* COMPACT */
    CHECK_EQ_INT(ntl_etl_next(t, &ev, &err), 1);
    CHECK_EQ_INT(ev.kind, NTL_ETL_KIND_COMPACT);
    CHECK_EQ_U64(ev.hook_id, 0x0524);
    CHECK_EQ_U64(ev.pid, 201);
    CHECK_EQ_U64(ev.timestamp, 3000);
    CHECK_EQ_U64(ev.payload_size, 12);
    /* PERFINFO with PEBS and two PMCs */
    CHECK_EQ_INT(ntl_etl_next(t, &ev, &err), 1);
    CHECK_EQ_INT(ev.kind, NTL_ETL_KIND_PERFINFO);
    CHECK_EQ_U64(ev.hook_id, 0x0f2e);
    CHECK_EQ_U64(ev.pid, UINT32_MAX);
    CHECK_EQ_U64(ev.timestamp, 4000);
    CHECK(ev.has_pebs);
    CHECK_EQ_U64(ev.pebs_index, 0x1122334455667788ull);
    CHECK_EQ_U64(ev.pmc_count, 2);
    CHECK(ev.pmc && ntl_le64(ev.pmc + 8) == 43);
    CHECK_EQ_U64(ev.version, 2);
    CHECK_EQ_U64(ev.payload_size, 16);
    CHECK(ev.payload[0] == 0 && ev.payload[15] == 15);
    /* CLASSIC */
    char gbuf[40];
    CHECK_EQ_INT(ntl_etl_next(t, &ev, &err), 1);
    CHECK_EQ_INT(ev.kind, NTL_ETL_KIND_CLASSIC);
    CHECK_EQ_STR(ntl_guid_format(&ev.guid, gbuf, sizeof gbuf), PROV_GUID);
    CHECK_EQ_U64(ev.opcode, 1);
    CHECK_EQ_U64(ev.level, 4);
    CHECK_EQ_U64(ev.version, 3);
    CHECK_EQ_U64(ev.tid, 102);
    CHECK_EQ_U64(ev.pid, 202);
    CHECK_EQ_U64(ev.timestamp, 5000);
    CHECK_EQ_U64(ev.payload_size, 20);
    /* INSTANCE */
    CHECK_EQ_INT(ntl_etl_next(t, &ev, &err), 1);
    CHECK_EQ_INT(ev.kind, NTL_ETL_KIND_INSTANCE);
    CHECK_EQ_U64(ev.instance_id, 77);
    CHECK_EQ_U64(ev.parent_instance_id, 66);
    CHECK_EQ_STR(ntl_guid_format(&ev.parent_guid, gbuf, sizeof gbuf),
                 "01234567-89ab-cdef-0123-456789abcdef");
    CHECK_EQ_U64(ev.payload_size, 4);
    /* EVENT with extended items */
    CHECK_EQ_INT(ntl_etl_next(t, &ev, &err), 1);
    CHECK_EQ_INT(ev.kind, NTL_ETL_KIND_EVENT);
    CHECK_EQ_U64(ev.event_id, 77);
    CHECK_EQ_U64(ev.opcode, 9);
    CHECK_EQ_U64(ev.task, 55);
    CHECK_EQ_U64(ev.keyword, 0x8000000000000001ull);
    CHECK_EQ_U64(ev.pid, 204);
    CHECK_EQ_U64(ev.timestamp, 7000);
    CHECK_EQ_U64(ev.ext_size, sizeof ext_items);
    CHECK_EQ_U64(ev.payload_size, 10);
    CHECK(ev.payload[9] == 9);
    struct ntl_etl_ext_item it;
    size_t pos = 0;
    CHECK_EQ_INT(ntl_etl_ext_next(&ev, &pos, &it, &err), 1);
    CHECK_EQ_U64(it.type, 1);
    CHECK_EQ_U64(it.size, 16);
    CHECK(it.data[15] == 16);
    CHECK_EQ_INT(ntl_etl_ext_next(&ev, &pos, &it, &err), 1);
    CHECK_EQ_U64(it.type, 9);
    CHECK_EQ_U64(it.size, 3);
    CHECK(it.data[2] == 0xcc);
    CHECK_EQ_INT(ntl_etl_ext_next(&ev, &pos, &it, &err), 0);
    CHECK_EQ_INT(err.status, 0);
    /* An item that overruns the extended data is an error, with err set. */
    struct ntl_etl_event cut = ev;
    cut.ext_size = 20;
    pos = 0;
    CHECK_EQ_INT(ntl_etl_ext_next(&cut, &pos, &it, &err), NTL_ERR_FORMAT);
    CHECK_EQ_INT(err.status, NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, ev.offset);
    ntl_error_clear(&err);
    /* MESSAGE */
    CHECK_EQ_INT(ntl_etl_next(t, &ev, &err), 1);
    CHECK_EQ_INT(ev.kind, NTL_ETL_KIND_MESSAGE);
    CHECK_EQ_U64(ev.message_number, 12);
    CHECK_EQ_U64(ev.timestamp, 8000);
    CHECK_EQ_U64(ev.tid, 105);
    CHECK_EQ_U64(ev.pid, 205);
    CHECK_EQ_U64(ev.payload_size, 6);
    /* end */
    CHECK_EQ_INT(ntl_etl_next(t, &ev, &err), 0);
    struct ntl_etl_stats st;
    ntl_etl_get_stats(t, &st);
    CHECK_EQ_U64(st.events, 8);
    CHECK_EQ_U64(st.buffers, 2);
    CHECK_EQ_U64(st.buffers_compressed, compress ? 1 : 0);
    CHECK_EQ_U64(st.first_timestamp, 1000);
    CHECK_EQ_U64(st.last_timestamp, 8000);
    ntl_etl_close(t);
    gen_free(&g);
}

static void test_sorted(void)
{
    struct gen g;
    gen_init(&g, 0x2000, 8, 0, 100, 1000, START_FT, 1, "s", "s.etl");
    gen_next_buffer(&g, 0);
    for (uint64_t ts = 200; ts <= 1000; ts += 200)
        gen_system(&g, false, true, 2, 0x0524, 1, 1, ts, NULL, 0, NULL, 0);
    gen_next_buffer(&g, 1);
    for (uint64_t ts = 300; ts <= 900; ts += 200)
        gen_system(&g, false, true, 2, 0x0524, 2, 2, ts, NULL, 0, NULL, 0);
    gen_system(&g, false, true, 2, 0x0524, 3, 3, 1000, NULL, 0, NULL, 0); /* tie: after cpu 0's */
    gen_finish(&g);

    struct ntl_etl_options opt = {.sorted = true};
    struct ntl_etl *t;
    struct ntl_error err = {0};
    struct ntl_etl_event ev;
    CHECK_EQ_INT(ntl_etl_open_mem(g.file.data, g.file.len, &opt, &t, &err), 0);
    static const uint64_t want_ts[] = {100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1000};
    static const int want_cpu[] = {0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1};
    size_t n = 0;
    int rc;
    while ((rc = ntl_etl_next(t, &ev, &err)) > 0) {
        if (n < 11) {
            CHECK_EQ_U64(ev.timestamp, want_ts[n]);
            CHECK_EQ_INT(ev.cpu, want_cpu[n]);
            CHECK_EQ_INT(ntl_etl_current_buffer(t)->processor, want_cpu[n]);
        }
        n++;
    }
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_U64(n, 11);
    /* QPC at 1000 Hz: 1 tick = 10000 units of 100 ns after the header's 100. */
    CHECK_EQ_U64(ntl_etl_time_to_filetime(t, 1100), START_FT + 10000000);
    CHECK_EQ_U64(ntl_etl_time_to_filetime(t, 99), START_FT - 10000);
    ntl_etl_close(t);
    gen_free(&g);
}

static void test_clocks(void)
{
    struct gen g;
    struct ntl_etl *t;
    struct ntl_error err = {0};
    /* SystemTime clock: timestamps are FILETIMEs. */
    gen_init(&g, 0x1000, 8, 0, START_FT, 0, START_FT, 2, "c", "c.etl");
    gen_finish(&g);
    CHECK_EQ_INT(ntl_etl_open_mem(g.file.data, g.file.len, NULL, &t, &err), 0);
    CHECK_EQ_INT(ntl_etl_logfile(t)->clock, NTL_ETL_CLOCK_SYSTEM);
    CHECK_EQ_U64(ntl_etl_time_to_filetime(t, START_FT + 5), START_FT + 5);
    ntl_etl_close(t);
    gen_free(&g);
    /* CPU cycles at 2400 MHz: 2.4e9 cycles is one second. */
    gen_init(&g, 0x1000, 4, 0, 5000, 0, START_FT, 3, "c", "c.etl");
    gen_finish(&g);
    CHECK_EQ_INT(ntl_etl_open_mem(g.file.data, g.file.len, NULL, &t, &err), 0);
    CHECK_EQ_INT(ntl_etl_logfile(t)->clock, NTL_ETL_CLOCK_CPU_CYCLE);
    CHECK_EQ_INT(ntl_etl_logfile(t)->pointer_size, 4);
    CHECK_EQ_U64(ntl_etl_time_to_filetime(t, 5000 + 2400000000ull), START_FT + 10000000);
    ntl_etl_close(t);
    gen_free(&g);
    char buf[64];
    CHECK_EQ_STR(ntl_filetime_format(116444736000000000ull, buf, sizeof buf), "1970-01-01T00:00:00.0000000Z");
    CHECK_EQ_STR(ntl_filetime_format(132223104001234567ull, buf, sizeof buf), "2020-01-01T00:00:00.1234567Z");
    CHECK_EQ_STR(ntl_filetime_format(0, buf, sizeof buf), "1601-01-01T00:00:00.0000000Z");
}

static void test_images(void)
{
    struct gen g;
    gen_init(&g, 0x4000, 8, 0, 100, 10000000, START_FT, 1, "img", "img.etl");
    gen_image(&g, false, false, true, 3, 150, 0xfffff80000400000ull, 0x1000000, 0, 0xabcdef, 0x5f000000,
              0x140000000ull, "\\SystemRoot\\system32\\ntoskrnl.exe");
    gen_image(&g, true, false, false, 10, 160, 0x77000000, 0x20000, 1234, 0x1111, 0x2222, 0x77000000,
              "C:\\Windows\\SysWOW64\\kernel32.dll");
    gen_image(&g, false, true, true, 10, 170, 0x7ff600000000ull, 0x5000, 4321, 1, 2, 0x140000000ull,
              "C:\\app.exe");
    gen_image(&g, false, false, true, 2, 180, 0x7ff600000000ull, 0x5000, 4321, 1, 2, 0x140000000ull,
              "C:\\app.exe");
    gen_image(&g, false, false, true, 4, 190, 0xfffff80000400000ull, 0x1000000, 0, 0xabcdef, 0x5f000000,
              0x140000000ull, "\\SystemRoot\\system32\\ntoskrnl.exe");
    /* Process-group DCStart (opcode 3) is a process event, not an image. */
    gen_system(&g, false, true, 3, 0x0303, 1, 1, 200, NULL, 0, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 56);
    gen_finish(&g);

    struct ntl_etl *t;
    struct ntl_error err = {0};
    struct ntl_etl_event ev;
    struct ntl_etl_image img[8];
    size_t n = 0;
    CHECK_EQ_INT(ntl_etl_open_mem(g.file.data, g.file.len, NULL, &t, &err), 0);
    while (ntl_etl_next(t, &ev, &err) > 0) {
        int rc = ntl_etl_image_decode(t, &ev, &img[n < 7 ? n : 7], &err);
        CHECK(rc >= 0);
        n += rc > 0;
    }
    CHECK_EQ_U64(n, 5);
    CHECK_EQ_INT(img[0].kind, NTL_ETL_IMAGE_DCSTART);
    CHECK_EQ_U64(img[0].base, 0xfffff80000400000ull);
    CHECK_EQ_U64(img[0].size, 0x1000000);
    CHECK_EQ_U64(img[0].checksum, 0xabcdef);
    CHECK_EQ_U64(img[0].time_date_stamp, 0x5f000000);
    CHECK_EQ_U64(img[0].default_base, 0x140000000ull);
    CHECK(img[0].kernel);
    CHECK_EQ_STR(img[0].name, "\\SystemRoot\\system32\\ntoskrnl.exe");
    CHECK_EQ_U64(img[0].filetime, START_FT + 50);
    CHECK_EQ_INT(img[1].kind, NTL_ETL_IMAGE_LOAD); /* PERFINFO, 32-bit */
    CHECK_EQ_U64(img[1].base, 0x77000000);
    CHECK_EQ_U64(img[1].pid, 1234);
    CHECK_EQ_U64(img[1].default_base, 0x77000000);
    CHECK(!img[1].kernel);
    CHECK_EQ_STR(img[1].name, "C:\\Windows\\SysWOW64\\kernel32.dll");
    CHECK_EQ_INT(img[2].kind, NTL_ETL_IMAGE_LOAD); /* Process group, opcode 10 */
    CHECK_EQ_U64(img[2].pid, 4321);
    CHECK_EQ_INT(img[3].kind, NTL_ETL_IMAGE_UNLOAD);
    CHECK_EQ_INT(img[4].kind, NTL_ETL_IMAGE_DCEND);
    CHECK(ntl_etl_images_find(img, 5, 0xfffff80000400010ull) == &img[4]);
    CHECK(ntl_etl_images_find(img, 5, 0x7ff600000010ull) == NULL); /* unloaded */
    ntl_etl_close(t);
    gen_free(&g);
}

/* Image names as ntl_utf16_to_utf8 writes them, whether ASCII (copied a
 * unit a byte) or not, cut to the 520-byte field or not. */
static void test_image_names(void)
{
    static char names[6][700];
    memset(names[0], 'a', 600);                          /* cut */
    memset(names[1], 'a', 518);
    strcpy(names[1] + 518, "\xc3\xa9" "b");                /* cut inside a character */
    memset(names[2], 'a', 519);
    strcpy(names[2] + 519, "\xc3\xa9");                   /* cut just before one */
    strcpy(names[3], "C:\\caf\xc3\xa9\\x.dll");
    strcpy(names[4], "C:\\\xc5\x81\xc5\x82.dll");         /* U+0141: 0x41 in its low byte */
    strcpy(names[5], "C:\\\xf0\x9f\x98\x80\\a.dll");    /* a surrogate pair */
    struct gen g;
    gen_init(&g, 0x4000, 8, 0, 100, 10000000, START_FT, 1, "img", "img.etl");
    for (int i = 0; i < 6; i++)
        gen_image(&g, false, false, true, 3, 150 + i, 0x10000 * (i + 1), 0x1000, 4, 1, 2, 0,
                  names[i]);
    gen_finish(&g);
    struct ntl_etl *t;
    struct ntl_error err = {0};
    struct ntl_etl_event ev;
    struct ntl_etl_image img;
    int n = 0;
    CHECK_EQ_INT(ntl_etl_open_mem(g.file.data, g.file.len, NULL, &t, &err), 0);
    while (ntl_etl_next(t, &ev, &err) > 0 && n < 6) {
        if (ntl_etl_image_decode(t, &ev, &img, &err) <= 0)
            continue;
        uint8_t w[1400];
        char want[520];
        size_t units = ntl_utf8_to_utf16(names[n], w, 700);
        ntl_utf16_to_utf8(w, units, want, sizeof want);
        CHECK_EQ_STR(img.name, want);
        n++;
    }
    CHECK_EQ_INT(n, 6);
    CHECK_EQ_U64(strlen(img.name), 13);
    ntl_etl_close(t);
    gen_free(&g);
}

static void test_ipt(void)
{
    uint8_t trace[4096];
    for (size_t i = 0; i < sizeof trace; i++)
        trace[i] = (uint8_t)(i * 7);
    /* option: BufferSize 0 (4 KiB), TraceCodeMode 2, TimeMode 1, MTCFreq 3 */
    uint64_t option = 0x02000000ull | 0x10 | 0x300 | 0x00800000ull;
    struct gen g;
    gen_init(&g, 0x10000, 8, 0, 100, 10000000, START_FT, 1, "ipt", "ipt.etl");
    gen_ipt(&g, false, 150, 140, 4, 8, option, 100, trace, 300);
    gen_ipt(&g, true, 160, 155, 5, 9, option, 1000, trace, 4096);
    gen_finish(&g);
    struct ntl_etl *t;
    struct ntl_error err = {0};
    struct ntl_etl_event ev;
    struct ntl_etl_ipt_event ipt;
    int found = 0;
    CHECK_EQ_INT(ntl_etl_open_mem(g.file.data, g.file.len, NULL, &t, &err), 0);
    while (ntl_etl_next(t, &ev, &err) > 0) {
        int rc = ntl_etl_ipt_decode(&ev, &ipt, &err);
        CHECK(rc >= 0);
        if (rc <= 0)
            continue;
        found++;
        CHECK_EQ_U64(ipt.ipt_option, option);
        if (found == 1) {
            CHECK_EQ_INT(ev.kind, NTL_ETL_KIND_CLASSIC);
            CHECK_EQ_U64(ipt.event_timestamp, 140);
            CHECK_EQ_U64(ipt.process, 4);
            CHECK_EQ_U64(ipt.thread, 8);
            CHECK_EQ_U64(ipt.trace_size, 300);
            CHECK_EQ_U64(ipt.trace_position, 100);
            CHECK(!ipt.wrapped);
            CHECK(!memcmp(ipt.trace, trace, 300));
        } else {
            CHECK_EQ_INT(ev.kind, NTL_ETL_KIND_EVENT);
            CHECK_EQ_U64(ipt.trace_size, 4096);
            CHECK(ipt.wrapped);
            CHECK(!memcmp(ipt.trace, trace, 4096));
        }
    }
    CHECK_EQ_INT(found, 2);
    ntl_etl_close(t);
    gen_free(&g);

    struct ntl_ipt_option o;
    ntl_ipt_option_decode(0xdeadbeef12345678ull, &o);
    CHECK_EQ_U64(o.trace_mode, 8);
    CHECK_EQ_U64(o.time_mode, 7);
    CHECK_EQ_U64(o.mtc_freq, 6);
    CHECK_EQ_U64(o.cyc_thresh, 5);
    CHECK_EQ_U64(o.buffer_size, 4);
    CHECK_EQ_U64(o.trace_session_mode, 3);
    CHECK_EQ_U64(o.trace_child, 0);
    CHECK_EQ_U64(o.trace_code_mode, 2);
    CHECK_EQ_U64(o.reserved2, 1);
    CHECK_EQ_U64(o.reserved3, 0xdeadbeef);
    CHECK_EQ_U64(ntl_ipt_option_buffer_bytes(3ull << 16), 32768);

    /* TraceSize past the payload. */
    gen_init(&g, 0x2000, 8, 0, 100, 10000000, START_FT, 1, "ipt", "ipt.etl");
    gen_ipt(&g, false, 150, 140, 4, 8, option, 0, trace, 64);
    gen_finish(&g);
    CHECK_EQ_INT(ntl_etl_open_mem(g.file.data, g.file.len, NULL, &t, &err), 0);
    ntl_etl_next(t, &ev, &err);
    CHECK_EQ_INT(ntl_etl_next(t, &ev, &err), 1);
    ev.payload_size = 40; /* as if the event ended early */
    CHECK_EQ_INT(ntl_etl_ipt_decode(&ev, &ipt, &err), NTL_ERR_FORMAT);
    CHECK(strstr(err.message, "TraceSize") != NULL);
    ntl_etl_close(t);
    gen_free(&g);
}

/* ---- broken input ---- */

/* A two-buffer trace (header buffer + one with two events) plus a third
 * buffer with one event, so a bad second buffer can be skipped. */
static void build_three(struct gen *g)
{
    gen_init(g, 0x1000, 8, 0, 100, 10000000, START_FT, 1, "bad", "bad.etl");
    gen_next_buffer(g, 0);
    gen_system(g, false, true, 2, 0x0524, 1, 1, 200, NULL, 0, "abcdefgh", 8);
    gen_system(g, false, true, 2, 0x0524, 1, 1, 300, NULL, 0, "abcdefgh", 8);
    gen_next_buffer(g, 1);
    gen_system(g, false, true, 2, 0x0524, 2, 2, 400, NULL, 0, "abcdefgh", 8);
    gen_finish(g);
}

/* Opens the mutated trace and reads it all: the first error (status and
 * offset), then keeps going; returns the events read. */
static uint64_t read_broken(const struct ntl_buf *file, int *status, uint64_t *offset, bool *cont,
                            char *msg, size_t msgsize)
{
    struct ntl_etl *t;
    struct ntl_error err = {0};
    struct ntl_etl_event ev;
    uint64_t n = 0;
    int rc;
    *status = 0;
    *offset = 0;
    *cont = true;
    if ((rc = ntl_etl_open_mem(file->data, file->len, NULL, &t, &err)) < 0) {
        *status = rc;
        *offset = err.offset;
        *cont = false;
        snprintf(msg, msgsize, "%s", err.message);
        return 0;
    }
    while ((rc = ntl_etl_next(t, &ev, &err)) != 0) {
        if (rc < 0) {
            if (!*status) {
                *status = rc;
                *offset = err.offset;
                snprintf(msg, msgsize, "%s", err.message);
            }
            if (!ntl_etl_can_continue(t)) {
                *cont = false;
                break;
            }
            continue;
        }
        n++;
    }
    ntl_etl_close(t);
    return n;
}

static void test_broken(void)
{
    struct gen g;
    int status;
    uint64_t off, n;
    bool cont;
    char msg[300];
    const size_t b1 = 0x1000, b2 = 0x2000; /* buffer offsets */

    /* Intact: 1 header + 3 events. */
    build_three(&g);
    n = read_broken(&g.file, &status, &off, &cont, msg, sizeof msg);
    CHECK_EQ_U64(n, 4);
    CHECK_EQ_INT(status, 0);

    /* Last buffer's size runs past the end of the file. */
    g.file.len -= 0x10;
    n = read_broken(&g.file, &status, &off, &cont, msg, sizeof msg);
    CHECK_EQ_INT(status, NTL_ETL_TRUNCATED);
    CHECK_EQ_U64(off, b2);
    CHECK(!cont);
    CHECK_EQ_U64(n, 3);
    CHECK(strstr(msg, "the file ends early") != NULL);
    g.file.len += 0x10;

    /* BufferSize smaller than a header. */
    ntl_put_le32(g.file.data + b2, 0x10);
    n = read_broken(&g.file, &status, &off, &cont, msg, sizeof msg);
    CHECK_EQ_INT(status, NTL_ERR_FORMAT);
    CHECK_EQ_U64(off, b2);
    CHECK_EQ_U64(n, 3);
    ntl_put_le32(g.file.data + b2, 0x1000);

    /* SavedOffset beyond the buffer: the buffer is skipped, the next read. */
    uint32_t saved = ntl_le32(g.file.data + b1 + 4);
    ntl_put_le32(g.file.data + b1 + 4, 0x5000);
    n = read_broken(&g.file, &status, &off, &cont, msg, sizeof msg);
    CHECK_EQ_INT(status, NTL_ERR_FORMAT);
    CHECK_EQ_U64(off, b1 + 4);
    CHECK(cont);
    CHECK_EQ_U64(n, 2);
    CHECK(strstr(msg, "SavedOffset") != NULL);
    ntl_put_le32(g.file.data + b1 + 4, saved);

    /* An event longer than its buffer's data. */
    size_t e2 = b1 + 0x48 + 0x28; /* second event of buffer 1 */
    ntl_put_le16(g.file.data + e2 + 4, 0x400);
    n = read_broken(&g.file, &status, &off, &cont, msg, sizeof msg);
    CHECK_EQ_INT(status, NTL_ERR_FORMAT);
    CHECK_EQ_U64(off, e2);
    CHECK(cont);
    CHECK_EQ_U64(n, 3); /* header, first event of buffer 1, buffer 2's */
    CHECK(strstr(msg, "runs past the end") != NULL);

    /* A zero-size event. */
    ntl_put_le16(g.file.data + e2 + 4, 0);
    n = read_broken(&g.file, &status, &off, &cont, msg, sizeof msg);
    CHECK_EQ_INT(status, NTL_ERR_FORMAT);
    CHECK_EQ_U64(off, e2);
    CHECK(strstr(msg, "zero-size") != NULL);
    CHECK_EQ_U64(n, 3);
    ntl_put_le16(g.file.data + e2 + 4, 0x28);

    /* An unknown header type. */
    g.file.data[e2 + 2] = 0x0E;
    n = read_broken(&g.file, &status, &off, &cont, msg, sizeof msg);
    CHECK_EQ_INT(status, NTL_ERR_FORMAT);
    CHECK_EQ_U64(off, e2);
    CHECK(strstr(msg, "unknown header type 14") != NULL);
    CHECK_EQ_U64(n, 3);
    g.file.data[e2 + 2] = 0x02;

    /* A marker without TRACE_HEADER_FLAG. */
    g.file.data[e2 + 3] = 0x00;
    n = read_broken(&g.file, &status, &off, &cont, msg, sizeof msg);
    CHECK_EQ_INT(status, NTL_ERR_FORMAT);
    CHECK_EQ_U64(off, e2);
    g.file.data[e2 + 3] = 0xC0;

    /* The first event is not the logfile header. */
    g.file.data[0x48 + 6] = 0x24;
    n = read_broken(&g.file, &status, &off, &cont, msg, sizeof msg);
    CHECK_EQ_INT(status, NTL_ERR_FORMAT);
    CHECK(strstr(msg, "not the EventTrace header") != NULL);
    g.file.data[0x48 + 6] = 0x00;

    /* Empty and tiny files. */
    struct ntl_buf tiny = {g.file.data, 0, 0, 0};
    read_broken(&tiny, &status, &off, &cont, msg, sizeof msg);
    CHECK_EQ_INT(status, NTL_ETL_TRUNCATED);
    tiny.len = 0x20;
    read_broken(&tiny, &status, &off, &cont, msg, sizeof msg);
    CHECK_EQ_INT(status, NTL_ETL_TRUNCATED);
    CHECK_EQ_U64(off, 0);
    gen_free(&g);

    /* Corrupt compressed data: a match before the start of the output. */
    struct gen c;
    gen_init(&c, 0x1000, 8, NTL_ETL_MODE_COMPRESSED, 100, 10000000, START_FT, 1, "z", "z.etl");
    c.compress = 3;
    gen_next_buffer(&c, 0);
    gen_system(&c, false, true, 2, 0x0524, 1, 1, 200, NULL, 0, "abcdefgh", 8);
    gen_next_buffer(&c, 1);
    gen_system(&c, false, true, 2, 0x0524, 2, 2, 300, NULL, 0, "abcdefgh", 8);
    gen_finish(&c);
    n = read_broken(&c.file, &status, &off, &cont, msg, sizeof msg);
    CHECK_EQ_INT(status, 0);
    CHECK_EQ_U64(n, 3);
    /* First flag word of buffer 1's stream: make item 0 a match. */
    size_t z1 = 0x1000 + 0x48;
    c.file.data[z1 + 3] |= 0x80;
    n = read_broken(&c.file, &status, &off, &cont, msg, sizeof msg);
    CHECK_EQ_INT(status, NTL_ERR_FORMAT);
    CHECK_EQ_U64(off, z1 + 4);
    CHECK(cont);
    CHECK_EQ_U64(n, 2);
    CHECK(strstr(msg, "compressed buffer 1") != NULL);
    gen_free(&c);
}

/* Buffer by buffer: counts add up, and a bad buffer is described. */
static void test_buffers(void)
{
    struct ntl_etl *t;
    struct ntl_error err = {0};
    struct ntl_etl_buffer b;
    uint64_t n = 0, events = 0, compressed = 0, last_end = 0;
    int rc;
    CHECK_EQ_INT(ntl_etl_open_file(check_data_path("etl/net.4.5.2.x64.etl"), NULL, &t, &err), 0);
    while ((rc = ntl_etl_next_buffer(t, &b, &err)) > 0) {
        CHECK_EQ_U64(b.index, n);
        CHECK_EQ_U64(b.offset, last_end);
        last_end = b.offset + b.size;
        events += b.events;
        compressed += b.compressed;
        n++;
    }
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_U64(n, 360);
    CHECK_EQ_U64(events, 179474);
    CHECK_EQ_U64(compressed, 359);
    ntl_etl_close(t);

    struct gen g;
    build_three(&g);
    ntl_put_le16(g.file.data + 0x1000 + 0x48 + 0x28 + 4, 0x400); /* second event of buffer 1 */
    CHECK_EQ_INT(ntl_etl_open_mem(g.file.data, g.file.len, NULL, &t, &err), 0);
    CHECK_EQ_INT(ntl_etl_next_buffer(t, &b, &err), 1);
    CHECK_EQ_U64(b.events, 1);
    CHECK_EQ_INT(ntl_etl_next_buffer(t, &b, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(b.index, 1);
    CHECK_EQ_U64(b.events, 1);
    CHECK(ntl_etl_can_continue(t));
    CHECK_EQ_INT(ntl_etl_next_buffer(t, &b, &err), 1);
    CHECK_EQ_U64(b.index, 2);
    CHECK_EQ_U64(b.processor, 1);
    CHECK_EQ_INT(ntl_etl_next_buffer(t, &b, &err), 0);
    ntl_etl_close(t);
    g.file.len -= 8; /* the last buffer now runs past the end of the file */
    CHECK_EQ_INT(ntl_etl_open_mem(g.file.data, g.file.len, NULL, &t, &err), 0);
    ntl_etl_next_buffer(t, &b, &err);
    ntl_etl_next_buffer(t, &b, &err);
    CHECK_EQ_INT(ntl_etl_next_buffer(t, &b, &err), NTL_ETL_TRUNCATED);
    CHECK_EQ_U64(b.size, 0);
    CHECK(!ntl_etl_can_continue(t));
    CHECK_EQ_U64(err.offset, 0x2000);
    CHECK(strstr(err.message, "ends early, at offset 0x2ff8") != NULL);
    CHECK(strstr(err.message, "2 whole buffers") != NULL);
    CHECK_EQ_INT(ntl_etl_next_buffer(t, &b, &err), 0);
    struct ntl_etl_stats st;
    ntl_etl_get_stats(t, &st);
    CHECK(st.truncated);
    ntl_etl_close(t);
    CHECK_EQ_STR(ntl_etl_status_name(NTL_ETL_TRUNCATED), "file truncated");
    CHECK_EQ_STR(ntl_etl_status_name(NTL_ERR_FORMAT), ntl_status_name(NTL_ERR_FORMAT));
    gen_free(&g);
}

/* Compressed buffers use the format the first buffer's State names, unless
 * the caller overrides it; an unknown one is refused at that field. */
static void test_compression_format_choice(void)
{
    struct gen g;
    struct ntl_error err = {0};
    struct ntl_etl *t;
    build_all_kinds(&g, 8, 4);
    CHECK_EQ_INT(ntl_etl_open_mem(g.file.data, g.file.len, NULL, &t, &err), 0);
    CHECK_EQ_INT(ntl_etl_compression_format(t), 4);
    CHECK_EQ_U64(read_all(t).errors, 0);
    ntl_etl_close(t);

    ntl_put_le32(g.file.data + 0x2c, 9);
    CHECK_EQ_INT(ntl_etl_open_mem(g.file.data, g.file.len, NULL, &t, &err), NTL_ERR_UNSUPPORTED);
    CHECK_EQ_U64(err.offset, 0x2c);
    CHECK(strstr(err.message, "unknown format 9") != NULL);

    struct ntl_etl_options opt = {.compression_format = 4};
    CHECK_EQ_INT(ntl_etl_open_mem(g.file.data, g.file.len, &opt, &t, &err), 0);
    CHECK_EQ_U64(read_all(t).errors, 0);
    ntl_etl_close(t);

    opt.compression_format = 3; /* wrong: every compressed buffer fails */
    CHECK_EQ_INT(ntl_etl_open_mem(g.file.data, g.file.len, &opt, &t, &err), 0);
    CHECK(read_all(t).errors > 0);
    ntl_etl_close(t);
    gen_free(&g);
}

/* File mode on a generated trace written to disk (also under Wine). */
static void test_file_mode(void)
{
    struct gen g;
    struct ntl_error err = {0};
    build_all_kinds(&g, 8, 3);
    CHECK_EQ_INT(ntl_file_write("test_etl_tmp.etl", g.file.data, g.file.len, &err), 0);
    struct ntl_etl *t;
    CHECK_EQ_INT(ntl_etl_open_file("test_etl_tmp.etl", NULL, &t, &err), 0);
    struct counts c = read_all(t);
    CHECK_EQ_U64(c.events, 8);
    CHECK_EQ_U64(c.errors, 0);
    ntl_etl_close(t);
    CHECK(ntl_etl_open_file("no/such/file.etl", NULL, &t, &err) == NTL_ERR_IO);
    remove("test_etl_tmp.etl");
    gen_free(&g);
}

static void test_names(void)
{
    struct ntl_guid g;
    char buf[40];
    CHECK(ntl_guid_parse("{FF1FD2FD-6008-42BB-9E75-00A20051F3BE}", &g));
    CHECK_EQ_STR(ntl_guid_format(&g, buf, sizeof buf), IPT_GUID);
    CHECK(!ntl_guid_parse("ff1fd2fd-6008-42bb-9e75-00a20051f3b", &g));
    CHECK(!ntl_guid_parse("ff1fd2fd-6008-42bb-9e75x00a20051f3be", &g));
    CHECK_EQ_STR(ntl_etl_group_name(0x14), "Image");
    CHECK_EQ_STR(ntl_etl_opcode_name(0x14, 3), "DCStart");
    CHECK_EQ_STR(ntl_etl_opcode_name(0x05, 36), "CSwitch");
    CHECK(ntl_etl_opcode_name(0x05, 250) == NULL);
    CHECK_EQ_INT(ntl_etl_group_parse("process"), 3);
    CHECK_EQ_INT(ntl_etl_group_parse("0x14"), 0x14);
    CHECK_EQ_INT(ntl_etl_group_parse("nonsense"), -1);
}

/* Every event and error of data read with and without decompress_ahead
 * (sorted with reload: the thread follows the buffers' second reading);
 * with path (data written there), the thread's reader reads the file. */
static void same_ahead_in(const uint8_t *data, size_t size, bool sorted, bool reload,
                          const char *path)
{
    struct ntl_etl_options plain = {.sorted = sorted, .sorted_reload = reload},
                           ahead = {.sorted = sorted, .sorted_reload = reload,
                                    .decompress_ahead = true};
    struct ntl_etl *t, *u;
    struct ntl_error e1 = {0}, e2 = {0};
    struct ntl_etl_event a, b;
    int r1, r2;
    uint64_t events = 0, errors = 0;
    CHECK_EQ_INT(ntl_etl_open_mem(data, size, &plain, &t, &e1), 0);
    CHECK_EQ_INT(path ? ntl_etl_open_file(path, &ahead, &u, &e2)
                      : ntl_etl_open_mem(data, size, &ahead, &u, &e2), 0);
    do {
        r1 = ntl_etl_next(t, &a, &e1);
        r2 = ntl_etl_next(u, &b, &e2);
        CHECK_EQ_INT(r2, r1);
        if (r1 > 0 && r2 > 0) {
            events++;
            CHECK_EQ_U64(b.timestamp, a.timestamp);
            CHECK(b.payload_size == a.payload_size &&
                  !memcmp(b.payload, a.payload, a.payload_size));
        } else if (r1 < 0 && r2 < 0) {
            errors++;
            CHECK_EQ_STR(e2.message, e1.message);
        }
    } while (r1 == r2 &&
             (r1 > 0 || (r1 < 0 && (ntl_etl_can_continue(t) || r1 == NTL_ETL_TRUNCATED))));
    CHECK(events > 1000);
    struct ntl_etl_stats st, su;
    ntl_etl_get_stats(t, &st);
    ntl_etl_get_stats(u, &su);
    CHECK_EQ_U64(su.buffers_duplicate, st.buffers_duplicate);
    CHECK_EQ_U64(su.events, st.events);
    ntl_etl_close(t);
    ntl_etl_close(u);
}

static void same_ahead(const uint8_t *data, size_t size, bool sorted, bool reload)
{
    same_ahead_in(data, size, sorted, reload, NULL);
}

/* A file whose compressed buffer a comes twice (a repeat) and whose buffer
 * b comes again with its last byte changed (not one): the reader leaves
 * the bytes after a header unread when the thread has the buffer, and must
 * read them to compare (etl_raw_body). Several tries: the thread has to be
 * ahead for that way to be taken. */
static void ahead_repeats(const uint8_t *d, size_t size)
{
    const uint32_t hdr = NTL_ETL_BUFFER_HEADER_SIZE;
    uint64_t off = 0, a = 0, b = 0;
    uint32_t asize = 0, bsize = 0;
    struct ntl_error err = {0};
    for (unsigned i = 0; size - off >= hdr; i++) {
        uint32_t n = ntl_le32(d + off);
        if (n < hdr || n > size - off)
            break;
        if (i == 40)
            a = off, asize = n;
        if (i == 60)
            b = off, bsize = n;
        off += n;
    }
    CHECK(asize && bsize && (ntl_le16(d + a + 0x34) & NTL_ETL_BUFFER_COMPRESSED) &&
          (ntl_le16(d + b + 0x34) & NTL_ETL_BUFFER_COMPRESSED));
    if (!asize || !bsize)
        return;
    size_t n = size + asize + bsize, ae = a + asize, be = b + bsize;
    uint8_t *t = malloc(n);
    CHECK(t != NULL);
    if (!t)
        return;
    memcpy(t, d, ae);
    memcpy(t + ae, d + a, asize);
    memcpy(t + ae + asize, d + ae, be - ae);
    memcpy(t + asize + be, d + b, bsize);
    t[asize + be + bsize - 1] ^= 1;
    memcpy(t + asize + be + bsize, d + be, size - be);
    CHECK_EQ_INT(ntl_file_write("test_etl_ahead.etl", t, n, &err), 0);
    for (int i = 0; i < 3; i++) {
        same_ahead_in(t, n, false, false, "test_etl_ahead.etl");
        same_ahead_in(t, n, true, true, "test_etl_ahead.etl");
    }
    remove("test_etl_ahead.etl");
    free(t);
}

/* Buffer off of d decompressed into out (1 MiB): its length after the header. */
static long decompress_buffer(const uint8_t *d, uint64_t off, uint8_t *out)
{
    const uint32_t hdr = NTL_ETL_BUFFER_HEADER_SIZE;
    uint32_t bsize = ntl_le32(d + off), usize = ntl_le32(d + off + 4);
    struct ntl_error err;
    if (usize - hdr > (1u << 20))
        return -1;
    return ntl_decompress(NTL_COMPRESS_XPRESS, d + off + hdr, bsize - hdr, out, usize - hdr,
                          off + hdr, &err);
}

/* One try of ahead_follow: the buffers at offs[0..n) backwards, each the
 * thread hands over checked; how many it handed over. The caller's own
 * pass over them first lets a thread that starts late fill its slots. */
static size_t follow_once(const uint8_t *d, size_t size, const uint64_t *offs, size_t n,
                          uint8_t *mine)
{
    const uint32_t hdr = NTL_ETL_BUFFER_HEADER_SIZE;
    uint64_t *list = malloc(n * sizeof *list);
    uint8_t *buf = NULL;
    size_t served = 0, cap = 0;
    struct etl_ahead *a = etl_ahead_start(d, NULL, size, NTL_COMPRESS_XPRESS, 0);
    CHECK(a != NULL && list != NULL);
    for (size_t i = 0; i < n; i++)
        list[i] = offs[n - 1 - i];
    CHECK_EQ_INT(etl_ahead_follow(a, list, n), 0);
    for (size_t i = 0; i < n; i++)
        CHECK(decompress_buffer(d, offs[i], mine) > 0);
    for (size_t i = 0; i < n; i++) {
        uint64_t off = offs[n - 1 - i];
        long got = etl_ahead_take(a, i + 1, &buf, &cap), want = decompress_buffer(d, off, mine);
        CHECK(want > 0);
        if (got < 0)
            continue;
        served++;
        CHECK(got == want && !memcmp(buf, d + off, hdr) && !memcmp(buf + hdr, mine, (size_t)want));
    }
    etl_ahead_stop(a);
    free(buf);
    return served;
}

/* The thread sent over a list of buffers (etl_ahead_follow, lib/etl/ahead.h)
 * in an order of its own, the file's compressed buffers backwards: each one
 * it hands over is that buffer decompressed, and it hands some over (a few
 * tries: under Wine on a loaded machine a thread may not run in time). */
static void ahead_follow(const uint8_t *d, size_t size)
{
    const uint32_t hdr = NTL_ETL_BUFFER_HEADER_SIZE;
    static uint64_t offs[4096];
    size_t n = 0, served = 0;
    uint8_t *mine = malloc(1u << 20);
    for (uint64_t off = 0; size - off >= hdr && n < 4096;) {
        uint32_t bsize = ntl_le32(d + off);
        if (bsize < hdr || bsize > size - off)
            break;
        if (ntl_le16(d + off + 0x34) & NTL_ETL_BUFFER_COMPRESSED)
            offs[n++] = off;
        off += bsize;
    }
    CHECK(n > 100 && mine != NULL);
    for (int try = 0; try < 5 && !served && mine; try++)
        served = follow_once(d, size, offs, n, mine);
    CHECK(served > 0);
    free(mine);
}

/* Buffers decompressed on a second thread: the same events and errors, in
 * a whole trace, one with damaged compressed data, one cut short. */
static void test_decompress_ahead(void)
{
    struct ntl_buf f;
    struct ntl_error err = {0};
    ntl_buf_init(&f, 1u << 30);
    CHECK_EQ_INT(ntl_file_read(check_data_path("etl/net.4.5.2.x64.etl"), 1u << 30, &f, &err), 0);
    if (f.len < 1000000) {
        ntl_buf_free(&f);
        return;
    }
    same_ahead(f.data, f.len, false, false);
    same_ahead(f.data, f.len, true, false);
    same_ahead(f.data, f.len, true, true);
    ahead_follow(f.data, f.len);
    ahead_repeats(f.data, f.len);
    for (size_t i = 300000; i < f.len; i += 150000)
        f.data[i] ^= 0x5a;
    same_ahead(f.data, f.len, false, false);
    same_ahead(f.data, f.len, true, true);
    same_ahead(f.data, f.len - 1000, false, false);
    same_ahead(f.data, f.len - 1000, true, true);
    ntl_buf_free(&f);
}

static int by_time_then_place(const void *pa, const void *pb)
{
    const struct sorted_ev *a = pa, *b = pb;
    if (a->timestamp != b->timestamp)
        return a->timestamp < b->timestamp ? -1 : 1;
    if (a->buffer != b->buffer)
        return a->buffer < b->buffer ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* etl_sort_events (lib/etl/sort.c) against qsort on (time, file place),
 * which is what a stable sort by time gives: ascending runs of random
 * lengths with many equal times, at sizes sorted on one thread and on two
 * (odd, so the halves differ), the list already in order, one run reversed. */
static void test_sort_events(void)
{
    static const size_t sizes[] = {1, 2, 1000, 32767, 32768, 100001, 250000};
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        for (int shape = 0; shape < 3; shape++) {
            size_t n = sizes[z], cap = n;
            struct sorted_ev *a = malloc(n * sizeof *a), *want = malloc(n * sizeof *want);
            uint64_t ts = 0;
            for (size_t i = 0; i < n; i++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                if (shape == 0 && (seed >> 60) == 0)
                    ts = (seed >> 20) % 4096; /* a new run, anywhere */
                ts += shape == 2 ? 0 : (seed >> 40) % 3;
                a[i] = (struct sorted_ev){shape == 2 ? n - i : ts, (uint32_t)(i / 500),
                                          (uint32_t)(i % 500 * 8)};
            }
            memcpy(want, a, n * sizeof *a);
            qsort(want, n, sizeof *want, by_time_then_place);
            CHECK_EQ_INT(etl_sort_events(&a, n, &cap), 0);
            CHECK(cap >= n);
            CHECK(!memcmp(a, want, n * sizeof *a));
            free(a);
            free(want);
        }
    }
}

int main(void)
{
    test_shared();
    test_shared_images();
    test_shared_sorted();
    test_shared_reload();
    test_all_kinds(8, 0);
    test_all_kinds(4, 0);
    test_all_kinds(8, 2);
    test_all_kinds(8, 3);
    test_all_kinds(4, 4);
    test_compression_format_choice();
    test_sorted();
    test_clocks();
    test_images();
    test_ipt();
    test_broken();
    test_file_mode();
    test_buffers();
    test_names();
    test_decompress_ahead();
    test_image_names();
    test_sort_events();
    return check_exit();
}
