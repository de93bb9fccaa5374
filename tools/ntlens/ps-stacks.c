/* `ntlens ps -d --stacks`: each thread's innermost frames, from the live
 * stack walk (ntlens/stack.h). A process is walked once, the first time one
 * of its threads is shown, with no source lines (names are enough here). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/stack.h"
#include "ps.h"
#include "stacks.h"

/* Frames shown per thread: where it is, and who called it. */
#define SHOWN 3

struct walked {
    uint32_t pid;
    struct ntl_stack_process *p;  /* NULL: the walk failed */
    int status;
};

struct ps_stacks {
    const volatile sig_atomic_t *stop;
    struct walked *v;
    size_t n, cap;
};

struct ps_stacks *ps_stacks_new(const volatile sig_atomic_t *stop)
{
    struct ps_stacks *s = calloc(1, sizeof(*s));
    if (s)
        s->stop = stop;
    return s;
}

void ps_stacks_free(struct ps_stacks *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        ntl_stack_process_free(s->v[i].p);
    free(s->v);
    free(s);
}

static const struct walked *walk(struct ps_stacks *s, uint32_t pid)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].pid == pid)
            return &s->v[i];
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        struct walked *grown = realloc(s->v, cap * sizeof(*grown));
        if (!grown)
            return NULL;
        s->v = grown;
        s->cap = cap;
    }
    struct walked *w = &s->v[s->n++];
    struct ntl_stack_options o = {.max_frames = 64, .stop = s->stop};
    struct ntl_error err = {0};
    w->pid = pid;
    w->p = NULL;
    w->status = ntl_stack_live(pid, &o, &w->p, &err);
    return w;
}

static const struct ntl_stack_thread *find_thread(const struct ntl_stack_process *p, uint32_t tid)
{
    size_t lo = 0, hi = p->nthreads;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->threads[mid]->tid == tid)
            return p->threads[mid];
        if (p->threads[mid]->tid < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const char *ps_stacks_cell(struct ps_stacks *s, uint32_t pid, uint32_t tid, char *buf,
                           size_t size)
{
    const struct walked *w = walk(s, pid);
    const struct ntl_stack_thread *t = w && w->p ? find_thread(w->p, tid) : NULL;
    *buf = 0;
    if (w && w->status == NTL_ERR_ACCESS)
        return "(not allowed)";
    if (!t)
        return "";
    size_t len = 0;
    for (size_t i = 0; i < t->nframes && i < SHOWN && len + 1 < size; i++) {
        char label[512];
        stacks_frame_label(&t->frames[i], label, sizeof label);
        int n = snprintf(buf + len, size - len, "%s%s", i ? " < " : "", label);
        len = n < 0 ? size : len + (size_t)n;
    }
    if (!t->nframes && *t->note)
        snprintf(buf, size, "(%s)", t->note);
    return buf;
}
