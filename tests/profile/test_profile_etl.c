/* The ETW producer on generated 32- and 64-bit traces: SampledProfile
 * events land in the modules of their time and their thread's process;
 * unknown threads, addresses in no module and unloaded modules count as
 * unknown; a short payload is an error that changes nothing.
 *   test_profile_etl [SEED]   also writes the 64-bit trace, with the fuzz
 *                             harness's leading option byte, to SEED */
#include "check.h"
#include "etl_gen.h"
#include "ntlens/etl.h"
#include "ntlens/profile_etl.h"
#include "ntlens/profile_report.h"

#define HOOK_PROCESS_DCSTART 0x0303
#define HOOK_THREAD_DCSTART 0x0503
#define HOOK_SAMPLE 0x0F2E

static void put(uint8_t *b, size_t *n, uint64_t v, unsigned size)
{
    for (unsigned i = 0; i < size; i++)
        b[(*n)++] = (uint8_t)(v >> 8 * i);
}

/* Process v4 (with_sid: a TOKEN_USER and S-1-5-18) or v3 (a null SID);
 * DCStart, or DCEnd (the end rundown) when dcend is set (threads too). */
static bool dcend;

static void process(struct gen *g, bool is64, uint64_t ts, uint32_t pid, bool v4, bool with_sid,
                    const char *name)
{
    uint8_t b[128];
    size_t n = 0;
    unsigned psz = is64 ? 8 : 4;
    put(b, &n, 0x1234, psz);                   /* UniqueProcessKey */
    put(b, &n, pid, 4);
    put(b, &n, 4, 4);                          /* ParentId */
    put(b, &n, 1, 4);                          /* SessionId */
    put(b, &n, 0, 4);                          /* ExitStatus */
    put(b, &n, 0x187000, psz);                 /* DirectoryTableBase */
    if (v4)
        put(b, &n, 0, 4);                      /* Flags */
    if (with_sid) {
        put(b, &n, 0xdead0000, psz);           /* TOKEN_USER: Sid pointer, Attributes */
        put(b, &n, 0, psz);
        put(b, &n, 0x00000101, 4);             /* S-1-5-18 */
        put(b, &n, 0x05000000, 4);
        put(b, &n, 18, 4);
    } else {
        put(b, &n, 0, 4);
    }
    memcpy(b + n, name, strlen(name) + 1);
    n += strlen(name) + 1;
    gen_perfinfo(g, is64, v4 ? 4 : 3, HOOK_PROCESS_DCSTART + dcend, ts, NULL, 0, b, n);
}

static void thread(struct gen *g, bool is64, uint64_t ts, uint32_t pid, uint32_t tid)
{
    uint8_t b[8];
    size_t n = 0;
    put(b, &n, pid, 4);
    put(b, &n, tid, 4);
    gen_system(g, false, is64, 3, HOOK_THREAD_DCSTART + dcend, tid, pid, ts, NULL, 0, b, n);
}

static void sample(struct gen *g, bool is64, uint64_t ts, uint64_t ip, uint32_t tid)
{
    uint8_t b[16];
    size_t n = 0;
    put(b, &n, ip, is64 ? 8 : 4);
    put(b, &n, tid, 4);
    put(b, &n, 1, 2);
    put(b, &n, 0, 2);
    gen_perfinfo(g, is64, 2, HOOK_SAMPLE, ts, NULL, 0, b, n);
}

/* StackWalk: EventTimeStamp, StackProcess, StackThread, then the frames
 * (opcode 32) or a key (37 kernel, 38 user); a key definition (36, the
 * rundown) is the key, then the frames. */
static void stack(struct gen *g, bool is64, uint8_t op, uint64_t ts, uint64_t event_ts,
                  uint32_t tid, const uint64_t *v, size_t n)
{
    uint8_t b[256];
    size_t len = 0;
    unsigned psz = is64 ? 8 : 4;
    if (op != 36) {
        put(b, &len, event_ts, 8);
        put(b, &len, 100, 4);
        put(b, &len, tid, 4);
    }
    for (size_t i = 0; i < n; i++)
        put(b, &len, v[i], psz);
    gen_perfinfo(g, is64, 2, (uint16_t)(0x1800 | op), ts, NULL, 0, b, len);
}

static uint64_t kernel_base(bool is64) { return is64 ? 0xfffff80000000000ull : 0x80000000u; }

/* Events in a CPU's buffer are in time order; the second CPU's buffer holds
 * the samples, so the reader must merge by time to place them. */
