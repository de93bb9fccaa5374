/* User frames of a live thread through elfutils' libdwfl: its CFI unwinder
 * (.eh_frame, .debug_frame, and on x86-64 its frame-pointer fallback where
 * a module has no CFI) over our thread callbacks, which stop each thread
 * only to copy its registers and stack (stop-linux.c). Names, inline
 * frames and source lines are looked up once per address: the threads of a
 * hung process mostly wait at the same few. */
#define _GNU_SOURCE
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "live-linux.h"

/* One function at an address: the physical one, or one inlined into it. */
struct resolved {
    const char *function;    /* "" when unknown; owned by libdw */
    uint64_t start;          /* 0 when unknown */
    const char *file;
    unsigned line;
    bool inlined;
};

/* What one (call-adjusted) address resolves to. */
struct pc_info {
    uint64_t pc;
    const char *module;
    uint64_t module_base;
    bool cfi;                /* the caller of this frame is found through CFI */
    uint32_t first, n;       /* resolved[first..first+n): innermost inlined first */
};

struct raw_frame {
    uint64_t pc;
    bool activation;         /* the current instruction, not a return address */
};

struct stack_unwinder {
    pid_t pid;
    Dwfl *dwfl;
    Elf *exe;
    int exe_fd;
    struct stack_maps maps;
    /* the threads stopped last, and the one being walked */
    struct stack_stop batch[STACK_BATCH];
    size_t nbatch;
    struct stack_stop *cur;
    struct raw_frame *raw;
    size_t nraw, max_raw;
    /* the address cache */
    bool lines;
    uint32_t *by_pc;         /* hash of pc: index + 1 in infos, 0 empty; at most half full */
    size_t nslots;           /* a power of two, or 0 */
    struct pc_info *infos;
    size_t ninfos, cap_infos;
    struct resolved *res;
    size_t nres, cap_res;
    /* threads that did not stop in time: still traced (stack_snapshot_release) */
    pid_t *late;
    size_t nlate, cap_late;
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
    /* Threads are asked for by tid (get_thread); no iteration. */
    (void)dwfl, (void)arg, (void)thread_argp;
    return 0;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
    (void)dwfl, (void)tid;
    *thread_argp = arg;
    return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
    (void)dwfl;
    struct stack_unwinder *u = arg;
    uint64_t v;
    if (!stack_snapshot_read(&u->cur->snap, u->pid, addr, &v))
        return false;
    *result = v;
    return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
    struct stack_unwinder *u = arg;
    Dwarf_Word regs[17];
    for (int i = 0; i < 17; i++)
        regs[i] = u->cur->snap.regs[i];
    if (!dwfl_thread_state_registers(thread, 0, 17, regs))
        return false;
    dwfl_thread_state_register_pc(thread, regs[16]);
    return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

static char *debuginfo_path;
static const Dwfl_Callbacks proc_callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfo_path,
};

static int report_error(int e, pid_t pid, struct ntl_error *err)
{
    if (e == ENOENT || e == ESRCH)
        return ntl_error_set(err, NTL_ERR_NOT_FOUND, NULL, NTL_NO_OFFSET,
                             "no process %d (it exited)", (int)pid);
    if (e == EACCES || e == EPERM) {
        char advice[512];
        stack_access_advice(pid, advice, sizeof advice);
        return ntl_error_set(err, NTL_ERR_ACCESS, NULL, NTL_NO_OFFSET, "%s", advice);
    }
    return ntl_error_set(err, NTL_ERR_SYSTEM, NULL, NTL_NO_OFFSET,
                         "reading the modules of process %d: %s", (int)pid,
                         e > 0 ? strerror(e) : dwfl_errmsg(-1));
}

