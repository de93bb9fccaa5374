/* Intel PT flow layer: the instructions a trace executed and the events
 * between them, as libipt's instruction and block decoders reconstruct them,
 * above the event layer (ipt_event.h) and a memory image read through one
 * callback (ipt_image.h).
 *
 * The decoder walks the code from the IP where tracing is enabled, decoding
 * each instruction once (its length and branch class, from Zydis, kept in a
 * per-address cache) and taking from the trace only what the code does not
 * say: a TNT bit for each conditional branch and compressed return, a TIP
 * for each indirect branch, far transfer and uncompressed return. A FUP
 * binds an asynchronous event (interrupt, TSX abort, disable) to the
 * instruction at its IP, before it executes. Returns are compressed against
 * a stack of the last NTL_IPT_RETSTACK calls.
 *
 * Errors name the trace offset and the IP they happened at (ptxed's
 * "[OFFSET, IP: error: WHAT]", ntl_ipt_flow_where); ntl_ipt_flow_resync
 * then continues at the next PSB. */
#ifndef NTLENS_IPT_FLOW_H
#define NTLENS_IPT_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"
#include "ntlens/ipt_config.h"
#include "ntlens/ipt_event.h"
#include "ntlens/ipt_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Depth of the return-compression stack (the SDM's, and libipt's). */
#define NTL_IPT_RETSTACK 64

/* Flow-layer statuses, in the ipt range (ipt_packet.h); ntl_ipt_flow_strerror
 * words them as libipt does. */
enum ntl_ipt_flow_status {
    NTL_IPT_NOMAP = -110,          /* no memory mapped at the IP to decode */
    NTL_IPT_BAD_QUERY = -111,      /* the code needs a TNT bit or a TIP the trace lacks */
    NTL_IPT_BAD_CONTEXT = -112,    /* a packet the decoder's state does not allow */
    NTL_IPT_BAD_INSN = -113,       /* the bytes at the IP do not decode */
    NTL_IPT_BAD_RETCOMP = -114,    /* a compressed return whose TNT bit is not-taken */
    NTL_IPT_RETSTACK_EMPTY = -115, /* a compressed return with no call on the stack */
    NTL_IPT_NOIP = -116,           /* tracing enabled with the IP suppressed */
    NTL_IPT_BAD_STATUS = -117,     /* PSB+ contradicts the decoder's state */
};

/* Branch class of an instruction (libipt's pt_insn_class). */
enum ntl_ipt_iclass {
    NTL_IPT_IC_OTHER = 0,
    NTL_IPT_IC_COND,     /* Jcc, JCXZ, LOOP: a TNT bit */
    NTL_IPT_IC_JUMP,     /* direct near jump */
    NTL_IPT_IC_CALL,     /* direct near call */
    NTL_IPT_IC_RET,      /* near return: a TNT bit when compressed, else a TIP */
    NTL_IPT_IC_JUMP_IND, /* indirect near jump: a TIP */
    NTL_IPT_IC_CALL_IND, /* indirect near call: a TIP */
    NTL_IPT_IC_FAR_CALL, /* far call, INT, SYSCALL, SYSENTER, VMCALL: a TIP */
    NTL_IPT_IC_FAR_RET,  /* far return, IRET, SYSRET, SYSEXIT: a TIP */
    NTL_IPT_IC_FAR_JUMP, /* far jump, VMLAUNCH/VMRESUME: a TIP */
    NTL_IPT_IC_PTWRITE,
};

