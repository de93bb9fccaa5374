/* Intel PT packet layer: one packet at a time from a trace buffer, as the
 * Intel SDM (Vol. 3, "Intel Processor Trace") encodes them.
 *
 * Streaming and zero-copy: a decoder is a cursor over the caller's buffer;
 * ntl_ipt_next fills a small fixed-size packet and never allocates. A packet
 * that runs past the end of the buffer, an unknown opcode or a reserved
 * encoding is an error naming its offset; the decoder stays on that packet,
 * and ntl_ipt_resync moves it to the next PSB. */
#ifndef NTLENS_IPT_PACKET_H
#define NTLENS_IPT_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes of the ipt layers where a generic ntl_status would lose
 * meaning (range -100..-149). */
enum ntl_ipt_status {
    NTL_IPT_NO_IP = -100,         /* no IP packet since the last reset (PSB, resync) */
    NTL_IPT_IP_SUPPRESSED = -101, /* the last IP packet had its IP suppressed (IPBytes 0) */
    NTL_IPT_UNCALIBRATED = -102,  /* a CYC was applied without a calibration (lost) */
};

/* "no IP", "IP suppressed", "no calibration"; ntl_status_name() for the
 * generic codes. */
const char *ntl_ipt_status_name(int status);

enum ntl_ipt_type {
    NTL_IPT_PAD = 1,
    NTL_IPT_PSB,
    NTL_IPT_PSBEND,
    NTL_IPT_TNT_8,
    NTL_IPT_TNT_64,
    NTL_IPT_TIP,
    NTL_IPT_TIP_PGE,
    NTL_IPT_TIP_PGD,
    NTL_IPT_FUP,
    NTL_IPT_PIP,
    NTL_IPT_MODE_EXEC,
    NTL_IPT_MODE_TSX,
    NTL_IPT_STOP,     /* TraceStop */
    NTL_IPT_CBR,
    NTL_IPT_TSC,
    NTL_IPT_MTC,
    NTL_IPT_TMA,
    NTL_IPT_CYC,
    NTL_IPT_VMCS,
    NTL_IPT_OVF,
    NTL_IPT_MNT,
    NTL_IPT_PTW,
    NTL_IPT_PWRE,
    NTL_IPT_PWRX,
    NTL_IPT_EXSTOP,
    NTL_IPT_MWAIT,
    NTL_IPT_BBP,
    NTL_IPT_BIP,
    NTL_IPT_BEP,
    NTL_IPT_CFE,
    NTL_IPT_EVD,
    NTL_IPT_TRIG,
    NTL_IPT_TYPE_COUNT
};

/* IP compression of TIP, TIP.PGE, TIP.PGD and FUP (the IPBytes field). */
enum ntl_ipt_ipc {
    NTL_IPT_IPC_SUPPRESSED = 0,
    NTL_IPT_IPC_UPDATE_16 = 1,
    NTL_IPT_IPC_UPDATE_32 = 2,
    NTL_IPT_IPC_SEXT_48 = 3,
    NTL_IPT_IPC_UPDATE_48 = 4,
    NTL_IPT_IPC_FULL = 6,
};

/* Flag bits in ntl_ipt_packet.flags. */
#define NTL_IPT_F_IP 0x01        /* EXSTOP, PTW, BEP, CFE, TRIG: IP bit (a FUP follows) */
#define NTL_IPT_F_NR 0x02        /* PIP: non-root */
#define NTL_IPT_F_CSL 0x01       /* MODE.Exec */
#define NTL_IPT_F_CSD 0x02       /* MODE.Exec */
#define NTL_IPT_F_IF 0x04        /* MODE.Exec */
#define NTL_IPT_F_INTX 0x01      /* MODE.TSX */
#define NTL_IPT_F_ABRT 0x02      /* MODE.TSX */
#define NTL_IPT_F_HW 0x04        /* PWRE */
#define NTL_IPT_F_ICNTV 0x02     /* TRIG: icnt valid */
#define NTL_IPT_F_MULT 0x04      /* TRIG: multiple triggers */

