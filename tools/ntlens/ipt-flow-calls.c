/* ipt flow --calls and --functions: what the flow says about calls. A call
 * (near, far, or an interrupt) is told at the instruction it lands on, a
 * return at the one it lands on, matched to the innermost open call whose
 * return address that is (calls above it were left by a longjmp or an
 * exception and are closed with it); a return that matches none came from
 * before the trace started, and the depth does not go below 0. A function
 * is visited when the flow enters it by a call, or from another function
 * other than by a return. */
#ifdef NTLENS_HAVE_IPT_FLOW
#include <stdlib.h>
#include <string.h>

#include "ipt-flow.h"
#include "out.h"

#define MAX_DEPTH 4096

struct frame {
    uint64_t ret;    /* the return address */
    uint64_t target; /* where the call went */
    uint64_t insns;  /* instructions when it was made */
};

/* --functions: one per function (or module without names, or unknown). */
struct fn {
    const char *module, *function; /* pointers into the names: equal names, equal pointers */
    uint64_t insns, visits;
};

struct ipt_calls {
    const struct ipt_flow_opts *o;
    struct out *out;
    uint64_t insns;
    /* The last instruction's class and where it said the flow goes next. */
    enum { NEXT_ANY, NEXT_CALL, NEXT_RET, NEXT_START } next;
    uint64_t site, ret_addr;
    struct frame stack[MAX_DEPTH];
    int depth;
    struct fn *fns;
    size_t nfns, cap;
    size_t *slot; /* open addressing over fns: index + 1, 0 empty */
    size_t mask;
    size_t prev_fn; /* SIZE_MAX: none */
};

static void calls_columns(struct out *out)
{
    out_column(out, "function", NULL, OUT_LEFT);
    out_column_width(out, 60);
    out_column(out, "event", NULL, OUT_LEFT);
    out_column_width(out, 6);
    out_column(out, "depth", NULL, OUT_RIGHT);
    out_column_width(out, 5);
    out_column(out, "address", NULL, OUT_LEFT);
    out_column_width(out, 18);
    out_column(out, "from", NULL, OUT_LEFT);
    out_column_width(out, 50);
    out_column(out, "insns", "Instructions", OUT_RIGHT);
    out_column_width(out, 12);
}

struct ipt_calls *ipt_calls_new(const struct ipt_flow_opts *o, struct out *out)
{
    struct ipt_calls *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->o = o;
    c->out = out;
    c->next = NEXT_START;
    c->prev_fn = SIZE_MAX;
    if (o->calls)
        calls_columns(out);
    return c;
}

void ipt_calls_free(struct ipt_calls *c)
{
    if (!c)
        return;
    free(c->fns);
    free(c->slot);
    free(c);
}

/* One row of --calls: name is the function the row is about. */
static void row(struct ipt_calls *c, const char *event, uint64_t name, uint64_t addr, bool from,
                uint64_t site, bool insns, uint64_t n)
{
    char text[512];
    int depth = c->depth;
    out_indent(c->out, depth);
    ntl_iptsrc_syms_name(c->o->syms, name, text, sizeof text);
    out_str(c->out, text);
    out_str(c->out, event);
    out_i64(c->out, depth);
    out_addr(c->out, addr, 16);
    if (from) {
        ntl_iptsrc_syms_name(c->o->syms, site, text, sizeof text);
        out_str(c->out, text);
    } else {
        out_null(c->out);
    }
    if (insns)
        out_u64(c->out, n);
    else
        out_null(c->out);
    out_row_end(c->out);
}

/* The instruction at ip, in the light of the one before. */
static void calls_insn(struct ipt_calls *c, uint64_t ip)
{
    if (c->next == NEXT_START) {
        row(c, "start", ip, ip, false, 0, false, 0);
    } else if (c->next == NEXT_CALL) {
        if (c->depth < MAX_DEPTH) {
            c->stack[c->depth] = (struct frame){c->ret_addr, ip, c->insns};
            c->depth++;
        }
        row(c, "call", ip, ip, true, c->site, false, 0);
    } else if (c->next == NEXT_RET) {
        int d = c->depth;
        while (d > 0 && c->stack[d - 1].ret != ip)
            d--;
        if (d > 0) {
            /* Matched: its frame and any left without a return close. */
            struct frame f = c->stack[d - 1];
            c->depth = d;
            row(c, "return", f.target, ip, true, c->site, true, c->insns - f.insns);
            c->depth = d - 1;
        } else {
            row(c, "return", ip, ip, true, c->site, false, 0);
        }
    }
}

static int fn_grow(struct ipt_calls *c)
{
    size_t cap = c->cap ? c->cap * 2 : 256;
    struct fn *v = realloc(c->fns, cap * sizeof *v);
    size_t *slot = calloc(cap * 2, sizeof *slot);
    if (!v || !slot) {
        free(slot);
        if (v)
            c->fns = v;
        return -1;
    }
    c->fns = v;
    c->cap = cap;
    free(c->slot);
    c->slot = slot;
    c->mask = cap * 2 - 1;
    for (size_t i = 0; i < c->nfns; i++) {
        size_t h = ((uintptr_t)v[i].module * 31 + (uintptr_t)v[i].function) * 0x9e3779b97f4a7c15ull;
        while (slot[h & c->mask])
            h++;
        slot[h & c->mask] = i + 1;
    }
    return 0;
}

