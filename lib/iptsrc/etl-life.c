/* Which modules and processes an ETW trace had at a moment: an IPT event's
 * trace ran through what was there when it was taken, not what was loaded
 * before and gone by then, nor what came later. Events are in file order,
 * which is not time order across per-CPU buffers, so they are sorted by
 * thing and time (a trace holds tens of thousands of image events). */
#include <stdlib.h>

#include "iptsrc-internal.h"

struct ev {
    struct iptsrc_life_event e;
    size_t index;
};

static int cmp(const void *pa, const void *pb)
{
    const struct ev *a = pa, *b = pb;
    if (a->e.key_a != b->e.key_a)
        return a->e.key_a < b->e.key_a ? -1 : 1;
    if (a->e.key_b != b->e.key_b)
        return a->e.key_b < b->e.key_b ? -1 : 1;
    if (a->e.ts != b->e.ts)
        return a->e.ts < b->e.ts ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static bool same_thing(const struct ev *a, const struct ev *b)
{
    return a->e.key_a == b->e.key_a && a->e.key_b == b->e.key_b;
}

/* One thing's events v[0, n), by time: which tells its state at `at`. */
static void mark(const struct ev *v, size_t n, uint64_t at, bool *present)
{
    size_t last = n;
    for (size_t i = 0; i < n && v[i].e.ts <= at; i++)
        last = i;
    if (last < n)
        present[v[last].index] = v[last].e.life != IPTSRC_GONE;
    else
        present[v[0].index] = v[0].e.life != IPTSRC_APPEARS;
}

int iptsrc_present(const void *list, size_t n, uint64_t at, iptsrc_life_fn get, bool *present,
                   struct ntl_error *err)
{
    struct ev *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    for (size_t i = 0; i < n; i++) {
        get(list, i, &v[i].e);
        v[i].index = i;
        present[i] = false;
    }
    qsort(v, n, sizeof *v, cmp);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && same_thing(&v[i], &v[j]); j++)
            ;
        mark(v + i, j - i, at, present);
    }
    free(v);
    return 0;
}

static void image_life(const void *list, size_t i, struct iptsrc_life_event *e)
{
    const struct ntl_etl_image *img = (const struct ntl_etl_image *)list + i;
    /* The kernel's half is every process's: its events may name any. */
    e->key_a = img->kernel ? UINT64_MAX : img->pid;
    e->key_b = img->base;
    e->ts = img->timestamp;
    e->life = img->kind == NTL_ETL_IMAGE_UNLOAD  ? IPTSRC_GONE
              : img->kind == NTL_ETL_IMAGE_DCEND ? IPTSRC_STILL
                                                 : IPTSRC_APPEARS;
}

int iptsrc_images_present(const struct ntl_etl_image *imgs, size_t n, uint64_t at, bool *present,
                          struct ntl_error *err)
{
    return iptsrc_present(imgs, n, at, image_life, present, err);
}