static void make_trace(struct gen *g, bool is64)
{
    gen_init(g, 4096, is64 ? 8 : 4, 0, 1000, 10000000, 132500000000000000ull, 1, "p", "p.etl");
    process(g, is64, 1001, 100, true, false, "app.exe");
    process(g, is64, 1002, 200, false, true, "svc.exe");
    thread(g, is64, 1003, 100, 101);
    thread(g, is64, 1004, 200, 201);
    gen_image(g, true, false, is64, 3, 1005, kernel_base(is64), 0x100000, 0, 1, 2, 0,
              "\\SystemRoot\\system32\\ntoskrnl.exe");
    gen_image(g, false, false, is64, 10, 1006, 0x400000, 0x10000, 100, 1, 2, 0x400000,
              "C:\\app\\app.exe");
    gen_image(g, false, false, is64, 2, 1100, 0x400000, 0x10000, 100, 1, 2, 0x400000,
              "C:\\app\\app.exe");
    gen_next_buffer(g, 1);
    uint64_t kb = kernel_base(is64);
    const uint64_t full[] = {0x400010, 0x400500};
    const uint64_t kkey = 0xAAA, ukey = 0xBBB, nokey = 0xCCC;
    const uint64_t kdef[] = {kkey, kb + 0x10, kb + 0x20}, udef[] = {ukey, 0x400600};
    sample(g, is64, 1010, 0x400010, 101);               /* app.exe, pid 100 */
    stack(g, is64, 32, 1010, 1010, 101, full, 2);
    sample(g, is64, 1011, 0x400014, 101);
    stack(g, is64, 37, 1011, 1011, 101, &kkey, 1);
    stack(g, is64, 38, 1011, 1011, 101, &ukey, 1);
    stack(g, is64, 38, 1012, 1012, 201, &nokey, 1);      /* never defined */
    stack(g, is64, 32, 1013, 999, 101, full, 2);         /* of no sample */
    sample(g, is64, 1012, kernel_base(is64) + 0x20, 201); /* kernel, pid 200 */
    sample(g, is64, 1013, 0x999, 101);                   /* no module */
    sample(g, is64, 1014, 0x400010, 999);                /* unknown thread */
    sample(g, is64, 1101, 0x400010, 101);                /* after the unload */
    stack(g, is64, 36, 1200, 0, 0, kdef, 3);
    stack(g, is64, 36, 1201, 0, 0, udef, 2);
    gen_finish(g);
}

static void check_trace(bool is64, const uint8_t *data, size_t size)
{
    struct ntl_etl_options eo = {.sorted = true};
    struct ntl_profile_etl_options po = {0};
    struct ntl_etl *t;
    struct ntl_profile *p;
    struct ntl_etl_event ev;
    struct ntl_error err = {0};
    int rc, samples = 0;

    CHECK_EQ_INT(ntl_etl_open_mem(data, size, &eo, &t, &err), 0);
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    while ((rc = ntl_etl_next(t, &ev, &err)) > 0) {
        int k = ntl_profile_etl_feed(p, NULL, t, &ev, &po, &err);
        CHECK(k >= 0);
        samples += k == NTL_PROFILE_ETL_SAMPLE;
        if (k == NTL_PROFILE_ETL_SAMPLE) {
            /* The same event cut short: an error, and nothing counted. */
            struct ntl_etl_event cut = ev;
            uint64_t total = ntl_profile_total(p);
            cut.payload_size = is64 ? 11 : 7;
            CHECK_EQ_INT(ntl_profile_etl_feed(p, NULL, t, &cut, &po, &err), NTL_ERR_TRUNCATED);
            CHECK_EQ_U64(err.offset, ev.offset);
            CHECK_EQ_U64(ntl_profile_total(p), total);
        }
    }
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(samples, 6);
    CHECK_EQ_U64(ntl_profile_total(p), 6);
    CHECK_EQ_U64(ntl_profile_unknown(p), 3);

    struct ntl_profile_module_row *m;
    size_t n;
    CHECK_EQ_INT(ntl_profile_modules(p, &m, &n, &err), 0);
    CHECK_EQ_U64(n, 3);
    if (n == 3) {
        CHECK_EQ_STR(m[0].r ? m[0].r->name : "", "app.exe");
        CHECK_EQ_U64(m[0].hits, 2);
        CHECK_EQ_U64(m[0].r ? m[0].r->pid : 0, 100);
        CHECK_EQ_STR(m[1].r ? m[1].r->name : "", "ntoskrnl.exe");
        CHECK_EQ_U64(m[1].r ? m[1].r->pid : 0, NTL_PROFILE_KERNEL_PID);
        CHECK(m[2].range == NTL_PROFILE_NO_RANGE);
    }
    free(m);
    struct ntl_profile_process_row *pr;
    CHECK_EQ_INT(ntl_profile_processes(p, &pr, &n, &err), 0);
    CHECK_EQ_U64(n, 3);
    if (n == 3) {
        CHECK_EQ_U64(pr[0].pid, 100);
        CHECK_EQ_STR(pr[0].name, "app.exe");
        CHECK_EQ_U64(pr[0].hits, 4);
        CHECK_EQ_U64(pr[0].unknown, 2);
        CHECK_EQ_U64(pr[1].pid, 200);
        CHECK_EQ_STR(pr[1].name, "svc.exe");   /* after a TOKEN_USER and its SID */
        CHECK_EQ_U64(pr[2].pid, NTL_PROFILE_NO_PID);
    }
    free(pr);
    ntl_profile_free(p);
    ntl_etl_close(t);
}

