/* `ntlens profile --format folded`: one line per distinct stack, root
 * first, "process;caller;...;function COUNT" (folded.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "folded.h"
#include "ntlens/profile_report.h"
#include "profile-cli.h"

static int by_pid(const void *a, const void *b)
{
    uint32_t x = ((const struct ntl_profile_process_row *)a)->pid;
    uint32_t y = ((const struct ntl_profile_process_row *)b)->pid;
    return x < y ? -1 : x > y;
}

/* The stack of s, root first: the process, the callers (named as
 * ntl_profile_frame_address says), the sampled function. */
static void fold(struct ntl_profile *p, const struct ntl_profile_sample *s,
                 const struct ntl_profile_process_row *procs, size_t nprocs, char *line)
{
    struct ntl_profile_process_row key = {.pid = s->pid};
    const struct ntl_profile_process_row *pr = bsearch(&key, procs, nprocs, sizeof *procs, by_pid);
    char frame[512];
    size_t len = 0;
    if (pr && pr->name)
        len = folded_append(line, len, pr->name);
    else
        len = (size_t)snprintf(line, FOLDED_LINE_MAX, "%" PRIu32, s->pid);
    for (size_t i = s->depth; i-- > 0;) {
        ntl_profile_symbolize(p, s->pid, ntl_profile_frame_address(p, s->stack[i]), frame, sizeof frame);
        len = folded_append(line, len, frame);
    }
    ntl_profile_symbolize(p, s->pid, s->ip, frame, sizeof frame);
    folded_append(line, len, frame);
}

int profile_folded(const char *cmd, struct ntl_profile *p)
{
    struct ntl_profile_process_row *procs;
    struct ntl_profile_sample s;
    struct ntl_error err = {0};
    size_t nprocs, pos = 0;
    char *line = malloc(FOLDED_LINE_MAX);
    struct folded_set *set = folded_new();
    int rc = 0;
    if (!line || !set || ntl_profile_processes(p, &procs, &nprocs, &err) < 0) {
        free(line);
        folded_free(set);
        return cli_failf(cmd, "out of memory");
    }
    qsort(procs, nprocs, sizeof *procs, by_pid);
    while (!rc && ntl_profile_stack_next(p, &pos, &s) > 0) {
        fold(p, &s, procs, nprocs, line);
        if (folded_add(set, line, s.weight) < 0)
            rc = cli_failf(cmd, "out of memory");
    }
    if (!rc && folded_write(set, stdout) < 0)
        rc = cli_failf(cmd, "write error");
    folded_free(set);
    free(procs);
    free(line);
    return rc;
}
