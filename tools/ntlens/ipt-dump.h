/* ntlens ipt dump, split by job: the option table and the operand
 * (ipt-dump-options.c), this machine's CPU for --cpu auto (ipt-dump-cpu.c),
 * ptdump's packet lines (ipt-dump-text.c), one record per packet through
 * the writer (ipt-dump-records.c), and the decode loop (cmd-ipt-dump.c). */
#ifndef NTLENS_TOOL_IPT_DUMP_H
#define NTLENS_TOOL_IPT_DUMP_H

#include <stdbool.h>
#include <stdint.h>

#include "ntlens/ipt_event.h"
#include "ntlens/ipt_time.h"

struct out;

/* Which time column --time and --tcal ask for (ptdump takes one of them). */
enum ipt_show { IPT_SHOW_NONE, IPT_SHOW_TIME, IPT_SHOW_TCAL };

/* --format's value before the table says otherwise: ptdump's text. */
#define IPT_FORMAT_PTDUMP (-1)

struct ipt_dump_opts {
    bool no_offset, show_raw, show_lastip, show_exec_mode, no_pad, no_sync, quiet;
    bool no_timing, no_cyc, time_delta, no_tcal, no_wall_clock, keep_tcal_on_ovf;
    int show;                   /* enum ipt_show */
    int fmt;                    /* enum out_format, or IPT_FORMAT_PTDUMP */
    bool wrapped;
    uint64_t wrap_pos;
    const char *path;           /* the file of the TRACE operand */
    bool ranged;                /* TRACE was FILE:FROM[-TO]: decode [from, to) */
    uint64_t from, to;          /* to 0: the end of the file */
    struct ntl_ipt_cpu cpu;
    struct ntl_ipt_time_config tc;
};

/* Parses argv into o (defaults first). Returns CLI_CONTINUE or the exit code. */
int ipt_dump_parse_args(int argc, char **argv, struct ipt_dump_opts *o);

/* This machine's CPU, as ptdump's --cpu auto reads it: known only for an
 * Intel CPU (the errata are Intel's). False when it cannot be read here. */
bool ipt_dump_host_cpu(struct ntl_ipt_cpu *cpu);

/* The decoder and what the lines and records need across packets. */
struct ipt_dump_state {
    const char *cmd;
    const struct ipt_dump_opts *o;
    struct ntl_ipt_evd evd;
    uint64_t tsc, fcr;          /* the last time and calibration printed (--time-delta) */
    struct out *out;            /* records; NULL: ptdump's text */
};

/* One packet, column by column, as ptdump lays it out, plus the values the
 * records carry. */
struct ipt_line {
    char offset[17];
    char raw[33];
    char opcode[10];
    char payload[64];
    char id[5];
    char track[24];
    bool skip, skip_time, skip_tcal;
    bool have_tsc, have_fcr;
    uint64_t tsc;
    double fcr;
};

/* A diagnostic: ptdump's "[OFFSET: WHAT: WHY]" line in the text, a warning
 * on stderr beside records. why may be NULL. */
void ipt_dump_diag(const struct ipt_dump_state *s, const char *what, uint64_t off, const char *why);

/* Fills l from the event (off: the offset shown), with the time columns and
 * ptdump's diagnostics of a timing packet. */
void ipt_line_format(const struct ntl_ipt_event *ev, struct ipt_line *l, struct ipt_dump_state *s,
                     uint64_t off);
/* --raw: the packet's bytes in hex (as many as the column holds). */
void ipt_line_raw(struct ipt_line *l, const uint8_t *bytes, unsigned size);
/* MODE.Exec's mode as ptdump names it: "64-bit". */
const char *ipt_exec_mode_name(unsigned flags);
/* The event type of a CFE or EVD packet as ptdump names it: "vmexit", "cr2". */
const char *ipt_event_type_name(const struct ntl_ipt_packet *p);
/* Prints l as ptdump does (nothing when skipped or --quiet). */
void ipt_line_print(const struct ipt_line *l, const struct ipt_dump_opts *o);

/* The records' columns for the options given. */
void ipt_records_columns(struct out *out, const struct ipt_dump_opts *o);
/* The record of one packet (nothing when skipped or --quiet). */
void ipt_records_row(struct out *out, const struct ntl_ipt_event *ev, const struct ipt_line *l,
                     uint64_t off, const struct ipt_dump_opts *o);

#endif
