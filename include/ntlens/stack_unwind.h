/* The Windows x64 unwinder: one step from a frame's registers to its
 * caller's, driven by the image's .pdata (RUNTIME_FUNCTION) and UNWIND_INFO
 * codes, as RtlVirtualUnwind does it. Every byte (unwind data, code bytes
 * for the epilog check, stack words) comes through one read callback, so
 * the same step walks a minidump, a mapped module file or a test buffer.
 *
 *     struct ntl_unwind_mem m = {my_read, ctx};
 *     struct ntl_unwind_x64_image img = {base, size_of_image, pdata_rva, pdata_size};
 *     struct ntl_unwind_x64_regs r = {...the thread's context...};
 *     for (unsigned n = 0; n < 256 && r.rip; n++) {
 *         if (ntl_unwind_x64_step(&m, &img, n > 0, &r, &err) < 0) break;  (err: why)
 *         ... r.rip is the caller's return address ...
 *     }
 *
 * Untrusted data throughout: chains are bounded, every RVA is checked
 * against the image, a missing byte is an error naming its address. */
#ifndef NTLENS_STACK_UNWIND_H
#define NTLENS_STACK_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Memory by virtual address: copies up to len bytes at va into buf and
 * returns how many it copied (it stops at the first byte it lacks). */
struct ntl_unwind_mem {
    size_t (*read)(void *ctx, uint64_t va, void *buf, size_t len);
    void *ctx;
};

/* Windows' register numbers, as UNWIND_CODE.OpInfo and CONTEXT order them. */
enum ntl_unwind_x64_reg {
    NTL_X64_RAX, NTL_X64_RCX, NTL_X64_RDX, NTL_X64_RBX,
    NTL_X64_RSP, NTL_X64_RBP, NTL_X64_RSI, NTL_X64_RDI,
    NTL_X64_R8, NTL_X64_R9, NTL_X64_R10, NTL_X64_R11,
    NTL_X64_R12, NTL_X64_R13, NTL_X64_R14, NTL_X64_R15,
};

struct ntl_unwind_x64_regs {
    uint64_t gpr[16];          /* by enum ntl_unwind_x64_reg */
    uint64_t rip;
};

/* Where a loaded image's unwind data is. */
struct ntl_unwind_x64_image {
    uint64_t base;             /* load address */
    uint32_t size;             /* SizeOfImage */
    uint32_t pdata_rva;        /* the exception directory (IMAGE_DIRECTORY_ENTRY_EXCEPTION) */
    uint32_t pdata_size;
};

struct ntl_unwind_x64_function {
    uint32_t begin, end;       /* RVAs of the function's code: [begin, end) */
    uint32_t unwind_rva;       /* its UNWIND_INFO */
};

/* Bounds on untrusted unwind data. */
#define NTL_UNWIND_X64_MAX_CHAIN 32u   /* chained UNWIND_INFOs followed per step */
#define NTL_UNWIND_X64_MAX_EPILOG 64u  /* instructions decoded by the epilog check */

/* Lookup: the RUNTIME_FUNCTION whose [begin, end) holds rva (a binary search
 * of the sorted table). Returns 1 with *f set, 0 when none holds it (a leaf
 * function), or with err set: NTL_ERR_FORMAT (the table is outside the
 * image), NTL_ERR_TRUNCATED (an entry is not in memory: its address). */
int ntl_unwind_x64_lookup(const struct ntl_unwind_mem *m, const struct ntl_unwind_x64_image *img,
                          uint32_t rva, struct ntl_unwind_x64_function *f, struct ntl_error *err);

/* How a step found the caller. */
enum ntl_unwind_x64_kind {
    NTL_UNWIND_X64_CODES,      /* the prolog's unwind codes (those already executed) */
    NTL_UNWIND_X64_EPILOG,     /* the pc was in an epilog: it was emulated */
    NTL_UNWIND_X64_LEAF,       /* no RUNTIME_FUNCTION: the return address is at [rsp] */
    NTL_UNWIND_X64_MACHFRAME,  /* a machine frame (interrupt or exception) gave rip and rsp */
};

/* One step: r holds a frame's registers and becomes its caller's (rip, rsp
 * and the nonvolatile registers the unwind codes restore). caller says
 * r->rip is a return address (every frame but the innermost): the function
 * is then looked up at rip - 1, since a call can be a function's last
 * instruction. img NULL: a leaf step. Returns the kind (>= 0), or with err
 * set and r unspecified:
 *   NTL_ERR_FORMAT     bad unwind data (an unknown version or code, a chain
 *                      longer than NTL_UNWIND_X64_MAX_CHAIN or outside the
 *                      image): err names the UNWIND_INFO's address
 *   NTL_ERR_TRUNCATED  a byte it needs (stack or unwind data) is not in
 *                      memory: err's offset is its address */
int ntl_unwind_x64_step(const struct ntl_unwind_mem *m, const struct ntl_unwind_x64_image *img,
                        bool caller, struct ntl_unwind_x64_regs *r, struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