int stack_unwinder_new(pid_t pid, struct stack_unwinder **out, struct ntl_error *err)
{
    struct stack_unwinder *u = calloc(1, sizeof(*u));
    if (!u)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    u->pid = pid;
    u->exe_fd = -1;
    int rc, e;
    if ((e = stack_maps_read(pid, &u->maps)) < 0) {
        rc = report_error(-e, pid, err);
        goto fail;
    }
    if (!(u->dwfl = dwfl_begin(&proc_callbacks))) {
        rc = ntl_error_set(err, NTL_ERR_SYSTEM, "libdw", NTL_NO_OFFSET, "%s", dwfl_errmsg(-1));
        goto fail;
    }
    dwfl_report_begin(u->dwfl);
    e = dwfl_linux_proc_report(u->dwfl, pid);
    dwfl_report_end(u->dwfl, NULL, NULL);
    if (e != 0) {
        rc = report_error(e, pid, err);
        goto fail;
    }
    /* The executable names the architecture; without it libdw takes any module's. */
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    if ((u->exe_fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0)
        u->exe = elf_begin(u->exe_fd, ELF_C_READ_MMAP, NULL);
    if (!dwfl_attach_state(u->dwfl, u->exe, pid, &thread_callbacks, u)) {
        rc = ntl_error_set(err, NTL_ERR_SYSTEM, "libdw", NTL_NO_OFFSET,
                           "process %d: %s", (int)pid, dwfl_errmsg(-1));
        goto fail;
    }
    *out = u;
    return 0;
fail:
    stack_unwinder_free(u);
    return rc;
}

void stack_unwinder_free(struct stack_unwinder *u)
{
    if (!u)
        return;
    stack_snapshot_release(u->late, u->nlate);
    free(u->late);
    if (u->dwfl)
        dwfl_end(u->dwfl);
    if (u->exe)
        elf_end(u->exe);
    if (u->exe_fd >= 0)
        close(u->exe_fd);
    stack_maps_free(&u->maps);
    for (size_t i = 0; i < STACK_BATCH; i++)
        free(u->batch[i].snap.bytes);
    free(u->raw);
    free(u->by_pc);
    free(u->infos);
    free(u->res);
    free(u);
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
    struct stack_unwinder *u = arg;
    Dwarf_Addr pc;
    bool activation;
    if (!dwfl_frame_pc(state, &pc, &activation))
        return -1;
    u->raw[u->nraw++] = (struct raw_frame){pc, activation};
    return u->nraw < u->max_raw ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static bool has_cfi(Dwfl_Module *mod, uint64_t pc)
{
    Dwarf_Addr bias;
    Dwarf_Frame *frame;
    Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
    if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0) {
        free(frame);
        return true;
    }
    cfi = dwfl_module_dwarf_cfi(mod, &bias);
    if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0) {
        free(frame);
        return true;
    }
    return false;
}

static int push_resolved(struct stack_unwinder *u, struct resolved r)
{
    if (u->nres == u->cap_res) {
        size_t cap = u->cap_res ? u->cap_res * 2 : 256;
        struct resolved *grown = realloc(u->res, cap * sizeof(*grown));
        if (!grown)
            return -1;
        u->res = grown;
        u->cap_res = cap;
    }
    u->res[u->nres++] = r;
    return 0;
}

/* The caller's line of an inlined call: DW_AT_call_file and DW_AT_call_line. */
static void call_site(Dwarf_Die *cu, Dwarf_Die *scope, const char **file, unsigned *line)
{
    Dwarf_Attribute a;
    Dwarf_Word v;
    Dwarf_Files *files;
    size_t nfiles;
    *file = "";
    *line = 0;
    if (dwarf_formudata(dwarf_attr(scope, DW_AT_call_line, &a), &v) == 0)
        *line = (unsigned)v;
    if (dwarf_formudata(dwarf_attr(scope, DW_AT_call_file, &a), &v) == 0 &&
        dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && v < nfiles) {
        const char *f = dwarf_filesrc(files, v, NULL, NULL);
        *file = f ? f : "";
    }
}

/* The inlined functions at pc, innermost first, each with the line it is
 * at; then the physical function with the line of the outermost call. */
static int resolve_functions(struct stack_unwinder *u, Dwfl_Module *mod, uint64_t pc)
{
    GElf_Off off = 0;
    GElf_Sym sym;
    const char *name = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
    const char *file = "";
    unsigned line = 0;
    if (u->lines) {
        Dwfl_Line *l = dwfl_module_getsrc(mod, pc);
        int lineno = 0;
        const char *f = l ? dwfl_lineinfo(l, NULL, &lineno, NULL, NULL, NULL) : NULL;
        if (f) {
            file = f;
            line = lineno > 0 ? (unsigned)lineno : 0;
        }
    }
    Dwarf_Addr bias;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &bias), *scopes = NULL;
    int nscopes = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
    int rc = 0;
    for (int i = 0; i < nscopes && rc == 0; i++) {
        if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
            continue;
        Dwarf_Addr entry = 0;
        const char *fn = dwarf_diename(&scopes[i]);
        rc = push_resolved(u, (struct resolved){
            .function = fn ? fn : "", .file = file, .line = line, .inlined = true,
            .start = dwarf_entrypc(&scopes[i], &entry) == 0 ? entry + bias : 0,
        });
        if (u->lines)
            call_site(cu, &scopes[i], &file, &line);
    }
    free(scopes);
    if (rc == 0)
        rc = push_resolved(u, (struct resolved){
            .function = name ? name : "", .start = name ? pc - off : 0,
            .file = file, .line = line,
        });
    return rc;
}

