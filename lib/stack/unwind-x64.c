/* The x64 unwinder: RUNTIME_FUNCTION lookup and UNWIND_INFO codes, with
 * RtlVirtualUnwind's rules: in a prolog only the codes whose prolog offset
 * the pc has passed apply; in an epilog the epilog is emulated instead;
 * chained entries add their parent's codes; a machine frame replaces the
 * final return-address pop. */
#include <string.h>

#include "ntlens/reader.h"
#include "unwind-x64.h"

enum {
    UWOP_PUSH_NONVOL = 0,
    UWOP_ALLOC_LARGE = 1,
    UWOP_ALLOC_SMALL = 2,
    UWOP_SET_FPREG = 3,
    UWOP_SAVE_NONVOL = 4,
    UWOP_SAVE_NONVOL_FAR = 5,
    UWOP_EPILOG = 6,          /* version 2; SAVE_XMM in version 1 (never emitted) */
    UWOP_SPARE = 7,           /* SAVE_XMM_FAR in version 1 (never emitted) */
    UWOP_SAVE_XMM128 = 8,
    UWOP_SAVE_XMM128_FAR = 9,
    UWOP_PUSH_MACHFRAME = 10,
};

#define UNW_FLAG_CHAININFO 0x4
#define RUNTIME_FUNCTION_SIZE 12u

int ntl_unwind_need(const struct ntl_unwind_mem *m, uint64_t va, void *buf, size_t len,
                    const char *what, struct ntl_error *err)
{
    if (m->read(m->ctx, va, buf, len) == len)
        return 0;
    return ntl_error_set(err, NTL_ERR_TRUNCATED, what, va,
                         "%s memory at 0x%llx is not in the dump", what, (unsigned long long)va);
}

static bool in_image(const struct ntl_unwind_x64_image *img, uint64_t rva, uint64_t len)
{
    return rva <= img->size && len <= img->size - rva;
}

static int read_function(const struct ntl_unwind_mem *m, const struct ntl_unwind_x64_image *img,
                         uint64_t rva, struct ntl_unwind_x64_function *f, struct ntl_error *err)
{
    uint8_t b[RUNTIME_FUNCTION_SIZE];
    if (!in_image(img, rva, sizeof b))
        return ntl_error_set(err, NTL_ERR_FORMAT, "RUNTIME_FUNCTION", img->base + rva,
                             "RUNTIME_FUNCTION at RVA 0x%llx is outside the image of 0x%x bytes",
                             (unsigned long long)rva, img->size);
    int rc = ntl_unwind_need(m, img->base + rva, b, sizeof b, "RUNTIME_FUNCTION", err);
    if (rc < 0)
        return rc;
    f->begin = ntl_le32(b);
    f->end = ntl_le32(b + 4);
    f->unwind_rva = ntl_le32(b + 8);
    return 0;
}

int ntl_unwind_x64_lookup(const struct ntl_unwind_mem *m, const struct ntl_unwind_x64_image *img,
                          uint32_t rva, struct ntl_unwind_x64_function *f, struct ntl_error *err)
{
    if (!in_image(img, img->pdata_rva, img->pdata_size))
        return ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_DIRECTORY_ENTRY_EXCEPTION",
                             img->base + img->pdata_rva,
                             "the exception directory (RVA 0x%x, 0x%x bytes) is outside the image",
                             img->pdata_rva, img->pdata_size);
    size_t lo = 0, hi = img->pdata_size / RUNTIME_FUNCTION_SIZE;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int rc = read_function(m, img, img->pdata_rva + (uint64_t)mid * RUNTIME_FUNCTION_SIZE, f, err);
        if (rc < 0)
            return rc;
        if (rva < f->begin)
            hi = mid;
        else if (rva >= f->end)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

/* An UNWIND_INFO's header and codes. */
struct info {
    uint64_t va;
    uint8_t version, flags, prolog, count, frame_reg, frame_off;
    uint8_t codes[2 * 256 + RUNTIME_FUNCTION_SIZE + 2]; /* codes, padding, chained entry */
};

