/* The ETW profile reader on arbitrary bytes: every event of a trace (sorted
 * or in file order, skipping bad buffers) fed to a profile with its
 * StackWalk stacks, the samples the end rundown explains placed late, then
 * the whole report and the named stacks; the per-module and per-process
 * hits must add up to the total (abort otherwise). The first byte picks the
 * order, the bucket size and a pid filter, and whether the same events read
 * in file order through ntl_profile_etl_log (decompressed ahead or not) must
 * make the profile a sorted reader's feed makes (abort otherwise). Read
 * ahead, the bytes come from a file, as `ntlens profile --etl` reads them. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ntlens/etl.h"
#include "ntlens/profile_etl.h"
#include "ntlens/profile_report.h"

/* Module hits, process hits and process unknowns add up to the totals. */
static void check_sums(struct ntl_profile *p)
{
    struct ntl_profile_module_row *m;
    struct ntl_profile_process_row *pr;
    size_t n;
    uint64_t mods = 0, procs = 0, unknown = 0;
    if (ntl_profile_modules(p, &m, &n, NULL) < 0)
        return;
    for (size_t i = 0; i < n; i++)
        mods += m[i].hits;
    free(m);
    if (ntl_profile_processes(p, &pr, &n, NULL) < 0)
        return;
    for (size_t i = 0; i < n; i++) {
        procs += pr[i].hits;
        unknown += pr[i].unknown;
    }
    free(pr);
    if (mods != ntl_profile_total(p) || procs != mods || unknown != ntl_profile_unknown(p))
        abort();
}

static void report(struct ntl_profile *p)
{
    struct ntl_profile_module_row *m;
    struct ntl_profile_process_row *pr;
    struct ntl_profile_thread_row *th;
    size_t n;
    if (ntl_profile_processes(p, &pr, &n, NULL) == 0)
        free(pr);
    if (ntl_profile_threads(p, &th, &n, NULL) == 0)
        free(th);
    if (ntl_profile_modules(p, &m, &n, NULL) < 0)
        return;
    for (size_t i = 0; i < n && i < 4; i++) {
        struct ntl_profile_function_row *f;
        size_t nf;
        if (m[i].range != NTL_PROFILE_NO_RANGE &&
            ntl_profile_functions(p, m[i].range, &f, &nf, NULL) == 0)
            free(f);
    }
    free(m);
    struct ntl_profile_sample s;
    char name[128];
    size_t pos = 0;
    while (ntl_profile_stack_next(p, &pos, &s) > 0)
        for (size_t i = 0; i < s.depth; i++)
            ntl_profile_symbolize(p, s.pid, s.stack[i], name, sizeof name);
}

static char file_path[] = "/tmp/fuzz_etl_profile.XXXXXX";

static void remove_file(void)
{
    remove(file_path);
}

/* data written to this process's file (the reader takes the decompressing
 * thread's copy of a buffer before reading it from a file); its path, or
 * NULL. */
static const char *as_file(const uint8_t *data, size_t size)
{
    static bool made;
    if (!made) {
        int fd = mkstemp(file_path);
        if (fd < 0)
            return NULL;
        close(fd);
        atexit(remove_file);
        made = true;
    }
    FILE *f = fopen(file_path, "wb");
    if (!f)
        return NULL;
    bool ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok ? file_path : NULL;
}

/* The events into p: through ntl_profile_etl_feed as the reader gives
 * them, or (log) in file order through ntl_profile_etl_log. False when
 * something could not be set up. *partial: the reader stopped early (a
 * sorted reader then gives no event at all) or hit its memory cap. */
