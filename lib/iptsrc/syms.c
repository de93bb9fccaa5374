/* Names for addresses: modules as ranges (the last added wins where they
 * overlap, so a file given after a dump's module names it), each with an
 * optional table of functions from lib/profile, and each in every address
 * space or in one CR3's (two processes' modules at the same address). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/ipt_sources.h"
#include "ntlens/minidump.h"

/* CR3's low 12 bits are the PCID (or flags), as ntl_ipt_spaces ignores them. */
#define CR3_MASK (~(uint64_t)0xfff)

struct space {
    bool set;
    uint64_t cr3;
};

struct module {
    char *name;
    uint64_t base, end;
    struct ntl_profile_symtab *t;
    struct space space; /* not set: every space's */
};

struct ntl_iptsrc_syms {
    struct module *v;
    size_t n, cap;
    struct space adding, current;
    size_t last;     /* the module the last lookup found: flows stay in one for long */
    bool overlapped; /* some modules overlap: a later one may hide part of last */
};

int ntl_iptsrc_syms_new(struct ntl_iptsrc_syms **s, struct ntl_error *err)
{
    if (!(*s = calloc(1, sizeof **s)))
        return ntl_error_set(err, NTL_ERR_NOMEM, "symbols", NTL_NO_OFFSET, "out of memory");
    return 0;
}

void ntl_iptsrc_syms_free(struct ntl_iptsrc_syms *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].name);
        ntl_profile_symtab_free(s->v[i].t);
    }
    free(s->v);
    free(s);
}

int ntl_iptsrc_syms_add(struct ntl_iptsrc_syms *s, const char *name, uint64_t base,
                        uint64_t size, struct ntl_profile_symtab *t, struct ntl_error *err)
{
    if (size == 0 || base + size < base) {
        ntl_profile_symtab_free(t);
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "symbols", NTL_NO_OFFSET,
                             "module %s: 0x%" PRIx64 " bytes at 0x%" PRIx64 " is no range", name,
                             size, base);
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        struct module *v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            ntl_profile_symtab_free(t);
            return ntl_error_set(err, NTL_ERR_NOMEM, "symbols", NTL_NO_OFFSET, "out of memory");
        }
        s->v = v;
        s->cap = cap;
    }
    for (size_t i = 0; i < s->n && !s->overlapped; i++)
        s->overlapped = base < s->v[i].end && s->v[i].base < base + size;
    char *copy = strdup(ntl_md_base_name(name));
    if (!copy) {
        ntl_profile_symtab_free(t);
        return ntl_error_set(err, NTL_ERR_NOMEM, "symbols", NTL_NO_OFFSET, "out of memory");
    }
    s->v[s->n++] = (struct module){.name = copy, .base = base, .end = base + size, .t = t,
                                   .space = s->adding};
    s->last = s->n - 1;
    return 0;
}

void ntl_iptsrc_syms_add_to(struct ntl_iptsrc_syms *s, bool in_space, uint64_t cr3)
{
    s->adding = (struct space){in_space, cr3 & CR3_MASK};
}

void ntl_iptsrc_syms_switch(struct ntl_iptsrc_syms *s, uint64_t cr3)
{
    s->current = (struct space){true, cr3 & CR3_MASK};
}

/* Whether module i holds addr in the current address space. */
static bool holds(const struct ntl_iptsrc_syms *s, size_t i, uint64_t addr)
{
    const struct module *m = &s->v[i];
    return addr >= m->base && addr < m->end &&
           (!m->space.set || (s->current.set && m->space.cr3 == s->current.cr3));
}

/* The last added module holding addr: modules are few (hundreds in a
 * kernel), and lookups mostly repeat the last one, which needs no search
 * unless modules overlap. */
static struct module *module_at(struct ntl_iptsrc_syms *s, uint64_t addr)
{
    if (s->last < s->n) {
        bool later = false;
        for (size_t i = s->last + 1; s->overlapped && i < s->n && !later; i++)
            later = holds(s, i, addr);
        if (holds(s, s->last, addr) && !later)
            return &s->v[s->last];
    }
    for (size_t i = s->n; i-- > 0;) {
        if (holds(s, i, addr)) {
            s->last = i;
            return &s->v[i];
        }
    }
    return NULL;
}

bool ntl_iptsrc_syms_find(struct ntl_iptsrc_syms *s, uint64_t addr, struct ntl_iptsrc_place *p)
{
    memset(p, 0, sizeof *p);
    struct module *m = module_at(s, addr);
    if (!m)
        return false;
    p->module = m->name;
    p->module_base = m->base;
    uint64_t disp;
    struct ntl_profile_symbol sym;
    if (m->t && ntl_profile_symtab_lookup(m->t, addr - m->base, &sym, &disp)) {
        p->function = sym.name;
        p->function_start = m->base + sym.offset;
    }
    return true;
}

void ntl_iptsrc_syms_name(struct ntl_iptsrc_syms *s, uint64_t addr, char *buf, size_t size)
{
    struct ntl_iptsrc_place p;
    if (!s || !ntl_iptsrc_syms_find(s, addr, &p))
        snprintf(buf, size, "0x%" PRIx64, addr);
    else if (!p.function)
        snprintf(buf, size, "%s+0x%" PRIx64, p.module, addr - p.module_base);
    else if (addr == p.function_start)
        snprintf(buf, size, "%s!%s", p.module, p.function);
    else
        snprintf(buf, size, "%s!%s+0x%" PRIx64, p.module, p.function, addr - p.function_start);
}