/* What an item is; a and b by kind. */
enum ntl_ipt_flow_kind {
    NTL_IPT_FL_INSN = 1,       /* an instruction ran: ip, size, iclass, mode; a: the
                                  target of a direct branch (JUMP, CALL, COND) */
    NTL_IPT_FL_ENABLED,        /* tracing enabled at ip (flag RESUMED: where it stopped) */
    NTL_IPT_FL_DISABLED,       /* tracing disabled (at ip unless IP_SUPPRESSED) */
    NTL_IPT_FL_ASYNC_DISABLED, /* disabled by an event before the instruction at ip */
    NTL_IPT_FL_INTERRUPT,      /* asynchronous branch from ip to a (unless IP_SUPPRESSED) */
    NTL_IPT_FL_OVERFLOW,       /* trace lost; resumes at ip unless IP_SUPPRESSED */
    NTL_IPT_FL_EXEC_MODE,      /* the mode is now mode (enum ntl_ipt_exec_mode) */
    NTL_IPT_FL_TSX,            /* a: NTL_IPT_TSX_* */
    NTL_IPT_FL_PAGING,         /* a: CR3; flag NR */
    NTL_IPT_FL_VMCS,           /* a: VMCS base */
    NTL_IPT_FL_STOP,           /* TraceStop */
    NTL_IPT_FL_PWRE,           /* a: state << 4 | sub-state; flag HW */
    NTL_IPT_FL_PWRX,           /* a: PWRX aux (ipt_packet.h) */
    NTL_IPT_FL_CBR,            /* a: core:bus ratio */
    NTL_IPT_FL_MNT,            /* a: payload */
    NTL_IPT_FL_END,            /* the trace ended with tracing enabled at ip */
    NTL_IPT_FL_PTWRITE,        /* a: the payload; after the PTWRITE at ip */
    NTL_IPT_FL_EXSTOP,         /* execution stopped at ip (unless IP_SUPPRESSED) */
    NTL_IPT_FL_MWAIT,          /* a: hints, b: extensions; at ip */
    NTL_IPT_FL_RUN,            /* with runs configured, instructions that ran with no
                                  event between them, in place of their INSN items:
                                  b of them, c of which took a TNT bit or a TIP; ip,
                                  size, iclass and a are the last one's, as its INSN */
    NTL_IPT_FL_CFE,            /* an Event Trace event (a CFE and the EVDs before it):
                                  a: its CFE type (NTL_IPT_CFE_*) | vector << 8;
                                  b: CR2 (flag CR2) or VMX exit reason (flag VMXR);
                                  c: VMX exit qualification (flag VMXQ); at ip
                                  unless IP_SUPPRESSED */
    NTL_IPT_FL_IFLAGS,         /* with cfg.iflags: interrupts are now enabled (a 1) or
                                  disabled (a 0), at ip unless IP_SUPPRESSED */
    NTL_IPT_FL_TRIG,           /* a trigger (TRIG): a: its TRBV | 0x100 when it stands
                                  for several; at ip unless IP_SUPPRESSED (the
                                  instruction after which it fired) */
    NTL_IPT_FL_TICK,           /* with cfg.ticks: time passed by the TNT or TIP the
                                  branch at ip took (libipt's tick event) */
    NTL_IPT_FL_LAST = NTL_IPT_FL_TICK
};

/* CFE types (the SDM's Control Flow Event packet). */
enum ntl_ipt_cfe_type {
    NTL_IPT_CFE_INTR = 1,
    NTL_IPT_CFE_IRET,
    NTL_IPT_CFE_SMI,
    NTL_IPT_CFE_RSM,
    NTL_IPT_CFE_SIPI,
    NTL_IPT_CFE_INIT,
    NTL_IPT_CFE_VMENTRY,
    NTL_IPT_CFE_VMEXIT,
    NTL_IPT_CFE_VMEXIT_INTR,
    NTL_IPT_CFE_SHUTDOWN,
    NTL_IPT_CFE_UINTR = 12,
    NTL_IPT_CFE_UIRET,
    NTL_IPT_CFE_SWINTR,
    NTL_IPT_CFE_SYSCALL,
};

#define NTL_IPT_TSX_BEGIN 1
#define NTL_IPT_TSX_COMMIT 2
#define NTL_IPT_TSX_ABORT 3

/* Flags in ntl_ipt_flow_item.flags. */
#define NTL_IPT_FL_SPECULATIVE 0x01   /* INSN inside a transaction */
#define NTL_IPT_FL_IP_SUPPRESSED 0x02 /* the event's IP is not known */
#define NTL_IPT_FL_RESUMED 0x04       /* ENABLED where tracing had been disabled */
#define NTL_IPT_FL_NR 0x08            /* PAGING: non-root */
#define NTL_IPT_FL_HW 0x10            /* PWRE: by hardware */
#define NTL_IPT_FL_CR2 0x20           /* CFE: b is CR2 (an EVD told it) */
#define NTL_IPT_FL_VMXR 0x40          /* CFE: b is the VMX exit reason */
#define NTL_IPT_FL_VMXQ 0x80          /* CFE: c is the VMX exit qualification */

struct ntl_ipt_flow_item {
    uint8_t kind;   /* enum ntl_ipt_flow_kind */
    uint8_t flags;  /* NTL_IPT_FL_* */
    uint8_t mode;   /* enum ntl_ipt_exec_mode */
    uint8_t iclass; /* INSN: enum ntl_ipt_iclass */
    uint8_t size;   /* INSN: its bytes (read them through the image) */
    bool timed;     /* with cfg.times, events: tsc is the time, a TSC having been seen */
    uint64_t ip;
    uint64_t a, b, c;
    uint64_t tsc;   /* with cfg.times, events: the estimated TSC when it happened
                       (the event layer's, from MTC and CYC alone before a TSC) */
};

/* The IP filter the trace was recorded with (IA32_RTIT_ADDRn_A/B and
 * IA32_RTIT_CTL.ADDRn_CFG): erratum SKL014 needs it to tell which direct
 * branch left the traced range. */
