/* Intel PT packet decoder (ntlens/ipt_packet.h), from the Intel SDM's packet
 * encodings. The common packets are decoded inline (the header, with the
 * table in fast_table.c); this is the complete decoder that every other
 * packet, and every packet in the last bytes of a buffer, goes through.
 * Every read is checked against the end of the buffer before it is made. */
#include <stddef.h>
#include <string.h>

#include "ntlens/ipt_packet.h"
#include "ntlens/ipt_sync.h"
#include "ntlens/reader.h"

/* Class of a packet's first byte. */
enum cls {
    C_BAD = 0, C_PAD, C_TNT8, C_EXT, C_TIP, C_PGE, C_PGD, C_FUP, C_CYC,
    C_TSC, C_MTC, C_MODE, C_TRIG,
};

/* The class of a packet's first byte (SDM opcode map). */
static enum cls classify(unsigned b)
{
    if (b == 0x00)
        return C_PAD;
    if (b == 0x02)
        return C_EXT;
    if ((b & 1) == 0)
        return C_TNT8;
    if ((b & 3) == 3)
        return C_CYC;
    switch (b & 0x1f) {
    case 0x0d:
        return C_TIP;
    case 0x11:
        return C_PGE;
    case 0x01:
        return C_PGD;
    case 0x1d:
        return C_FUP;
    default:
        break;
    }
    switch (b) {
    case 0x19:
        return C_TSC;
    case 0x59:
        return C_MTC;
    case 0x99:
        return C_MODE;
    case 0xd9:
        return C_TRIG;
    default:
        return C_BAD;
    }
}

/* Sets the BIP size (0: outside a block) and with it where the inline path
 * may decode: BIPs look like TNT-8, so inside a block only the slow path
 * does. */
static void set_block(struct ntl_ipt_decoder *d, unsigned bip_size)
{
    d->bip_size = (uint8_t)bip_size;
    d->fast_end = bip_size || d->size < 16 ? d->buf : d->buf + d->size - 15;
}

static const int8_t ipc_bytes[8] = {0, 2, 4, 6, 6, -1, 8, -1};

int ntl_ipt_ipc_bytes(unsigned ipc)
{
    return ipc < 8 ? ipc_bytes[ipc] : -1;
}

void ntl_ipt_decoder_init(struct ntl_ipt_decoder *d, const uint8_t *buf, size_t size,
                          uint64_t origin)
{
    /* An empty trace may come as a null pointer, and null + 0 is undefined. */
    static const uint8_t empty[1];
    memset(d, 0, sizeof *d);
    d->buf = buf ? buf : empty;
    d->cur = d->buf;
    d->size = size;
    d->origin = origin;
    d->sync = SIZE_MAX;
    set_block(d, 0);
}

/* Little-endian value of n (<= 8) bytes at p. */
static inline uint64_t le_n(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = (v << 8) | p[i];
    return v;
}

static int fail(struct ntl_ipt_decoder *d, struct ntl_error *err, int fault, const char *what)
{
    static const char *const msg[] = {
        "", "packet runs past the end of the trace", "unknown opcode",
        "reserved encoding", "no PSB",
    };
    d->fault = (uint8_t)fault;
    return ntl_error_set(err, fault == NTL_IPT_FAULT_EOS ? NTL_ERR_TRUNCATED : NTL_ERR_FORMAT,
                         what, d->origin + ntl_ipt_offset(d), "%s", msg[fault]);
}

