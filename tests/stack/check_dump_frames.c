/* Walks a minidump stack_target.exe wrote of itself under Wine and checks
 * every thread it recorded: the return addresses RtlCaptureStackBackTrace
 * gave the thread (Wine's RtlVirtualUnwind, the peer) appear in the walk,
 * in order, found by unwind data, right above a frame named after the
 * function the thread sits in.
 *
 * With a second folder whose stack_target.exe is another build, the
 * program's frames have no unwind data: the callers of its frames are
 * scanned for (and marked so), and a thread that ends there says the file
 * does not match.
 *
 *     check_dump_frames DUMP FRAMES MODULES_DIR [WRONG_MODULES_DIR] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ntlens/buf.h"
#include "ntlens/stack.h"

#define MAX_RECORDED 64

struct recorded {
    unsigned tid;
    char function[64];
    uint64_t frames[MAX_RECORDED];
    size_t n;
};

static const struct ntl_stack_thread *thread_of(const struct ntl_stack_process *p, unsigned tid)
{
    for (size_t i = 0; i < p->nthreads; i++)
        if (p->threads[i]->tid == tid)
            return p->threads[i];
    return NULL;
}

static void print_thread(const struct ntl_stack_thread *t)
{
    printf("thread %u%s%s\n", t->tid, *t->note ? ": " : "", t->note);
    for (size_t i = 0; i < t->nframes; i++) {
        const struct ntl_stack_frame *f = &t->frames[i];
        printf("  #%zu %-13s 0x%llx %s!%s+0x%llx\n", i, ntl_stack_how_name(f->how),
               (unsigned long long)f->pc, f->module, f->function,
               (unsigned long long)(*f->function ? f->function_offset : f->pc - f->module_base));
    }
}

/* Where the recorded frames start in the walk; 0 when they do not appear. */
static size_t find_sequence(const struct ntl_stack_thread *t, const struct recorded *r)
{
    for (size_t i = 1; i + r->n <= t->nframes; i++) {
        size_t k = 0;
        while (k < r->n && t->frames[i + k].pc == r->frames[k])
            k++;
        if (k == r->n)
            return i;
    }
    return 0;
}

static void check_thread(const struct ntl_stack_process *p, const struct recorded *r)
{
    const struct ntl_stack_thread *t = thread_of(p, r->tid);
    CHECK(t != NULL);
    if (!t)
        return;
    print_thread(t);
    size_t at = find_sequence(t, r);
    if (!at) {
        printf("thread %u: the recorded frames are not in the walk:", r->tid);
        for (size_t k = 0; k < r->n; k++)
            printf(" %llx", (unsigned long long)r->frames[k]);
        printf("\n");
    }
    CHECK(at > 0 && r->n >= 2);
    if (!at)
        return;
    CHECK_EQ_STR(t->frames[at - 1].function, r->function);
    CHECK_EQ_STR(t->frames[at - 1].module, "stack_target.exe");
    for (size_t k = at; k < at + r->n; k++)
        CHECK_EQ_STR(ntl_stack_how_name(t->frames[k].how), "cfi");
}

static size_t read_recorded(const char *path, struct recorded *out, size_t max)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    size_t n = 0;
    CHECK(f != NULL);
    while (f && n < max && fgets(line, sizeof line, f)) {
        struct recorded *r = &out[n];
        int used;
        char *s = line;
        if (sscanf(s, "%u %63s%n", &r->tid, r->function, &used) != 2)
            continue;
        s += used;
        r->n = 0;
        unsigned long long v;
        /* Wine's capture runs past the outermost frame: the walk ends at the first 0. */
        while (r->n < MAX_RECORDED && sscanf(s, " %llx%n", &v, &used) == 1 && v) {
            r->frames[r->n++] = v;
            s += used;
        }
        n++;
    }
    if (f)
        fclose(f);
    return n;
}

/* The walk with a stack_target.exe of another build. */
static void check_mismatch(const struct ntl_buf *dump, const char *dir)
{
    struct ntl_stack_options o = {.modules_dir = dir};
    struct ntl_stack_process *p = NULL;
    struct ntl_error err = {0};
    size_t scanned = 0;
    CHECK_EQ_INT(ntl_stack_from_dump(dump->data, dump->len, &o, &p, &err), 0);
    for (size_t i = 0; p && i < p->nthreads; i++) {
        const struct ntl_stack_thread *t = p->threads[i];
        for (size_t k = 1; k < t->nframes; k++)
            if (!strcmp(t->frames[k - 1].module, "stack_target.exe")) {
                CHECK_EQ_STR(ntl_stack_how_name(t->frames[k].how), "scan");
                scanned++;
            }
        if (t->nframes && !strcmp(t->frames[t->nframes - 1].module, "stack_target.exe")) {
            print_thread(t);
            CHECK(strstr(t->note, "does not match") != NULL);
        }
    }
    CHECK(scanned >= 5);
    ntl_stack_process_free(p);
}

int main(int argc, char **argv)
{
    static struct recorded rec[16];
    struct ntl_buf dump;
    struct ntl_error err = {0};
    struct ntl_stack_process *p = NULL;
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: check_dump_frames DUMP FRAMES MODULES_DIR [WRONG_MODULES_DIR]\n");
        return 2;
    }
    CHECK_EQ_INT(ntl_file_read(argv[1], 1u << 30, &dump, &err), 0);
    struct ntl_stack_options o = {.modules_dir = argv[3]};
    int rc = ntl_stack_from_dump(dump.data, dump.len, &o, &p, &err);
    if (rc < 0)
        printf("%s\n", err.message);
    CHECK_EQ_INT(rc, 0);
    size_t n = read_recorded(argv[2], rec, 16);
    CHECK_EQ_U64(n, 5);
    for (size_t i = 0; p && i < n; i++)
        check_thread(p, &rec[i]);
    /* Threads the program did not record (the one writing the dump) are
     * walked too, or carry a note saying why not. */
    for (size_t i = 0; p && i < p->nthreads; i++) {
        CHECK(p->threads[i]->nframes > 0 || *p->threads[i]->note);
        if (p->threads[i]->nframes == 0)
            print_thread(p->threads[i]);
    }
    ntl_stack_process_free(p);
    if (argc == 5)
        check_mismatch(&dump, argv[4]);
    ntl_buf_free(&dump);
    return check_exit();
}