#define NTL_IPT_FILTER_OFF 0
#define NTL_IPT_FILTER_TRACE 1 /* trace only inside [a, b] */
#define NTL_IPT_FILTER_STOP 2  /* stop tracing inside [a, b] */
struct ntl_ipt_filter {
    uint8_t cfg[4];
    uint64_t a[4], b[4];
};

struct ntl_ipt_flow_config {
    struct ntl_ipt_config trace;
    struct ntl_ipt_filter filter;
    ntl_ipt_read_fn read; /* the memory image */
    void *read_ctx;
    /* RUN items in place of INSN items: the decoder then walks cached
     * straight-line blocks and TNT decisions without a step per
     * instruction (for output that does not show each instruction). */
    bool runs;
    /* With runs: each RUN item's instructions can be told one by one
     * (ntl_ipt_flow_run_ips), the addresses a decode without runs would
     * hand out as INSN items, at a fraction of the cost: the decoder keeps
     * the blocks each run went through (a long run is handed out in
     * several RUN items). */
    bool run_ips;
    /* IFLAGS items where MODE.Exec's IF bit changes (ptxed --event:iflags;
     * with Event Trace, the packets tell every change). */
    bool iflags;
    /* Events carry the time they happened (ptxed --event:time); needs
     * NTL_IPT_CFG_TIME in trace.flags. */
    bool times;
    /* TICK items after a branch whose TNT or TIP came later than the last
     * packet the decoder took (ptxed --event:tick); with times. Not with
     * runs, which pass over the branches. */
    bool ticks;
};

struct ntl_ipt_flow;

/* A flow decoder over cfg (copied; the trace buffer and read_ctx are not)
 * into *f, not yet synchronised. Returns 0, or NTL_ERR_NOMEM (err set). */
int ntl_ipt_flow_new(struct ntl_ipt_flow **f, const struct ntl_ipt_flow_config *cfg,
                     struct ntl_error *err);
/* Frees f; NULL is fine. */
void ntl_ipt_flow_free(struct ntl_ipt_flow *f);

/* Moves to the first PSB and reads its PSB+ (tracing is enabled there when
 * it holds a FUP). Returns 0, or:
 *   NTL_ERR_NOT_FOUND  the trace holds no PSB (err set);
 *   ntl_ipt_flow_next's statuses for a PSB+ that does not decode. */
int ntl_ipt_flow_sync(struct ntl_ipt_flow *f, struct ntl_error *err);

/* The next instruction or event into *it. Returns:
 *   1                       an item is in *it;
 *   0                       the end of the trace (err untouched);
 *   NTL_ERR_TRUNCATED, NTL_ERR_FORMAT  a packet does not decode
 *                           (ntl_ipt_evd_next's);
 *   NTL_IPT_NOMAP           no memory at the IP to decode;
 *   NTL_IPT_BAD_INSN        the bytes there do not decode;
 *   NTL_IPT_BAD_QUERY       the code needs a TNT bit or a TIP the trace lacks;
 *   NTL_IPT_BAD_CONTEXT     a packet the state does not allow;
 *   NTL_IPT_BAD_RETCOMP     a compressed return with a not-taken bit;
 *   NTL_IPT_RETSTACK_EMPTY  a compressed return with no call to return to;
 *   NTL_IPT_NOIP            tracing enabled with its IP suppressed;
 *   NTL_IPT_BAD_STATUS      PSB+ says otherwise than the decoder;
 *   NTL_ERR_LIMIT           NTL_IPT_FLOW_MAX_STEPS instructions without a
 *                           packet consumed (an endless loop of direct
 *                           branches);
 *   NTL_ERR_NOMEM           the decode cache could not grow, or with
 *                           cfg.run_ips the blocks a run went through
 *                           could not be kept (the runs not yet handed out
 *                           are dropped).
 * On error err and ntl_ipt_flow_where name the trace offset and the IP;
 * ntl_ipt_flow_resync goes on at the next PSB. */
int ntl_ipt_flow_next(struct ntl_ipt_flow *f, struct ntl_ipt_flow_item *it, struct ntl_error *err);

/* With cfg.runs and cfg.run_ips: the addresses of the instructions of
 * the RUN item ntl_ipt_flow_next handed out last, in the order they ran,
 * into ips (at most max), from where the last call stopped; call it until
 * it returns 0 to have all of them (the item's b). Each block's
 * instruction sizes are read once through cfg.read and kept: the image
 * must be the one the run was decoded over (call it before acting on the
 * items after the run). Returns how many it wrote (0: all told, the last
 * item was no RUN, or cfg.run_ips is off), or:
 *   NTL_IPT_NOMAP, NTL_IPT_BAD_INSN  the image no longer holds the code
 *                   the run went through (err set; the rest of the run is
 *                   dropped);
 *   NTL_ERR_NOMEM   the cache of sizes could not grow (err set). */
