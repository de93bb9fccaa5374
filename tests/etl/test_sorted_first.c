/* Sorted mode's first reading reads only each event's kind, size and time
 * (reader.c, parse_time): its events in time order must be the streamed
 * events stably sorted by time, with the same errors in the same order and
 * the same counts, on a trace of every header kind (PEBS and PMC counters,
 * extended items, messages) in both pointer sizes, and on every copy of it
 * with one header byte of one event changed. Runs natively and under Wine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "etl_gen.h"
#include "ntlens/buf.h"
#include "ntlens/etl.h"
#include "ntlens/reader.h"

#define PROV_GUID "3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c"
#define START_FT 132500000000000000ull
#define MAX_EVENTS 64
#define MAX_ERRORS 8

struct seen {
    size_t n, n_err;
    uint64_t ts[MAX_EVENTS];
    uint32_t where[MAX_EVENTS]; /* buffer index << 16 | position */
    int kind[MAX_EVENTS];
    int status[MAX_ERRORS];
    uint64_t offset[MAX_ERRORS];
    char msg[MAX_ERRORS][200];
    struct ntl_etl_stats st;
    int open_rc;
};

static const uint8_t ext_items[] = {
    0, 0, 1, 0, 1, 0, 16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
    0, 0, 9, 0, 0, 0, 3, 0, 0xaa, 0xbb, 0xcc, 0, 0, 0, 0, 0,
};

/* One buffer of each kind of event from t0 on, a time every 2 units, so
 * the other CPU's buffer interleaves with it. */
static void kinds(struct gen *g, bool is64, uint64_t t0)
{
    uint8_t pay[40], ext[24];
    for (int i = 0; i < 40; i++)
        pay[i] = (uint8_t)(i * 7);
    memset(ext, 0x5a, sizeof ext);
    gen_system(g, false, is64, 2, 0x0501, 100, 200, t0, NULL, 0, pay, 8);
    gen_system(g, true, is64, 2, 0x0524, 101, 201, t0 + 2, NULL, 0, pay, 12);
    gen_perfinfo(g, is64, 0x8000 | 0x0200 | 2, 0x0f2e, t0 + 4, ext, sizeof ext, pay, 16);
    gen_perfinfo(g, is64, 2, 0x0f2e, t0 + 6, NULL, 0, pay, 16);
    gen_classic(g, false, is64, PROV_GUID, 1, 4, 3, 102, 202, t0 + 8, pay, 20);
    gen_classic(g, true, is64, PROV_GUID, 2, 5, 4, 103, 203, t0 + 10, pay, 4);
    gen_event(g, is64, PROV_GUID, 77, 9, 55, 1, 104, 204, t0 + 12, ext_items, sizeof ext_items,
              pay, 10);
    gen_event(g, is64, PROV_GUID, 78, 9, 55, 1, 104, 204, t0 + 14, NULL, 0, pay, 3);
    gen_message(g, 12, 105, 205, t0 + 16, pay, 6);
}

static void build(struct gen *g, int ps)
{
    gen_init(g, 0x1000, ps, 0, 1000, 10000000, START_FT, 1, "first", "first.etl");
    gen_next_buffer(g, 0);
    kinds(g, ps == 8, 2001);
    gen_next_buffer(g, 1);
    kinds(g, ps == 8, 2000);
    gen_next_buffer(g, 0);
    kinds(g, ps == 8, 3000);
    gen_finish(g);
}

static void read_trace(const struct ntl_buf *file, bool sorted, struct seen *s)
{
    struct ntl_etl_options opt = {.sorted = sorted};
    struct ntl_etl *t;
    struct ntl_error err = {0};
    struct ntl_etl_event ev;
    int rc;
    memset(s, 0, sizeof *s);
    if ((s->open_rc = ntl_etl_open_mem(file->data, file->len, &opt, &t, &err)) < 0)
        return;
    while ((rc = ntl_etl_next(t, &ev, &err)) != 0) {
        if (rc < 0) {
            if (s->n_err < MAX_ERRORS) {
                s->status[s->n_err] = rc;
                s->offset[s->n_err] = err.offset;
                snprintf(s->msg[s->n_err], sizeof s->msg[0], "%s", err.message);
            }
            s->n_err++;
            if (!ntl_etl_can_continue(t))
                break;
            continue;
        }
        if (s->n < MAX_EVENTS) {
            s->ts[s->n] = ev.timestamp;
            s->where[s->n] = ev.buffer_index << 16 | ev.buffer_pos;
            s->kind[s->n] = ev.kind;
        }
        s->n++;
    }
    ntl_etl_get_stats(t, &s->st);
    ntl_etl_close(t);
}

