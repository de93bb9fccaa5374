/* Per-process address spaces from an ETW trace (seed 002's traces switch
 * between processes): the kernel's Process events give each process's CR3
 * (DirectoryTableBase), its Image events each process's user-mode modules;
 * those a folder holds go, mapped by the dump-build pipeline, into the
 * image of that CR3's space. A PIP in the Intel PT trace then selects it. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/etl.h"
#include "ntlens/etl_fields.h"
#include "ntlens/ipt_sources.h"
#include "ntlens/minidump.h"

#include "iptsrc-internal.h"

#define GROUP_PROCESS 0x03

struct proc {
    uint32_t pid;
    uint64_t cr3, ts;
    enum iptsrc_life life;
};

/* The trace's image and Process events, in file order. */
struct scan {
    struct ntl_etl_image *imgs;
    bool *img_present;          /* each image's, at o->at */
    size_t nimgs, img_cap;
    struct proc *procs;
    size_t nprocs, proc_cap;
};

static int nomem(struct ntl_error *err)
{
    return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
}

/* Room for one more element of size in *v (n used, *cap allocated). */
static int room(void **v, size_t n, size_t *cap, size_t size, struct ntl_error *err)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 64;
    void *p = realloc(*v, c * size);
    if (!p)
        return nomem(err);
    *v = p;
    *cap = c;
    return 0;
}

static bool process_life(uint8_t opcode, enum iptsrc_life *life)
{
    switch (opcode) {
    case 1: case 3: *life = IPTSRC_APPEARS; return true; /* Start, DCStart */
    case 4: *life = IPTSRC_STILL; return true;           /* DCEnd */
    case 2: *life = IPTSRC_GONE; return true;            /* End */
    default: return false;
    }
}

/* ev's pid and CR3 into *p: true for a Process event with a CR3 (version
 * 3 and later); one that does not decode is left out as one without. */
static bool process_event(const struct ntl_etl_event *ev, struct proc *p)
{
    struct ntl_etl_mof d;
    struct ntl_etl_field f;
    struct ntl_error e;
    bool has_pid = false;
    if ((ev->kind != NTL_ETL_KIND_SYSTEM && ev->kind != NTL_ETL_KIND_COMPACT &&
         ev->kind != NTL_ETL_KIND_PERFINFO) || ev->group != GROUP_PROCESS ||
        !process_life(ev->opcode, &p->life) || ntl_etl_mof_begin(&d, ev) != 1 ||
        strcmp(d.class_name, "Process") != 0)
        return false;
    p->cr3 = 0;
    p->ts = ev->timestamp;
    int rc;
    while ((rc = ntl_etl_mof_next(&d, &f, &e)) > 0) {
        if (f.depth || !f.name)
            continue;
        if (!strcmp(f.name, "ProcessId")) {
            p->pid = (uint32_t)ntl_etl_field_u64(&f);
            has_pid = true;
        } else if (!strcmp(f.name, "DirectoryTableBase")) {
            p->cr3 = ntl_etl_field_u64(&f);
        }
    }
    return rc == 0 && has_pid && p->cr3;
}

static int scan_event(struct scan *sc, const struct ntl_etl *t, const struct ntl_etl_event *ev,
                      struct ntl_error *err)
{
    struct ntl_error e;
    if (room((void **)&sc->imgs, sc->nimgs, &sc->img_cap, sizeof *sc->imgs, err) < 0 ||
        room((void **)&sc->procs, sc->nprocs, &sc->proc_cap, sizeof *sc->procs, err) < 0)
        return NTL_ERR_NOMEM;
    if (ntl_etl_image_decode(t, ev, &sc->imgs[sc->nimgs], &e) == 1)
        sc->nimgs++;
    else if (process_event(ev, &sc->procs[sc->nprocs]))
        sc->nprocs++;
    return 0;
}

static int scan(struct scan *sc, const char *path, struct ntl_error *err)
{
    struct ntl_etl *t;
    struct ntl_etl_event ev;
    int rc = ntl_etl_open_file(path, NULL, &t, err);
    if (rc < 0) {
        ntl_error_prefix(err, "%s", path);
        return rc;
    }
    /* Bad buffers are skipped as the kernel modules' pass skips them (it
     * tells the user: ntl_md_build's TRACE_SKIPPED note). */
    while ((rc = ntl_etl_next(t, &ev, err)) != 0) {
        if (rc < 0 && (rc == NTL_ETL_TRUNCATED || ntl_etl_can_continue(t)))
            continue; /* after a cut, the next call ends the trace */
        if (rc < 0 || (rc = scan_event(sc, t, &ev, err)) < 0)
            break;
    }
    ntl_etl_close(t);
    if (rc < 0 && rc != NTL_ERR_NOMEM)
        ntl_error_prefix(err, "%s", path);
    return rc < 0 ? rc : 0;
}

static void proc_life(const void *list, size_t i, struct iptsrc_life_event *e)
{
    const struct proc *p = (const struct proc *)list + i;
    e->key_a = p->pid;
    e->key_b = 0;
    e->ts = p->ts;
    e->life = p->life;
}

