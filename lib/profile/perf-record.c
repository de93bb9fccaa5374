/* perf_event ring-buffer records, and what they add to a profile. */
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "ntlens/profile_perf.h"

#define HEADER 8u
#define CONTEXT_MAX ((uint64_t)-4095) /* PERF_CONTEXT_*: markers, not addresses */
#define PROT_EXEC_BIT 4u

static uint64_t get(const uint8_t *b, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i--;)
        v = v << 8 | b[i];
    return v;
}

static int bad(struct ntl_error *err, uint64_t at, uint32_t type, const char *why)
{
    return ntl_error_set(err, NTL_ERR_FORMAT, "perf record", at, "record type %u: %s", type, why);
}

/* A NUL-terminated name at body[from..n). */
static int name_at(const uint8_t *body, size_t n, size_t from, struct ntl_profile_perf_record *r,
                   uint64_t at, struct ntl_error *err)
{
    if (from >= n || !memchr(body + from, 0, n - from))
        return bad(err, at, r->type, "name without its NUL");
    r->name = (const char *)body + from;
    return 0;
}

/* The fields of r's type from its body of n bytes. */
static int fields(const uint8_t *b, size_t n, struct ntl_profile_perf_record *r, uint64_t at,
                  struct ntl_error *err)
{
    static const size_t need[] = {[NTL_PROFILE_PERF_MMAP] = 33, [NTL_PROFILE_PERF_LOST] = 16,
                                  [NTL_PROFILE_PERF_COMM] = 9, [NTL_PROFILE_PERF_EXIT] = 24,
                                  [NTL_PROFILE_PERF_THROTTLE] = 24,
                                  [NTL_PROFILE_PERF_UNTHROTTLE] = 24,
                                  [NTL_PROFILE_PERF_FORK] = 24, [NTL_PROFILE_PERF_SAMPLE] = 32,
                                  [NTL_PROFILE_PERF_MMAP2] = 65};
    if (r->type < sizeof need / sizeof *need && n < need[r->type])
        return bad(err, at, r->type, "shorter than its fields");
    switch (r->type) {
    case NTL_PROFILE_PERF_SAMPLE:
        r->ip = get(b, 8);
        r->pid = (uint32_t)get(b + 8, 4);
        r->tid = (uint32_t)get(b + 12, 4);
        r->time = get(b + 16, 8);
        r->nr = get(b + 24, 8);
        if (r->nr > (n - 32) / 8)
            return bad(err, at, r->type, "callchain longer than the record");
        r->callchain = b + 32;
        return 0;
    case NTL_PROFILE_PERF_MMAP:
    case NTL_PROFILE_PERF_MMAP2:
        r->pid = (uint32_t)get(b, 4);
        r->tid = (uint32_t)get(b + 4, 4);
        r->addr = get(b + 8, 8);
        r->len = get(b + 16, 8);
        r->pgoff = get(b + 24, 8);
        r->prot = r->type == NTL_PROFILE_PERF_MMAP ? PROT_EXEC_BIT : (uint32_t)get(b + 56, 4);
        return name_at(b, n, r->type == NTL_PROFILE_PERF_MMAP ? 32 : 64, r, at, err);
    case NTL_PROFILE_PERF_COMM:
        r->pid = (uint32_t)get(b, 4);
        r->tid = (uint32_t)get(b + 4, 4);
        return name_at(b, n, 8, r, at, err);
    case NTL_PROFILE_PERF_LOST:
        r->lost = get(b + 8, 8);
        return 0;
    case NTL_PROFILE_PERF_THROTTLE:
    case NTL_PROFILE_PERF_UNTHROTTLE:
        r->time = get(b, 8);
        return 0;
    case NTL_PROFILE_PERF_EXIT:
    case NTL_PROFILE_PERF_FORK:
        r->pid = (uint32_t)get(b, 4);
        r->tid = (uint32_t)get(b + 8, 4);
        r->time = get(b + 16, 8);
        return 0;
    default:
        return 0;  /* a type we did not ask for: skipped whole */
    }
}

int ntl_profile_perf_next(const void *data, size_t size, size_t *pos, uint64_t base,
                          struct ntl_profile_perf_record *r, struct ntl_error *err)
{
    const uint8_t *b = (const uint8_t *)data + *pos;
    size_t left = size - *pos;
    uint64_t at = base + *pos;
    if (*pos >= size)
        return 0;
    if (left < HEADER)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "perf record", at,
                             "%zu bytes left, a header needs 8", left);
    memset(r, 0, sizeof *r);
    r->type = (uint32_t)get(b, 4);
    r->misc = (uint16_t)get(b + 4, 2);
    r->size = (uint16_t)get(b + 6, 2);
    if (r->size < HEADER || r->size % 8)
        return bad(err, at, r->type, "size not a multiple of 8 from 8");
    if (r->size > left)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "perf record", at,
                             "record of %u bytes, %zu left", r->size, left);
    int rc = fields(b + HEADER, r->size - HEADER, r, at, err);
    if (rc < 0)
        return rc;
    *pos += r->size;
    return 1;
}

