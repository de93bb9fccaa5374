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
#include "ntlens/ipt_trace.h"
#include "ntlens/ipt_sources.h"
#include "ntlens/ipt_time.h"

/* An image option, in the order given: --cr3 before it puts it in that
 * address space, else in the default one. */
enum ipt_image_kind { IPT_IMG_RAW, IPT_IMG_ELF, IPT_IMG_PAGES, IPT_IMG_PE, IPT_IMG_DUMP };
struct ipt_image_spec {
    enum ipt_image_kind kind;
    bool in_space;
    uint64_t cr3;
    const char *arg;
};
struct ipt_image_specs {
    struct ipt_image_spec v[OPT_LIST_MAX];
    size_t n;
    bool in_space; /* a --cr3 is in force */
    uint64_t cr3;
};

struct ipt_flow_opts {
    bool no_inst, check, quiet, stat, stat_insn, stat_blocks;
    bool event_ip, event_iflags, offset, resync_on_error;
    bool show_blocks, end_on_call, end_on_jump; /* --block:* */
    bool event_tsc, ticks;        /* --event:time, --event:tick */
    bool keep_tcal_insn, keep_tcal_blocks; /* --insn: and --block:keep-tcal-on-ovf */
    bool calls, functions;        /* --calls, --functions: instead of the flow */
    bool import_opt;              /* --import-optimization for --pe and --etl modules */
    int decoder;                  /* IPT_FLOW_BLOCKS or IPT_FLOW_INSNS */
    unsigned jobs;                /* --jobs: threads decoding */
    int fmt;                      /* enum out_format, or IPT_FORMAT_PTXED */
    const char *trace;            /* --pt FILE or the TRACE operand */
    const char *etl;              /* --etl TRACE: the trace (--event) and/or modules */
    uint64_t event;               /* --event N: the trace is --etl's N-th IPT event */
    uint32_t event_process;       /* its process (ipt_flow_load_trace) */
    uint64_t event_time;          /* its raw ETW time (what was loaded then) */
    bool event_in_space;          /* its process has an address space of its own */
    struct opt_list modules;      /* --modules DIR */
    struct ipt_image_specs images; /* --raw, --elf, --pages, --pe, --dump */
    struct ntl_ipt_cpu cpu;
    struct ntl_ipt_time_config tc;
    struct ntl_ipt_filter filter; /* --filter:addrN_cfg, _a, _b */
    struct ntl_ipt_spaces *spaces; /* the images they load (ipt_flow_load_image) */
    struct ntl_iptsrc_syms *syms;  /* the names they give */
};

/* ptxed's decoders: the same output, but --stat counts blocks of the
 * block decoder's only. */
enum { IPT_FLOW_BLOCKS, IPT_FLOW_INSNS };

/* --format's value before the table says otherwise: ptxed's text. */
#define IPT_FORMAT_PTXED (-1)

struct out;

/* Parses argv into o (defaults first). Returns CLI_CONTINUE or the exit code. */
int ipt_flow_parse_args(int argc, char **argv, struct ipt_flow_opts *o);

/* FILE:ADDR (the last ':' starts the number) into path and *addr; -1 when
 * arg is not so. --elf's FILE[:BASE]: true when a base is given. */
int ipt_flow_split_addr(const char *arg, char *path, size_t n, uint64_t *addr);
bool ipt_flow_split_elf(const char *arg, char *path, size_t n, uint64_t *base);

/* o->spaces and o->syms from the image options (ipt-flow-images.c).
 * Returns 0, or EXIT_FAIL after printing what failed (cmd names the
 * command); warnings (modules not found) go to stderr. */
int ipt_flow_load_images(struct ipt_flow_opts *o, const char *cmd);
/* The trace: --pt/TRACE, or --etl's --event (its process and time into
 * o->event_process, o->event_time). Returns 0 or EXIT_FAIL after
 * printing why. */
int ipt_flow_load_trace(struct ipt_flow_opts *o, const char *cmd, struct ntl_ipt_trace *t);

/* One item as ptxed prints it (off: the trace offset for --offset). */
void ipt_flow_print(const struct ntl_ipt_flow_item *it, const struct ipt_flow_opts *o,
                    uint64_t off);
/* The RUN item it's instructions (ntl_ipt_flow_run_ips on f), one line
 * each as ptxed --no-inst prints them, in large writes. Returns 0, or
 * ntl_ipt_flow_run_ips's status (err set). */
int ipt_flow_print_run(struct ntl_ipt_flow *f, const struct ntl_ipt_flow_item *it,
                       struct ntl_error *err);
/* An event's text as ptxed prints it between brackets. */
void ipt_flow_event_text(const struct ntl_ipt_flow_item *it, const struct ipt_flow_opts *o,
                         char *buf, size_t size);
/* An instruction in Intel syntax (Zydis's formatter), its bytes read from
 * img; false when they do not decode. */
bool ipt_flow_insn_text(const struct ntl_ipt_flow_item *it, struct ntl_ipt_spaces *mem, char *buf,
                        size_t size);

/* --calls and --functions (ipt-flow-calls.c): fed every item in order,
 * they print at the end (functions) or as they go (calls). */
struct ipt_calls;
struct ipt_calls *ipt_calls_new(const struct ipt_flow_opts *o, struct out *out);
/* Returns 0, or -1 when out of memory. */
int ipt_calls_item(struct ipt_calls *c, const struct ntl_ipt_flow_item *it);
/* A decode error: the call stack is no longer known. */
void ipt_calls_lost(struct ipt_calls *c);
/* Prints what is left (the functions' table). Returns 0, or -1 when out of memory. */
int ipt_calls_finish(struct ipt_calls *c);
void ipt_calls_free(struct ipt_calls *c);

/* The records' columns, and the record of one item. */
void ipt_flow_records_columns(struct out *out);
void ipt_flow_records_row(struct out *out, const struct ntl_ipt_flow_item *it,
                          const struct ipt_flow_opts *o, uint64_t off);

#endif
