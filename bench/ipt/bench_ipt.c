/* Intel PT packet decoding and quick analysis: ntlens against libipt
 * (Debian's libipt-dev, the rival; never linked into the product) on the real
 * recordings, each repeated in memory to about 64 MB, best of 7 rounds, with
 * memcpy as the limit. Prints MB/s and ratios.
 *   bench_ipt [TRACE...]   default: the kafl-* recordings in shared data */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <intel-pt.h>

#include "ntlens/buf.h"
#include "ntlens/ipt_event.h"
#include "ntlens/ipt_modules.h"
#include "ntlens/ipt_packet.h"

#define TARGET_BYTES (64u << 20)
#define RUNS 7

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* CPU time: the machine is shared */
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static volatile uint64_t sink;

struct trace {
    uint8_t *data;
    size_t size;
};

static uint64_t run_memcpy(const struct trace *t)
{
    static uint8_t *dst;
    static size_t cap;
    if (cap < t->size) {
        free(dst);
        dst = malloc(t->size);
        cap = t->size;
    }
    memcpy(dst, t->data, t->size);
    sink += dst[t->size / 2];
    return t->size;
}

static uint64_t run_ntl(const struct trace *t)
{
    struct ntl_ipt_decoder d;
    struct ntl_ipt_packet p;
    struct ntl_error err;
    uint64_t n = 0, x = 0;
    ntl_ipt_decoder_init(&d, t->data, t->size, 0);
    if (ntl_ipt_sync_first(&d, &err) < 0)
        return 0;
    for (;;) {
        int rc = ntl_ipt_next(&d, &p, &err);
        if (rc > 0) {
            n += p.type == NTL_IPT_PAD ? p.count : 1; /* a PAD run is one packet */
            x += p.payload;
            continue;
        }
        if (rc == 0 || ntl_ipt_resync(&d, &err) < 0)
            break;
    }
    sink += x;
    return n;
}

/* The event layer (last IP resolved at every IP packet, PSB+ tracked; no
 * time): counts the addresses it resolves, as the query decoder's run does. */
static uint64_t run_ntl_events(const struct trace *t)
{
    struct ntl_ipt_config c = {.buf = t->data, .size = t->size};
    struct ntl_ipt_evd d;
    struct ntl_ipt_event ev;
    struct ntl_error err;
    uint64_t n = 0, x = 0;
    ntl_ipt_evd_init(&d, &c);
    if (ntl_ipt_evd_sync_first(&d, &err) < 0)
        return 0;
    for (;;) {
        int rc = ntl_ipt_evd_next(&d, &ev, &err);
        if (rc > 0) {
            if (ev.flags & NTL_IPT_EV_IP) {
                n++;
                x += ev.ip;
            }
            continue;
        }
        if (rc == 0 || ntl_ipt_evd_resync(&d, &err) < 0)
            break;
    }
    sink += x;
    return n;
}

static uint64_t run_libipt(const struct trace *t)
{
    struct pt_config config;
    pt_config_init(&config);
    config.begin = t->data;
    config.end = t->data + t->size;
    struct pt_packet_decoder *d = pt_pkt_alloc_decoder(&config);
    uint64_t n = 0, x = 0;
    if (!d)
        return 0;
    if (pt_pkt_sync_forward(d) >= 0) {
        for (;;) {
            struct pt_packet p;
            int rc = pt_pkt_next(d, &p, sizeof p);
            if (rc >= 0) {
                n++;
                x += p.payload.ip.ip;
                continue;
            }
            if (rc == -pte_eos || pt_pkt_sync_forward(d) < 0)
                break;
        }
    }
    pt_pkt_free_decoder(d);
    sink += x;
    return n;
}

static uint64_t run_ntl_targets(const struct trace *t)
{
    struct ntl_ipt_targets tg;
    struct ntl_error err;
    ntl_ipt_targets_init(&tg, 0);
    ntl_ipt_targets_scan(&tg, t->data, t->size, &err);
    uint64_t n = tg.total;
    sink += tg.used;
    ntl_ipt_targets_free(&tg);
    return n;
}

/* libipt's query decoder driven without an image: drain events, take TIPs
 * as indirect branches and TNTs as conditional branches. Counts the
 * addresses it reports (event IPs and indirect-branch targets). */
