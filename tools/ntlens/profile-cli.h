/* What `ntlens profile` shares between its producers and its report. */
#ifndef NTLENS_TOOL_PROFILE_CLI_H
#define NTLENS_TOOL_PROFILE_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "ntlens/profile.h"
#include "out.h"
#include "parse-options.h"

/* Which tables the report prints (--report). */
enum profile_table {
    PROFILE_ALL,        /* modules, processes, then functions (and buckets) of the zoomed */
    PROFILE_MODULES,
    PROFILE_PROCESSES,
    PROFILE_THREADS,
    PROFILE_FUNCTIONS,
    PROFILE_BUCKETS,
};

struct profile_report_opts {
    int fmt;                  /* enum out_format */
    int table;                /* enum profile_table */
    struct opt_list zoom;     /* module names to zoom into */
    uint64_t top;             /* zoom into the N modules with most hits */
    bool buckets;             /* the bucket list of zoomed modules too */
};

/* What to sample live (-p, -a, -- COMMAND). */
struct profile_live_opts {
    uint64_t pid;
    bool all;
    uint64_t freq;            /* samples per second per CPU */
    uint64_t duration;        /* seconds; 0: until the command ends or Ctrl-C */
    int source;               /* Windows: KPROFILE_SOURCE (0, ProfileTime, by default) */
    unsigned bucket_shift;
    int argc;                 /* the command to start, or 0 */
    char **argv;
};

struct ntl_profile_perf_stats;

/* Samples into p (platform code: profile-live-linux.c with perf_event,
 * -win32.c with NT profile objects) and fills *st (Linux: lost and
 * throttled samples). 0, or EXIT_FAIL after
 * printing the error. */
int profile_live(const char *cmd, struct ntl_profile *p, const struct profile_live_opts *lo,
                 struct ntl_profile_perf_stats *st);

/* --format's values: out.h's, then folded stacks and speedscope's JSON. */
#define PROFILE_FOLDED (OUT_JSONL + 1)
#define PROFILE_SPEEDSCOPE (OUT_JSONL + 2)

/* Writes every sample's stack in folded form; 0, or EXIT_FAIL after
 * printing the error. */
int profile_folded(const char *cmd, struct ntl_profile *p);

/* Writes every sample's stack in speedscope's JSON file format, one
 * profile per process; 0, or EXIT_FAIL after printing the error. */
int profile_speedscope(const char *cmd, struct ntl_profile *p);

/* Writes the report; 0, or EXIT_FAIL after printing the error. */
int profile_report(const char *cmd, struct ntl_profile *p, const struct profile_report_opts *ro);

#endif