static int read_info(const struct ntl_unwind_mem *m, const struct ntl_unwind_x64_image *img,
                     uint32_t rva, struct info *u, struct ntl_error *err)
{
    uint8_t h[4];
    u->va = img->base + rva;
    if (!in_image(img, rva, 4))
        return ntl_error_set(err, NTL_ERR_FORMAT, "UNWIND_INFO", u->va,
                             "UNWIND_INFO at RVA 0x%x is outside the image of 0x%x bytes", rva, img->size);
    int rc = ntl_unwind_need(m, u->va, h, 4, "UNWIND_INFO", err);
    if (rc < 0)
        return rc;
    u->version = h[0] & 7;
    u->flags = h[0] >> 3;
    u->prolog = h[1];
    u->count = h[2];
    u->frame_reg = h[3] & 15;
    u->frame_off = h[3] >> 4;
    if (u->version != 1 && u->version != 2)
        return ntl_error_set(err, NTL_ERR_FORMAT, "UNWIND_INFO", u->va,
                             "UNWIND_INFO at 0x%llx has version %u (1 or 2 expected)",
                             (unsigned long long)u->va, u->version);
    size_t len = 2u * ((u->count + 1u) & ~1u);
    if (u->flags & UNW_FLAG_CHAININFO)
        len += RUNTIME_FUNCTION_SIZE;
    if (!in_image(img, (uint64_t)rva + 4, len))
        return ntl_error_set(err, NTL_ERR_FORMAT, "UNWIND_INFO", u->va,
                             "the codes of UNWIND_INFO at 0x%llx run past the image",
                             (unsigned long long)u->va);
    return ntl_unwind_need(m, u->va + 4, u->codes, len, "UNWIND_INFO", err);
}

/* Slots an unwind code takes (0: unknown code). */
static unsigned code_slots(const struct info *u, uint8_t op, uint8_t opinfo)
{
    switch (op) {
    case UWOP_PUSH_NONVOL: case UWOP_ALLOC_SMALL: case UWOP_SET_FPREG: case UWOP_PUSH_MACHFRAME:
        return 1;
    case UWOP_ALLOC_LARGE: return opinfo ? 3 : 2;
    case UWOP_SAVE_NONVOL: case UWOP_SAVE_XMM128: return 2;
    case UWOP_SAVE_NONVOL_FAR: case UWOP_SAVE_XMM128_FAR: return 3;
    case UWOP_EPILOG: return u->version == 2 ? 1 : 2;
    case UWOP_SPARE: return u->version == 1 ? 3 : 0;
    }
    return 0;
}

static int load_reg(const struct ntl_unwind_mem *m, uint64_t va, uint64_t *reg, struct ntl_error *err)
{
    uint8_t w[8];
    int rc = ntl_unwind_need(m, va, w, 8, "stack", err);
    if (rc == 0)
        *reg = ntl_le64(w);
    return rc;
}

/* The state a step carries across chained UNWIND_INFOs. */
struct step {
    uint64_t frame;            /* the body's rsp, from which saves are addressed */
    bool machframe;
};

static int machframe(const struct ntl_unwind_mem *m, struct ntl_unwind_x64_regs *r, uint8_t opinfo,
                     struct step *s, struct ntl_error *err)
{
    uint64_t at = r->gpr[NTL_X64_RSP] + (opinfo ? 8 : 0); /* skip the error code */
    int rc = load_reg(m, at, &r->rip, err);
    if (rc == 0)
        rc = load_reg(m, at + 24, &r->gpr[NTL_X64_RSP], err);
    s->machframe = true;
    return rc;
}

/* Applies one code (already known to have happened at this pc). */
static int apply(const struct ntl_unwind_mem *m, const uint8_t *c,
                 struct ntl_unwind_x64_regs *r, struct step *s, struct ntl_error *err)
{
    uint8_t op = c[1] & 15, opinfo = c[1] >> 4;
    uint64_t *rsp = &r->gpr[NTL_X64_RSP];
    int rc = 0;
    switch (op) {
    case UWOP_PUSH_NONVOL:
        if ((rc = load_reg(m, *rsp, &r->gpr[opinfo], err)) == 0)
            *rsp += 8;
        break;
    case UWOP_ALLOC_LARGE: *rsp += opinfo ? ntl_le32(c + 2) : ntl_le16(c + 2) * 8u; break;
    case UWOP_ALLOC_SMALL: *rsp += opinfo * 8u + 8u; break;
    case UWOP_SET_FPREG: *rsp = s->frame; break;
    case UWOP_SAVE_NONVOL: rc = load_reg(m, s->frame + ntl_le16(c + 2) * 8u, &r->gpr[opinfo], err); break;
    case UWOP_SAVE_NONVOL_FAR: rc = load_reg(m, s->frame + ntl_le32(c + 2), &r->gpr[opinfo], err); break;
    case UWOP_PUSH_MACHFRAME: rc = machframe(m, r, opinfo, s, err); break;
    default: break; /* XMM saves and epilog descriptions leave the integer registers alone */
    }
    return rc;
}

/* Runs the codes of one UNWIND_INFO; prolog_off is how far into the prolog
 * the pc is (UINT32_MAX: past it, every code applies). */