/* Extended (02 xx) packets. */
static int next_ext(struct ntl_ipt_decoder *d, struct ntl_ipt_packet *p, const uint8_t *q,
                    size_t left, struct ntl_error *err)
{
    if (left < 2)
        return fail(d, err, NTL_IPT_FAULT_EOS, "packet");
    uint8_t b = q[1];
    unsigned size;
    switch (b) {
    case 0x82:
        if (left < NTL_IPT_PSB_SIZE)
            return fail(d, err, NTL_IPT_FAULT_EOS, "PSB packet");
        if (!ntl_ipt_is_psb(q, left, 0))
            return fail(d, err, NTL_IPT_FAULT_BAD_PACKET, "PSB packet");
        p->type = NTL_IPT_PSB;
        size = NTL_IPT_PSB_SIZE;
        set_block(d, 0);
        break;
    case 0x23:
        p->type = NTL_IPT_PSBEND;
        size = 2;
        break;
    case 0x83:
        p->type = NTL_IPT_STOP;
        size = 2;
        break;
    case 0xf3:
        p->type = NTL_IPT_OVF;
        size = 2;
        set_block(d, 0);
        break;
    case 0x03:
        if (left < 4)
            return fail(d, err, NTL_IPT_FAULT_EOS, "CBR packet");
        p->type = NTL_IPT_CBR;
        p->payload = q[2];
        size = 4;
        break;
    case 0xa3: {
        if (left < 8)
            return fail(d, err, NTL_IPT_FAULT_EOS, "TNT-64 packet");
        uint64_t v = le_n(q + 2, 6);
        if (!v)
            return fail(d, err, NTL_IPT_FAULT_BAD_PACKET, "TNT-64 packet");
        unsigned msb = 63 - (unsigned)__builtin_clzll(v);
        p->type = NTL_IPT_TNT_64;
        p->count = (uint8_t)msb;
        p->payload = v & ~(1ull << msb);
        size = 8;
        break;
    }
    case 0x43: {
        if (left < 8)
            return fail(d, err, NTL_IPT_FAULT_EOS, "PIP packet");
        uint64_t v = le_n(q + 2, 6);
        p->type = NTL_IPT_PIP;
        p->flags = (v & 1) ? NTL_IPT_F_NR : 0;
        p->payload = (v >> 1) << 5;
        size = 8;
        break;
    }
    case 0xc3:
        if (left < 11)
            return fail(d, err, NTL_IPT_FAULT_EOS, "MNT packet");
        if (q[2] != 0x88)
            return fail(d, err, NTL_IPT_FAULT_BAD_OPC, "MNT packet");
        p->type = NTL_IPT_MNT;
        p->payload = le_n(q + 3, 8);
        size = 11;
        break;
    case 0x73:
        if (left < 7)
            return fail(d, err, NTL_IPT_FAULT_EOS, "TMA packet");
        if (q[4] != 0 || (q[6] & 0xfe))
            return fail(d, err, NTL_IPT_FAULT_BAD_PACKET, "TMA packet");
        p->type = NTL_IPT_TMA;
        p->payload = ntl_le16(q + 2);
        p->aux = q[5] | ((uint32_t)(q[6] & 1) << 8);
        size = 7;
        break;
    case 0xc8:
        if (left < 7)
            return fail(d, err, NTL_IPT_FAULT_EOS, "VMCS packet");
        p->type = NTL_IPT_VMCS;
        p->payload = le_n(q + 2, 5) << 12;
        size = 7;
        break;
    case 0x62:
    case 0xe2:
        p->type = NTL_IPT_EXSTOP;
        p->flags = (b & 0x80) ? NTL_IPT_F_IP : 0;
        size = 2;
        break;
    case 0xc2:
        if (left < 10)
            return fail(d, err, NTL_IPT_FAULT_EOS, "MWAIT packet");
        p->type = NTL_IPT_MWAIT;
        p->payload = ntl_le32(q + 2);
        p->aux = ntl_le32(q + 6);
        size = 10;
        break;
    case 0x22:
        if (left < 4)
            return fail(d, err, NTL_IPT_FAULT_EOS, "PWRE packet");
        p->type = NTL_IPT_PWRE;
        p->flags = (q[2] & 0x08) ? NTL_IPT_F_HW : 0;
        p->aux = q[3];
        size = 4;
        break;
    case 0xa2:
        if (left < 7)
            return fail(d, err, NTL_IPT_FAULT_EOS, "PWRX packet");
        p->type = NTL_IPT_PWRX;
        p->aux = q[2] | ((uint32_t)(q[3] & 0x0f) << 8);
        size = 7;
        break;
    case 0x63:
        if (left < 3)
            return fail(d, err, NTL_IPT_FAULT_EOS, "BBP packet");
        p->type = NTL_IPT_BBP;
        p->aux = q[2] & 0x1f;
        p->count = (q[2] & 0x80) ? 1 : 0;
        set_block(d, (q[2] & 0x80) ? 4 : 8);
        size = 3;
        break;
    case 0x33:
    case 0xb3:
        p->type = NTL_IPT_BEP;
        p->flags = (b & 0x80) ? NTL_IPT_F_IP : 0;
        set_block(d, 0);
        size = 2;
        break;
    case 0x13:
        if (left < 4)
            return fail(d, err, NTL_IPT_FAULT_EOS, "CFE packet");
        p->type = NTL_IPT_CFE;
        p->flags = (q[2] & 0x80) ? NTL_IPT_F_IP : 0;
        p->aux = (q[2] & 0x1fu) | ((uint32_t)q[3] << 8);
        size = 4;
        break;
    case 0x53:
        if (left < 11)
            return fail(d, err, NTL_IPT_FAULT_EOS, "EVD packet");
        p->type = NTL_IPT_EVD;
        p->aux = q[2] & 0x3f;
        p->payload = le_n(q + 3, 8);
        size = 11;
        break;
    default:
        if ((b & 0x1f) == 0x12) {
            unsigned plc = (b >> 5) & 3;
            if (plc > 1)
                return fail(d, err, NTL_IPT_FAULT_BAD_PACKET, "PTW packet");
            unsigned n = plc ? 8 : 4;
            if (left < 2 + n)
                return fail(d, err, NTL_IPT_FAULT_EOS, "PTW packet");
            p->type = NTL_IPT_PTW;
            p->count = (uint8_t)plc;
            p->flags = (b & 0x80) ? NTL_IPT_F_IP : 0;
            p->payload = le_n(q + 2, n);
            size = 2 + n;
            break;
        }
        return fail(d, err, NTL_IPT_FAULT_BAD_OPC, "packet");
    }
    p->size = (uint8_t)size;
    d->cur += size;
    return 1;
}

