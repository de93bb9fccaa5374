/* `ntlens profile --format folded`: one line per distinct stack, root
 * first, "process;caller;...;function COUNT", as flame-graph tools
 * (flamegraph.pl, speedscope, inferno) read Brendan Gregg's folded stacks. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ntlens/profile_report.h"
#include "profile-cli.h"

#define LINE_MAX_BYTES 65536

struct folded {
    char *line;
    uint64_t weight;
};

static int by_line(const void *a, const void *b)
{
    return strcmp(((const struct folded *)a)->line, ((const struct folded *)b)->line);
}

static int by_pid(const void *a, const void *b)
{
    uint32_t x = ((const struct ntl_profile_process_row *)a)->pid;
    uint32_t y = ((const struct ntl_profile_process_row *)b)->pid;
    return x < y ? -1 : x > y;
}

/* Appends a frame; frames are separated by ';', which names must not hold. */
static size_t append(char *line, size_t len, const char *frame)
{
    if (len && len + 1 < LINE_MAX_BYTES)
        line[len++] = ';';
    for (; *frame && len + 1 < LINE_MAX_BYTES; frame++)
        line[len++] = *frame == ';' || *frame == ' ' ? '_' : *frame;
    line[len] = 0;
    return len;
}

/* The stack of s, root first: the process, the callers (a return address
 * minus one lies in the call), the sampled function. */
static void fold(struct ntl_profile *p, const struct ntl_profile_sample *s,
                 const struct ntl_profile_process_row *procs, size_t nprocs, char *line)
{
    struct ntl_profile_process_row key = {.pid = s->pid};
    const struct ntl_profile_process_row *pr = bsearch(&key, procs, nprocs, sizeof *procs, by_pid);
    char frame[512];
    size_t len = 0;
    if (pr && pr->name)
        len = append(line, len, pr->name);
    else
        len = (size_t)snprintf(line, LINE_MAX_BYTES, "%" PRIu32, s->pid);
    for (size_t i = s->depth; i-- > 0;) {
        ntl_profile_symbolize(p, s->pid, s->stack[i] - 1, frame, sizeof frame);
        len = append(line, len, frame);
    }
    ntl_profile_symbolize(p, s->pid, s->ip, frame, sizeof frame);
    append(line, len, frame);
}

int profile_folded(const char *cmd, struct ntl_profile *p)
{
    struct ntl_profile_process_row *procs;
    struct ntl_profile_sample s;
    struct ntl_error err = {0};
    struct folded *v = NULL;
    size_t nprocs, n = 0, cap = 0, pos = 0;
    char *line = malloc(LINE_MAX_BYTES);
    int rc = 0;
    if (!line || ntl_profile_processes(p, &procs, &nprocs, &err) < 0) {
        free(line);
        return cli_failf(cmd, "out of memory");
    }
    qsort(procs, nprocs, sizeof *procs, by_pid);
    while (!rc && ntl_profile_stack_next(p, &pos, &s) > 0) {
        fold(p, &s, procs, nprocs, line);
        if (n == cap) {
            struct folded *nv = realloc(v, (cap = cap ? cap * 2 : 1024) * sizeof *v);
            if (!nv) {
                rc = cli_failf(cmd, "out of memory");
                break;
            }
            v = nv;
        }
        if (!(v[n].line = strdup(line)))
            rc = cli_failf(cmd, "out of memory");
        else
            v[n++].weight = s.weight;
    }
    if (n)
        qsort(v, n, sizeof *v, by_line);
    for (size_t i = 0; i < n; i++) {
        uint64_t w = v[i].weight;
        while (i + 1 < n && !strcmp(v[i].line, v[i + 1].line))
            w += v[++i].weight;
        if (!rc)
            printf("%s %" PRIu64 "\n", v[i].line, w);
    }
    for (size_t i = 0; i < n; i++)
        free(v[i].line);
    free(v);
    free(procs);
    free(line);
    if (!rc && (fflush(stdout) != 0 || ferror(stdout)))
        rc = cli_failf(cmd, "write error");
    return rc;
}
