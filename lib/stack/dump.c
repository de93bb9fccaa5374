/* Stacks of every thread of a Windows minidump: the thread list gives each
 * thread's CONTEXT and stack; the x64 walker unwinds with the modules' own
 * unwind data, the x86 walker follows ebp. A thread that cannot be walked
 * keeps a note; only a dump that cannot be read fails. */
#include <string.h>

#include "dump-walk.h"
#include "ntlens/minidump.h"

int dump_walk_frame(struct dump_walk *w, uint64_t pc, enum ntl_stack_how how, bool caller,
                    struct ntl_error *err)
{
    /* The upper half of the x64 address space is the kernel's (a dump of a
     * kernel, or kernel frames in a user dump). */
    struct ntl_stack_frame f = {.pc = pc, .how = how,
                                .mode = pc >> 63 ? NTL_STACK_KERNEL : NTL_STACK_USER};
    bool nomem;
    struct dump_module *m = dump_module_at(w->dm, pc - (caller ? 1 : 0), &nomem);
    if (nomem)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    if (m) {
        f.module = m->name;
        f.module_base = m->md->base;
        f.function = dump_module_name_of(w->dm, m, pc, caller, &f.function_offset);
    }
    return ntl_stack_frame_add(w->p, w->t, &f, err);
}

bool dump_walk_full(struct dump_walk *w, struct ntl_error *err, int *rc)
{
    *rc = 0;
    if (w->stop && *w->stop) {
        *rc = ntl_stack_thread_note(w->p, w->t, err, "interrupted after %zu frames", w->t->nframes);
        return true;
    }
    if (w->t->nframes < w->max_frames)
        return false;
    *rc = ntl_stack_thread_note(w->p, w->t, err, "stopped at the limit of %u frames", w->max_frames);
    return true;
}

static const struct ntl_md_thread *find_thread(const struct ntl_minidump *md, uint32_t tid)
{
    for (size_t i = 0; i < md->thread_count; i++)
        if (md->threads[i].id == tid)
            return &md->threads[i];
    return NULL;
}

static int walk_thread(struct dump_walk *w, const struct ntl_minidump *md,
                       const struct ntl_md_thread *th, uint16_t arch, struct ntl_error *err)
{
    struct dump_memory *dm = w->dm;
    dm->stack_start = dm->stack_size = 0;
    if (th->stack_rva && (uint64_t)th->stack_rva + th->stack_size <= md->size) {
        dm->stack_start = th->stack_start;
        dm->stack_size = th->stack_size;
        dm->stack_bytes = md->data + th->stack_rva;
    }
    size_t need = arch == NTL_MD_ARCH_AMD64 ? 0x100 : 0xbc; /* through Rip, Eip */
    if (!th->context_rva || th->context_size < need ||
        (uint64_t)th->context_rva + th->context_size > md->size)
        return ntl_stack_thread_note(w->p, w->t, err,
                                     "its CONTEXT (RVA 0x%x, 0x%x bytes) is not in the dump of 0x%zx bytes",
                                     th->context_rva, th->context_size, md->size);
    const uint8_t *ctx = md->data + th->context_rva;
    if (arch == NTL_MD_ARCH_AMD64)
        return dump_walk_x64(w, ctx, err);
    return dump_walk_x86(w, ctx, err);
}

/* The dump's architecture: SystemInfo's, else the size of the first CONTEXT. */
static uint16_t dump_arch(const struct ntl_minidump *md)
{
    if (md->sys.present)
        return md->sys.arch;
    if (md->thread_count && md->threads[0].context_size == 1232)
        return NTL_MD_ARCH_AMD64;
    if (md->thread_count && md->threads[0].context_size == 716)
        return NTL_MD_ARCH_X86;
    return 0xffff;
}

static int walk_all(struct dump_walk *w, const struct ntl_minidump *md, uint16_t arch,
                    const struct ntl_stack_options *o, struct ntl_error *err)
{
    size_t n = o && o->tids ? o->ntids : md->thread_count;
    for (size_t i = 0; i < n; i++) {
        const struct ntl_md_thread *th = o && o->tids ? find_thread(md, o->tids[i]) : &md->threads[i];
        uint32_t tid = o && o->tids ? o->tids[i] : th->id;
        int rc;
        if (!(w->t = ntl_stack_thread_add(w->p, tid, err)))
            return NTL_ERR_NOMEM;
        if (!th)
            rc = ntl_stack_thread_note(w->p, w->t, err, "the dump has no thread %u", tid);
        else
            rc = walk_thread(w, md, th, arch, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int ntl_stack_from_dump(const void *data, size_t size, const struct ntl_stack_options *o,
                        struct ntl_stack_process **out, struct ntl_error *err)
{
    struct ntl_minidump md;
    struct dump_memory dm;
    int rc = ntl_md_parse_partial(data, size, &md, err);
    if (rc < 0 && rc != NTL_MD_INCOMPLETE)
        return rc;
    uint16_t arch = dump_arch(&md);
    if (!md.thread_count || (arch != NTL_MD_ARCH_AMD64 && arch != NTL_MD_ARCH_X86)) {
        rc = md.thread_count
                 ? ntl_error_set(err, NTL_ERR_UNSUPPORTED, "MINIDUMP_SYSTEM_INFO", NTL_NO_OFFSET,
                                 "no stack walker for processor architecture %u (x64 and x86 have one)", arch)
                 : ntl_error_set(err, NTL_ERR_UNSUPPORTED, "MINIDUMP_THREAD_LIST", NTL_NO_OFFSET,
                                 "the dump has no thread list");
        ntl_md_free(&md);
        return rc;
    }
    const char *name = md.module_count ? ntl_md_base_name(md.modules[0].name) : "";
    struct dump_walk w = {.dm = &dm, .stop = o ? o->stop : NULL, .max_frames = NTL_STACK_MAX_FRAMES};
    if (o && o->max_frames && o->max_frames < NTL_STACK_MAX_FRAMES)
        w.max_frames = o->max_frames;
    if ((rc = dump_memory_init(&dm, &md, o ? o->modules_dir : NULL, err)) < 0) {
        ntl_md_free(&md);
        return rc;
    }
    rc = ntl_stack_process_new(md.has_misc ? md.process_id : 0, name, &w.p, err);
    if (rc == 0 && (rc = walk_all(&w, &md, arch, o, err)) < 0)
        ntl_stack_process_free(w.p);
    dump_memory_free(&dm);
    ntl_md_free(&md);
    if (rc == 0)
        *out = w.p;
    return rc;
}