/* One packet. Which fields mean what, by type:
 *   PAD             a run of 1 to 8 PAD bytes: count == size == their number
 *   TNT_8, TNT_64   payload: the branch bits, oldest in bit (count-1); count
 *   TIP*, FUP       payload: the IP bytes as stored; ipc
 *   PIP             payload: CR3; flags NR
 *   MODE_*          flags
 *   CBR             payload: core:bus ratio
 *   TSC, MTC, CYC   payload: the value (TSC 56 bits, MTC 8-bit CTC)
 *   TMA             payload: CTC[15:0]; aux: fast counter (9 bits)
 *   VMCS            payload: VMCS base address
 *   MNT, EVD        payload: 64 bits; EVD aux: type
 *   PTW             payload; count: payload size code (0: 4 bytes, 1: 8); flags IP
 *   PWRE            aux: state << 4 | sub-state; flags HW
 *   PWRX            aux: last (bits 3:0), deepest (7:4) core C-state, wake reasons << 8
 *   EXSTOP, BEP     flags IP
 *   MWAIT           payload: hints; aux: extensions
 *   BBP             aux: type; count: 1 when BIPs carry 4 bytes, 0 for 8
 *   BIP             payload; aux: id
 *   CFE             aux: type | vector << 8; flags IP
 *   TRIG            aux: TRBV | ICNT << 8; flags IP, ICNTV, MULT */
struct ntl_ipt_packet {
    uint8_t type;   /* enum ntl_ipt_type */
    uint8_t size;   /* bytes, header included */
    uint8_t count;  /* TNT: number of bits; TIP/FUP: ipc; PTW, BBP: see above */
    uint8_t flags;
    uint32_t aux;
    uint64_t payload;
};

/* Why decoding failed; ptdump's wording of each is ntl_ipt_fault_str. */
enum ntl_ipt_fault {
    NTL_IPT_FAULT_NONE = 0,
    NTL_IPT_FAULT_EOS,        /* the packet runs past the end ("reached end of trace stream") */
    NTL_IPT_FAULT_BAD_OPC,    /* unknown opcode */
    NTL_IPT_FAULT_BAD_PACKET, /* known opcode, reserved payload ("unknown packet") */
    NTL_IPT_FAULT_NOSYNC,     /* no PSB found */
};

/* The cursor and the bound of the inline path are pointers, so the inline
 * path adds nothing to find a packet (docs/performance.md has the figures). */
struct ntl_ipt_decoder {
    const uint8_t *cur;       /* the next packet; ntl_ipt_offset() is its offset */
    const uint8_t *fast_end;  /* the inline path decodes at cur < fast_end (16 bytes
                                 left), never inside a BBP block (then fast_end == buf) */
    const uint8_t *buf;
    size_t size;
    size_t sync;          /* offset of the PSB last synchronised at */
    uint64_t origin;      /* offset of buf[0] in the user's input, for errors */
    uint8_t bip_size;     /* inside a BBP block: bytes per BIP payload; 0 outside */
    uint8_t fault;        /* enum ntl_ipt_fault of the last error */
};

/* Offset in buf of the next packet. */
static inline size_t ntl_ipt_offset(const struct ntl_ipt_decoder *d)
{
    return (size_t)(d->cur - d->buf);
}

/* A decoder over buf[0, size) positioned at offset 0 (not synchronised; see
 * ntl_ipt_sync_first for starting at the first PSB). */
void ntl_ipt_decoder_init(struct ntl_ipt_decoder *d, const uint8_t *buf, size_t size,
                          uint64_t origin);

/* Decodes the packet at the cursor into *p and advances. Returns:
 *   1                  a packet is in *p;
 *   0                  the end of the buffer (no packet; err untouched);
 *   NTL_ERR_TRUNCATED  the packet runs past the end of the buffer;
 *   NTL_ERR_FORMAT     an unknown opcode or a reserved encoding (d->fault
 *                      says which).
 * On error err names the packet and its offset, and the cursor does not move.
 * The common packets are decoded inline (below); the rest, and every packet
 * in the last 16 bytes of the buffer, by ntl_ipt_next_slow. */
static inline int ntl_ipt_next(struct ntl_ipt_decoder *d, struct ntl_ipt_packet *p,
                               struct ntl_error *err);
/* ntl_ipt_next without the inline path: the same packets, returns and errors. */
int ntl_ipt_next_slow(struct ntl_ipt_decoder *d, struct ntl_ipt_packet *p, struct ntl_error *err);

/* Moves to the first PSB at or after the start of the buffer. Returns 0, or
 * NTL_ERR_NOT_FOUND (err set, d->fault NOSYNC) when the buffer holds none. */
int ntl_ipt_sync_first(struct ntl_ipt_decoder *d, struct ntl_error *err);
/* Moves to the next PSB after the last synchronisation point and the
 * current position (use after an error). Returns 0, or NTL_ERR_NOT_FOUND
 * (err set, d->fault NOSYNC, the cursor unmoved) when there is none. */
int ntl_ipt_resync(struct ntl_ipt_decoder *d, struct ntl_error *err);
/* Moves to offset off, synchronised or not (ptdump --no-sync). Returns 0, or
 * NTL_ERR_ARGUMENT (nothing moved) when off is past the end. */