int ntl_ipt_next_slow(struct ntl_ipt_decoder *d, struct ntl_ipt_packet *p, struct ntl_error *err)
{
    size_t left = d->size - ntl_ipt_offset(d);
    if (!left)
        return 0;
    const uint8_t *q = d->cur;
    uint8_t b = q[0];
    p->count = 0;
    p->flags = 0;
    p->aux = 0;
    p->payload = 0;
    switch (classify(b)) {
    case C_PAD: {
        unsigned n = 1;
        while (n < 8 && n < left && q[n] == 0)
            n++;
        p->type = NTL_IPT_PAD;
        p->size = (uint8_t)n;
        p->count = (uint8_t)n;
        d->cur += n;
        return 1;
    }
    case C_TNT8: {
        if (d->bip_size && (b & 7) == 4) {
            if (left < 1u + d->bip_size)
                return fail(d, err, NTL_IPT_FAULT_EOS, "BIP packet");
            p->type = NTL_IPT_BIP;
            p->aux = b >> 3;
            p->payload = le_n(q + 1, d->bip_size);
            p->size = (uint8_t)(1 + d->bip_size);
            d->cur += p->size;
            return 1;
        }
        unsigned msb = 31 - (unsigned)__builtin_clz(b);
        p->type = NTL_IPT_TNT_8;
        p->count = (uint8_t)(msb - 1);
        p->payload = (b >> 1) & ((1u << (msb - 1)) - 1);
        p->size = 1;
        d->cur++;
        return 1;
    }
    case C_TIP:
    case C_PGE:
    case C_PGD:
    case C_FUP: {
        static const uint8_t type_of[] = {
            [C_TIP] = NTL_IPT_TIP, [C_PGE] = NTL_IPT_TIP_PGE,
            [C_PGD] = NTL_IPT_TIP_PGD, [C_FUP] = NTL_IPT_FUP,
        };
        unsigned ipc = b >> 5;
        int n = ipc_bytes[ipc];
        if (n < 0)
            return fail(d, err, NTL_IPT_FAULT_BAD_PACKET, "IP packet");
        if (left < 1u + (unsigned)n)
            return fail(d, err, NTL_IPT_FAULT_EOS, "IP packet");
        p->type = type_of[classify(b)];
        p->count = (uint8_t)ipc;
        p->payload = le_n(q + 1, (unsigned)n);
        p->size = (uint8_t)(1 + n);
        d->cur += p->size;
        return 1;
    }
    case C_CYC: {
        uint64_t v = b >> 3;
        unsigned shift = 5, i = 1;
        if (b & 4) {
            for (;;) {
                if (i >= left)
                    return fail(d, err, NTL_IPT_FAULT_EOS, "CYC packet");
                uint8_t x = q[i++];
                if (shift > 63)
                    return fail(d, err, NTL_IPT_FAULT_BAD_PACKET, "CYC packet");
                v |= (uint64_t)(x >> 1) << shift;
                shift += 7;
                if (!(x & 1))
                    break;
                if (i > 15)
                    return fail(d, err, NTL_IPT_FAULT_BAD_PACKET, "CYC packet");
            }
        }
        p->type = NTL_IPT_CYC;
        p->payload = v;
        p->size = (uint8_t)i;
        d->cur += i;
        return 1;
    }
    case C_TSC:
        if (left < 8)
            return fail(d, err, NTL_IPT_FAULT_EOS, "TSC packet");
        p->type = NTL_IPT_TSC;
        p->payload = le_n(q + 1, 7);
        p->size = 8;
        d->cur += 8;
        return 1;
    case C_MTC:
        if (left < 2)
            return fail(d, err, NTL_IPT_FAULT_EOS, "MTC packet");
        p->type = NTL_IPT_MTC;
        p->payload = q[1];
        p->size = 2;
        d->cur += 2;
        return 1;
    case C_MODE:
        if (left < 2)
            return fail(d, err, NTL_IPT_FAULT_EOS, "MODE packet");
        switch (q[1] >> 5) {
        case 0:
            p->type = NTL_IPT_MODE_EXEC;
            p->flags = q[1] & 7;
            break;
        case 1:
            p->type = NTL_IPT_MODE_TSX;
            p->flags = q[1] & 3;
            break;
        default:
            return fail(d, err, NTL_IPT_FAULT_BAD_PACKET, "MODE packet");
        }
        p->size = 2;
        d->cur += 2;
        return 1;
    case C_TRIG: {
        if (left < 3)
            return fail(d, err, NTL_IPT_FAULT_EOS, "TRIG packet");
        unsigned size = (q[1] & 0x40) ? 5 : 3;
        if (left < size)
            return fail(d, err, NTL_IPT_FAULT_EOS, "TRIG packet");
        p->type = NTL_IPT_TRIG;
        p->flags = (uint8_t)(((q[1] & 0x80) ? NTL_IPT_F_IP : 0) |
                             ((q[1] & 0x40) ? NTL_IPT_F_ICNTV : 0) |
                             ((q[1] & 0x20) ? NTL_IPT_F_MULT : 0));
        p->aux = q[2];
        if (size == 5)
            p->aux |= (uint32_t)ntl_le16(q + 3) << 8;
        p->size = (uint8_t)size;
        d->cur += size;
        return 1;
    }
    case C_EXT:
        return next_ext(d, p, q, left, err);
    default:
        return fail(d, err, NTL_IPT_FAULT_BAD_OPC, "packet");
    }
}