static uint64_t run_libipt_query(const struct trace *t)
{
    struct pt_config config;
    pt_config_init(&config);
    config.begin = t->data;
    config.end = t->data + t->size;
    struct pt_query_decoder *q = pt_qry_alloc_decoder(&config);
    uint64_t n = 0, ip;
    if (!q)
        return 0;
    int status = pt_qry_sync_forward(q, &ip);
    while (status != -pte_eos) {
        if (status < 0) {
            status = pt_qry_sync_forward(q, &ip);
            continue;
        }
        if (!(status & pts_ip_suppressed))
            n++;
        while (status >= 0 && (status & pts_event_pending)) {
            struct pt_event ev;
            status = pt_qry_event(q, &ev, sizeof ev);
            if (status >= 0 && !ev.ip_suppressed)
                n++;
        }
        if (status < 0)
            continue;
        if (status & pts_eos)
            break;
        status = pt_qry_indirect_branch(q, &ip);
        if (status == -pte_bad_query) {
            int taken;
            status = pt_qry_cond_branch(q, &taken);
            if (status >= 0)
                status &= ~pts_ip_suppressed, status |= 0;
            if (status >= 0)
                n--; /* a TNT bit carries no address */
        }
    }
    pt_qry_free_decoder(q);
    sink += n;
    return n;
}

/* The contenders run in turn within each round, so that they share
 * whatever else the machine is doing; the best round counts. */
enum { K_MEMCPY, K_LIBIPT, K_NTL, K_QUERY, K_TARGETS, K_EVENTS, K_COUNT };

static void best_rates(const struct trace *t, double rate[K_COUNT], uint64_t out[K_COUNT])
{
    static uint64_t (*const fn[K_COUNT])(const struct trace *) = {
        run_memcpy, run_libipt, run_ntl, run_libipt_query, run_ntl_targets, run_ntl_events,
    };
    for (int k = 0; k < K_COUNT; k++)
        rate[k] = 0;
    for (int i = 0; i < RUNS; i++) {
        for (int k = 0; k < K_COUNT; k++) {
            double t0 = now();
            out[k] = fn[k](t);
            double dt = now() - t0;
            if (dt > 0 && (double)t->size / dt / 1e6 > rate[k])
                rate[k] = (double)t->size / dt / 1e6;
        }
    }
}

static int bench_file(const char *path)
{
    struct ntl_buf b;
    struct ntl_error err;
    if (ntl_file_read(path, (size_t)1 << 30, &b, &err) < 0 || b.len == 0) {
        fprintf(stderr, "bench_ipt: cannot read %s\n", path);
        ntl_buf_free(&b);
        return 1;
    }
    size_t reps = TARGET_BYTES / b.len + 1;
    struct trace t = {malloc(b.len * reps), b.len * reps};
    for (size_t i = 0; i < reps; i++)
        memcpy(t.data + i * b.len, b.data, b.len);
    double r[K_COUNT];
    uint64_t n[K_COUNT];
    best_rates(&t, r, n);
    printf("%s: %zu bytes x %zu = %.1f MB, best of %d rounds (CPU time)\n", path, b.len, reps,
           (double)t.size / 1e6, RUNS);
    printf("  memcpy                          %8.0f MB/s\n", r[K_MEMCPY]);
    printf("  libipt pt_pkt_next              %8.0f MB/s  %" PRIu64 " packets\n", r[K_LIBIPT],
           n[K_LIBIPT]);
    printf("  ntlens ntl_ipt_next             %8.0f MB/s  %" PRIu64 " packets  %.2fx libipt\n",
           r[K_NTL], n[K_NTL], r[K_NTL] / r[K_LIBIPT]);
    printf("  libipt query decoder            %8.0f MB/s  %" PRIu64 " addresses\n", r[K_QUERY],
           n[K_QUERY]);
    printf("  ntlens quick analysis (targets) %8.0f MB/s  %" PRIu64
           " targets  %.2fx libipt query, %.2fx pt_pkt_next\n",
           r[K_TARGETS], n[K_TARGETS], r[K_TARGETS] / r[K_QUERY], r[K_TARGETS] / r[K_LIBIPT]);
    printf("  ntlens events (ntl_ipt_evd_next)%8.0f MB/s  %" PRIu64
           " addresses  %.2fx libipt query, %.2fx ntl_ipt_next\n",
           r[K_EVENTS], n[K_EVENTS], r[K_EVENTS] / r[K_QUERY], r[K_EVENTS] / r[K_NTL]);
    if (n[K_NTL] != n[K_LIBIPT])
        printf("  NOTE: packet counts differ\n");
    if (n[K_EVENTS] != n[K_TARGETS])
        printf("  NOTE: the event layer and the quick analysis resolve different addresses\n");
    free(t.data);
    ntl_buf_free(&b);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            rc |= bench_file(argv[i]);
        return rc;
    }
    static const char *const names[] = {"kafl-mruby", "kafl-avscript32", "kafl-foo", "kafl-unzip"};
    const char *root = getenv("NTLENS_SHARED_DATA");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/ipt/real/%s/trace.pt", root ? root : NTL_SHARED_DATA,
                 names[i]);
        rc |= bench_file(path);
    }
    return rc;
}