static void check_filters(const uint8_t *data, size_t size)
{
    struct ntl_etl_options eo = {.sorted = true};
    struct ntl_profile_etl_options po = {.pid_set = true, .pid = 200};
    struct ntl_etl *t;
    struct ntl_profile *p;
    struct ntl_etl_event ev;
    struct ntl_error err = {0};
    int filtered = 0;

    CHECK_EQ_INT(ntl_etl_open_mem(data, size, &eo, &t, &err), 0);
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    while (ntl_etl_next(t, &ev, &err) > 0)
        filtered += ntl_profile_etl_feed(p, NULL, t, &ev, &po, &err) == NTL_PROFILE_ETL_FILTERED;
    CHECK_EQ_INT(filtered, 5);
    CHECK_EQ_U64(ntl_profile_total(p), 1);
    po.bucket_shift = 32;
    CHECK_EQ_INT(ntl_profile_etl_feed(p, NULL, t, &ev, &po, &err), NTL_ERR_ARGUMENT);
    ntl_profile_free(p);
    ntl_etl_close(t);
}

static void check_stacks(bool is64, const uint8_t *data, size_t size)
{
    struct ntl_etl_options eo = {.sorted = true};
    struct ntl_profile_etl_options po = {0};
    struct ntl_profile_etl_stacks *st;
    struct ntl_profile_etl_stack_counts counts;
    struct ntl_profile_sample s;
    struct ntl_etl *t;
    struct ntl_profile *p;
    struct ntl_etl_event ev;
    struct ntl_error err = {0};
    int stackwalks = 0;
    size_t pos = 0;

    CHECK_EQ_INT(ntl_etl_open_mem(data, size, &eo, &t, &err), 0);
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    CHECK_EQ_INT(ntl_profile_etl_stacks_new(&st, &err), 0);
    while (ntl_etl_next(t, &ev, &err) > 0)
        stackwalks += ntl_profile_etl_feed(p, st, t, &ev, &po, &err) == NTL_PROFILE_ETL_STACK;
    CHECK_EQ_INT(stackwalks, 7);
    CHECK_EQ_INT(ntl_profile_etl_stacks_finish(p, st, &counts, &err), 0);
    CHECK_EQ_U64(counts.samples_with_stack, 2);
    CHECK_EQ_U64(counts.keys_undefined, 1);
    CHECK_EQ_U64(counts.stacks_unmatched, 1);
    /* The whole stack without its first frame, the ip. */
    CHECK_EQ_INT(ntl_profile_stack_next(p, &pos, &s), 1);
    CHECK(s.depth == 1 && s.stack[0] == 0x400500);
    /* The kernel key's frames, then the user key's, defined after use. */
    CHECK_EQ_INT(ntl_profile_stack_next(p, &pos, &s), 1);
    CHECK_EQ_U64(s.depth, 3);
    if (s.depth == 3) {
        CHECK_EQ_U64(s.stack[0], kernel_base(is64) + 0x10);
        CHECK_EQ_U64(s.stack[2], 0x400600);
    }
    CHECK_EQ_INT(ntl_profile_stack_next(p, &pos, &s), 1);
    CHECK_EQ_U64(s.depth, 0);
    /* The app's frames are named after its unload, from the range it had. */
    char name[64];
    CHECK_EQ_INT(ntl_profile_symbolize(p, 100, 0x400500, name, sizeof name), 1);
    CHECK_EQ_STR(name, "app.exe+0x500");
    ntl_profile_etl_stacks_free(st);
    ntl_profile_free(p);
    ntl_etl_close(t);
}

