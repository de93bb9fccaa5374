/* Events into time order for the sorted mode (etl-internal.h).
 *
 * A trace's events are in time order within each buffer and its buffers
 * nearly so per CPU, so the list is a few hundred ascending runs: a
 * natural merge sort finds them and merges pairs of runs, log2(runs) passes
 * of sequential copies, where qsort compared through a function pointer
 * n log2(n) times. Merging takes the left run's event on equal times, so
 * events of the same time stay in file order. */
#include <stdlib.h>
#include <string.h>

#include "etl-internal.h"
#include "ntlens/thread.h"

/* Where the ascending run that starts at i ends. */
static size_t run_end(const struct sorted_ev *a, size_t i, size_t n)
{
    while (++i < n && a[i - 1].timestamp <= a[i].timestamp)
        ;
    return i;
}

static void merge(const struct sorted_ev *l, size_t nl, const struct sorted_ev *r, size_t nr,
                  struct sorted_ev *out)
{
    while (nl && nr) {
        if (r->timestamp < l->timestamp)
            *out++ = *r++, nr--;
        else
            *out++ = *l++, nl--;
    }
    memcpy(out, l, nl * sizeof *l);
    /* The right run may already be in place (sort_two). */
    if (out + nl != r)
        memcpy(out + nl, r, nr * sizeof *r);
}

/* One pass: each pair of adjacent runs of src merged into dst. The number
 * of runs left after it. */
static size_t merge_pass(const struct sorted_ev *src, struct sorted_ev *dst, size_t n)
{
    size_t runs = 0;
    for (size_t i = 0; i < n;) {
        size_t mid = run_end(src, i, n), end = mid < n ? run_end(src, mid, n) : n;
        merge(src + i, mid - i, src + mid, end - mid, dst + i);
        runs++;
        i = end;
    }
    return runs;
}

/* Sorts src[0..n) with dst[0..n) as scratch: where the result is. */
static struct sorted_ev *sort_runs(struct sorted_ev *src, struct sorted_ev *dst, size_t n)
{
    if (n < 2 || run_end(src, 0, n) == n)
        return src;
    while (merge_pass(src, dst, n) > 1) {
        struct sorted_ev *t = src;
        src = dst;
        dst = t;
    }
    return dst;
}

/* One half sorted on a second thread. */
struct half {
    struct sorted_ev *a, *tmp, *result;
    size_t n;
};

static void sort_half(void *arg)
{
    struct half *h = arg;
    h->result = sort_runs(h->a, h->tmp, h->n);
}

/* Below this many events a thread costs more than half the sort. */
#define PARALLEL_MIN 32768

/* a[0..n) sorted into a or tmp (returned): the first half on a second
 * thread when one starts, the second here, then the two merged. A merge
 * may write into the array that holds its right half: it writes at i + j
 * while reading the right half at m + j, never ahead of it. */
static struct sorted_ev *sort_two(struct sorted_ev *a, struct sorted_ev *tmp, size_t n)
{
    size_t m = n / 2;
    struct half h = {a, tmp, NULL, m};
    struct ntl_threads *th;
    if (n < PARALLEL_MIN || ntl_threads_start(&th, 1, sort_half, &h) < 0)
        return sort_runs(a, tmp, n);
    struct sorted_ev *r = sort_runs(a + m, tmp + m, n - m);
    ntl_threads_join(th);
    struct sorted_ev *l = h.result, *out = l == (r - m) ? (l == a ? tmp : a) : r - m;
    merge(l, m, r, n - m, out);
    return out;
}

int etl_sort_events(struct sorted_ev **a, size_t n, size_t *cap)
{
    if (n < 2 || run_end(*a, 0, n) == n)
        return 0;
    struct sorted_ev *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return -1;
    struct sorted_ev *dst = sort_two(*a, tmp, n);
    /* Whichever array holds the result is kept: copying it back was 3 MB
     * more for net.4.5.2.x64.etl. */
    free(dst == tmp ? *a : tmp);
    if (dst == tmp) {
        *a = tmp;
        *cap = n;
    }
    return 0;
}
