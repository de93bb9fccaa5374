/* `ntlens profile --format speedscope`: speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json), one "sampled"
 * profile per process, most hits first, its samples in the order they were
 * taken (speedscope's time-order view) with their stacks root first. Frames
 * are shared: a function (or module+0xOFFSET) with its module as "file". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ntlens/profile_report.h"
#include "out.h"
#include "profile-cli.h"

#define NAME_MAX_BYTES 512

/* Frames by name and range, and the frame of each address already named
 * (a profile's addresses repeat: symbolizing each once is what costs). */
struct frames {
    struct frame { char *name; long range; } *v;  /* range: its module's; -1: none */
    size_t n, cap;
    uint32_t *by_name;        /* open addressing: frame index + 1, 0 empty */
    size_t name_slots;
    struct addr_slot { uint64_t addr; uint32_t pid, frame; } *by_addr;  /* frame + 1 */
    size_t addr_slots, naddr;
};

/* The frame indices of every sample, root first, and each sample's span. */
struct stacks {
    uint32_t *frame;
    size_t n, cap;
    struct span { size_t first, depth; uint32_t pid; uint64_t weight; } *sample;
    size_t nsamples, scap;
};

static uint64_t hash_bytes(const char *s, uint64_t h)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static uint64_t hash_addr(uint32_t pid, uint64_t addr)
{
    uint64_t h = (addr ^ ((uint64_t)pid << 32 | pid)) * 0x9e3779b97f4a7c15ull;
    return h ^ h >> 29;
}

static int grow(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 1024;
    void *nv = realloc(*v, c * elem);
    if (!nv)
        return -1;
    *v = nv;
    *cap = c;
    return 0;
}

/* Rebuilds a table at twice the size when it is half full. */
static int rehash_names(struct frames *f)
{
    size_t slots = f->name_slots ? f->name_slots * 2 : 4096;
    uint32_t *t = calloc(slots, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < f->n; i++) {
        size_t k = hash_bytes(f->v[i].name, (uint64_t)f->v[i].range * 31 + 0xcbf29ce484222325ull);
        while (t[k & (slots - 1)])
            k++;
        t[k & (slots - 1)] = (uint32_t)i + 1;
    }
    free(f->by_name);
    f->by_name = t;
    f->name_slots = slots;
    return 0;
}

static int rehash_addrs(struct frames *f)
{
    size_t slots = f->addr_slots ? f->addr_slots * 2 : 4096;
    struct addr_slot *t = calloc(slots, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < f->addr_slots; i++) {
        const struct addr_slot *e = &f->by_addr[i];
        size_t k = e->frame ? hash_addr(e->pid, e->addr) : 0;
        while (e->frame && t[k & (slots - 1)].frame)
            k++;
        if (e->frame)
            t[k & (slots - 1)] = *e;
    }
    free(f->by_addr);
    f->by_addr = t;
    f->addr_slots = slots;
    return 0;
}

/* The frame named name in range, added when new; -1 when out of memory. */
static long frame_of_name(struct frames *f, const char *name, long range)
{
    if (2 * (f->n + 1) > f->name_slots && rehash_names(f) < 0)
        return -1;
    size_t k = hash_bytes(name, (uint64_t)range * 31 + 0xcbf29ce484222325ull);
    for (;; k++) {
        uint32_t e = f->by_name[k & (f->name_slots - 1)];
        if (!e)
            break;
        if (f->v[e - 1].range == range && !strcmp(f->v[e - 1].name, name))
            return e - 1;
    }
    if (f->n >= UINT32_MAX - 1 || grow((void **)&f->v, &f->cap, f->n + 1, sizeof *f->v) ||
        !(f->v[f->n].name = strdup(name)))
        return -1;
    f->v[f->n].range = range;
    f->by_name[k & (f->name_slots - 1)] = (uint32_t)f->n + 1;
    return (long)f->n++;
}