/* A trace whose start rundown is lost: samples of a thread and a module
 * that only the end rundown (DCEnd) names, placed there by
 * ntl_profile_place_late; a DCEnd repeating a known module or process
 * changes nothing. */
static void check_dcend(bool is64)
{
    struct ntl_etl_options eo = {.sorted = true};
    struct ntl_profile_etl_options po = {0};
    struct ntl_profile_process_row *pr;
    struct ntl_profile_module_row *m;
    struct ntl_etl *t;
    struct ntl_profile *p;
    struct ntl_etl_event ev;
    struct ntl_error err = {0};
    struct gen g;
    size_t n;

    gen_init(&g, 4096, is64 ? 8 : 4, 0, 1000, 10000000, 132500000000000000ull, 1, "p", "p.etl");
    process(&g, is64, 1001, 100, true, false, "app.exe");
    thread(&g, is64, 1002, 100, 101);
    gen_image(&g, false, false, is64, 3, 1003, 0x400000, 0x10000, 100, 1, 2, 0x400000,
              "C:\\app\\app.exe");
    sample(&g, is64, 1010, 0x500010, 301);   /* late.dll of pid 300, both unknown yet */
    sample(&g, is64, 1011, 0x400010, 301);   /* app.exe, but pid 300 has no app.exe */
    sample(&g, is64, 1012, 0x500020, 101);   /* pid 100 has no late.dll */
    dcend = true;
    process(&g, is64, 1100, 100, true, false, "renamed.exe");
    process(&g, is64, 1101, 300, true, false, "late.exe");
    thread(&g, is64, 1102, 300, 301);
    thread(&g, is64, 1103, 300, 101);        /* known already: stays with 100 */
    gen_image(&g, false, false, is64, 4, 1104, 0x400000, 0x10000, 100, 1, 2, 0x400000,
              "C:\\app\\app.exe");
    gen_image(&g, false, false, is64, 4, 1105, 0x500000, 0x10000, 300, 1, 2, 0x500000,
              "C:\\late\\late.dll");
    dcend = false;
    gen_finish(&g);

    CHECK_EQ_INT(ntl_etl_open_mem(g.file.data, g.file.len, &eo, &t, &err), 0);
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    while (ntl_etl_next(t, &ev, &err) > 0)
        CHECK(ntl_profile_etl_feed(p, NULL, t, &ev, &po, &err) >= 0);
    CHECK_EQ_U64(ntl_profile_unknown(p), 3);
    CHECK_EQ_U64(ntl_profile_range_count(p), 2);   /* app.exe once, late.dll */
    CHECK_EQ_INT(ntl_profile_place_late(p, &err), 2);
    CHECK_EQ_U64(ntl_profile_total(p), 3);
    CHECK_EQ_U64(ntl_profile_unknown(p), 2);
    CHECK_EQ_INT(ntl_profile_modules(p, &m, &n, &err), 0);
    CHECK_EQ_U64(n, 2);
    if (n == 2) {
        CHECK_EQ_STR(m[0].r ? m[0].r->name : "", "late.dll");
        CHECK_EQ_U64(m[0].hits, 1);
        CHECK(m[1].range == NTL_PROFILE_NO_RANGE && m[1].hits == 2);
    }
    free(m);
    CHECK_EQ_INT(ntl_profile_processes(p, &pr, &n, &err), 0);
    CHECK_EQ_U64(n, 2);
    if (n == 2) {
        CHECK_EQ_U64(pr[0].pid, 300);
        CHECK_EQ_STR(pr[0].name, "late.exe");
        CHECK_EQ_U64(pr[0].hits, 2);
        CHECK_EQ_U64(pr[0].unknown, 1);
        CHECK_EQ_U64(pr[1].pid, 100);
        CHECK_EQ_STR(pr[1].name, "app.exe");
        CHECK_EQ_U64(pr[1].unknown, 1);
    }
    free(pr);
    CHECK_EQ_INT(ntl_profile_place_late(p, &err), 0);   /* nothing more to move */
    ntl_profile_free(p);
    ntl_etl_close(t);
    gen_free(&g);
}