/* The function's entry, made the first time. SIZE_MAX when out of memory. */
static size_t fn_of(struct ipt_calls *c, const char *module, const char *function)
{
    size_t h = ((uintptr_t)module * 31 + (uintptr_t)function) * 0x9e3779b97f4a7c15ull;
    for (; c->slot && c->slot[h & c->mask]; h++) {
        struct fn *f = &c->fns[c->slot[h & c->mask] - 1];
        if (f->module == module && f->function == function)
            return c->slot[h & c->mask] - 1;
    }
    if (c->nfns == c->cap) {
        if (fn_grow(c) < 0)
            return SIZE_MAX;
        return fn_of(c, module, function);
    }
    c->fns[c->nfns] = (struct fn){module, function, 0, 0};
    c->slot[h & c->mask] = ++c->nfns;
    return c->nfns - 1;
}

static int functions_insn(struct ipt_calls *c, uint64_t ip)
{
    struct ntl_iptsrc_place p;
    ntl_iptsrc_syms_find(c->o->syms, ip, &p);
    size_t i = fn_of(c, p.module, p.function);
    if (i == SIZE_MAX)
        return -1;
    c->fns[i].insns++;
    /* Entered: by a call, or from elsewhere but by a return. */
    c->fns[i].visits += c->next == NEXT_CALL || (i != c->prev_fn && c->next != NEXT_RET);
    c->prev_fn = i;
    return 0;
}

int ipt_calls_item(struct ipt_calls *c, const struct ntl_ipt_flow_item *it)
{
    switch (it->kind) {
    case NTL_IPT_FL_PAGING: /* another process's modules from now on */
        ntl_iptsrc_syms_switch(c->o->syms, it->a);
        break;
    case NTL_IPT_FL_INSN:
        if (c->o->calls)
            calls_insn(c, it->ip);
        else if (functions_insn(c, it->ip) < 0)
            return -1;
        c->insns++;
        switch (it->iclass) {
        case NTL_IPT_IC_CALL: case NTL_IPT_IC_CALL_IND: case NTL_IPT_IC_FAR_CALL:
            c->next = NEXT_CALL;
            c->ret_addr = it->ip + it->size;
            break;
        case NTL_IPT_IC_RET: case NTL_IPT_IC_FAR_RET:
            c->next = NEXT_RET;
            break;
        default:
            c->next = NEXT_ANY;
        }
        c->site = it->ip;
        break;
    case NTL_IPT_FL_INTERRUPT:
        /* The handler returns (IRET) to the instruction it interrupted. */
        if (!(it->flags & NTL_IPT_FL_IP_SUPPRESSED)) {
            c->next = NEXT_CALL;
            c->ret_addr = c->site = it->ip;
        }
        break;
    case NTL_IPT_FL_DISABLED: case NTL_IPT_FL_ASYNC_DISABLED:
        /* A branch out of the traced code (a system call from a user-mode
         * trace): where it went is not seen, nor is it a call. */
        if (c->next != NEXT_START)
            c->next = NEXT_ANY;
        break;
    case NTL_IPT_FL_ENABLED:
        /* Resumed where it stopped (after the system call): the same call
         * stack goes on; elsewhere a new flow starts. */
        c->next = it->flags & NTL_IPT_FL_RESUMED ? NEXT_ANY : NEXT_START;
        break;
    case NTL_IPT_FL_OVERFLOW:
        ipt_calls_lost(c);
        break;
    default:
        break;
    }
    return 0;
}

void ipt_calls_lost(struct ipt_calls *c)
{
    c->depth = 0;
    c->next = NEXT_START;
    c->prev_fn = SIZE_MAX;
}

static int by_insns(const void *a, const void *b)
{
    const struct fn *x = a, *y = b;
    if (x->insns != y->insns)
        return x->insns < y->insns ? 1 : -1;
    if (x->visits != y->visits)
        return x->visits < y->visits ? 1 : -1;
    return 0;
}

int ipt_calls_finish(struct ipt_calls *c)
{
    if (!c->o->functions)
        return 0;
    qsort(c->fns, c->nfns, sizeof *c->fns, by_insns);
    out_column(c->out, "function", NULL, OUT_LEFT);
    out_column(c->out, "module", NULL, OUT_LEFT);
    out_column(c->out, "insns", "Instructions", OUT_RIGHT);
    out_column(c->out, "visits", NULL, OUT_RIGHT);
    out_column(c->out, "share", "% Instructions", OUT_RIGHT);
    for (size_t i = 0; i < c->nfns; i++) {
        const struct fn *f = &c->fns[i];
        if (f->function)
            out_str(c->out, f->function);
        else
            out_null(c->out);
        if (f->module)
            out_str(c->out, f->module);
        else
            out_null(c->out);
        out_u64(c->out, f->insns);
        out_u64(c->out, f->visits);
        out_num(c->out, c->insns ? 100.0 * (double)f->insns / (double)c->insns : 0, 2);
        out_row_end(c->out);
    }
    return 0;
}
#endif