/* Streamed events into time order, stable (insertion sort). */
static void stable_sort(struct seen *s)
{
    for (size_t i = 1; i < s->n && i < MAX_EVENTS; i++)
        for (size_t j = i; j > 0 && s->ts[j - 1] > s->ts[j]; j--) {
            uint64_t ts = s->ts[j];
            uint32_t w = s->where[j];
            int k = s->kind[j];
            s->ts[j] = s->ts[j - 1], s->where[j] = s->where[j - 1], s->kind[j] = s->kind[j - 1];
            s->ts[j - 1] = ts, s->where[j - 1] = w, s->kind[j - 1] = k;
        }
}

/* Whether the sorted reading of file matches its streamed one. */
static bool same(const struct ntl_buf *file)
{
    struct seen a, b;
    read_trace(file, false, &a);
    read_trace(file, true, &b);
    stable_sort(&a);
    size_t ne = a.n_err < MAX_ERRORS ? a.n_err : MAX_ERRORS, n = a.n < MAX_EVENTS ? a.n : MAX_EVENTS;
    bool ok = a.open_rc == b.open_rc && a.n == b.n && a.n_err == b.n_err &&
              !memcmp(a.ts, b.ts, n * sizeof a.ts[0]) &&
              !memcmp(a.where, b.where, n * sizeof a.where[0]) &&
              !memcmp(a.kind, b.kind, n * sizeof a.kind[0]) &&
              !memcmp(a.status, b.status, ne * sizeof a.status[0]) &&
              !memcmp(a.offset, b.offset, ne * sizeof a.offset[0]) &&
              a.st.events == b.st.events && a.st.buffers_bad == b.st.buffers_bad &&
              !memcmp(a.st.events_by_kind, b.st.events_by_kind, sizeof a.st.events_by_kind) &&
              a.st.first_timestamp == b.st.first_timestamp &&
              a.st.last_timestamp == b.st.last_timestamp;
    for (size_t i = 0; ok && i < ne; i++)
        ok = !strcmp(a.msg[i], b.msg[i]);
    return ok;
}

/* Every byte of the first 0x78 of each event of buffer 1 (headers,
 * extensions, extended items) set to values that break one check or
 * another; each copy read both ways. */
static void test_mutations(int ps)
{
    struct gen g;
    build(&g, ps);
    struct seen s;
    read_trace(&g.file, false, &s);
    CHECK_EQ_U64(s.n, 28);
    CHECK_EQ_U64(s.n_err, 0);
    CHECK(same(&g.file));
    static const uint8_t values[] = {0x00, 0x01, 0x02, 0x08, 0x0e, 0x13, 0x40, 0x80, 0xc0, 0xff};
    size_t copies = 0, differing = 0;
    for (size_t e = 0; e < s.n && e < MAX_EVENTS; e++) {
        if (s.where[e] >> 16 != 1)
            continue;
        size_t at = 0x1000 + (s.where[e] & 0xffff);
        for (size_t j = 0; j < 0x78 && at + j < 0x2000; j++) {
            uint8_t orig = g.file.data[at + j];
            for (size_t v = 0; v < sizeof values; v++) {
                g.file.data[at + j] = values[v] == orig ? (uint8_t)~orig : values[v];
                copies++;
                if (!same(&g.file)) {
                    if (!differing)
                        fprintf(stderr, "differs: event %zu byte 0x%zx = 0x%02x\n", e, j,
                                g.file.data[at + j]);
                    differing++;
                }
            }
            g.file.data[at + j] = orig;
        }
    }
    CHECK(copies > 5000);
    CHECK_EQ_U64(differing, 0);
    gen_free(&g);
}

int main(void)
{
    test_mutations(8);
    test_mutations(4);
    return check_exit();
}
