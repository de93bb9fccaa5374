/* Instruction length and branch class from Zydis, cached per address. */
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "flow-evtrace.h"
#include "flow-insn.h"
#include "ntlens/ipt_event.h"
#include "ntlens/ipt_flow.h"

void flow_cache_free(struct flow_cache *c)
{
    flow_table_free(&c->t);
}

/* Up to 15 bytes at ip, across sections. Returns how many (0: unmapped). */
static size_t fetch(uint8_t *buf, ntl_ipt_read_fn read, void *ctx, uint64_t ip)
{
    size_t got = 0;
    while (got < 15) {
        int n = read(buf + got, 15 - got, ip + got, ctx);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    return got;
}

static enum ntl_ipt_iclass classify(const ZydisDecodedInstruction *z)
{
    bool far = z->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;
    bool rel = z->raw.imm[0].is_relative;
    switch (z->mnemonic) {
    case ZYDIS_MNEMONIC_JMP:
        return far ? NTL_IPT_IC_FAR_JUMP : rel ? NTL_IPT_IC_JUMP : NTL_IPT_IC_JUMP_IND;
    case ZYDIS_MNEMONIC_CALL:
        return far ? NTL_IPT_IC_FAR_CALL : rel ? NTL_IPT_IC_CALL : NTL_IPT_IC_CALL_IND;
    case ZYDIS_MNEMONIC_RET:
        return far ? NTL_IPT_IC_FAR_RET : NTL_IPT_IC_RET;
    case ZYDIS_MNEMONIC_INT:
    case ZYDIS_MNEMONIC_INT1:
    case ZYDIS_MNEMONIC_INT3:
    case ZYDIS_MNEMONIC_INTO:
    case ZYDIS_MNEMONIC_SYSCALL:
    case ZYDIS_MNEMONIC_SYSENTER:
    case ZYDIS_MNEMONIC_VMCALL:
    case ZYDIS_MNEMONIC_VMMCALL:
        return NTL_IPT_IC_FAR_CALL;
    case ZYDIS_MNEMONIC_IRET:
    case ZYDIS_MNEMONIC_IRETD:
    case ZYDIS_MNEMONIC_IRETQ:
    case ZYDIS_MNEMONIC_SYSRET:
    case ZYDIS_MNEMONIC_SYSEXIT:
    case ZYDIS_MNEMONIC_UIRET:
    case ZYDIS_MNEMONIC_RSM:
        return NTL_IPT_IC_FAR_RET;
    case ZYDIS_MNEMONIC_VMLAUNCH:
    case ZYDIS_MNEMONIC_VMRESUME:
        return NTL_IPT_IC_FAR_JUMP;
    case ZYDIS_MNEMONIC_PTWRITE:
        return NTL_IPT_IC_PTWRITE;
    default:
        return z->meta.category == ZYDIS_CATEGORY_COND_BR ? NTL_IPT_IC_COND : NTL_IPT_IC_OTHER;
    }
}

/* The instructions an Event Trace event without IP binds to. */
static enum flow_evt_class evclass(const ZydisDecodedInstruction *z)
{
    switch (z->mnemonic) {
    case ZYDIS_MNEMONIC_IRET: case ZYDIS_MNEMONIC_IRETD: case ZYDIS_MNEMONIC_IRETQ:
    case ZYDIS_MNEMONIC_SYSRET: case ZYDIS_MNEMONIC_SYSEXIT:
        return EVC_IRET;
    case ZYDIS_MNEMONIC_UIRET:
        return EVC_UIRET;
    case ZYDIS_MNEMONIC_SYSCALL: case ZYDIS_MNEMONIC_SYSENTER:
        return EVC_SYSCALL;
    case ZYDIS_MNEMONIC_VMLAUNCH: case ZYDIS_MNEMONIC_VMRESUME:
        return EVC_VMENTRY;
    default:
        return EVC_NONE;
    }
}

/* ERETS (F2 0F 01 CA) and ERETU (F3 0F 01 CA), FRED's returns from an
 * event, which Zydis 4 does not know: far returns that take a TIP, where
 * an Event Trace IRET binds (as libipt classes them). 64-bit only. */
static bool fred_return(struct flow_insn *e, const uint8_t *b, size_t n)
{
    if (e->mode != NTL_IPT_MODE_64 || n < 4 || (b[0] != 0xf2 && b[0] != 0xf3) || b[1] != 0x0f ||
        b[2] != 0x01 || b[3] != 0xca)
        return false;
    e->size = 4;
    e->iclass = NTL_IPT_IC_FAR_RET;
    e->evclass = EVC_IRET;
    e->vmentry = e->movcr3 = false;
    e->target = 0;
    return true;
}

/* JMPABS (REX2 with W and M0 clear, A1, a 64-bit absolute address), APX's
 * direct jump, which Zydis 4 does not know: libipt takes it as it takes an
 * indirect jump, its target from a TIP or TIP.PGD. Legacy prefixes may come
 * before it, but no operand- or address-size override. 64-bit only. */
static bool jmpabs(struct flow_insn *e, const uint8_t *b, size_t n)
{
    size_t i = 0;
    if (e->mode != NTL_IPT_MODE_64)
        return false;
    while (i < n && (b[i] == 0xf0 || b[i] == 0xf2 || b[i] == 0xf3 || b[i] == 0x2e ||
                     b[i] == 0x36 || b[i] == 0x3e || b[i] == 0x26 || b[i] == 0x64 || b[i] == 0x65))
        i++;
    if (i + 11 > n || b[i] != 0xd5 || (b[i + 1] & 0x88) || b[i + 2] != 0xa1)
        return false;
    e->size = (uint8_t)(i + 11);
    e->iclass = NTL_IPT_IC_JUMP_IND;
    e->evclass = EVC_NONE;
    e->vmentry = e->movcr3 = false;
    e->target = 0;
    return true;
}

/* Decodes the instruction at e->ip in e->mode into e. */
static int decode(struct flow_insn *e, ntl_ipt_read_fn read, void *ctx)
{
    static const struct {
        ZydisMachineMode mm;
        ZydisStackWidth sw;
        uint64_t ipmask;
    } modes[] = {
        [NTL_IPT_MODE_16] = { ZYDIS_MACHINE_MODE_LEGACY_16, ZYDIS_STACK_WIDTH_16, 0xffff },
        [NTL_IPT_MODE_32] = { ZYDIS_MACHINE_MODE_LEGACY_32, ZYDIS_STACK_WIDTH_32, 0xffffffff },
        [NTL_IPT_MODE_64] = { ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64, ~0ull },
    };
    if (e->mode < NTL_IPT_MODE_16 || e->mode > NTL_IPT_MODE_64)
        return NTL_IPT_BAD_INSN;
    uint8_t bytes[15];
    size_t n = fetch(bytes, read, ctx, e->ip);
    if (n == 0)
        return NTL_IPT_NOMAP;
    ZydisDecoder dec;
    ZydisDecodedInstruction z;
    ZydisDecoderInit(&dec, modes[e->mode].mm, modes[e->mode].sw);
    if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, bytes, n, &z)))
        return fred_return(e, bytes, n) || jmpabs(e, bytes, n) ? 0
             : n < 15 ? NTL_IPT_NOMAP : NTL_IPT_BAD_INSN;
    e->size = z.length;
    e->iclass = (uint8_t)classify(&z);
    e->vmentry = z.mnemonic == ZYDIS_MNEMONIC_VMLAUNCH || z.mnemonic == ZYDIS_MNEMONIC_VMRESUME;
    e->evclass = (uint8_t)evclass(&z);
    e->movcr3 = z.opcode_map == ZYDIS_OPCODE_MAP_0F && z.opcode == 0x22 && z.raw.modrm.reg == 3;
    e->target = 0;
    if (z.raw.imm[0].is_relative)
        e->target = (e->ip + z.length + (uint64_t)z.raw.imm[0].value.s) & modes[e->mode].ipmask;
    return 0;
}

int flow_insn_get(struct flow_cache *c, ntl_ipt_read_fn read, void *ctx, uint64_t ip,
                  unsigned mode, const struct flow_insn **out)
{
    const struct flow_insn *in = flow_table_find(&c->t, sizeof *in, ip, mode);
    if (!in) {
        struct flow_insn e = { .ip = ip, .mode = (uint8_t)mode };
        int rc = decode(&e, read, ctx);
        if (rc < 0)
            return rc;
        if (!(in = flow_table_add(&c->t, sizeof e, FLOW_CACHE_MAX, &e)))
            return NTL_ERR_NOMEM;
    }
    *out = in;
    return 0;
}