/* The frame of addr as seen from pid; -1 when out of memory. */
static long frame_of_addr(struct ntl_profile *p, struct frames *f, uint32_t pid, uint64_t addr)
{
    if (2 * (f->naddr + 1) > f->addr_slots && rehash_addrs(f) < 0)
        return -1;
    size_t k = hash_addr(pid, addr);
    struct addr_slot *e;
    for (;; k++) {
        e = &f->by_addr[k & (f->addr_slots - 1)];
        if (!e->frame)
            break;
        if (e->pid == pid && e->addr == addr)
            return e->frame - 1;
    }
    char name[NAME_MAX_BYTES];
    ntl_profile_symbolize(p, pid, addr, name, sizeof name);
    long fr = frame_of_name(f, name, ntl_profile_range_of(p, pid, addr));
    if (fr >= 0) {
        *e = (struct addr_slot){.addr = addr, .pid = pid, .frame = (uint32_t)fr + 1};
        f->naddr++;
    }
    return fr;
}

/* Appends the frames of s, root first: the callers (named as
 * ntl_profile_frame_address says), then the sampled instruction. */
static int add_sample(struct ntl_profile *p, struct frames *f, struct stacks *st,
                      const struct ntl_profile_sample *s)
{
    if (grow((void **)&st->frame, &st->cap, st->n + s->depth + 1, sizeof *st->frame) ||
        grow((void **)&st->sample, &st->scap, st->nsamples + 1, sizeof *st->sample))
        return -1;
    struct span *sp = &st->sample[st->nsamples++];
    *sp = (struct span){.first = st->n, .depth = s->depth + 1, .pid = s->pid,
                        .weight = s->weight ? s->weight : 1};
    for (size_t i = s->depth + 1; i-- > 0;) {
        long fr = frame_of_addr(p, f, s->pid, i ? ntl_profile_frame_address(p, s->stack[i - 1]) : s->ip);
        if (fr < 0)
            return -1;
        st->frame[st->n++] = (uint32_t)fr;
    }
    return 0;
}

static void write_frames(struct ntl_profile *p, const struct frames *f)
{
    fputs("\"shared\":{\"frames\":[", stdout);
    for (size_t i = 0; i < f->n; i++) {
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", stdout);
        out_json_string(stdout, f->v[i].name);
        if (f->v[i].range >= 0) {
            const struct ntl_profile_range *r = ntl_profile_range(p, (size_t)f->v[i].range);
            fputs(",\"file\":", stdout);
            out_json_string(stdout, r->path[0] ? r->path : r->name);
        }
        putchar('}');
    }
    fputs("]},\n", stdout);
}

static void write_profile_name(const struct ntl_profile_process_row *pr)
{
    char name[NAME_MAX_BYTES];
    if (pr->pid == NTL_PROFILE_NO_PID)
        snprintf(name, sizeof name, "unknown threads");
    else if (pr->name)
        snprintf(name, sizeof name, "%s (%" PRIu32 ")", pr->name, pr->pid);
    else
        snprintf(name, sizeof name, "process %" PRIu32, pr->pid);
    out_json_string(stdout, name);
}

/* One sampled profile: the samples idx[0..n) of pr's process. */
static void write_profile(const struct stacks *st, const struct ntl_profile_process_row *pr,
                          const size_t *idx, size_t n, bool first)
{
    uint64_t total = 0;
    fputs(first ? "\n{\"type\":\"sampled\",\"name\":" : ",\n{\"type\":\"sampled\",\"name\":",
          stdout);
    write_profile_name(pr);
    fputs(",\"unit\":\"none\",\"startValue\":0,\"samples\":[", stdout);
    for (size_t i = 0; i < n; i++) {
        const struct span *sp = &st->sample[idx[i]];
        fputs(i ? ",\n[" : "\n[", stdout);
        for (size_t k = 0; k < sp->depth; k++)
            printf(k ? ",%" PRIu32 : "%" PRIu32, st->frame[sp->first + k]);
        putchar(']');
    }
    fputs("],\"weights\":[", stdout);
    for (size_t i = 0; i < n; i++) {
        printf(i ? ",%" PRIu64 : "%" PRIu64, st->sample[idx[i]].weight);
        total += st->sample[idx[i]].weight;
    }
    printf("],\"endValue\":%" PRIu64 "}", total);
}

