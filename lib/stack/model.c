/* The stack model's builder: threads and frames whose strings live in an
 * arena owned by the process, so a producer can hand out plain pointers and
 * free everything at once. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/stack.h"

/* Strings and threads are carved from chunks that never move. */
struct ntl_stack_chunk {
    struct ntl_stack_chunk *next;
    size_t used, cap;
    char data[];
};

struct ntl_stack_arena {
    struct ntl_stack_chunk *head;
};

#define CHUNK_SIZE 65536u

static void *arena_alloc(struct ntl_stack_arena *a, size_t n)
{
    n = (n + 15u) & ~(size_t)15u;
    struct ntl_stack_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > CHUNK_SIZE ? n : CHUNK_SIZE;
        c = malloc(sizeof(*c) + cap);
        if (!c)
            return NULL;
        c->next = a->head;
        c->used = 0;
        c->cap = cap;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    return p;
}

const char *ntl_stack_how_name(enum ntl_stack_how how)
{
    switch (how) {
    case NTL_STACK_CONTEXT: return "context";
    case NTL_STACK_CFI: return "cfi";
    case NTL_STACK_INLINE: return "inline";
    case NTL_STACK_KERNEL_LIST: return "kernel";
    case NTL_STACK_FRAME_POINTER: return "frame-pointer";
    case NTL_STACK_SCAN: return "scan";
    }
    return "?";
}

const char *ntl_stack_mode_name(enum ntl_stack_mode mode)
{
    return mode == NTL_STACK_KERNEL ? "kernel" : "user";
}

int ntl_stack_process_new(uint32_t pid, const char *name, struct ntl_stack_process **out,
                          struct ntl_error *err)
{
    struct ntl_stack_process *p = calloc(1, sizeof(*p));
    if (p)
        p->arena = calloc(1, sizeof(*p->arena));
    if (!p || !p->arena) {
        free(p);
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    }
    p->pid = pid;
    p->note = "";
    p->name = ntl_stack_strdup(p, name);
    if (!p->name) {
        ntl_stack_process_free(p);
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    }
    *out = p;
    return 0;
}

void ntl_stack_process_free(struct ntl_stack_process *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nthreads; i++)
        free(p->threads[i]->frames);
    free(p->threads);
    if (p->arena) {
        struct ntl_stack_chunk *c = p->arena->head;
        while (c) {
            struct ntl_stack_chunk *next = c->next;
            free(c);
            c = next;
        }
        free(p->arena);
    }
    free(p);
}

const char *ntl_stack_strdup(struct ntl_stack_process *p, const char *s)
{
    if (!s || !*s)
        return "";
    size_t n = strlen(s) + 1;
    char *copy = arena_alloc(p->arena, n);
    if (copy)
        memcpy(copy, s, n);
    return copy;
}

struct ntl_stack_thread *ntl_stack_thread_add(struct ntl_stack_process *p, uint32_t tid,
                                              struct ntl_error *err)
{
    if (p->nthreads == p->cap_threads) {
        size_t cap = p->cap_threads ? p->cap_threads * 2 : 16;
        struct ntl_stack_thread **grown = realloc(p->threads, cap * sizeof(*grown));
        if (!grown)
            goto nomem;
        p->threads = grown;
        p->cap_threads = cap;
    }
    struct ntl_stack_thread *t = arena_alloc(p->arena, sizeof(*t));
    if (!t)
        goto nomem;
    *t = (struct ntl_stack_thread){
        .tid = tid, .name = "", .state = "", .wait = "", .note = "",
        .start = NTL_STACK_UNKNOWN, .user_ns = NTL_STACK_UNKNOWN,
        .kernel_ns = NTL_STACK_UNKNOWN,
    };
    p->threads[p->nthreads++] = t;
    return t;
nomem:
    ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    return NULL;
}

int ntl_stack_frame_add(struct ntl_stack_process *p, struct ntl_stack_thread *t,
                        const struct ntl_stack_frame *f, struct ntl_error *err)
{
    if (t->nframes >= NTL_STACK_MAX_FRAMES)
        return ntl_error_set(err, NTL_ERR_LIMIT, "stack", NTL_NO_OFFSET,
                             "thread %u has more than %u frames", t->tid, NTL_STACK_MAX_FRAMES);
    /* Capacities are powers of two from 8, so a full array is one whose
     * count is one of them. */
    size_t n = t->nframes;
    if (n == 0 || (n >= 8 && (n & (n - 1)) == 0)) {
        size_t cap = n ? n * 2 : 8;
        struct ntl_stack_frame *grown = realloc(t->frames, cap * sizeof(*grown));
        if (!grown)
            return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
        t->frames = grown;
    }
    struct ntl_stack_frame copy = *f;
    copy.module = ntl_stack_strdup(p, f->module);
    copy.function = ntl_stack_strdup(p, f->function);
    copy.file = ntl_stack_strdup(p, f->file);
    if (!copy.module || !copy.function || !copy.file)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    t->frames[t->nframes++] = copy;
    return 0;
}

/* *dst = the formatted text, copied into p. 0, or NTL_ERR_NOMEM. */
static int set_note(struct ntl_stack_process *p, const char **dst, struct ntl_error *err,
                    const char *fmt, va_list ap)
{
    char text[512];
    vsnprintf(text, sizeof(text), fmt, ap);
    const char *note = ntl_stack_strdup(p, text);
    if (!note)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    *dst = note;
    return 0;
}

int ntl_stack_thread_note(struct ntl_stack_process *p, struct ntl_stack_thread *t,
                          struct ntl_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = set_note(p, &t->note, err, fmt, ap);
    va_end(ap);
    return rc;
}

int ntl_stack_process_note(struct ntl_stack_process *p, struct ntl_error *err,
                           const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = set_note(p, &p->note, err, fmt, ap);
    va_end(ap);
    return rc;
}

static int by_tid(const void *a, const void *b)
{
    uint32_t x = (*(struct ntl_stack_thread *const *)a)->tid;
    uint32_t y = (*(struct ntl_stack_thread *const *)b)->tid;
    return (x > y) - (x < y);
}

void ntl_stack_sort_threads(struct ntl_stack_process *p)
{
    if (p->nthreads > 1)
        qsort(p->threads, p->nthreads, sizeof(*p->threads), by_tid);
}