/* What feeding a trace did: each result but for events the profile does
 * not use and StackWalk events (the log hands those to the stacks state at
 * once), with its time; then the stacks. */
struct fed_list {
    int kind[64];
    uint64_t ts[64];
    size_t n;
};

static void fed_add(struct fed_list *f, int kind, uint64_t ts)
{
    if (kind == NTL_PROFILE_ETL_OTHER || kind == NTL_PROFILE_ETL_STACK || f->n == 64)
        return;
    f->kind[f->n] = kind;
    f->ts[f->n++] = ts;
}

static struct ntl_profile *fed_profile(const uint8_t *data, size_t size, bool log,
                                       struct fed_list *f,
                                       struct ntl_profile_etl_stack_counts *counts)
{
    struct ntl_etl_options eo = {.sorted = !log, .decompress_ahead = log};
    struct ntl_profile_etl_options po = {0};
    struct ntl_profile_etl_stacks *st;
    struct ntl_profile_etl_log *lg = NULL;
    struct ntl_profile_etl_fed fed;
    struct ntl_etl *t;
    struct ntl_profile *p;
    struct ntl_etl_event ev;
    struct ntl_error err = {0};
    memset(f, 0, sizeof *f);
    CHECK_EQ_INT(ntl_etl_open_mem(data, size, &eo, &t, &err), 0);
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    CHECK_EQ_INT(ntl_profile_etl_stacks_new(&st, &err), 0);
    CHECK_EQ_INT(ntl_profile_etl_log_new(&lg, &err), 0);
    while (ntl_etl_next(t, &ev, &err) > 0) {
        if (log)
            CHECK_EQ_INT(ntl_profile_etl_log_add(lg, st, t, &ev, &po, &err), 0);
        else
            fed_add(f, ntl_profile_etl_feed(p, st, t, &ev, &po, &err), ev.timestamp);
    }
    while (log && ntl_profile_etl_log_feed(lg, p, st, &po, &fed, &err) > 0)
        fed_add(f, fed.kind, fed.timestamp);
    CHECK_EQ_INT(ntl_profile_place_late(p, &err) >= 0, 1);
    CHECK_EQ_INT(ntl_profile_etl_stacks_finish(p, st, counts, &err), 0);
    ntl_profile_etl_log_free(lg);
    ntl_profile_etl_stacks_free(st);
    ntl_etl_close(t);
    return p;
}

/* The log, fed in file order (the samples' buffer after the modules'),
 * gives each event the result a sorted reader's feed gives, in the same
 * order, and the same stacks. */
static void check_log(const uint8_t *data, size_t size)
{
    struct fed_list a, b;
    struct ntl_profile_etl_stack_counts ca, cb;
    struct ntl_profile_sample sa, sb;
    size_t pa = 0, pb = 0;
    struct ntl_profile *p = fed_profile(data, size, false, &a, &ca);
    struct ntl_profile *q = fed_profile(data, size, true, &b, &cb);
    CHECK_EQ_U64(b.n, a.n);
    CHECK(a.n > 10);
    for (size_t i = 0; i < a.n && i < b.n; i++) {
        CHECK_EQ_INT(b.kind[i], a.kind[i]);
        CHECK_EQ_U64(b.ts[i], a.ts[i]);
    }
    CHECK_EQ_U64(cb.samples_with_stack, ca.samples_with_stack);
    CHECK_EQ_U64(cb.keys_undefined, ca.keys_undefined);
    CHECK_EQ_U64(cb.stacks_unmatched, ca.stacks_unmatched);
    CHECK_EQ_U64(ntl_profile_total(q), ntl_profile_total(p));
    CHECK_EQ_U64(ntl_profile_unknown(q), ntl_profile_unknown(p));
    while (ntl_profile_stack_next(p, &pa, &sa) > 0) {
        CHECK_EQ_INT(ntl_profile_stack_next(q, &pb, &sb), 1);
        CHECK_EQ_U64(sb.ip, sa.ip);
        CHECK_EQ_U64(sb.depth, sa.depth);
        CHECK(!sa.depth || !memcmp(sa.stack, sb.stack, sa.depth * 8));
    }
    ntl_profile_free(p);
    ntl_profile_free(q);
}

/* Two samples of one thread at one time and a stack of that time: the
 * stack is the first sample's (the samples are joined to stacks by
 * thread and time, the first counted sample of a pair taking them), fed
 * by a sorted reader and through the log (which keeps only the samples
 * that claim references); after the log was fed, its stacks state takes
 * no more StackWalk events. */
