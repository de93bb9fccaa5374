/* Event Trace for the flow decoder: the event a CFE packet reports, with
 * the EVD packets before it, and where it binds (the SDM's Event Trace
 * rules, as libipt's event decoder applies them). Internal to lib/ipt. */
#ifndef NTLENS_LIB_IPT_FLOW_EVTRACE_H
#define NTLENS_LIB_IPT_FLOW_EVTRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "ntlens/ipt_flow.h"

/* Where an event binds. */
enum flow_evt_bind {
    EVT_NOW = 1,  /* told where it stands, without IP */
    EVT_FUP,      /* at the next FUP's IP; the FUP goes on to report its own event */
    EVT_FUP_BOUND,/* at the next FUP's IP; the FUP is the event's alone */
    EVT_INSN,     /* after the next instruction of its class (flow_evt_class) */
    EVT_IGNORE,   /* an unknown type: nothing told, its FUP passed over */
    EVT_NONE,     /* an unknown type without IP: nothing at all */
};

/* Instruction classes an event binds to (struct flow_insn's evclass). */
enum flow_evt_class {
    EVC_NONE = 0,
    EVC_IRET,    /* IRET, SYSRET, SYSEXIT, ERETS, ERETU */
    EVC_UIRET,
    EVC_SYSCALL, /* SYSCALL, SYSENTER */
    EVC_VMENTRY, /* VMLAUNCH, VMRESUME */
};

/* EVD packets wait for their CFE here; reset at PSB and OVF. */
struct flow_evtrace {
    struct ntl_ipt_flow_item held;
    bool have;
};

/* An EVD packet p: into t for the CFE to come. Returns 0, or
 * NTL_IPT_BAD_CONTEXT when it contradicts the EVDs before it. */
int flow_evt_evd(struct flow_evtrace *t, const struct ntl_ipt_packet *p);

/* A CFE packet p, tracing enabled or not: its event into *it (kind
 * NTL_IPT_FL_CFE, IP_SUPPRESSED until bound to an IP). Returns an enum
 * flow_evt_bind, or NTL_IPT_BAD_CONTEXT when it contradicts the EVDs
 * before it or comes with an IP its type cannot have. */
int flow_evt_cfe(struct flow_evtrace *t, const struct ntl_ipt_packet *p, bool enabled,
                 struct ntl_ipt_flow_item *it);

/* Whether an event at a known IP is told after the instruction there
 * executes (IRET, UIRET, VM entry), rather than before it. */
bool flow_evt_after(const struct ntl_ipt_flow_item *it);

/* The class of instruction an event without IP binds to (EVT_INSN). */
enum flow_evt_class flow_evt_class(const struct ntl_ipt_flow_item *it);

#endif
