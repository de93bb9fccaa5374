/* What the `etl` subcommands share: the trace-reading options, opening a
 * trace, reading events with --keep-going and a progress bar, and the
 * names and times their records show. */
#ifndef NTLENS_TOOL_ETL_COMMON_H
#define NTLENS_TOOL_ETL_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ntlens/etl.h"
#include "out.h"
#include "parse-options.h"
#include "progress.h"

struct etl_cli {
    const char *cmd;
    const char *path;      /* the trace, named in every error */
    bool keep_going;
    bool sorted;
    bool sort_if_fits;     /* sorted when the file is at most ETL_CLI_SORT_MAX bytes */
    bool decompress_ahead; /* ntl_etl_options.decompress_ahead */
    bool sorted_reload;    /* ntl_etl_options.sorted_reload: events used one at a time */
    int compression;       /* COMPRESSION_FORMAT_*; 0: the trace's own */
    struct ntl_etl *t;
    struct progress progress;
    uint64_t skipped;      /* bad buffers skipped */
    /* The reader's error, where etl_cli_next keeps it: not zeroed per
     * event, as the reader sets it with every error. */
    struct ntl_error err;
};

/* The options every etl command takes, for its option table:
 * OPT_ETL_OPTIONS(&c) with c a struct etl_cli. Needs parse-options.h. */
int etl_cli_compression_cb(const struct opt *o, const char *arg, void *ctx);
#define OPT_ETL_OPTIONS(c)                                                                 \
    OPT_GROUP("Trace reading options"),                                                    \
    OPT_FLAG(0, "keep-going", &(c)->keep_going,                                            \
             "skip a bad buffer, or read up to the cut of a truncated file,\n"             \
             "with a warning, instead of failing"),                                        \
    OPT_FLAG(0, "sorted", &(c)->sorted,                                                    \
             "merge the per-CPU buffers in time order (reads the whole trace first)"),     \
    OPT_CALLBACK(0, "compression", "FORMAT", etl_cli_compression_cb, (c),                  \
                 "format of compressed buffers: xpress, xpress-huff or lznt1\n"            \
                 "(default: the one the trace's first buffer names)")

/* The largest trace read in time order by default (held in memory, its
 * compressed buffers expanded): 512 MiB of file. */
#define ETL_CLI_SORT_MAX (512ull << 20)

/* Opens path; prints the error and returns EXIT_FAIL on failure, 0 on success. */
int etl_cli_open(struct etl_cli *c, const char *path);
/* "ntlens CMD: PATH: ERROR[HINT]" (clears the progress bar first). */
void etl_cli_error(struct etl_cli *c, const struct ntl_error *err, const char *hint);
/* "ntlens CMD: warning: PATH: ERROR; WHAT". */
void etl_cli_skip(struct etl_cli *c, const struct ntl_error *err, const char *what);
/* After a reader error rc: with --keep-going and a skippable error (a bad
 * buffer, or the cut of a truncated file) warns and returns true (read on);
 * otherwise prints the error and returns false. */
bool etl_cli_recover(struct etl_cli *c, int rc, const struct ntl_error *err);
/* etl_cli_next after the reader's error rc. */
int etl_cli_next_error(struct etl_cli *c, struct ntl_etl_event *ev, int rc);
/* 1 with an event, 0 at the end, -1 after a fatal error (printed).
 * Inline: a call more per event was 2% of profile --etl's reading thread. */
static inline int etl_cli_next(struct etl_cli *c, struct ntl_etl_event *ev)
{
    int rc = ntl_etl_next(c->t, ev, &c->err);
    return rc >= 0 ? rc : etl_cli_next_error(c, ev, rc);
}
/* Clears the progress bar, says how many buffers were skipped, closes. */
void etl_cli_close(struct etl_cli *c);

/* The event time of a raw timestamp as an ISO 8601 cell (null without a clock). */
void etl_cli_out_time(struct out *o, const struct etl_cli *c, uint64_t timestamp);
/* "2020-01-03T14:05:06.1234567Z", or "" without a clock (for the sidecar files). */
const char *etl_cli_time(const struct etl_cli *c, uint64_t timestamp, char *buf, size_t size);
/* "Process" or "0x2a"; "Load" or "10". */
const char *etl_cli_group(uint8_t group, char *buf, size_t size);
const char *etl_cli_opcode(uint8_t group, uint8_t opcode, char *buf, size_t size);
/* Lowercase hex of n bytes into a malloc'd string; NULL when out of memory. */
char *etl_cli_hex(const uint8_t *p, size_t n);
/* Writes the records of a finished writer; prints "write error" and returns
 * EXIT_FAIL when a write failed, else rc. */
int etl_cli_out_close(struct etl_cli *c, struct out *o, int rc);

/* A --start/--end time: "+SECONDS" from the trace's start, or ISO 8601 UTC
 * ("2020-07-29T00:07:01.25Z", the Z optional) as a FILETIME. */
struct etl_time {
    bool relative;
    uint64_t value;        /* 100 ns units: from the start, or a FILETIME */
};
bool etl_cli_parse_time(const char *s, struct etl_time *t);
/* The time as a FILETIME, for an open trace. */
uint64_t etl_cli_time_filetime(const struct etl_cli *c, const struct etl_time *t);

/* A time-zone name from the trace header: a Windows resource reference
 * ("@tzres.dll,-212") becomes its English name ("Pacific Standard Time")
 * when known (etl-tz.c); anything else comes back as it is. */
const char *etl_tz_name(const char *name, char *buf, size_t size);

#endif