static int sample(struct ntl_profile *p, const struct ntl_profile_perf_record *r,
                  struct ntl_profile_perf_stats *st, struct ntl_error *err)
{
    uint64_t stack[NTL_PROFILE_MAX_DEPTH];
    size_t depth = 0;
    bool first = true;
    for (uint64_t i = 0; i < r->nr && depth < NTL_PROFILE_MAX_DEPTH; i++) {
        uint64_t a = get(r->callchain + 8 * i, 8);
        if (a >= CONTEXT_MAX)
            continue;
        /* The chain starts with the sampled ip itself. */
        if (first && a == r->ip) {
            first = false;
            continue;
        }
        first = false;
        stack[depth++] = a;
    }
    struct ntl_profile_sample s = {.ip = r->ip, .pid = r->pid, .tid = r->tid, .stack = stack,
                                   .depth = depth};
    /* perf names every callchain entry at its address (add_callchain_ip
     * looks up ip itself): the outermost entry a frame-pointer walk reads
     * is often no return address at all (_start's address left on the
     * stack), and the kernel's user-mode ip after a syscall is none. */
    p->info.frames_as_is = true;
    int rc = ntl_profile_add_sample(p, &s, err);
    if (rc < 0)
        return rc;
    if (!st->samples++)
        st->first_time = r->time;
    st->last_time = r->time;
    return 0;
}

/* The bucket shift for a range of SIZE bytes: the one asked for, or the
 * smallest larger one that keeps its buckets within 2^32. Any process may map
 * a huge executable region (a JIT's reserve, a runtime's 64 GiB code space);
 * a system-wide profile widens that range's buckets rather than fail. */
static unsigned fitting_shift(uint64_t size, unsigned shift)
{
    while (shift < NTL_PROFILE_MAX_BUCKET_SHIFT &&
           ntl_profile_bucket_count(size, shift) > UINT32_MAX)
        shift++;
    return shift;
}

/* The range an executable mapping of a file adds: from where the file's
 * offset 0 lies to the mapping's end, so symbols' file offsets apply. */
static int mapping(struct ntl_profile *p, uint32_t pid, uint64_t addr, uint64_t end,
                   uint64_t pgoff, const char *path, unsigned shift, struct ntl_error *err)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash && slash[1] ? slash + 1 : path;
    if (pgoff > addr || end <= addr)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "perf mapping", NTL_NO_OFFSET,
                             "mapping of %s at 0x%llx with offset 0x%llx has no base", path,
                             (unsigned long long)addr, (unsigned long long)pgoff);
    uint64_t base = addr - pgoff, size = end - base;
    int rc = ntl_profile_add_range(p, pid, name, path, base, size, fitting_shift(size, shift),
                                   err);
    return rc < 0 ? rc : 0;
}

int ntl_profile_perf_feed(struct ntl_profile *p, const struct ntl_profile_perf_record *r,
                          unsigned bucket_shift, struct ntl_profile_perf_stats *st,
                          struct ntl_error *err)
{
    switch (r->type) {
    case NTL_PROFILE_PERF_SAMPLE:
        return sample(p, r, st, err);
    case NTL_PROFILE_PERF_MMAP:
    case NTL_PROFILE_PERF_MMAP2:
        if (!(r->prot & PROT_EXEC_BIT) || r->addr + r->len < r->addr)
            return 0;
        return mapping(p, r->pid == UINT32_MAX ? NTL_PROFILE_KERNEL_PID : r->pid, r->addr,
                       r->addr + r->len, r->pgoff, r->name, bucket_shift, err);
    case NTL_PROFILE_PERF_COMM:
        return r->pid == r->tid ? ntl_profile_set_process(p, r->pid, r->name, err) : 0;
    case NTL_PROFILE_PERF_LOST:
        st->lost += r->lost;
        return 0;
    case NTL_PROFILE_PERF_THROTTLE:
        st->throttled++;
        return 0;
    case NTL_PROFILE_PERF_UNTHROTTLE:
        st->unthrottled++;
        return 0;
    default:
        return 0;
    }
}

/* "start-end perms offset dev inode [path]" */
static int maps_line(struct ntl_profile *p, uint32_t pid, const char *line, size_t n,
                     uint64_t at, unsigned shift, struct ntl_error *err)
{
    char buf[4200], perms[8], path[4096] = "";
    unsigned long long start, end, off;
    if (n >= sizeof buf)
        return ntl_error_set(err, NTL_ERR_FORMAT, "/proc/PID/maps", at, "line too long");
    memcpy(buf, line, n);
    buf[n] = 0;
    if (sscanf(buf, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &start, &end, perms, &off, path) < 4)
        return ntl_error_set(err, NTL_ERR_FORMAT, "/proc/PID/maps", at, "not a mapping line");
    if (!strchr(perms, 'x') || !path[0])
        return 0;
    char *name = path;
    while (*name == ' ')
        name++;
    int rc = mapping(p, pid, start, end, *name == '[' ? 0 : off, name, shift, err);
    if (rc < 0)
        return rc;
    return 1;
}

int ntl_profile_maps_parse(struct ntl_profile *p, uint32_t pid, const char *text, size_t len,
                           unsigned bucket_shift, struct ntl_error *err)
{
    size_t pos = 0;
    int added = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        if (n) {
            int rc = maps_line(p, pid, text + pos, n, pos, bucket_shift, err);
            if (rc < 0)
                return rc;
            added += rc;
        }
        pos += n + 1;
    }
    return added;
}