static void check_same_time(bool is64)
{
    const uint64_t full[] = {0x400010, 0x400500};
    struct gen g;
    gen_init(&g, 4096, is64 ? 8 : 4, 0, 1000, 10000000, 132500000000000000ull, 1, "p", "p.etl");
    process(&g, is64, 1001, 100, true, false, "app.exe");
    thread(&g, is64, 1002, 100, 101);
    gen_image(&g, false, false, is64, 10, 1003, 0x400000, 0x10000, 100, 1, 2, 0x400000,
              "C:\\app\\app.exe");
    sample(&g, is64, 1010, 0x400010, 101);
    sample(&g, is64, 1010, 0x400020, 101);
    stack(&g, is64, 32, 1010, 1010, 101, full, 2);
    gen_finish(&g);
    for (int log = 0; log < 2; log++) {
        struct fed_list f;
        struct ntl_profile_etl_stack_counts counts;
        struct ntl_profile_sample s;
        size_t pos = 0;
        struct ntl_profile *p = fed_profile(g.file.data, g.file.len, log, &f, &counts);
        CHECK_EQ_U64(counts.samples_with_stack, 1);
        CHECK_EQ_U64(counts.stacks_unmatched, 0);
        CHECK_EQ_INT(ntl_profile_stack_next(p, &pos, &s), 1);
        CHECK_EQ_U64(s.ip, 0x400010);
        CHECK(s.depth == 1 && s.stack[0] == 0x400500);
        CHECK_EQ_INT(ntl_profile_stack_next(p, &pos, &s), 1);
        CHECK_EQ_U64(s.ip, 0x400020);
        CHECK_EQ_U64(s.depth, 0);
        ntl_profile_free(p);
    }
    /* A StackWalk event after the log was fed. */
    struct ntl_etl_options eo = {.sorted = true};
    struct ntl_profile_etl_options po = {0};
    struct ntl_profile_etl_stacks *st;
    struct ntl_profile_etl_log *lg;
    struct ntl_profile_etl_fed fed;
    struct ntl_profile *p;
    struct ntl_etl *t;
    struct ntl_etl_event ev;
    struct ntl_error err = {0};
    int late = 0;
    CHECK_EQ_INT(ntl_etl_open_mem(g.file.data, g.file.len, &eo, &t, &err), 0);
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    CHECK_EQ_INT(ntl_profile_etl_stacks_new(&st, &err), 0);
    CHECK_EQ_INT(ntl_profile_etl_log_new(&lg, &err), 0);
    while (ntl_etl_next(t, &ev, &err) > 0)
        CHECK_EQ_INT(ntl_profile_etl_log_add(lg, st, t, &ev, &po, &err), 0);
    while (ntl_profile_etl_log_feed(lg, p, st, &po, &fed, &err) > 0)
        ;
    ntl_etl_close(t);
    CHECK_EQ_INT(ntl_etl_open_mem(g.file.data, g.file.len, &eo, &t, &err), 0);
    while (ntl_etl_next(t, &ev, &err) > 0)
        late += ntl_profile_etl_feed(p, st, t, &ev, &po, &err) == NTL_ERR_ARGUMENT;
    CHECK_EQ_INT(late, 1);
    ntl_profile_etl_log_free(lg);
    ntl_profile_etl_stacks_free(st);
    ntl_profile_free(p);
    ntl_etl_close(t);
    gen_free(&g);
}

/* A buffer whose events start later than the next buffer's (two runs in
 * file order, the first taken into the log's merge only when its first
 * event is due) and a tie between them: the image event of the first
 * buffer and a sample of the second at one time go in file order, image
 * first, as a sorted reader gives them, so the sample is in the image. */