int ntl_ipt_sync_first(struct ntl_ipt_decoder *d, struct ntl_error *err)
{
    size_t off;
    if (ntl_ipt_sync_forward(d->buf, d->size, 0, &off) < 0) {
        d->fault = NTL_IPT_FAULT_NOSYNC;
        return ntl_error_set(err, NTL_ERR_NOT_FOUND, "trace", d->origin,
                             "no PSB in %zu bytes", d->size);
    }
    d->cur = d->buf + off;
    d->sync = off;
    set_block(d, 0);
    return NTL_OK;
}

int ntl_ipt_resync(struct ntl_ipt_decoder *d, struct ntl_error *err)
{
    size_t from = ntl_ipt_offset(d), off;
    if (d->sync != SIZE_MAX && from <= d->sync)
        from = d->sync + 1;
    if (ntl_ipt_sync_forward(d->buf, d->size, from, &off) < 0) {
        d->fault = NTL_IPT_FAULT_NOSYNC;
        return ntl_error_set(err, NTL_ERR_NOT_FOUND, "trace", d->origin + from,
                             "no further PSB");
    }
    d->cur = d->buf + off;
    d->sync = off;
    set_block(d, 0);
    return NTL_OK;
}

int ntl_ipt_seek(struct ntl_ipt_decoder *d, size_t off)
{
    if (off > d->size)
        return NTL_ERR_ARGUMENT;
    d->cur = d->buf + off;
    set_block(d, 0);
    if (ntl_ipt_is_psb(d->buf, d->size, off))
        d->sync = off;
    return NTL_OK;
}

