/* PsList's rows (ntlens/perf_ps.h, taken through ntlens/source_perf.h) over arbitrary
 * answers: a source that returns the input as its PERF_DATA_BLOCK, taken
 * twice for the CPU % pass. Whatever the parser accepts, ps must turn into
 * rows without reading outside the block (thread parents, counters of odd
 * sizes, instances named _Total, missing objects). */
#include <stdint.h>
#include <string.h>

#include "ntlens/perf_ps.h"
#include "ntlens/source_perf.h"

struct blob {
    const uint8_t *data;
    size_t size;
};

static int query(struct ntl_source *s, const char *q, struct ntl_buf *block, struct ntl_error *err)
{
    const struct blob *b = ntl_source_impl(s);
    (void)q;
    block->len = 0;
    if (ntl_buf_append(block, b->data, b->size) < 0)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    return 0;
}

static int titles(struct ntl_source *s, enum ntl_title_kind kind, unsigned lang, struct ntl_buf *out,
                  struct ntl_error *err)
{
    (void)s; (void)kind; (void)lang; (void)out;
    return ntl_error_set(err, NTL_ERR_NOT_FOUND, NULL, NTL_NO_OFFSET, "no titles");
}

static const struct ntl_source_ops ops = {query, titles, NULL, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct blob b = {data, size};
    struct ntl_source *src = ntl_source_new(&ops, &b, "fuzz");
    struct ntl_perf_titles *t = NULL;
    struct ntl_perf_ps_indices ix;
    struct ntl_perf_ps_sample s0, s1;
    struct ntl_error err;
    char state[48];

    if (!src)
        return 0;
    if (ntl_source_ps_titles(src, &t, &ix, &err) == 0) {
        int r0 = ntl_source_ps_take(src, &ix, true, true, &s0, &err);
        int r1 = ntl_source_ps_take(src, &ix, true, true, &s1, &err);
        if (r0 == 0 && r1 == 0) {
            ntl_perf_ps_sample_cpu(&s1, &s0);
            for (size_t i = 0; i < s1.nthreads; i++) {
                ntl_perf_ps_thread_state(state, sizeof state, &s1.threads[i]);
                if (s1.threads[i].proc != SIZE_MAX && s1.threads[i].proc >= s1.nprocs)
                    __builtin_trap(); /* a thread must point at a listed process */
            }
        }
        ntl_perf_ps_sample_free(&s0);
        ntl_perf_ps_sample_free(&s1);
    }
    ntl_perf_titles_free(t);
    ntl_source_close(src);
    return 0;
}