static bool read_events(const uint8_t *data, size_t size, bool sorted, bool log, bool ahead,
                        const struct ntl_profile_etl_options *po, struct ntl_profile **out,
                        struct ntl_profile_etl_stack_counts *counts, bool *partial)
{
    struct ntl_etl_options opt = {.sorted = sorted, .sorted_limit = 16u << 20,
                                  .decompress_ahead = ahead};
    struct ntl_etl *t;
    struct ntl_profile *p;
    struct ntl_profile_etl_stacks *st;
    struct ntl_profile_etl_log *lg = NULL;
    struct ntl_profile_etl_fed fed;
    struct ntl_error err;
    struct ntl_etl_event ev;
    int rc;
    const char *path = ahead ? as_file(data, size) : NULL;
    if ((path ? ntl_etl_open_file(path, &opt, &t, &err)
              : ntl_etl_open_mem(data, size, &opt, &t, &err)) < 0)
        return false;
    if (ntl_profile_new(&p, &err) < 0) {
        ntl_etl_close(t);
        return false;
    }
    if (ntl_profile_etl_stacks_new(&st, &err) < 0 || (log && ntl_profile_etl_log_new(&lg, &err) < 0)) {
        ntl_profile_etl_stacks_free(st);
        ntl_profile_free(p);
        ntl_etl_close(t);
        return false;
    }
    while ((rc = ntl_etl_next(t, &ev, &err)) != 0) {
        if (rc < 0) {
            *partial |= rc == NTL_ERR_LIMIT || !ntl_etl_can_continue(t);
            if (!ntl_etl_can_continue(t))
                break;
            continue;
        }
        if (log)
            ntl_profile_etl_log_add(lg, st, t, &ev, po, &err);
        else
            ntl_profile_etl_feed(p, st, t, &ev, po, &err);
    }
    while (log && ntl_profile_etl_log_feed(lg, p, st, po, &fed, &err) > 0)
        ;
    ntl_profile_place_late(p, &err);
    ntl_profile_etl_stacks_finish(p, st, counts, &err);
    ntl_profile_etl_log_free(lg);
    ntl_profile_etl_stacks_free(st);
    ntl_etl_close(t);
    *out = p;
    return true;
}

/* The log must give the profile a sorted reader's feed gives: the same
 * totals, module and process hits, stacks. */
static void check_same(struct ntl_profile *a, struct ntl_profile *b,
                       const struct ntl_profile_etl_stack_counts *ca,
                       const struct ntl_profile_etl_stack_counts *cb)
{
    struct ntl_profile_module_row *ma, *mb;
    struct ntl_profile_sample sa, sb;
    size_t na, nb, pa = 0, pb = 0;
    if (ntl_profile_total(a) != ntl_profile_total(b) ||
        ntl_profile_unknown(a) != ntl_profile_unknown(b) ||
        ca->samples_with_stack != cb->samples_with_stack ||
        ca->stacks_unmatched != cb->stacks_unmatched || ca->keys_undefined != cb->keys_undefined)
        abort();
    if (ntl_profile_modules(a, &ma, &na, NULL) == 0 && ntl_profile_modules(b, &mb, &nb, NULL) == 0) {
        if (na != nb)
            abort();
        for (size_t i = 0; i < na; i++)
            if (ma[i].hits != mb[i].hits || ma[i].range != mb[i].range)
                abort();
        free(ma);
        free(mb);
    }
    while (ntl_profile_stack_next(a, &pa, &sa) > 0) {
        if (ntl_profile_stack_next(b, &pb, &sb) <= 0 || sa.ip != sb.ip || sa.pid != sb.pid ||
            sa.depth != sb.depth || (sa.depth && memcmp(sa.stack, sb.stack, sa.depth * 8)))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_profile_etl_options po = {0};
    struct ntl_profile *p, *q;
    struct ntl_profile_etl_stack_counts counts, qcounts;

    if (size < 1)
        return 0;
    po.bucket_shift = 2 + (data[0] >> 1) % 8 * 4;
    po.pid_set = data[0] & 0x80;
    /* Bit 4: the log from file order (bit 5: decompressing ahead) against
     * a sorted reader's feed; else the feed, sorted or not (bit 0). */
    bool log = data[0] & 0x10, partial = false;
    if (!read_events(data + 1, size - 1, log || (data[0] & 1), false, false, &po, &p, &counts,
                     &partial))
        return 0;
    if (log && read_events(data + 1, size - 1, false, true, data[0] & 0x20, &po, &q, &qcounts,
                           &partial)) {
        if (!partial)
            check_same(p, q, &counts, &qcounts);
        ntl_profile_free(q);
    }
    check_sums(p);
    report(p);
    ntl_profile_free(p);
    return 0;
}
