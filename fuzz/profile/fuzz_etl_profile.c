/* The ETW profile reader on arbitrary bytes: every event of a trace (sorted
 * or in file order, skipping bad buffers) fed to a profile with its
 * StackWalk stacks, the samples the end rundown explains placed late, then
 * the whole report and the named stacks; the per-module and per-process
 * hits must add up to the total (abort otherwise). The first byte picks the
 * order, the bucket size and a pid filter. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_etl_options opt = {.sorted_limit = 16u << 20};
    struct ntl_profile_etl_options po = {0};
    struct ntl_etl *t;
    struct ntl_profile *p;
    struct ntl_profile_etl_stacks *st;
    struct ntl_profile_etl_stack_counts counts;
    struct ntl_error err;
    struct ntl_etl_event ev;
    int rc;

    if (size < 1)
        return 0;
    opt.sorted = data[0] & 1;
    po.bucket_shift = 2 + (data[0] >> 1) % 8 * 4;
    po.pid_set = data[0] & 0x80;
    if (ntl_etl_open_mem(data + 1, size - 1, &opt, &t, &err) < 0)
        return 0;
    if (ntl_profile_new(&p, &err) < 0 || ntl_profile_etl_stacks_new(&st, &err) < 0) {
        ntl_etl_close(t);
        return 0;
    }
    while ((rc = ntl_etl_next(t, &ev, &err)) != 0) {
        if (rc < 0) {
            if (!ntl_etl_can_continue(t))
                break;
            continue;
        }
        ntl_profile_etl_feed(p, st, t, &ev, &po, &err);
    }
    ntl_profile_place_late(p, &err);
    ntl_profile_etl_stacks_finish(p, st, &counts, &err);
    ntl_profile_etl_stacks_free(st);
    check_sums(p);
    report(p);
    ntl_profile_free(p);
    ntl_etl_close(t);
    return 0;
}
