/* Import optimization: resolve IMPORT_CONTROL_TRANSFER sites and rewrite them. */
#include "ntlens/importopt.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/pe_dvrt.h"
#include "ntlens/reader.h"

#define SITE_LEN 12
#define MAX_FORWARDS 8

struct resolver {
    struct ntl_iopt_module *mods;
    size_t n;
    struct ntl_pe_exports *exports; /* per module, parsed on first use */
    const struct ntl_pe_export ***by_name; /* per module: named exports sorted by name */
    size_t *named;
    bool *parsed;
};

static int cmp_export_name(const void *a, const void *b)
{
    const struct ntl_pe_export *x = *(const struct ntl_pe_export *const *)a;
    const struct ntl_pe_export *y = *(const struct ntl_pe_export *const *)b;
    return strcmp(x->name, y->name);
}

/* Exported names are looked up once per import: a sorted index keeps a
 * module with thousands of imports from being quadratic. */
static const struct ntl_pe_export *find_export(const struct resolver *r, size_t m,
                                               const char *name, uint32_t ordinal)
{
    size_t lo = 0, hi = r->named[m];
    if (!name)
        return ntl_pe_export_find(&r->exports[m], NULL, ordinal);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(r->by_name[m][mid]->name, name);
        if (c == 0)
            return r->by_name[m][mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static const char *base_name(const char *path)
{
    const char *b = path;
    for (const char *p = path; *p; p++)
        if (*p == '/' || *p == '\\')
            b = p + 1;
    return b;
}

/* Length of a file name without its extension. */
static size_t stem_len(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot ? (size_t)(dot - name) : strlen(name);
}

static bool same_stem(const char *a, const char *b)
{
    size_t la = stem_len(a), lb = stem_len(b);
    if (la != lb)
        return false;
    for (size_t i = 0; i < la; i++)
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]))
            return false;
    return true;
}

/* The module a DLL name refers to: same base name, else same stem. */
static size_t find_module(const struct resolver *r, const char *dll)
{
    for (size_t i = 0; i < r->n; i++) {
        const char *b = base_name(r->mods[i].name);
        size_t k = 0;
        while (b[k] && dll[k] && tolower((unsigned char)b[k]) == tolower((unsigned char)dll[k]))
            k++;
        if (!b[k] && !dll[k])
            return i;
    }
    for (size_t i = 0; i < r->n; i++)
        if (same_stem(base_name(r->mods[i].name), dll))
            return i;
    return SIZE_MAX;
}

static const struct ntl_pe_exports *exports_of(struct resolver *r, size_t m, struct ntl_error *err,
                                               int *rc)
{
    *rc = NTL_OK;
    if (!r->parsed[m]) {
        struct ntl_pe_exports *ex = &r->exports[m];
        *rc = ntl_pe_exports_parse(r->mods[m].pe, ex, err);
        if (*rc < 0) {
            ntl_error_prefix(err, "exports of %s", base_name(r->mods[m].name));
            return NULL;
        }
        r->parsed[m] = true;
        r->by_name[m] = malloc((ex->count ? ex->count : 1) * sizeof *r->by_name[m]);
        if (!r->by_name[m]) {
            *rc = ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
            return NULL;
        }
        for (size_t i = 0; i < ex->count; i++)
            if (ex->entries[i].name && ex->entries[i].rva)
                r->by_name[m][r->named[m]++] = &ex->entries[i];
        qsort(r->by_name[m], r->named[m], sizeof *r->by_name[m], cmp_export_name);
    }
    return &r->exports[m];
}

/* Resolves dll!name (or #ordinal when name is NULL) to an address. Fills the
 * site's target fields or sets status/detail. */
static int resolve(struct resolver *r, const char *dll, const char *name, uint32_t ordinal,
                   struct ntl_iopt_site *s, struct ntl_error *err)
{
    char fdll[128], fname[128];
    size_t m = SIZE_MAX;

