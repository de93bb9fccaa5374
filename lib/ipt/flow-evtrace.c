/* Event Trace: CFE and EVD packets into the flow decoder's events, and
 * where each binds. An EVD comes before the CFE it completes (CR2 before
 * a page fault's INTR, the VMX exit reason and qualification before a
 * VMEXIT); a CFE with its IP bit set binds to the FUP after it, which
 * reports nothing else; one without, while tracing is enabled, takes the
 * IP of the FUP of the asynchronous event it reports (INTR, SMI, ...) or
 * binds to the next instruction of its kind (IRET, VM entry, ...). */
#include "flow-evtrace.h"

int flow_evt_evd(struct flow_evtrace *t, const struct ntl_ipt_packet *p)
{
    struct ntl_ipt_flow_item *h = &t->held;
    uint8_t bit;
    switch (p->aux) {
    case 0: /* CR2: a page fault's INTR comes */
        if (t->have)
            return NTL_IPT_BAD_CONTEXT;
        *h = (struct ntl_ipt_flow_item){.kind = NTL_IPT_FL_CFE, .a = NTL_IPT_CFE_INTR,
                                        .flags = NTL_IPT_FL_CR2, .b = p->payload};
        t->have = true;
        return 0;
    case 1: /* VMX exit qualification */
    case 2: /* VMX exit reason */
        if (!t->have)
            *h = (struct ntl_ipt_flow_item){.kind = NTL_IPT_FL_CFE, .a = NTL_IPT_CFE_VMEXIT};
        t->have = true;
        bit = p->aux == 1 ? NTL_IPT_FL_VMXQ : NTL_IPT_FL_VMXR;
        if (h->a != NTL_IPT_CFE_VMEXIT || (h->flags & bit))
            return NTL_IPT_BAD_CONTEXT;
        h->flags |= bit;
        if (p->aux == 1)
            h->c = p->payload;
        else
            h->b = p->payload;
        return 0;
    default:
        return 0; /* more detail on an event, not needed to follow the flow */
    }
}

/* The binding of an event that may come from an EVD (INTR, VMEXIT) or
 * from its CFE alone (SMI, INIT, UINTR, SWINTR), reported by a FUP. */
static int async(const struct ntl_ipt_packet *p, bool enabled)
{
    return p->flags & NTL_IPT_F_IP ? EVT_FUP_BOUND : enabled ? EVT_FUP : EVT_NOW;
}

int flow_evt_cfe(struct flow_evtrace *t, const struct ntl_ipt_packet *p, bool enabled,
                 struct ntl_ipt_flow_item *it)
{
    unsigned type = p->aux & 0x1f, vector = p->aux >> 8 & 0xff;
    bool held = t->have, ip = p->flags & NTL_IPT_F_IP;
    t->have = false;
    *it = held ? t->held
               : (struct ntl_ipt_flow_item){.kind = NTL_IPT_FL_CFE, .a = type};
    it->flags |= NTL_IPT_FL_IP_SUPPRESSED;
    switch (type) {
    case NTL_IPT_CFE_INTR:
    case NTL_IPT_CFE_VMEXIT:
    case NTL_IPT_CFE_VMEXIT_INTR:
        if (held && it->a != (type == NTL_IPT_CFE_INTR ? NTL_IPT_CFE_INTR : NTL_IPT_CFE_VMEXIT))
            return NTL_IPT_BAD_CONTEXT;
        it->a = type | vector << 8;
        return async(p, enabled);
    case NTL_IPT_CFE_SMI: case NTL_IPT_CFE_INIT: case NTL_IPT_CFE_UINTR: case NTL_IPT_CFE_SWINTR:
        it->a = type | vector << 8;
        return held ? NTL_IPT_BAD_CONTEXT : async(p, enabled);
    case NTL_IPT_CFE_IRET: case NTL_IPT_CFE_UIRET: case NTL_IPT_CFE_VMENTRY:
    case NTL_IPT_CFE_SYSCALL:
        return held ? NTL_IPT_BAD_CONTEXT : ip ? EVT_FUP_BOUND : enabled ? EVT_INSN : EVT_NOW;
    case NTL_IPT_CFE_RSM: case NTL_IPT_CFE_SIPI:
        /* Where they happen, tracing is off: they have no IP. */
        it->a = type | vector << 8;
        return held || ip ? NTL_IPT_BAD_CONTEXT : EVT_NOW;
    case NTL_IPT_CFE_SHUTDOWN:
        return held ? NTL_IPT_BAD_CONTEXT : ip ? EVT_FUP_BOUND : EVT_NOW;
    default:
        /* An EVD only starts the types above. An unknown type says more
         * than the flow needs; its FUP, if any, is passed over. */
        return held ? NTL_IPT_BAD_CONTEXT : ip ? EVT_IGNORE : EVT_NONE;
    }
}

bool flow_evt_after(const struct ntl_ipt_flow_item *it)
{
    unsigned type = it->a & 0xff;
    return it->kind == NTL_IPT_FL_CFE && (type == NTL_IPT_CFE_IRET || type == NTL_IPT_CFE_UIRET || type == NTL_IPT_CFE_VMENTRY);
}

enum flow_evt_class flow_evt_class(const struct ntl_ipt_flow_item *it)
{
    switch (it->a & 0xff) {
    case NTL_IPT_CFE_IRET: return EVC_IRET;
    case NTL_IPT_CFE_UIRET: return EVC_UIRET;
    case NTL_IPT_CFE_VMENTRY: return EVC_VMENTRY;
    case NTL_IPT_CFE_SYSCALL: return EVC_SYSCALL;
    default: return EVC_NONE;
    }
}