static size_t slot_of(const struct stack_unwinder *u, uint64_t pc)
{
    size_t mask = u->nslots - 1, i = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 20) & mask;
    while (u->by_pc[i] && u->infos[u->by_pc[i] - 1].pc != pc)
        i = (i + 1) & mask;
    return i;
}

/* Room for one more address in the hash, rebuilt twice as large when half
 * full. -1 when out of memory. */
static int grow_hash(struct stack_unwinder *u)
{
    if (2 * (u->ninfos + 1) <= u->nslots)
        return 0;
    size_t n = u->nslots ? u->nslots * 2 : 1024;
    uint32_t *grown = calloc(n, sizeof(*grown));
    if (!grown)
        return -1;
    free(u->by_pc);
    u->by_pc = grown;
    u->nslots = n;
    for (size_t k = 0; k < u->ninfos; k++)
        u->by_pc[slot_of(u, u->infos[k].pc)] = (uint32_t)k + 1;
    return 0;
}

/* The cached facts of call-adjusted address pc; NULL when out of memory. */
static const struct pc_info *resolve(struct stack_unwinder *u, uint64_t pc)
{
    if (grow_hash(u) < 0)
        return NULL;
    size_t slot = slot_of(u, pc);
    if (u->by_pc[slot])
        return &u->infos[u->by_pc[slot] - 1];
    if (u->ninfos == u->cap_infos) {
        size_t cap = u->cap_infos ? u->cap_infos * 2 : 256;
        struct pc_info *grown = realloc(u->infos, cap * sizeof(*grown));
        if (!grown)
            return NULL;
        u->infos = grown;
        u->cap_infos = cap;
    }
    struct pc_info *info = &u->infos[u->ninfos];
    *info = (struct pc_info){.pc = pc, .module = "", .first = (uint32_t)u->nres};
    Dwfl_Module *mod = dwfl_addrmodule(u->dwfl, pc);
    if (mod) {
        Dwarf_Addr low;
        const char *name = dwfl_module_info(mod, NULL, &low, NULL, NULL, NULL, NULL, NULL);
        const char *slash = name ? strrchr(name, '/') : NULL;
        info->module = slash ? slash + 1 : name ? name : "";
        info->module_base = low;
        info->cfi = has_cfi(mod, pc);
        if (resolve_functions(u, mod, pc) < 0)
            return NULL;
    } else if (push_resolved(u, (struct resolved){.function = "", .file = ""}) < 0) {
        return NULL;
    }
    info->n = (uint32_t)(u->nres - info->first);
    u->by_pc[slot] = (uint32_t)++u->ninfos;
    return info;
}

/* The frames of u->raw into t: per address its inlined functions (marked
 * inline) and the physical one, marked by how it was found. */
