/* Several traces read as one: each in time order (etl_cli's sorted mode or
 * its own file order), merged by event time (FILETIME, so traces with
 * different clocks interleave correctly). One trace reads as itself. */
#ifndef NTLENS_TOOL_ETL_MERGE_H
#define NTLENS_TOOL_ETL_MERGE_H

#include "etl-common.h"

struct etl_merge {
    struct etl_cli *c;            /* one per trace */
    struct ntl_etl_event *head;   /* each trace's next event */
    uint64_t *ft;                 /* its time */
    bool *live;                   /* head holds an event */
    size_t n, last;
    bool started;
};

/* Opens every path with proto's options (command name, --keep-going,
 * --sorted or sort_if_fits, --compression). Prints the error and returns
 * EXIT_FAIL when one does not open (the others closed), 0 when all did. */
int etl_merge_open(struct etl_merge *m, const struct etl_cli *proto, char **paths, size_t n);
/* The next event in time order and the trace it is from: 1, 0 at the end
 * of every trace, -1 after a fatal error (printed). ev stays valid until
 * the next call. */
int etl_merge_next(struct etl_merge *m, struct ntl_etl_event *ev, struct etl_cli **from);
/* The FILETIME of the event etl_merge_next returned last. */
static inline uint64_t etl_merge_filetime(const struct etl_merge *m)
{
    return m->ft[m->last];
}
void etl_merge_close(struct etl_merge *m);

#endif