    for (int hop = 0; hop <= MAX_FORWARDS; hop++) {
        const struct ntl_pe_exports *ex;
        const struct ntl_pe_export *e = NULL;
        int rc;

        m = SIZE_MAX;
        if (same_stem(dll, "hal.dll")) {
            /* HAL.dll exports are forwarders to ntoskrnl on current Windows. */
            m = find_module(r, "ntoskrnl.exe");
            if (m != SIZE_MAX) {
                ex = exports_of(r, m, err, &rc);
                if (!ex)
                    return rc;
                e = find_export(r, m, name, ordinal);
                if (!e)
                    m = SIZE_MAX;
            }
        }
        if (!e) {
            m = find_module(r, dll);
            if (m == SIZE_MAX) {
                s->status = NTL_IOPT_SKIP_NOT_LOADED;
                snprintf(s->detail, sizeof s->detail, "%s is not among the modules", dll);
                return NTL_OK;
            }
            ex = exports_of(r, m, err, &rc);
            if (!ex)
                return rc;
            e = find_export(r, m, name, ordinal);
        }
        if (!e) {
            s->status = NTL_IOPT_SKIP_NO_EXPORT;
            if (name)
                snprintf(s->detail, sizeof s->detail, "%s does not export %s",
                         base_name(r->mods[m].name), name);
            else
                snprintf(s->detail, sizeof s->detail, "%s does not export ordinal %u",
                         base_name(r->mods[m].name), ordinal);
            return NTL_OK;
        }
        if (!e->forwarder) {
            s->target_module = m;
            s->target = r->mods[m].base + e->rva;
            snprintf(s->target_name, sizeof s->target_name, "%s",
                     e->name ? e->name : (name ? name : "?"));
            return NTL_OK;
        }
        /* "MODULE.Name" or "MODULE.#ordinal" */
        const char *dot = strrchr(e->forwarder, '.');
        if (!dot || dot == e->forwarder || (size_t)(dot - e->forwarder) + 5 > sizeof fdll) {
            s->status = NTL_IOPT_SKIP_FORWARDER;
            snprintf(s->detail, sizeof s->detail, "malformed forwarder \"%s\"", e->forwarder);
            return NTL_OK;
        }
        snprintf(fdll, sizeof fdll, "%.*s.dll", (int)(dot - e->forwarder), e->forwarder);
        snprintf(fname, sizeof fname, "%s", dot + 1);
        dll = fdll;
        if (fname[0] == '#') {
            name = NULL;
            ordinal = (uint32_t)strtoul(fname + 1, NULL, 10);
        } else {
            name = fname;
        }
    }
    s->status = NTL_IOPT_SKIP_FORWARDER;
    snprintf(s->detail, sizeof s->detail, "more than %d forwarders", MAX_FORWARDS);
    return NTL_OK;
}

static void set_import_name(struct ntl_iopt_site *s, const struct ntl_pe_import *imp)
{
    snprintf(s->import_dll, sizeof s->import_dll, "%s", imp->dll);
    if (imp->name)
        snprintf(s->import_name, sizeof s->import_name, "%s", imp->name);
    else
        snprintf(s->import_name, sizeof s->import_name, "#%u", imp->ordinal);
}

struct iat_index {
    const struct ntl_pe_import **v; /* imports sorted by IAT slot */
    size_t n;
};

static int cmp_iat(const void *a, const void *b)
{
    uint32_t x = (*(const struct ntl_pe_import *const *)a)->iat_rva;
    uint32_t y = (*(const struct ntl_pe_import *const *)b)->iat_rva;
    return x < y ? -1 : x > y;
}

