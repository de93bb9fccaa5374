/* `ntlens stacks` output: text blocks, records, folded stacks. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "folded.h"
#include "stacks.h"

void stacks_frame_label(const struct ntl_stack_frame *f, char *buf, size_t size)
{
    if (*f->function && *f->module)
        snprintf(buf, size, "%s!%s+0x%" PRIx64, f->module, f->function, f->function_offset);
    else if (*f->function)
        snprintf(buf, size, "%s+0x%" PRIx64, f->function, f->function_offset);
    else if (*f->module && f->pc != NTL_STACK_UNKNOWN && f->pc >= f->module_base)
        snprintf(buf, size, "%s+0x%" PRIx64, f->module, f->pc - f->module_base);
    else if (f->pc != NTL_STACK_UNKNOWN)
        snprintf(buf, size, "0x%" PRIx64, f->pc);
    else
        snprintf(buf, size, "?");
}

/* Frames that are certain (the registers, CFI, the kernel's list) say
 * nothing; the others say how they were found. */
static const char *uncertain(enum ntl_stack_how how)
{
    return how == NTL_STACK_CONTEXT || how == NTL_STACK_CFI || how == NTL_STACK_KERNEL_LIST
               ? NULL : ntl_stack_how_name(how);
}

static void print_cpu(FILE *f, const char *what, uint64_t ns)
{
    if (ns != NTL_STACK_UNKNOWN)
        fprintf(f, "  %s %" PRIu64 ".%02" PRIu64 "s", what, ns / 1000000000u,
                ns % 1000000000u / 10000000u);
}

static void print_thread(FILE *f, const struct ntl_stack_thread *t)
{
    char label[1024];
    fprintf(f, "Thread %" PRIu32, t->tid);
    if (*t->name)
        fprintf(f, " \"%s\"", t->name);
    if (*t->state)
        fprintf(f, "  %s", t->state);
    if (*t->wait)
        fprintf(f, "  wait: %s", t->wait);
    if (t->start != NTL_STACK_UNKNOWN)
        fprintf(f, "  start 0x%" PRIx64, t->start);
    print_cpu(f, "user", t->user_ns);
    print_cpu(f, "kernel", t->kernel_ns);
    fputc('\n', f);
    for (size_t i = 0; i < t->nframes; i++) {
        const struct ntl_stack_frame *fr = &t->frames[i];
        const char *how = uncertain(fr->how);
        stacks_frame_label(fr, label, sizeof label);
        fprintf(f, "  %c %s", fr->mode == NTL_STACK_KERNEL ? 'K' : 'U', label);
        if (*fr->file)
            fprintf(f, "  %s:%u", fr->file, fr->line);
        if (how)
            fprintf(f, "  [%s]", how);
        fputc('\n', f);
    }
    if (*t->note)
        fprintf(f, "  note: %s\n", t->note);
    fputc('\n', f);
}

int stacks_print_text(FILE *f, const struct ntl_stack_process *p)
{
    fprintf(f, "Process %" PRIu32, p->pid);
    if (*p->name)
        fprintf(f, " \"%s\"", p->name);
    fprintf(f, ": %zu thread%s", p->nthreads, p->nthreads == 1 ? "" : "s");
    if (p->stopped_ns)
        fprintf(f, ", stopped %.3f ms in all", (double)p->stopped_ns / 1e6);
    fputs("\n\n", f);
    for (size_t i = 0; i < p->nthreads; i++)
        print_thread(f, p->threads[i]);
    return fflush(f) != 0 || ferror(f) ? -1 : 0;
}

static void record_thread(struct out *o, const struct ntl_stack_process *p,
                          const struct ntl_stack_thread *t)
{
    out_u64(o, p->pid);
    out_u64(o, t->tid);
    out_str(o, t->name);
    out_str(o, t->state);
    out_str(o, t->wait);
    if (t->start != NTL_STACK_UNKNOWN)
        out_addr(o, t->start, 16);
    else
        out_null(o);
}

static void record_frame(struct out *o, const struct ntl_stack_frame *f, size_t depth)
{
    out_u64(o, depth);
    out_str(o, ntl_stack_mode_name(f->mode));
    if (f->pc != NTL_STACK_UNKNOWN)
        out_addr(o, f->pc, 16);
    else
        out_null(o);
    out_str(o, f->module);
    out_str(o, f->function);
    if (*f->function)
        out_u64(o, f->function_offset);
    else
        out_null(o);
    out_str(o, f->file);
    if (f->line)
        out_u64(o, f->line);
    else
        out_null(o);
    out_str(o, ntl_stack_how_name(f->how));
}

int stacks_print_records(struct out *o, const struct ntl_stack_process *p)
{
    static const char *const keys[] = {"pid", "tid", "thread_name", "state", "wait", "start",
                                       "depth", "mode", "pc", "module", "function", "offset",
                                       "file", "line", "how", "note"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        out_column(o, keys[k], NULL,
                   k < 2 || k == 6 || k == 11 || k == 13 ? OUT_RIGHT : OUT_LEFT);
    int rc = 0;
    for (size_t i = 0; i < p->nthreads && !rc; i++) {
        const struct ntl_stack_thread *t = p->threads[i];
        for (size_t d = 0; d < t->nframes && !rc; d++) {
            record_thread(o, p, t);
            record_frame(o, &t->frames[d], d);
            out_str(o, t->note);
            rc = out_row_end(o);
        }
        if (t->nframes == 0 && !rc) {
            record_thread(o, p, t);
            for (int k = 0; k < 9; k++)
                out_null(o);
            out_str(o, t->note);
            rc = out_row_end(o);
        }
    }
    return rc;
}

/* The frame as flame-graph tools show it: the function, else module+offset. */
static void folded_frame(const struct ntl_stack_frame *f, char *buf, size_t size)
{
    if (*f->function)
        snprintf(buf, size, "%s", f->function);
    else
        stacks_frame_label(f, buf, size);
}

int stacks_print_folded(FILE *f, const struct ntl_stack_process *p)
{
    char *line = malloc(FOLDED_LINE_MAX), frame[1024];
    struct folded_set *set = folded_new();
    int rc = line && set ? 0 : -1;
    for (size_t i = 0; i < p->nthreads && !rc; i++) {
        const struct ntl_stack_thread *t = p->threads[i];
        size_t len = folded_append(line, 0, *t->state ? t->state : "?");
        for (size_t d = t->nframes; d-- > 0;) {
            folded_frame(&t->frames[d], frame, sizeof frame);
            len = folded_append(line, len, frame);
        }
        rc = folded_add(set, line, 1);
    }
    if (!rc)
        rc = folded_write(set, f);
    folded_free(set);
    free(line);
    return rc;
}
