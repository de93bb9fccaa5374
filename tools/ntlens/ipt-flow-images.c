/* ipt flow's memory and names: each image option into its address space
 * (lib/ipt, lib/iptsrc), and the trace from a file or an ETW event. */
#ifdef NTLENS_HAVE_IPT_FLOW
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dump-build.h"
#include "ipt-flow.h"

/* The image of the address space s names (and syms adds to it). */
static int space_image(struct ipt_flow_opts *o, const struct ipt_image_spec *s,
                       struct ntl_ipt_image **img, struct ntl_error *err)
{
    /* Its names in the same space. */
    ntl_iptsrc_syms_add_to(o->syms, s->in_space, s->cr3);
    if (!s->in_space) {
        *img = ntl_ipt_spaces_default(o->spaces);
        return 0;
    }
    return ntl_ipt_spaces_image(o->spaces, s->cr3, img, err);
}

/* One --raw, --elf, --pages or --dump. */
static int load_one(struct ipt_flow_opts *o, const struct ipt_image_spec *s, struct ntl_error *err)
{
    struct ntl_ipt_image *img;
    char path[4096];
    uint64_t addr = 0;
    int rc = space_image(o, s, &img, err);
    if (rc < 0)
        return rc;
    switch (s->kind) {
    case IPT_IMG_RAW:
        ipt_flow_split_addr(s->arg, path, sizeof path, &addr); /* checked when parsed */
        return ntl_ipt_image_add_file(img, path, addr, err);
    case IPT_IMG_ELF: {
        bool at_base = ipt_flow_split_elf(s->arg, path, sizeof path, &addr);
        return ntl_iptsrc_add_elf(img, o->syms, path, at_base, addr, err);
    }
    case IPT_IMG_PAGES:
        return ntl_ipt_image_add_pages(img, s->arg, err);
    case IPT_IMG_DUMP:
        rc = ntl_iptsrc_add_dump(img, o->syms, s->arg, err);
        if (rc < 0)
            ntl_error_prefix(err, "%s", s->arg);
        return rc;
    case IPT_IMG_PE:
        break;
    }
    return 0;
}

/* The --pe files of the address space of spec `first` (and, in the default
 * space, --etl's modules) through one dump-build run, so that imports bind
 * and optimize across them. */
static int load_pe(struct ipt_flow_opts *o, const char *cmd, size_t first, bool with_etl)
{
    const struct ipt_image_spec *s0 = &o->images.v[first];
    static char paths[OPT_LIST_MAX][4096];
    const char *files[OPT_LIST_MAX];
    uint64_t bases[OPT_LIST_MAX];
    size_t n = 0;
    for (size_t i = first; i < o->images.n; i++) {
        const struct ipt_image_spec *s = &o->images.v[i];
        if (s->kind != IPT_IMG_PE || s->in_space != s0->in_space || (s->in_space && s->cr3 != s0->cr3))
            continue;
        ipt_flow_split_addr(s->arg, paths[n], sizeof paths[n], &bases[n]);
        files[n] = paths[n];
        n++;
    }
    struct ntl_iptsrc_pe_options po = {
        .files = files, .bases = bases, .count = n,
        .etl_path = with_etl ? o->etl : NULL,
        .dirs = with_etl ? o->modules.items : NULL,
        .dir_count = with_etl ? o->modules.n : 0,
        .import_optimization = o->import_opt,
        /* The event's process's own modules come with the kernel's when
         * the trace gives it no address space. */
        .process_set = with_etl && o->event && !o->event_in_space,
        .process = o->event_process,
        .at_set = o->event != 0,
        .at = o->event_time,
    };
    struct ntl_md_build b;
    struct ntl_ipt_image *img;
    struct ntl_error err;
    ntl_error_clear(&err);
    int rc = space_image(o, s0, &img, &err);
    if (rc >= 0)
        rc = ntl_iptsrc_add_pe(img, o->syms, &po, &b, &err);
    if (rc >= 0)
        for (size_t i = 0; i < b.note_count; i++)
            dump_build_warn_note(cmd, &b.notes[i]);
    ntl_md_build_free(&b);
    return rc < 0 ? cli_fail(cmd, &err, NULL) : 0;
}

