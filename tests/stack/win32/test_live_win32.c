/* ntl_stack_live on a live process under Wine (or Windows): the frames
 * dbghelp walks for each thread of stack_target.exe are the return
 * addresses the thread recorded of itself, named after the functions the
 * thread sits in; `ntlens.exe stacks PID TID` prints them.
 * argv[1]: stack_target.exe, argv[2]: ntlens.exe. */
#include "check.h"
#include "target.h"

#include "ntlens/stack.h"

static const struct ntl_stack_thread *thread_of(const struct ntl_stack_process *p, uint32_t tid)
{
    for (size_t i = 0; i < p->nthreads; i++)
        if (p->threads[i]->tid == tid)
            return p->threads[i];
    return NULL;
}

static void dump(const struct ntl_stack_thread *t, const struct target_thread *want)
{
    fprintf(stderr, "thread %u (%s) note \"%s\":\n", t->tid, want->name, t->note);
    for (size_t i = 0; i < t->nframes; i++)
        fprintf(stderr, "  %2zu %llx %s!%s+0x%llx %s:%u (%s)\n", i,
                (unsigned long long)t->frames[i].pc, t->frames[i].module,
                t->frames[i].function, (unsigned long long)t->frames[i].function_offset,
                t->frames[i].file, t->frames[i].line, ntl_stack_how_name(t->frames[i].how));
    fprintf(stderr, "  recorded:");
    for (unsigned i = 0; i < want->n; i++)
        fprintf(stderr, " %llx", (unsigned long long)want->frames[i]);
    fprintf(stderr, "\n");
}

/* The thread sits in want->name. Its record starts in record() (frame 0)
 * and in want->name (frame 1, at the recording call); from frame 2 on it is
 * the callers' return addresses, which the walk must give above the frame
 * of want->name, up to the thread's outermost frame (Wine's capture goes on
 * past it, into a 0). */
static void check_thread(const struct ntl_stack_thread *t, const struct target_thread *want,
                         uint64_t start)
{
    CHECK_EQ_U64(t->start, start);
    size_t k = 0;
    while (k < t->nframes && strcmp(t->frames[k].function, want->name))
        k++;
    CHECK(k < t->nframes);
    unsigned outer = 2;
    while (outer < want->n && want->frames[outer])
        outer++;
    CHECK(outer > 3); /* thread_main, BaseThreadInitThunk, RtlUserThreadStart at least */
    bool same = k < t->nframes && t->nframes - k >= outer - 1;
    for (unsigned i = 2; same && i < outer; i++)
        same = t->frames[k + i - 1].pc == want->frames[i];
    CHECK(same);
    if (k < t->nframes) {
        const struct ntl_stack_frame *f = &t->frames[k];
        CHECK_EQ_STR(f->module, "stack_target.exe");
        CHECK(f->line > 0 && strstr(f->file, "stack_target.c") != NULL);
        CHECK(f->function_offset > 0 && f->function_offset < 256);
    }
    if (!strcmp(want->name, "in_busy"))
        CHECK(k == 0 && t->frames[0].how == NTL_STACK_CONTEXT);
    if (!strcmp(want->name, "recurse")) {
        size_t deep = 0;
        for (size_t i = 0; i < t->nframes; i++)
            deep += !strcmp(t->frames[i].function, "recurse");
        CHECK_EQ_INT(deep, 20);
    }
    CHECK(t->user_ns != NTL_STACK_UNKNOWN && t->kernel_ns != NTL_STACK_UNKNOWN);
    CHECK(t->state[0] != '\0');
    if (!same || k == t->nframes)
        dump(t, want);
}