static int run_codes(const struct ntl_unwind_mem *m, const struct info *u, uint32_t prolog_off,
                     struct ntl_unwind_x64_regs *r, struct step *s, struct ntl_error *err)
{
    for (unsigned i = 0; i < u->count;) {
        const uint8_t *c = u->codes + 2 * i;
        unsigned slots = code_slots(u, c[1] & 15, c[1] >> 4);
        if (slots == 0 || i + slots > u->count)
            return ntl_error_set(err, NTL_ERR_FORMAT, "UNWIND_CODE", u->va + 4 + 2 * i,
                                 "unwind code %u of UNWIND_INFO at 0x%llx is %s",
                                 i, (unsigned long long)u->va, slots ? "cut short" : "unknown");
        if (c[0] <= prolog_off) {
            int rc = apply(m, c, r, s, err);
            if (rc < 0)
                return rc;
            if (s->machframe)
                return 0; /* the last code of its function: rip and rsp are the frame's */
        }
        i += slots;
    }
    return 0;
}

/* Where the body's rsp is: the frame register minus its offset once the
 * prolog has set it, else the current rsp. */
static uint64_t body_rsp(const struct info *u, uint32_t prolog_off, const struct ntl_unwind_x64_regs *r)
{
    if (!u->frame_reg)
        return r->gpr[NTL_X64_RSP];
    for (unsigned i = 0; i < u->count; i++) {
        const uint8_t *c = u->codes + 2 * i;
        if ((c[1] & 15) == UWOP_SET_FPREG && c[0] > prolog_off)
            return r->gpr[NTL_X64_RSP];
    }
    return r->gpr[u->frame_reg] - u->frame_off * 16u;
}

static int unwind_function(const struct ntl_unwind_mem *m, const struct ntl_unwind_x64_image *img,
                           struct ntl_unwind_x64_function f, uint32_t rva,
                           struct ntl_unwind_x64_regs *r, struct ntl_error *err)
{
    struct step s = {0};
    struct info u;
    bool primary = true;
    for (unsigned link = 0; link <= NTL_UNWIND_X64_MAX_CHAIN; link++) {
        int rc;
        /* Some linkers point an entry at another RUNTIME_FUNCTION (low bit set). */
        if (f.unwind_rva & 1) {
            if ((rc = read_function(m, img, f.unwind_rva & ~1u, &f, err)) < 0)
                return rc;
            continue;
        }
        if ((rc = read_info(m, img, f.unwind_rva, &u, err)) < 0)
            return rc;
        uint32_t prolog_off = UINT32_MAX;
        if (rva >= f.begin && rva - f.begin < u.prolog)
            prolog_off = rva - f.begin;
        else if (primary && !(u.flags & UNW_FLAG_CHAININFO) && rva < f.end) {
            /* A chained part has no epilog of its own: its prolog offsets
             * are relative to the parent. A return address at the end of
             * the function (its last instruction a call) is the next
             * function's code, not this one's epilog. */
            rc = ntl_unwind_x64_in_epilog(m, img, &f, r->rip, err);
            if (rc < 0)
                return rc;
            if (rc == 1) {
                rc = ntl_unwind_x64_run_epilog(m, r, err);
                return rc < 0 ? rc : NTL_UNWIND_X64_EPILOG;
            }
        }
        if (primary || u.frame_reg)
            s.frame = body_rsp(&u, prolog_off, r);
        primary = false;
        if ((rc = run_codes(m, &u, prolog_off, r, &s, err)) < 0)
            return rc;
        if (s.machframe)
            return NTL_UNWIND_X64_MACHFRAME;
        if (!(u.flags & UNW_FLAG_CHAININFO)) {
            rc = load_reg(m, r->gpr[NTL_X64_RSP], &r->rip, err);
            if (rc < 0)
                return rc;
            r->gpr[NTL_X64_RSP] += 8;
            return NTL_UNWIND_X64_CODES;
        }
        const uint8_t *chained = u.codes + 2u * ((u.count + 1u) & ~1u);
        f.begin = ntl_le32(chained);
        f.end = ntl_le32(chained + 4);
        f.unwind_rva = ntl_le32(chained + 8);
    }
    return ntl_error_set(err, NTL_ERR_FORMAT, "UNWIND_INFO", u.va,
                         "the chain of UNWIND_INFOs through 0x%llx is longer than %u (a loop?)",
                         (unsigned long long)u.va, NTL_UNWIND_X64_MAX_CHAIN);
}

int ntl_unwind_x64_step(const struct ntl_unwind_mem *m, const struct ntl_unwind_x64_image *img,
                        bool caller, struct ntl_unwind_x64_regs *r, struct ntl_error *err)
{
    uint64_t pc = r->rip, look = caller ? pc - 1 : pc;
    struct ntl_unwind_x64_function f;
    int rc = 0;
    if (img && look - img->base < img->size)
        rc = ntl_unwind_x64_lookup(m, img, (uint32_t)(look - img->base), &f, err);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        rc = load_reg(m, r->gpr[NTL_X64_RSP], &r->rip, err);
        if (rc < 0)
            return rc;
        r->gpr[NTL_X64_RSP] += 8;
        return NTL_UNWIND_X64_LEAF;
    }
    return unwind_function(m, img, f, (uint32_t)(pc - img->base), r, err);
}
