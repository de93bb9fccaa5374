/* The segments runs went through. */
#include <stdlib.h>

#include "flow-trail.h"
#include "ntlens/error.h"

int flow_trail_grow(struct flow_trail *t, size_t more)
{
    size_t cap = t->cap ? t->cap : 1024;
    while (cap - t->n < more)
        cap *= 2;
    struct flow_seg *v = realloc(t->v, cap * sizeof *v);
    if (!v)
        return -1;
    t->v = v;
    t->cap = cap;
    return 0;
}

void flow_trail_drop(struct flow_trail *t, uint64_t at)
{
    size_t dead = (size_t)(at - t->base);
    if (dead == 0 || dead * 2 < t->n)
        return;
    memmove(t->v, t->v + dead, (t->n - dead) * sizeof *t->v);
    t->n -= dead;
    t->base = at;
}

void flow_trail_free(struct flow_trail *t)
{
    free(t->v);
    memset(t, 0, sizeof *t);
}