static void check_every_thread(const struct target *tg)
{
    struct ntl_stack_options o = {.lines = true};
    struct ntl_stack_process *p = NULL;
    struct ntl_error err = {0};
    int rc = ntl_stack_live(tg->pi.dwProcessId, &o, &p, &err);
    CHECK_EQ_INT(rc, 0);
    if (rc < 0) {
        fprintf(stderr, "ntl_stack_live: %s\n", err.message);
        return;
    }
    CHECK_EQ_STR(p->name, "stack_target.exe");
    CHECK_EQ_STR(p->note, "");
    CHECK(p->stopped_ns > 0);
    CHECK(p->nthreads >= TARGET_THREADS + 1); /* and the main thread */
    for (size_t i = 1; i < p->nthreads; i++)
        CHECK(p->threads[i - 1]->tid < p->threads[i]->tid);
    for (int i = 0; i < TARGET_THREADS; i++) {
        const struct ntl_stack_thread *t = thread_of(p, tg->threads[i].tid);
        CHECK(t != NULL);
        if (t)
            check_thread(t, &tg->threads[i], tg->start);
    }
    ntl_stack_process_free(p);
}

/* Requested threads only, a tid that is no thread of the process, a cap on
 * frames, and a walk stopped before it began. */
static void check_options(const struct target *tg)
{
    uint32_t tids[] = {0x7ffffffcu, tg->threads[3].tid};
    struct ntl_stack_options o = {.tids = tids, .ntids = 2, .max_frames = 5};
    struct ntl_stack_process *p = NULL;
    struct ntl_error err = {0};
    CHECK_EQ_INT(ntl_stack_live(tg->pi.dwProcessId, &o, &p, &err), 0);
    if (p) {
        CHECK_EQ_INT(p->nthreads, 2);
        CHECK_EQ_U64(p->threads[0]->tid, tg->threads[3].tid);
        CHECK_EQ_INT(p->threads[0]->nframes, 5);
        CHECK_EQ_STR(p->threads[0]->note, "");
        CHECK(strstr(p->threads[1]->note, "not a thread of process") != NULL);
        CHECK_EQ_INT(p->threads[1]->nframes, 0);
        ntl_stack_process_free(p);
    }
    volatile sig_atomic_t stop = 1;
    struct ntl_stack_options halted = {.stop = &stop};
    p = NULL;
    CHECK_EQ_INT(ntl_stack_live(tg->pi.dwProcessId, &halted, &p, &err), 0);
    if (p) {
        CHECK_EQ_INT(p->nthreads, 0);
        ntl_stack_process_free(p);
    }
}

/* The CLI on one thread: its records carry the function the thread sits
 * in and the return addresses it recorded above it. */
static void check_cli(const struct target *tg, const char *ntlens)
{
    const struct target_thread *want = &tg->threads[3];
    char cmd[2048], out[1 << 16];
    snprintf(cmd, sizeof(cmd), "\"\"%s\" stacks --format jsonl %lu %u 2>&1\"", ntlens,
             tg->pi.dwProcessId, want->tid);
    FILE *f = _popen(cmd, "r");
    CHECK(f != NULL);
    if (!f)
        return;
    size_t n = fread(out, 1, sizeof(out) - 1, f);
    out[n] = '\0';
    CHECK_EQ_INT(_pclose(f), 0);
    CHECK(strstr(out, "\"function\":\"recurse\"") != NULL);
    unsigned missing = 0;
    for (unsigned i = 2; i < want->n && want->frames[i]; i++) {
        char pc[64];
        snprintf(pc, sizeof(pc), "\"pc\":\"0x%016llx\"", (unsigned long long)want->frames[i]);
        missing += strstr(out, pc) == NULL;
    }
    CHECK_EQ_INT(missing, 0);
    if (missing)
        fprintf(stderr, "%s", out);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_live_win32 stack_target.exe ntlens.exe\n");
        return 2;
    }
    struct target tg;
    CHECK(target_start(&tg, argv[1]));
    if (tg.threads[0].n) {
        check_every_thread(&tg);
        check_options(&tg);
        check_cli(&tg, argv[2]);
    }
    DWORD pid = tg.pi.dwProcessId;
    target_stop(&tg);
    /* Gone: the whole call fails, naming the pid. */
    struct ntl_stack_options o = {0};
    struct ntl_stack_process *p = NULL;
    struct ntl_error err = {0};
    CHECK_EQ_INT(ntl_stack_live(pid, &o, &p, &err), NTL_ERR_NOT_FOUND);
    CHECK(strstr(err.message, "no process") != NULL);
    return check_exit();
}