int ntl_ipt_flow_run_ips(struct ntl_ipt_flow *f, uint64_t *ips, unsigned max,
                         struct ntl_error *err);

/* Most instructions decoded with no packet consumed before NTL_ERR_LIMIT.
 * The fuzz build sets a lower one (meson.build): a mutated loop of direct
 * branches then costs the harnesses a few thousand steps per error, not a
 * million, and the limit's path is reached as often. */
#ifndef NTL_IPT_FLOW_MAX_STEPS
#define NTL_IPT_FLOW_MAX_STEPS 1000000
#endif

/* Where the last error happened, as ptxed reports it: the trace offset the
 * decoder had reached and the IP. Cannot fail. */
void ntl_ipt_flow_where(const struct ntl_ipt_flow *f, uint64_t *offset, uint64_t *ip);

/* The trace offset the decoder has reached (of the next packet it reads).
 * Cannot fail. */
uint64_t ntl_ipt_flow_offset(const struct ntl_ipt_flow *f);

/* After an error: moves to the next PSB and reads its PSB+, all state but
 * the decode cache reset. Returns 0, with *enabled saying whether tracing
 * is enabled there; or NTL_ERR_NOT_FOUND (err set) when there is no further
 * PSB, or ntl_ipt_flow_sync's statuses. */
int ntl_ipt_flow_resync(struct ntl_ipt_flow *f, bool *enabled, struct ntl_error *err);

/* After an error, the other way on (ptxed --resync-on-error, libipt's
 * pt_blk_resync): decoding goes on past the packet that did not fit, at the
 * next packet that tells where the code is (a TIP, a FUP with its TIP or
 * TIP.PGD, a TIP.PGE, a PSB+, an OVF), passing over TNT bits; a TIP.PGD or
 * TIP.PGE there is told as DISABLED first. After a packet that does not
 * decode, it is ntl_ipt_flow_resync (the next PSB). Returns 0, or
 * ntl_ipt_flow_resync's statuses. */
int ntl_ipt_flow_recover(struct ntl_ipt_flow *f, struct ntl_error *err);

/* libipt's wording of a flow status ("no memory mapped at this address",
 * "trace stream does not match query"), ntl_ipt_status_name's or
 * ntl_status_name's for the others. */
const char *ntl_ipt_flow_strerror(int status);

/* Distinct instructions decoded so far (each is decoded once). */
size_t ntl_ipt_flow_cached(const struct ntl_ipt_flow *f);

/* Forgets every decoded instruction, block and decision: call it when the
 * memory behind read_ctx changes (ntl_ipt_spaces_switch moved to another
 * address space, whose addresses may hold other code). Cannot fail. */
void ntl_ipt_flow_invalidate(struct ntl_ipt_flow *f);

/* Splitting a trace at PSBs (ipt_flow_split.h) needs to know where a
 * decoder that went through a PSB+ stands, to compare with one that
 * synchronised there. A seam is taken each time a PSB+ is applied: when the
 * walk reaches its FUP's IP, at a synchronisation or after a resync. */
struct ntl_ipt_flow_seam {
    uint64_t psb;      /* trace offset of the PSB */
    uint64_t items;    /* items and errors ntl_ipt_flow_next returned before it
                          (all later ones came after the PSB+) */
    unsigned seq;      /* seams so far, to tell a new one */
    bool clean;        /* its PSB+ held no MNT (the MNT item is told where the
                          PSB+ is read, before instructions of the seam's past) */
    uint64_t state[6]; /* the decoder's state but the return stack: equal
                          states decode the same from here */
    unsigned rs_n;
    uint64_t rs[NTL_IPT_RETSTACK]; /* the return stack, oldest first */
};

/* The last seam into *seam. Returns false when there has been none. Cannot
 * fail. */
bool ntl_ipt_flow_seam(const struct ntl_ipt_flow *f, struct ntl_ipt_flow_seam *seam);
/* How many seams there have been (the last one's seq), without copying it
 * (the split decoder asks after every item). Cannot fail. */
unsigned ntl_ipt_flow_seams(const struct ntl_ipt_flow *f);

/* Synchronises at the PSB at trace offset off (as ntl_ipt_flow_sync does at
 * the first), the event layer's state reset, then pushes the n return
 * addresses rs (oldest first) on the return stack: a decoder that goes on
 * where another one reached this PSB. Returns 0, NTL_ERR_ARGUMENT when
 * there is no PSB at off, or ntl_ipt_flow_sync's statuses. */
int ntl_ipt_flow_sync_at(struct ntl_ipt_flow *f, uint64_t off, const uint64_t *rs, unsigned n,
                         struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