struct rank { uint32_t pid; size_t rank; };

static int by_pid(const void *a, const void *b)
{
    uint32_t x = ((const struct rank *)a)->pid, y = ((const struct rank *)b)->pid;
    return x < y ? -1 : x > y;
}

/* The samples grouped by process in procs' order (a counting sort on each
 * sample's rank), each group in time order: first[r] is group r's start.
 * NULL when out of memory. */
static size_t *group_samples(const struct stacks *st, const struct ntl_profile_process_row *procs,
                             size_t nprocs, size_t *first)
{
    struct rank *rk = malloc((nprocs ? nprocs : 1) * sizeof *rk);
    size_t *rank = malloc((st->nsamples ? st->nsamples : 1) * sizeof *rank);
    size_t *order = malloc((st->nsamples ? st->nsamples : 1) * sizeof *order);
    if (rk && rank && order) {
        for (size_t r = 0; r < nprocs; r++)
            rk[r] = (struct rank){.pid = procs[r].pid, .rank = r};
        qsort(rk, nprocs, sizeof *rk, by_pid);
        memset(first, 0, (nprocs + 1) * sizeof *first);
        for (size_t i = 0; i < st->nsamples; i++) {
            struct rank key = {.pid = st->sample[i].pid};
            const struct rank *e = bsearch(&key, rk, nprocs, sizeof *rk, by_pid);
            /* Every sample counts for its process: nprocs is a safe guard. */
            rank[i] = e ? e->rank : nprocs;
            first[rank[i]]++;
        }
        for (size_t r = 0, at = 0; r <= nprocs; r++) {
            size_t c = first[r];
            first[r] = at;
            at += c;
        }
        for (size_t i = 0; i < st->nsamples; i++)
            order[first[rank[i]]++] = i;
        for (size_t r = nprocs + 1; r-- > 1;)
            first[r] = first[r - 1];
        first[0] = 0;
    }
    free(rk);
    free(rank);
    if (!(rk && rank)) {
        free(order);
        return NULL;
    }
    return order;
}

static int write_file(struct ntl_profile *p, const struct frames *f, const struct stacks *st,
                      const struct ntl_profile_process_row *procs, size_t nprocs)
{
    size_t *first = malloc((nprocs + 2) * sizeof *first);
    size_t *order = first ? group_samples(st, procs, nprocs, first) : NULL;
    if (!order) {
        free(first);
        return -1;
    }
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
          "\"exporter\":\"ntlens profile\",\"name\":\"ntlens profile\",\"activeProfileIndex\":0,\n",
          stdout);
    write_frames(p, f);
    fputs("\"profiles\":[", stdout);
    for (size_t r = 0; r < nprocs; r++)
        write_profile(st, &procs[r], order + first[r], first[r + 1] - first[r], r == 0);
    fputs("]}\n", stdout);
    free(order);
    free(first);
    return 0;
}

static void frames_free(struct frames *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->v[i].name);
    free(f->v);
    free(f->by_name);
    free(f->by_addr);
}

int profile_speedscope(const char *cmd, struct ntl_profile *p)
{
    struct ntl_profile_process_row *procs;
    struct ntl_profile_sample s;
    struct ntl_error err = {0};
    struct frames f = {0};
    struct stacks st = {0};
    size_t nprocs, pos = 0;
    int rc = 0;
    if (ntl_profile_processes(p, &procs, &nprocs, &err) < 0)
        return cli_failf(cmd, "out of memory");
    while (!rc && ntl_profile_stack_next(p, &pos, &s) > 0)
        if (add_sample(p, &f, &st, &s) < 0)
            rc = cli_failf(cmd, "out of memory");
    if (!rc && write_file(p, &f, &st, procs, nprocs) < 0)
        rc = cli_failf(cmd, "out of memory");
    frames_free(&f);
    free(st.frame);
    free(st.sample);
    free(procs);
    if (!rc && (fflush(stdout) != 0 || ferror(stdout)))
        rc = cli_failf(cmd, "write error");
    return rc;
}