const char *ntl_ipt_type_name(int type)
{
    static const char *const names[NTL_IPT_TYPE_COUNT] = {
        [NTL_IPT_PAD] = "pad", [NTL_IPT_PSB] = "psb", [NTL_IPT_PSBEND] = "psbend",
        [NTL_IPT_TNT_8] = "tnt.8", [NTL_IPT_TNT_64] = "tnt.64", [NTL_IPT_TIP] = "tip",
        [NTL_IPT_TIP_PGE] = "tip.pge", [NTL_IPT_TIP_PGD] = "tip.pgd", [NTL_IPT_FUP] = "fup",
        [NTL_IPT_PIP] = "pip", [NTL_IPT_MODE_EXEC] = "mode.exec", [NTL_IPT_MODE_TSX] = "mode.tsx",
        [NTL_IPT_STOP] = "stop", [NTL_IPT_CBR] = "cbr", [NTL_IPT_TSC] = "tsc",
        [NTL_IPT_MTC] = "mtc", [NTL_IPT_TMA] = "tma", [NTL_IPT_CYC] = "cyc",
        [NTL_IPT_VMCS] = "vmcs", [NTL_IPT_OVF] = "ovf", [NTL_IPT_MNT] = "mnt",
        [NTL_IPT_PTW] = "ptw", [NTL_IPT_PWRE] = "pwre", [NTL_IPT_PWRX] = "pwrx",
        [NTL_IPT_EXSTOP] = "exstop", [NTL_IPT_MWAIT] = "mwait", [NTL_IPT_BBP] = "bbp",
        [NTL_IPT_BIP] = "bip", [NTL_IPT_BEP] = "bep", [NTL_IPT_CFE] = "cfe",
        [NTL_IPT_EVD] = "evd", [NTL_IPT_TRIG] = "trig",
    };
    if (type <= 0 || type >= NTL_IPT_TYPE_COUNT)
        return "unknown";
    return names[type];
}

const char *ntl_ipt_fault_str(int fault)
{
    switch (fault) {
    case NTL_IPT_FAULT_EOS:
        return "reached end of trace stream";
    case NTL_IPT_FAULT_BAD_OPC:
        return "unknown opcode";
    case NTL_IPT_FAULT_BAD_PACKET:
        return "unknown packet";
    case NTL_IPT_FAULT_NOSYNC:
        return "no sync";
    default:
        return "OK";
    }
}

int ntl_ipt_last_ip_update(struct ntl_ipt_last_ip *l, unsigned ipc, uint64_t raw)
{
    /* Bits of the last IP each compression keeps; the rest come from raw. */
    static const uint64_t keep[8] = {
        0, ~0xffffull, ~0xffffffffull, 0, ~0xffffffffffffull, 0, 0, 0,
    };
    if (ipc == NTL_IPT_IPC_SUPPRESSED) {
        l->suppressed = true;
        return NTL_IPT_IP_SUPPRESSED;
    }
    if (ipc > 7 || ipc == 5 || ipc == 7)
        return NTL_ERR_FORMAT;
    if (ipc == NTL_IPT_IPC_SEXT_48)
        raw = (uint64_t)((int64_t)(raw << 16) >> 16);
    l->ip = (l->ip & keep[ipc]) | (raw & ~keep[ipc]);
    l->have_ip = true;
    l->suppressed = false;
    return NTL_OK;
}

int ntl_ipt_last_ip_query(const struct ntl_ipt_last_ip *l, uint64_t *ip)
{
    if (l->suppressed || !l->have_ip) {
        *ip = 0;
        return l->suppressed ? NTL_IPT_IP_SUPPRESSED : NTL_IPT_NO_IP;
    }
    *ip = l->ip;
    return NTL_OK;
}

const char *ntl_ipt_status_name(int status)
{
    switch (status) {
    case NTL_IPT_NO_IP:
        return "no IP";
    case NTL_IPT_IP_SUPPRESSED:
        return "IP suppressed";
    case NTL_IPT_UNCALIBRATED:
        return "no calibration";
    default:
        return ntl_status_name(status);
    }
}