static const struct ntl_pe_import *import_at(const struct iat_index *ix, uint32_t slot)
{
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->v[mid]->iat_rva == slot)
            return ix->v[mid];
        if (ix->v[mid]->iat_rva < slot)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int do_site(struct resolver *r, size_t mi, const struct iat_index *im,
                   const struct ntl_dvrt_fixup *f, struct ntl_iopt_site *s, struct ntl_error *err)
{
    struct ntl_iopt_module *mod = &r->mods[mi];
    const struct ntl_pe *pe = mod->pe;
    uint8_t *p;
    uint32_t slot;
    int64_t rel;
    const struct ntl_pe_import *imp;
    static const uint8_t nop5[4] = {0x0f, 0x1f, 0x44, 0x00};
    static const uint8_t int3x5[5] = {0xcc, 0xcc, 0xcc, 0xcc, 0xcc};
    int rc;

    memset(s, 0, sizeof *s);
    s->module = mi;
    s->rva = f->rva;
    s->address = mod->base + f->rva;
    s->call = f->indirect_call;
    s->iat_index = f->iat_index;
    s->target_module = SIZE_MAX;
    if (f->iat_index == NTL_DVRT_IAT_INDEX_NONE) {
        s->status = NTL_IOPT_SKIP_NO_OPTIMIZE;
        snprintf(s->detail, sizeof s->detail, "IATIndex 0x7FFFF: not to be optimized");
        return NTL_OK;
    }
    slot = pe->dirs[NTL_PE_DIR_IAT].rva + f->iat_index * 8;
    imp = pe->dirs[NTL_PE_DIR_IAT].rva ? import_at(im, slot) : NULL;
    if (!imp) {
        s->status = NTL_IOPT_SKIP_BAD_IAT_INDEX;
        snprintf(s->detail, sizeof s->detail, "no import at IAT slot %u (RVA 0x%x)", f->iat_index,
                 slot);
        return NTL_OK;
    }
    set_import_name(s, imp);
    if (pe->machine != NTL_PE_MACHINE_AMD64 || !ntl_range_ok(mod->image_size, f->rva, SITE_LEN)) {
        s->status = NTL_IOPT_SKIP_BAD_CODE;
        snprintf(s->detail, sizeof s->detail, "site is not x64 code within the image");
        return NTL_OK;
    }
    p = mod->image + f->rva;
    /* The 5-byte nop is `nop dword [rax+rax*1+disp8]`: MSVC writes disp8 0, LLVM 8. */
    if (p[0] != 0x48 || p[1] != 0xff || p[2] != (s->call ? 0x15 : 0x25) ||
        memcmp(p + 7, s->call ? nop5 : int3x5, s->call ? 4 : 5) != 0) {
        s->status = NTL_IOPT_SKIP_BAD_CODE;
        snprintf(s->detail, sizeof s->detail,
                 "expected %s, found %02x %02x %02x .. %02x %02x %02x %02x %02x",
                 s->call ? "48 FF 15 disp32 + 0F 1F 44 00 xx" : "48 FF 25 disp32 + 5 int3", p[0], p[1],
                 p[2], p[7], p[8], p[9], p[10], p[11]);
        return NTL_OK;
    }
    if ((uint32_t)(f->rva + 7 + (int32_t)ntl_le32(p + 3)) != slot) {
        s->status = NTL_IOPT_SKIP_IAT_MISMATCH;
        snprintf(s->detail, sizeof s->detail, "instruction reads RVA 0x%x, IATIndex %u is RVA 0x%x",
                 (uint32_t)(f->rva + 7 + (int32_t)ntl_le32(p + 3)), f->iat_index, slot);
        return NTL_OK;
    }
    rc = resolve(r, imp->dll, imp->name, imp->ordinal, s, err);
    if (rc < 0 || s->target_module == SIZE_MAX)
        return rc;
    rel = (int64_t)(s->target - (s->address + SITE_LEN));
    if (rel < INT32_MIN || rel > INT32_MAX) {
        s->status = NTL_IOPT_SKIP_OUT_OF_RANGE;
        snprintf(s->detail, sizeof s->detail, "target 0x%" PRIx64 " is beyond +-2 GB", s->target);
        return NTL_OK;
    }
    p[0] = 0x4c;
    p[1] = 0x8b;
    p[2] = 0x15;
    p[7] = s->call ? 0xe8 : 0xe9;
    ntl_put_le32(p + 8, (uint32_t)(int32_t)rel);
    s->status = NTL_IOPT_PATCHED;
    return NTL_OK;
}

static int resolver_init(struct resolver *r, struct ntl_iopt_module *mods, size_t n,
                         struct ntl_error *err)
{
    r->mods = mods;
    r->n = n;
    r->exports = calloc(n ? n : 1, sizeof *r->exports);
    r->by_name = calloc(n ? n : 1, sizeof *r->by_name);
    r->named = calloc(n ? n : 1, sizeof *r->named);
    r->parsed = calloc(n ? n : 1, sizeof *r->parsed);
    if (!r->exports || !r->by_name || !r->named || !r->parsed) {
        free(r->exports);
        free(r->by_name);
        free(r->named);
        free(r->parsed);
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    }
    return NTL_OK;
}

static void resolver_free(struct resolver *r)
{
    for (size_t i = 0; i < r->n; i++) {
        if (r->parsed[i])
            ntl_pe_exports_free(&r->exports[i]);
        free(r->by_name[i]);
    }
    free(r->exports);
    free(r->by_name);
    free(r->named);
    free(r->parsed);
}

int ntl_importopt_apply(struct ntl_iopt_module *mods, size_t n, struct ntl_iopt_report *rep,
                        struct ntl_error *err)
{
    struct resolver r;
    size_t cap = 0;
    int rc;

