/* What the `etl` subcommands share: opening a trace with the common options,
 * reading events with --keep-going and a progress bar, and formatting. */
#ifndef NTLENS_TOOL_ETL_COMMON_H
#define NTLENS_TOOL_ETL_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ntlens/etl.h"
#include "progress.h"

/* Long options every etl command takes; their ids start at this value. */
#define ETL_OPT_KEEP_GOING 0x1000
#define ETL_OPT_COMPRESSION 0x1001
#define ETL_OPT_SORTED 0x1002

#define ETL_COMMON_LONGOPTS                                                        \
    {"keep-going", no_argument, NULL, ETL_OPT_KEEP_GOING},                         \
    {"compression", required_argument, NULL, ETL_OPT_COMPRESSION},                 \
    {"sorted", no_argument, NULL, ETL_OPT_SORTED}

#define ETL_COMMON_HELP                                                            \
    "      --keep-going     skip a bad buffer (with a warning) instead of failing\n" \
    "      --sorted         merge per-CPU buffers in time order (reads the whole trace first)\n" \
    "      --compression F  format of compressed buffers: xpress, xpress-huff or lznt1\n" \
    "                       (default: the one the trace's first buffer names)\n"

struct etl_cli {
    const char *cmd;
    const char *path;      /* the trace, named in every error */
    bool keep_going;
    bool sorted;
    int compression;
    struct ntl_etl *t;
    struct progress progress;
    uint64_t skipped;      /* bad buffers skipped */
};

/* Handles one of the common options (returns true), or returns false.
 * *rc gets EXIT_USAGE on a bad value. */
bool etl_cli_option(struct etl_cli *c, int opt, const char *arg, int *rc);
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
/* 1 with an event, 0 at the end, -1 after a fatal error (printed). */
int etl_cli_next(struct etl_cli *c, struct ntl_etl_event *ev);
/* Clears the progress bar, says how many buffers were skipped, closes. */
void etl_cli_close(struct etl_cli *c);

/* "2020-01-03T14:05:06.1234567Z", or "" without a clock. */
const char *etl_cli_time(const struct etl_cli *c, uint64_t timestamp, char *buf, size_t size);
/* "Process" or "0x2a"; "Load" or "10". */
const char *etl_cli_group(uint8_t group, char *buf, size_t size);
const char *etl_cli_opcode(uint8_t group, uint8_t opcode, char *buf, size_t size);
/* Lowercase hex of n bytes into a malloc'd string. */
char *etl_cli_hex(const uint8_t *p, size_t n);

#endif
