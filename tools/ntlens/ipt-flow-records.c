/* ipt flow's records: one per instruction or event, through the writer. */
#ifdef NTLENS_HAVE_IPT_FLOW
#include "ipt-flow.h"
#include "out.h"

static const char *kind_name(unsigned kind)
{
    static const char *const names[] = {
        [NTL_IPT_FL_INSN] = "insn",          [NTL_IPT_FL_ENABLED] = "enabled",
        [NTL_IPT_FL_DISABLED] = "disabled",  [NTL_IPT_FL_ASYNC_DISABLED] = "async_disabled",
        [NTL_IPT_FL_INTERRUPT] = "interrupt", [NTL_IPT_FL_OVERFLOW] = "overflow",
        [NTL_IPT_FL_EXEC_MODE] = "exec_mode", [NTL_IPT_FL_TSX] = "tsx",
        [NTL_IPT_FL_PAGING] = "paging",      [NTL_IPT_FL_VMCS] = "vmcs",
        [NTL_IPT_FL_STOP] = "stop",          [NTL_IPT_FL_PWRE] = "pwre",
        [NTL_IPT_FL_PWRX] = "pwrx",          [NTL_IPT_FL_CBR] = "cbr",
        [NTL_IPT_FL_MNT] = "mnt",            [NTL_IPT_FL_END] = "end",
        [NTL_IPT_FL_PTWRITE] = "ptwrite",    [NTL_IPT_FL_EXSTOP] = "exstop",
        [NTL_IPT_FL_MWAIT] = "mwait",        [NTL_IPT_FL_CFE] = "cfe",
        [NTL_IPT_FL_IFLAGS] = "iflags",      [NTL_IPT_FL_TRIG] = "trig",
        [NTL_IPT_FL_TICK] = "tick",
    };
    return kind < sizeof names / sizeof names[0] && names[kind] ? names[kind] : "unknown";
}

void ipt_flow_records_columns(struct out *out)
{
    out_column(out, "offset", NULL, OUT_RIGHT);
    out_column(out, "kind", NULL, OUT_LEFT);
    out_column(out, "ip", "IP", OUT_LEFT);
    out_column(out, "size", NULL, OUT_RIGHT);
    out_column(out, "speculative", NULL, OUT_LEFT);
    out_column(out, "text", NULL, OUT_LEFT);
}

/* An event's IP where it has one: the instruction's, the enable's, ... */
static bool has_ip(const struct ntl_ipt_flow_item *it)
{
    switch (it->kind) {
    case NTL_IPT_FL_PAGING: case NTL_IPT_FL_VMCS: case NTL_IPT_FL_STOP: case NTL_IPT_FL_PWRE:
    case NTL_IPT_FL_PWRX: case NTL_IPT_FL_CBR: case NTL_IPT_FL_MNT:
        return false;
    default:
        return !(it->flags & NTL_IPT_FL_IP_SUPPRESSED);
    }
}

void ipt_flow_records_row(struct out *out, const struct ntl_ipt_flow_item *it,
                          const struct ipt_flow_opts *o, uint64_t off)
{
    char text[256];
    bool insn = it->kind == NTL_IPT_FL_INSN;
    if (o->quiet)
        return;
    out_u64(out, off);
    out_str(out, it->kind == NTL_IPT_FL_ENABLED && (it->flags & NTL_IPT_FL_RESUMED)
                     ? "resumed" : kind_name(it->kind));
    if (has_ip(it))
        out_addr(out, it->ip, 16);
    else
        out_null(out);
    if (insn)
        out_u64(out, it->size);
    else
        out_null(out);
    out_bool(out, it->flags & NTL_IPT_FL_SPECULATIVE);
    if (insn && !o->no_inst && ipt_flow_insn_text(it, o->spaces, text, sizeof text))
        out_str(out, text);
    else if (!insn)
        out_str(out, (ipt_flow_event_text(it, o, text, sizeof text), text));
    else
        out_null(out);
    out_row_end(out);
}
#endif
