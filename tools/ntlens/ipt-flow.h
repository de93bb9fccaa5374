/* ntlens ipt flow, split by job: the option table and the image options
 * (ipt-flow-options.c), ptxed's lines for instructions and events
 * (ipt-flow-print.c), one record per item through the writer
 * (ipt-flow-records.c), and the decode loop (cmd-ipt-flow.c). */
#ifndef NTLENS_TOOL_IPT_FLOW_H
#define NTLENS_TOOL_IPT_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse-options.h"
#include "ntlens/ipt_flow.h"
#include "ntlens/ipt_time.h"

struct ipt_flow_opts {
    bool no_inst, check, quiet, stat, stat_insn, stat_blocks;
    bool event_ip, offset, resync_on_error;
    int decoder;                  /* IPT_FLOW_BLOCKS or IPT_FLOW_INSNS */
    int fmt;                      /* enum out_format, or IPT_FORMAT_PTXED */
    const char *trace;            /* --pt FILE or the TRACE operand */
    struct opt_list raw;          /* --raw FILE:ADDR */
    struct opt_list pages;        /* --pages DIR */
    struct opt_list elf;          /* --elf FILE[:BASE] */
    struct ntl_ipt_cpu cpu;
    struct ntl_ipt_time_config tc;
    struct ntl_ipt_filter filter; /* --filter:addrN_cfg, _a, _b */
    struct ntl_ipt_image *img;    /* the image they load (ipt_flow_load_image) */
};

/* ptxed's decoders: the same output, but --stat counts blocks of the
 * block decoder's only. */
enum { IPT_FLOW_BLOCKS, IPT_FLOW_INSNS };

/* --format's value before the table says otherwise: ptxed's text. */
#define IPT_FORMAT_PTXED (-1)

struct out;

/* Parses argv into o (defaults first). Returns CLI_CONTINUE or the exit code. */
int ipt_flow_parse_args(int argc, char **argv, struct ipt_flow_opts *o);

/* o->img from --raw, --elf and --pages. Returns 0, or the failing loader's
 * status with err naming the file. */
int ipt_flow_load_image(struct ipt_flow_opts *o, struct ntl_error *err);

/* One item as ptxed prints it (off: the trace offset for --offset). */
void ipt_flow_print(const struct ntl_ipt_flow_item *it, const struct ipt_flow_opts *o,
                    uint64_t off);
/* An event's text as ptxed prints it between brackets. */
void ipt_flow_event_text(const struct ntl_ipt_flow_item *it, const struct ipt_flow_opts *o,
                         char *buf, size_t size);
/* An instruction in Intel syntax (Zydis's formatter), its bytes read from
 * img; false when they do not decode. */
bool ipt_flow_insn_text(const struct ntl_ipt_flow_item *it, struct ntl_ipt_image *img, char *buf,
                        size_t size);

/* The records' columns, and the record of one item. */
void ipt_flow_records_columns(struct out *out);
void ipt_flow_records_row(struct out *out, const struct ntl_ipt_flow_item *it,
                          const struct ipt_flow_opts *o, uint64_t off);

#endif
