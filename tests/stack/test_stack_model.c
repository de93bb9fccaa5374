/* The stack model's builder (lib/stack/model.c): strings copied into the
 * process's arena, frames grown past every capacity step, the frame limit,
 * notes replaced, threads sorted, names of hows and modes. */
#include <string.h>

#include "check.h"
#include "ntlens/stack.h"

static void test_frames(void)
{
    struct ntl_stack_process *p;
    struct ntl_error err = {0};
    CHECK_EQ_INT(ntl_stack_process_new(42, "app", &p, &err), 0);
    CHECK_EQ_STR(p->name, "app");
    CHECK_EQ_U64(p->pid, 42);
    struct ntl_stack_thread *t = ntl_stack_thread_add(p, 7, &err);
    CHECK(t != NULL);
    CHECK_EQ_STR(t->name, "");
    CHECK_EQ_STR(t->note, "");
    CHECK_EQ_U64(t->user_ns, NTL_STACK_UNKNOWN);
    CHECK_EQ_U64(t->start, NTL_STACK_UNKNOWN);

    char fn[32];
    for (unsigned i = 0; i < 100; i++) {
        snprintf(fn, sizeof fn, "f%u", i);
        struct ntl_stack_frame f = {.pc = 0x1000 + i, .how = NTL_STACK_CFI, .module = "m.so",
                                    .function = fn, .file = NULL, .line = i};
        CHECK_EQ_INT(ntl_stack_frame_add(p, t, &f, &err), 0);
        strcpy(fn, "overwritten");
    }
    CHECK_EQ_U64(t->nframes, 100);
    int ok = 1;
    for (unsigned i = 0; i < 100; i++) {
        snprintf(fn, sizeof fn, "f%u", i);
        ok &= t->frames[i].pc == 0x1000 + i && !strcmp(t->frames[i].function, fn) &&
              !strcmp(t->frames[i].file, "") && t->frames[i].line == i;
    }
    CHECK(ok);

    /* The limit: NTL_STACK_MAX_FRAMES, then NTL_ERR_LIMIT naming the thread. */
    struct ntl_stack_frame f = {.pc = 1};
    while (t->nframes < NTL_STACK_MAX_FRAMES)
        CHECK_EQ_INT(ntl_stack_frame_add(p, t, &f, &err), 0);
    CHECK_EQ_INT(ntl_stack_frame_add(p, t, &f, &err), NTL_ERR_LIMIT);
    CHECK(strstr(err.message, "thread 7") != NULL);
    CHECK_EQ_U64(t->nframes, NTL_STACK_MAX_FRAMES);

    CHECK_EQ_INT(ntl_stack_thread_note(p, t, &err, "first %d", 1), 0);
    CHECK_EQ_INT(ntl_stack_thread_note(p, t, &err, "second %s", "note"), 0);
    CHECK_EQ_STR(t->note, "second note");
    ntl_stack_process_free(p);
}

static void test_threads(void)
{
    struct ntl_stack_process *p;
    struct ntl_error err = {0};
    CHECK_EQ_INT(ntl_stack_process_new(1, NULL, &p, &err), 0);
    CHECK_EQ_STR(p->name, "");
    static const uint32_t tids[] = {30, 5, 1000, 17, 5000, 2, 9, 64, 63, 1, 20, 11, 12, 13, 14,
                                    15, 16, 18, 19, 21};
    for (size_t i = 0; i < sizeof tids / sizeof *tids; i++)
        CHECK(ntl_stack_thread_add(p, tids[i], &err) != NULL);
    CHECK_EQ_U64(p->nthreads, 20);
    ntl_stack_sort_threads(p);
    int sorted = 1;
    for (size_t i = 1; i < p->nthreads; i++)
        sorted &= p->threads[i - 1]->tid < p->threads[i]->tid;
    CHECK(sorted);
    CHECK_EQ_U64(p->threads[0]->tid, 1);
    CHECK_EQ_U64(p->threads[19]->tid, 5000);
    /* Strings larger than an arena chunk get a chunk of their own. */
    static char big[100000];
    memset(big, 'x', sizeof big - 1);
    const char *copy = ntl_stack_strdup(p, big);
    CHECK(copy != NULL && strlen(copy) == sizeof big - 1);
    CHECK_EQ_STR(ntl_stack_strdup(p, NULL), "");
    ntl_stack_process_free(p);
    ntl_stack_process_free(NULL);
}

static void test_names(void)
{
    CHECK_EQ_STR(ntl_stack_how_name(NTL_STACK_CONTEXT), "context");
    CHECK_EQ_STR(ntl_stack_how_name(NTL_STACK_CFI), "cfi");
    CHECK_EQ_STR(ntl_stack_how_name(NTL_STACK_INLINE), "inline");
    CHECK_EQ_STR(ntl_stack_how_name(NTL_STACK_KERNEL_LIST), "kernel");
    CHECK_EQ_STR(ntl_stack_how_name(NTL_STACK_FRAME_POINTER), "frame-pointer");
    CHECK_EQ_STR(ntl_stack_how_name(NTL_STACK_SCAN), "scan");
    CHECK_EQ_STR(ntl_stack_mode_name(NTL_STACK_USER), "user");
    CHECK_EQ_STR(ntl_stack_mode_name(NTL_STACK_KERNEL), "kernel");
}

int main(void)
{
    test_frames();
    test_threads();
    test_names();
    return check_exit();
}