int ntl_ipt_seek(struct ntl_ipt_decoder *d, size_t off);

/* "psb", "tnt.8", "tip.pge", ... as ptdump names packets. */
const char *ntl_ipt_type_name(int type);
const char *ntl_ipt_fault_str(int fault);

/* Number of IP bytes a packet with compression ipc carries; -1 reserved. */
int ntl_ipt_ipc_bytes(unsigned ipc);

/* Last-IP reconstruction (SDM: "IP compression"). */
struct ntl_ipt_last_ip {
    uint64_t ip;
    bool have_ip;     /* an IP was ever set since the last reset */
    bool suppressed;  /* the last IP packet had its IP suppressed */
};

static inline void ntl_ipt_last_ip_init(struct ntl_ipt_last_ip *l)
{
    l->ip = 0;
    l->have_ip = false;
    l->suppressed = false;
}

/* Applies an IP packet (compression ipc, IP bytes raw). Returns:
 *   0                      l->ip is now the packet's target;
 *   NTL_IPT_IP_SUPPRESSED  the packet's IP is suppressed (l->ip is kept, the
 *                          suppression is remembered for the query);
 *   NTL_ERR_FORMAT         a reserved compression (5, 7 or above); l unchanged.
 * Like libipt, an update-16/32/48 after a reset builds on an IP of 0. */
int ntl_ipt_last_ip_update(struct ntl_ipt_last_ip *l, unsigned ipc, uint64_t raw);
/* The last IP into *ip. Returns:
 *   0                      *ip is the IP of the last IP packet;
 *   NTL_IPT_IP_SUPPRESSED  the last IP packet had its IP suppressed (*ip = 0);
 *                          this wins over NO_IP, as ptdump prints it;
 *   NTL_IPT_NO_IP          no IP packet since the last reset (*ip = 0). */
int ntl_ipt_last_ip_query(const struct ntl_ipt_last_ip *l, uint64_t *ip);


/* The inline fast path of ntl_ipt_next. With at least 16 bytes left every
 * fixed-size packet fits, so one table lookup on the first byte decodes the
 * common packets: the entry holds the packet as far as that byte tells (all
 * of a TNT-8), and the rest of the payload is an unaligned 64-bit load,
 * masked. */
struct ntl_ipt_fast_ {
    struct ntl_ipt_packet pkt; /* type 0: not decoded inline */
    uint8_t mask;              /* which bytes after the first are payload */
    uint8_t ip_kind;           /* 1 TIP, 2 TIP.PGE, 3 TIP.PGD, 4 FUP, else 0 */
};
extern const struct ntl_ipt_fast_ ntl_ipt_fast_table_[256];

static inline uint64_t ntl_ipt_load64_(const uint8_t *q)
{
    uint64_t v;
    memcpy(&v, q, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* Payload masks by ntl_ipt_fast_.mask. */
#define NTL_IPT_FAST_MASKS_                                                                     \
    { 0, 0xffff, 0xffffffff, 0xffffffffffffull, ~0ull, 0xff, 0xffffffffffffffull, 0 }

static inline int ntl_ipt_next(struct ntl_ipt_decoder *d, struct ntl_ipt_packet *p,
                               struct ntl_error *err)
{
    static const uint64_t masks[8] = NTL_IPT_FAST_MASKS_;
    const uint8_t *q = d->cur;
    if (q < d->fast_end) {
        unsigned b = q[0];
        const struct ntl_ipt_fast_ *e = &ntl_ipt_fast_table_[b];
        /* PAD and TNT-8 are one byte: branching on that (predictably, in
         * runs) lets the next packet start before the table load is done. */
        if ((b & 1) == 0 && b != 2) {
            *p = e->pkt;
            if (b) {
                d->cur = q + 1;
                return 1;
            }
            /* A run of PAD is one packet (up to 8 bytes; count = size). */
            uint64_t w = ntl_ipt_load64_(q);
            unsigned n = w ? (unsigned)__builtin_ctzll(w) >> 3 : 8;
            p->size = (uint8_t)n;
            p->count = (uint8_t)n;
            d->cur = q + n;
            return 1;
        }
        if (e->pkt.type) {
            *p = e->pkt;
            p->payload |= ntl_ipt_load64_(q + 1) & masks[e->mask];
            d->cur = q + e->pkt.size;
            return 1;
        }
    }
    return ntl_ipt_next_slow(d, p, err);
}

#ifdef __cplusplus
}
#endif
#endif