/* The files of process p's user-mode modules loaded at o->at, with their
 * bases, into paths and bases (NTL_IPTSRC_MAX_PE each); *n how many. */
static int find_modules(const struct scan *sc, const struct proc *p,
                        const struct ntl_iptsrc_spaces_options *o, char **paths,
                        struct ntl_md_build_base *bases, size_t *n, struct ntl_error *err)
{
    for (size_t i = 0; i < sc->nimgs; i++) {
        const struct ntl_etl_image *img = &sc->imgs[i];
        if (img->kernel || img->pid != p->pid || !img->name[0] || !sc->img_present[i])
            continue;
        char *path = ntl_md_find_file(o->dirs, o->dir_count, img->name);
        if (!path)
            continue;
        if (*n == NTL_IPTSRC_MAX_PE) {
            free(path);
            return ntl_error_set(err, NTL_ERR_LIMIT, NULL, NTL_NO_OFFSET,
                                 "process %u: more than %d modules", p->pid, NTL_IPTSRC_MAX_PE);
        }
        paths[*n] = path;
        bases[*n].name = ntl_md_base_name(path);
        bases[*n].addr = img->base;
        (*n)++;
    }
    return 0;
}

/* Maps modules [0, n) into p's space. */
static int map_modules(struct ntl_ipt_spaces *s, struct ntl_iptsrc_syms *syms,
                       const struct ntl_iptsrc_spaces_options *o, const struct proc *p,
                       char **paths, const struct ntl_md_build_base *bases, size_t n,
                       struct ntl_error *err)
{
    struct ntl_md_build_options bo = {
        .modules = (const char *const *)paths, .module_count = n,
        .bases = bases, .base_count = n,
        .import_optimization = o->import_optimization,
    };
    struct ntl_md_build b;
    struct ntl_ipt_image *img;
    int rc = ntl_md_build(&bo, &b, err);
    if (rc < 0)
        return rc;
    if (syms)
        ntl_iptsrc_syms_add_to(syms, true, p->cr3);
    if ((rc = ntl_ipt_spaces_image(s, p->cr3, &img, err)) >= 0)
        rc = ntl_iptsrc_add_dump_bytes(img, syms, b.dump.data, b.dump.len, err);
    if (syms)
        ntl_iptsrc_syms_add_to(syms, false, 0);
    ntl_md_build_free(&b);
    if (rc < 0)
        ntl_error_prefix(err, "process %u (CR3 0x%llx)", p->pid, (unsigned long long)p->cr3);
    return rc;
}

static int map_process(struct ntl_ipt_spaces *s, struct ntl_iptsrc_syms *syms,
                       const struct ntl_iptsrc_spaces_options *o, const struct scan *sc,
                       const struct proc *p, struct ntl_iptsrc_spaces_info *info,
                       struct ntl_error *err)
{
    char **paths = calloc(NTL_IPTSRC_MAX_PE, sizeof *paths);
    struct ntl_md_build_base *bases = calloc(NTL_IPTSRC_MAX_PE, sizeof *bases);
    size_t n = 0;
    int rc = paths && bases ? find_modules(sc, p, o, paths, bases, &n, err) : nomem(err);
    if (rc >= 0 && n)
        rc = map_modules(s, syms, o, p, paths, bases, n, err);
    if (rc >= 0 && n) {
        info->spaces++;
        info->modules += n;
    }
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    free(bases);
    return rc;
}

int ntl_iptsrc_add_etl_spaces(struct ntl_ipt_spaces *s, struct ntl_iptsrc_syms *syms,
                              const struct ntl_iptsrc_spaces_options *o,
                              struct ntl_iptsrc_spaces_info *info, struct ntl_error *err)
{
    struct scan sc = {0};
    memset(info, 0, sizeof *info);
    int rc = scan(&sc, o->etl_path, err);
    bool *present = NULL;
    if (rc >= 0) {
        sc.img_present = malloc((sc.nimgs ? sc.nimgs : 1) * sizeof *sc.img_present);
        present = malloc((sc.nprocs ? sc.nprocs : 1) * sizeof *present);
        rc = sc.img_present && present ? 0 : nomem(err);
    }
    if (rc >= 0 && (rc = iptsrc_images_present(sc.imgs, sc.nimgs, o->at, sc.img_present, err)) >= 0)
        rc = iptsrc_present(sc.procs, sc.nprocs, o->at, proc_life, present, err);
    for (size_t i = 0; i < sc.nprocs && rc >= 0; i++) {
        const struct proc *p = &sc.procs[i];
        if (!present[i])
            continue;
        info->processes++;
        if (p->pid == o->process) {
            info->process_found = true;
            info->process_cr3 = p->cr3;
        }
        rc = map_process(s, syms, o, &sc, p, info, err);
    }
    free(present);
    free(sc.img_present);
    free(sc.imgs);
    free(sc.procs);
    return rc < 0 ? rc : (int)info->spaces;
}