static int emit_frames(struct stack_unwinder *u, struct ntl_stack_process *p,
                       struct ntl_stack_thread *t, unsigned max_frames, struct ntl_error *err)
{
    bool caller_by_cfi = true;
    for (size_t i = 0; i < u->nraw; i++) {
        uint64_t pc = u->raw[i].pc, adj = pc - (u->raw[i].activation ? 0 : 1);
        const struct pc_info *info = resolve(u, adj);
        if (!info)
            return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
        enum ntl_stack_how how = i == 0 ? NTL_STACK_CONTEXT
                                 : caller_by_cfi ? NTL_STACK_CFI : NTL_STACK_FRAME_POINTER;
        caller_by_cfi = info->cfi;
        for (uint32_t k = 0; k < info->n; k++) {
            const struct resolved *r = &u->res[info->first + k];
            if (t->nframes >= max_frames)
                return ntl_stack_thread_note(p, t, err, "more than %u frames: the rest left out",
                                             max_frames);
            struct ntl_stack_frame f = {
                .pc = pc, .mode = NTL_STACK_USER,
                .how = r->inlined ? NTL_STACK_INLINE : how,
                .module = info->module, .module_base = info->module_base,
                .function = r->function,
                .function_offset = *r->function && r->start && pc >= r->start ? pc - r->start : 0,
                .file = r->file, .line = r->line,
            };
            int rc = ntl_stack_frame_add(p, t, &f, err);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

void stack_unwinder_stop(struct stack_unwinder *u, const uint32_t *tids, size_t n)
{
    u->nbatch = n < STACK_BATCH ? n : STACK_BATCH;
    for (size_t i = 0; i < u->nbatch; i++)
        u->batch[i].tid = (pid_t)tids[i];
    stack_snapshot_batch(u->batch, u->nbatch, &u->maps);
}

/* Remembers a thread that did not stop in time: it is still traced. */
static int add_late(struct stack_unwinder *u, pid_t tid, struct ntl_error *err)
{
    if (u->nlate == u->cap_late) {
        size_t cap = u->cap_late ? u->cap_late * 2 : 16;
        pid_t *grown = realloc(u->late, cap * sizeof(*grown));
        if (!grown)
            return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
        u->late = grown;
        u->cap_late = cap;
    }
    u->late[u->nlate++] = tid;
    return 0;
}

/* Room for the raw frames of one walk under o: *max frames kept. 0, or
 * NTL_ERR_NOMEM. */
static int begin_walk(struct stack_unwinder *u, const struct ntl_stack_options *o,
                      unsigned *max, struct ntl_error *err)
{
    *max = o->max_frames ? o->max_frames : NTL_STACK_MAX_FRAMES;
    if (*max > NTL_STACK_MAX_FRAMES)
        *max = NTL_STACK_MAX_FRAMES;
    if (!u->raw || u->max_raw != *max + 1) {
        free(u->raw);
        /* One more than kept, to tell a cut stack from a full one. */
        if (!(u->raw = malloc((*max + 1) * sizeof(*u->raw))))
            return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
        u->max_raw = *max + 1;
    }
    u->lines = o->lines;
    u->nraw = 0;
    return 0;
}

int stack_unwinder_context_frame(struct stack_unwinder *u, struct ntl_stack_process *p,
                                 struct ntl_stack_thread *t, uint64_t pc,
                                 const struct ntl_stack_options *o, struct ntl_error *err)
{
    unsigned max;
    if (begin_walk(u, o, &max, err) < 0)
        return NTL_ERR_NOMEM;
    u->raw[u->nraw++] = (struct raw_frame){pc, true};
    return emit_frames(u, p, t, max, err);
}

int stack_unwinder_walk(struct stack_unwinder *u, struct ntl_stack_process *p,
                        struct ntl_stack_thread *t, const struct ntl_stack_options *o,
                        uint64_t *stopped_ns, struct ntl_error *err)
{
    unsigned max;
    if (begin_walk(u, o, &max, err) < 0)
        return NTL_ERR_NOMEM;
    u->cur = NULL;
    for (size_t i = 0; i < u->nbatch && !u->cur; i++)
        if (u->batch[i].tid == (pid_t)t->tid)
            u->cur = &u->batch[i];
    if (!u->cur)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                             "thread %" PRIu32 " was not stopped first", t->tid);
    *stopped_ns += u->cur->snap.stopped_ns;
    int rc = u->cur->rc;
    if (rc == -EPERM)
        return -EPERM;
    if (rc == -ETIMEDOUT && add_late(u, u->cur->tid, err) < 0)
        return NTL_ERR_NOMEM;
    if (rc)
        return ntl_stack_thread_note(p, t, err, "%s", u->cur->why);
    int r = dwfl_getthread_frames(u->dwfl, u->cur->tid, on_frame, u);
    int dwerr = r == -1 ? dwfl_errno() : 0;
    rc = emit_frames(u, p, t, max, err);
    if (rc < 0 || *t->note)
        return rc;
    /* libdw reports the end of some stacks as an error: only a stop before
     * the outermost frame (no frames, or the walk ran into bad memory) is
     * worth a note. */
    if (r == -1 && u->nraw == 0)
        return ntl_stack_thread_note(p, t, err, "no user frames: %s", dwfl_errmsg(dwerr));
    if (r == -1 && dwerr != 0)
        return ntl_stack_thread_note(p, t, err, "the unwind stopped: %s", dwfl_errmsg(dwerr));
    return 0;
}
