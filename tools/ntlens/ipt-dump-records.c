/* ipt dump --format csv|tsv|json|jsonl|table: one record per packet through
 * the writer. The payload is ptdump's text; the values a reader filters on
 * have columns of their own (the resolved IP, CR3, the VMCS base, the
 * execution mode, the event type, and the estimated TSC or calibration when
 * --time or --tcal tracks them), addresses as hex strings. Every column has
 * a width, so a table streams like the other formats. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ipt-dump.h"
#include "out.h"
#include "ntlens/ipt_packet.h"

static void column(struct out *out, const char *key, enum out_align align, int width)
{
    static const char *const titles[][2] = {{"ip", "IP"}, {"cr3", "CR3"}, {"vmcs", "VMCS"},
                                            {"tsc", "TSC"}, {"fcr", "FCR"}};
    const char *title = NULL;
    for (size_t i = 0; i < sizeof titles / sizeof titles[0]; i++)
        if (!strcmp(key, titles[i][0]))
            title = titles[i][1];
    out_column(out, key, title, align);
    out_column_width(out, width);
}

void ipt_records_columns(struct out *out, const struct ipt_dump_opts *o)
{
    if (!o->no_offset)
        column(out, "offset", OUT_RIGHT, 10);
    column(out, "packet", OUT_LEFT, 9);
    column(out, "size", OUT_RIGHT, 4);
    if (o->show_raw)
        column(out, "raw", OUT_LEFT, 32);
    column(out, "payload", OUT_LEFT, 25);
    column(out, "ip", OUT_LEFT, 18);
    column(out, "cr3", OUT_LEFT, 18);
    column(out, "vmcs", OUT_LEFT, 18);
    column(out, "exec_mode", OUT_LEFT, 9);
    column(out, "event_type", OUT_LEFT, 11);
    if (o->show == IPT_SHOW_TIME)
        column(out, "tsc", OUT_LEFT, 18);
    if (o->show == IPT_SHOW_TCAL)
        column(out, "fcr", OUT_RIGHT, 10);
}

static bool is_ip_packet(enum ntl_ipt_type t)
{
    return t == NTL_IPT_TIP || t == NTL_IPT_TIP_PGE || t == NTL_IPT_TIP_PGD || t == NTL_IPT_FUP;
}

static void addr_if(struct out *out, bool have, uint64_t v)
{
    if (have)
        out_addr(out, v, 16);
    else
        out_null(out);
}

static void str_if(struct out *out, bool have, const char *s)
{
    if (have && *s)
        out_str(out, s);
    else
        out_null(out);
}

void ipt_records_row(struct out *out, const struct ntl_ipt_event *ev, const struct ipt_line *l,
                     uint64_t off, const struct ipt_dump_opts *o)
{
    const struct ntl_ipt_packet *p = &ev->pkt;
    if (l->skip || o->quiet)
        return;
    if (!o->no_offset)
        out_u64(out, off);
    out_str(out, l->opcode);
    out_u64(out, p->size);
    if (o->show_raw)
        out_str(out, l->raw);
    str_if(out, true, l->payload);
    addr_if(out, is_ip_packet(p->type) && ev->ip_status == NTL_OK, ev->ip);
    addr_if(out, p->type == NTL_IPT_PIP, p->payload);
    addr_if(out, p->type == NTL_IPT_VMCS, p->payload);
    str_if(out, p->type == NTL_IPT_MODE_EXEC, ipt_exec_mode_name(p->flags));
    str_if(out, p->type == NTL_IPT_CFE || p->type == NTL_IPT_EVD, ipt_event_type_name(p));
    if (o->show == IPT_SHOW_TIME)
        addr_if(out, l->have_tsc, l->tsc);
    if (o->show == IPT_SHOW_TCAL) {
        if (l->have_fcr)
            out_num(out, l->fcr, 3);
        else
            out_null(out);
    }
    out_row_end(out);
}