/* Whether an earlier spec already brought spec i's space's PE files. */
static bool pe_done(const struct ipt_flow_opts *o, size_t i)
{
    const struct ipt_image_spec *s = &o->images.v[i];
    for (size_t j = 0; j < i; j++) {
        const struct ipt_image_spec *t = &o->images.v[j];
        if (t->kind == IPT_IMG_PE && t->in_space == s->in_space && (!s->in_space || t->cr3 == s->cr3))
            return true;
    }
    return false;
}

/* --etl --modules: each process's user-mode modules in its CR3's space;
 * the decode starts in the event's process's. */
static int load_etl_spaces(struct ipt_flow_opts *o, struct ntl_error *err)
{
    struct ntl_iptsrc_spaces_options so = {
        .etl_path = o->etl, .dirs = o->modules.items, .dir_count = o->modules.n,
        .at = o->event ? o->event_time : UINT64_MAX,
        .import_optimization = o->import_opt, .process = o->event_process,
    };
    struct ntl_iptsrc_spaces_info info;
    int rc = ntl_iptsrc_add_etl_spaces(o->spaces, o->syms, &so, &info, err);
    if (rc < 0)
        return rc;
    o->event_in_space = o->event && info.process_found;
    if (o->event_in_space) {
        ntl_ipt_spaces_switch(o->spaces, info.process_cr3);
        ntl_iptsrc_syms_switch(o->syms, info.process_cr3);
    }
    return 0;
}

int ipt_flow_load_images(struct ipt_flow_opts *o, const char *cmd)
{
    struct ntl_error err;
    bool default_pe = false;
    ntl_error_clear(&err);
    if (ntl_ipt_spaces_new(&o->spaces, &err) < 0 || ntl_iptsrc_syms_new(&o->syms, &err) < 0)
        return cli_fail(cmd, &err, NULL);
    if (o->modules.n && load_etl_spaces(o, &err) < 0)
        return cli_fail(cmd, &err, NULL);
    for (size_t i = 0; i < o->images.n; i++) {
        const struct ipt_image_spec *s = &o->images.v[i];
        if (s->kind != IPT_IMG_PE) {
            if (load_one(o, s, &err) < 0)
                return cli_fail(cmd, &err, NULL);
            continue;
        }
        if (pe_done(o, i))
            continue;
        default_pe |= !s->in_space;
        if (load_pe(o, cmd, i, !s->in_space && o->modules.n) != 0)
            return EXIT_FAIL;
    }
    /* --etl's modules alone: a run of the pipeline without files. */
    if (o->modules.n && !default_pe) {
        size_t at = o->images.n;
        if (at == OPT_LIST_MAX)
            return cli_failf(cmd, "too many image options");
        o->images.v[at] = (struct ipt_image_spec){.kind = IPT_IMG_PE};
        if (load_pe(o, cmd, at, true) != 0)
            return EXIT_FAIL;
    }
    return 0;
}

int ipt_flow_load_trace(struct ipt_flow_opts *o, const char *cmd, struct ntl_ipt_trace *t)
{
    struct ntl_error err;
    ntl_error_clear(&err);
    if (!o->event) {
        if (ntl_ipt_trace_load(t, o->trace, false, 0, &err) < 0)
            return cli_fail(cmd, &err, o->trace);
        return 0;
    }
    struct ntl_iptsrc_etl_trace info;
    if (ntl_iptsrc_etl_trace(t, o->etl, (unsigned)o->event, &info, &err) < 0)
        return cli_fail(cmd, &err, o->etl);
    o->event_process = info.process;
    o->event_time = info.timestamp;
    return 0;
}
#endif