static void check_late_run(bool is64)
{
    static const int want[] = {NTL_PROFILE_ETL_PROCESS, NTL_PROFILE_ETL_THREAD,
                               NTL_PROFILE_ETL_IMAGE, NTL_PROFILE_ETL_SAMPLE,
                               NTL_PROFILE_ETL_SAMPLE};
    struct gen g;
    gen_init(&g, 4096, is64 ? 8 : 4, 0, 1000, 10000000, 132500000000000000ull, 1, "p", "p.etl");
    gen_image(&g, false, false, is64, 10, 1007, 0x400000, 0x10000, 100, 1, 2, 0x400000,
              "C:\\app\\app.exe");
    sample(&g, is64, 1008, 0x400030, 101);
    gen_next_buffer(&g, 1);
    process(&g, is64, 1001, 100, true, false, "app.exe");
    thread(&g, is64, 1002, 100, 101);
    sample(&g, is64, 1007, 0x400010, 101);
    gen_finish(&g);
    for (int log = 0; log < 2; log++) {
        struct fed_list f;
        struct ntl_profile_etl_stack_counts counts;
        struct ntl_profile *p = fed_profile(g.file.data, g.file.len, log, &f, &counts);
        CHECK_EQ_U64(f.n, 5);
        for (size_t i = 0; i < f.n && i < 5; i++)
            CHECK_EQ_INT(f.kind[i], want[i]);
        CHECK_EQ_U64(ntl_profile_total(p), 2);
        CHECK_EQ_U64(ntl_profile_unknown(p), 0);
        ntl_profile_free(p);
    }
    gen_free(&g);
}

/* Every result of feeding a trace, with its time (no cap, as fed_list has). */
#define AHEAD_SAMPLES 12000
struct fed_all {
    int kind[AHEAD_SAMPLES + 64];
    uint64_t ts[AHEAD_SAMPLES + 64];
    size_t n;
    uint64_t with_stack, stack_sum; /* samples with a stack; their stacks hashed */
};

/* Feeds data through a sorted reader (log false) or the log, into *f, or
 * (stop > 0) only its first stop records of the log's feed, then frees the
 * log with its merge unfinished. The profile's totals in *total, *unknown;
 * after a whole feed, its stacks in f. */
static void feed_all(const uint8_t *data, size_t size, bool log, size_t stop, struct fed_all *f,
                     uint64_t *total, uint64_t *unknown)
{
    struct ntl_etl_options eo = {.sorted = !log};
    struct ntl_profile_etl_options po = {0};
    struct ntl_profile_etl_stacks *st;
    struct ntl_profile_etl_log *lg;
    struct ntl_profile_etl_fed fed;
    struct ntl_etl *t;
    struct ntl_profile *p;
    struct ntl_etl_event ev;
    struct ntl_error err = {0};
    int k;
    f->n = 0;
    CHECK_EQ_INT(ntl_etl_open_mem(data, size, &eo, &t, &err), 0);
    CHECK_EQ_INT(ntl_profile_new(&p, &err), 0);
    CHECK_EQ_INT(ntl_profile_etl_stacks_new(&st, &err), 0);
    CHECK_EQ_INT(ntl_profile_etl_log_new(&lg, &err), 0);
    while (ntl_etl_next(t, &ev, &err) > 0) {
        if (log)
            CHECK_EQ_INT(ntl_profile_etl_log_add(lg, st, t, &ev, &po, &err), 0);
        else if ((k = ntl_profile_etl_feed(p, st, t, &ev, &po, &err)) != NTL_PROFILE_ETL_OTHER &&
                 k != NTL_PROFILE_ETL_STACK && f->n < AHEAD_SAMPLES + 64) {
            f->kind[f->n] = k;
            f->ts[f->n++] = ev.timestamp;
        }
    }
    while (log && (!stop || f->n < stop) && ntl_profile_etl_log_feed(lg, p, st, &po, &fed, &err) > 0)
        if (f->n < AHEAD_SAMPLES + 64) {
            f->kind[f->n] = fed.kind;
            f->ts[f->n++] = fed.timestamp;
        }
    *total = ntl_profile_total(p);
    *unknown = ntl_profile_unknown(p);
    f->with_stack = f->stack_sum = 0;
    if (!stop) {
        struct ntl_profile_etl_stack_counts counts;
        struct ntl_profile_sample s;
        size_t pos = 0;
        CHECK_EQ_INT(ntl_profile_etl_stacks_finish(p, st, &counts, &err), 0);
        f->with_stack = counts.samples_with_stack;
        while (ntl_profile_stack_next(p, &pos, &s) > 0)
            for (size_t i = 0; i < s.depth; i++)
                f->stack_sum = (f->stack_sum ^ s.ip ^ s.stack[i] ^ pos) * 0x100000001b3ull;
    }
    ntl_profile_etl_log_free(lg);
    ntl_profile_etl_stacks_free(st);
    ntl_profile_free(p);
    ntl_etl_close(t);
}