    memset(rep, 0, sizeof *rep);
    rc = resolver_init(&r, mods, n, err);
    if (rc < 0)
        return rc;
    for (size_t mi = 0; mi < n && rc >= 0; mi++) {
        struct ntl_dvrt d;
        struct ntl_pe_imports im;
        struct iat_index ix = {NULL, 0};

        rc = ntl_pe_dvrt(mods[mi].pe, &d, err);
        if (rc < 0) {
            ntl_error_prefix(err, "%s", base_name(mods[mi].name));
            break;
        }
        rc = ntl_pe_imports_parse(mods[mi].pe, &im, err);
        if (rc < 0) {
            ntl_error_prefix(err, "%s", base_name(mods[mi].name));
            ntl_dvrt_free(&d);
            break;
        }
        ix.v = malloc((im.count ? im.count : 1) * sizeof *ix.v);
        if (!ix.v)
            rc = ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
        for (size_t k = 0; ix.v && k < im.count; k++)
            ix.v[ix.n++] = &im.entries[k];
        if (ix.v)
            qsort(ix.v, ix.n, sizeof *ix.v, cmp_iat);
        for (size_t k = 0; k < d.reloc_count && rc >= 0; k++) {
            const struct ntl_dvrt_reloc *dr = &d.relocs[k];
            if (dr->symbol != NTL_DVRT_GUARD_IMPORT_CONTROL_TRANSFER)
                continue;
            for (size_t j = 0; j < dr->fixup_count && rc >= 0; j++) {
                struct ntl_iopt_site *s;
                if (rep->count == cap) {
                    size_t ncap = cap ? cap * 2 : 64;
                    s = realloc(rep->sites, ncap * sizeof *s);
                    if (!s) {
                        rc = ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
                        break;
                    }
                    rep->sites = s;
                    cap = ncap;
                }
                s = &rep->sites[rep->count];
                rc = do_site(&r, mi, &ix, &d.fixups[dr->first_fixup + j], s, err);
                if (rc < 0)
                    break;
                rep->count++;
                if (s->status == NTL_IOPT_PATCHED)
                    rep->patched++;
                else
                    rep->skipped++;
            }
        }
        free(ix.v);
        ntl_pe_imports_free(&im);
        ntl_dvrt_free(&d);
    }
    resolver_free(&r);
    if (rc < 0)
        ntl_iopt_report_free(rep);
    return rc;
}

int ntl_importopt_bind(struct ntl_iopt_module *mods, size_t n, struct ntl_error *err)
{
    struct resolver r;
    int rc, bound = 0;

    rc = resolver_init(&r, mods, n, err);
    if (rc < 0)
        return rc;
    for (size_t mi = 0; mi < n && rc >= 0; mi++) {
        struct ntl_pe_imports im;
        unsigned ps = ntl_pe_ptr_size(mods[mi].pe);
        rc = ntl_pe_imports_parse(mods[mi].pe, &im, err);
        if (rc < 0) {
            ntl_error_prefix(err, "%s", base_name(mods[mi].name));
            break;
        }
        for (size_t k = 0; k < im.count && rc >= 0; k++) {
            struct ntl_iopt_site s;
            memset(&s, 0, sizeof s);
            s.target_module = SIZE_MAX;
            rc = resolve(&r, im.entries[k].dll, im.entries[k].name, im.entries[k].ordinal, &s, err);
            if (rc < 0 || s.target_module == SIZE_MAX ||
                !ntl_range_ok(mods[mi].image_size, im.entries[k].iat_rva, ps))
                continue;
            if (ps == 8)
                ntl_put_le64(mods[mi].image + im.entries[k].iat_rva, s.target);
            else
                ntl_put_le32(mods[mi].image + im.entries[k].iat_rva, (uint32_t)s.target);
            bound++;
        }
        ntl_pe_imports_free(&im);
    }
    resolver_free(&r);
    return rc < 0 ? rc : bound;
}

void ntl_iopt_report_free(struct ntl_iopt_report *rep)
{
    free(rep->sites);
    memset(rep, 0, sizeof *rep);
}

const char *ntl_iopt_status_name(enum ntl_iopt_status s)
{
    switch (s) {
    case NTL_IOPT_PATCHED: return "patched";
    case NTL_IOPT_SKIP_NO_OPTIMIZE: return "skipped: do-not-optimize";
    case NTL_IOPT_SKIP_BAD_IAT_INDEX: return "skipped: bad IAT index";
    case NTL_IOPT_SKIP_NOT_LOADED: return "skipped: module not loaded";
    case NTL_IOPT_SKIP_NO_EXPORT: return "skipped: no such export";
    case NTL_IOPT_SKIP_FORWARDER: return "skipped: forwarder";
    case NTL_IOPT_SKIP_OUT_OF_RANGE: return "skipped: out of range";
    case NTL_IOPT_SKIP_BAD_CODE: return "skipped: unexpected code";
    case NTL_IOPT_SKIP_IAT_MISMATCH: return "skipped: IAT mismatch";
    }
    return "?";
}