/* A large log: 12,000 samples in buffers of four CPUs whose times
 * interleave and tie, an image loaded and unloaded among them, full
 * stacks for some samples (those of a tie go to the first sample of the
 * pair, which the merge's order decides) and kernel keys for others,
 * defined out of key order. The log's feed gives every result and time a
 * sorted reader's feed gives, in its order, and the same stacks; a log
 * freed with its feed half done frees all it holds. */
static void check_large_log(bool is64)
{
    static struct fed_all a, b;
    uint64_t ta, tb, ua, ub;
    struct gen g;
    gen_init(&g, 8192, is64 ? 8 : 4, 0, 1000, 10000000, 132500000000000000ull, 1, "p", "p.etl");
    process(&g, is64, 1001, 100, true, false, "app.exe");
    thread(&g, is64, 1002, 100, 101);
    thread(&g, is64, 1003, 100, 102);
    for (unsigned n = 0; n < AHEAD_SAMPLES / 100; n++) {
        unsigned cpu = n % 4;
        uint64_t t0 = 2000 + (uint64_t)(n / 4) * 400;
        gen_next_buffer(&g, (uint16_t)cpu);
        for (unsigned i = 0; i < 100; i++) {
            if (cpu == 1 && i == 50)
                gen_image(&g, false, false, is64, (n / 4) % 2 ? 2 : 10, t0 + 4 * i, 0x400000,
                          0x10000, 100, 1, 2, 0x400000, "C:\\app\\app.exe");
            /* CPU 3 ties with CPU 0 at every sample. */
            uint64_t ts = t0 + 4 * i + (cpu == 3 ? 0 : cpu);
            const uint64_t frames[] = {0x400800 + n, 0x400900 + i};
            sample(&g, is64, ts, 0x400000 + 16 * i, 101 + i % 2);
            const uint64_t key = 0x7000 + i % 5;
            if ((cpu == 2 && i % 10 == 0) || (cpu == 3 && i % 10 == 5))
                stack(&g, is64, 32, ts, ts, 101 + i % 2, frames, 2);
            if (cpu == 1 && i % 20 == 3)
                stack(&g, is64, 37, ts, ts, 101 + i % 2, &key, 1);
        }
    }
    /* The keys' definitions at the rundown, in descending key order. */
    for (unsigned k = 5; k-- > 0;) {
        const uint64_t def[] = {0x7000 + k, kernel_base(is64) + 0x100 * k, 0x400a00 + k};
        stack(&g, is64, 36, 2000 + AHEAD_SAMPLES + 1 + k, 0, 0, def, 3);
    }
    gen_finish(&g);
    feed_all(g.file.data, g.file.len, false, 0, &a, &ta, &ua);
    feed_all(g.file.data, g.file.len, true, 0, &b, &tb, &ub);
    CHECK_EQ_U64(a.n, AHEAD_SAMPLES + 3 + AHEAD_SAMPLES / 400);
    CHECK_EQ_U64(b.n, a.n);
    size_t differ = 0;
    for (size_t i = 0; i < a.n && i < b.n; i++)
        differ += a.kind[i] != b.kind[i] || a.ts[i] != b.ts[i];
    CHECK_EQ_U64(differ, 0);
    CHECK_EQ_U64(tb, ta);
    CHECK_EQ_U64(ub, ua);
    CHECK(ua > 0 && ua < ta);
    CHECK_EQ_U64(a.with_stack, 2 * AHEAD_SAMPLES / 400 * 10 + AHEAD_SAMPLES / 400 * 5);
    CHECK_EQ_U64(b.with_stack, a.with_stack);
    CHECK_EQ_U64(b.stack_sum, a.stack_sum);
    feed_all(g.file.data, g.file.len, true, 100, &b, &tb, &ub);
    CHECK_EQ_U64(b.n, 100);
    gen_free(&g);
}

int main(int argc, char **argv)
{
    for (int is64 = 0; is64 < 2; is64++) {
        struct gen g;
        make_trace(&g, is64);
        check_trace(is64, g.file.data, g.file.len);
        check_stacks(is64, g.file.data, g.file.len);
        check_log(g.file.data, g.file.len);
        check_dcend(is64);
        check_same_time(is64);
        check_late_run(is64);
        check_large_log(is64);
        if (is64)
            check_filters(g.file.data, g.file.len);
        if (is64 && argc > 1) {
            FILE *f = fopen(argv[1], "wb");
            CHECK(f && fputc(0, f) == 0 && fwrite(g.file.data, 1, g.file.len, f) == g.file.len &&
                  fclose(f) == 0);
        }
        gen_free(&g);
    }
    return check_exit();
}
