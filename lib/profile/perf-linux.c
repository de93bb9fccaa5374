/* The perf_event sampler: a cpu-clock event per CPU with a ring buffer. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "model.h"
#include "ntlens/profile_perf.h"

#define RING_PAGES 128u /* data pages per CPU (a power of two): 512 KiB, as perf record's */

struct ring {
    int fd;
    uint8_t *map;   /* the metadata page, then the data pages */
    size_t data_size;
    uint64_t head;  /* data_head as a drain found it */
};

struct ntl_profile_perf {
    struct ring *rings;
    uint32_t n;
    int *extra;     /* events of a process's other threads, writing into rings */
    size_t nextra, cap_extra;
    size_t page;
    uint8_t *copy;  /* one record straightened out of the ring's wrap */
};

static int sys_fail(struct ntl_error *err, const char *what, int e)
{
    int status = e == EACCES || e == EPERM ? NTL_ERR_ACCESS
               : e == ESRCH                ? NTL_ERR_NOT_FOUND
               : e == ENOENT || e == ENOSYS || e == EOPNOTSUPP ? NTL_ERR_UNSUPPORTED
                                                               : NTL_ERR_SYSTEM;
    const char *hint = status == NTL_ERR_ACCESS
                           ? " (see /proc/sys/kernel/perf_event_paranoid, or run as root)"
                           : "";
    return ntl_error_set(err, status, NULL, NTL_NO_OFFSET, "%s: %s%s", what, strerror(e), hint);
}

static int open_event(const struct ntl_profile_perf_config *cfg, int32_t tid, int cpu,
                      struct ntl_error *err)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.freq = 1;
    a.sample_freq = cfg->freq;
    a.sample_type = NTL_PROFILE_PERF_SAMPLE_TYPE;
    a.disabled = 1;
    a.enable_on_exec = cfg->enable_on_exec;
    a.inherit = cfg->pid >= 0;
    a.exclude_kernel = !cfg->kernel;
    a.exclude_hv = 1;
    a.mmap = 1;
    a.mmap2 = 1;
    a.comm = 1;
    a.task = 1;
    /* Wake the reader when half the ring is full, as perf record's kernel
     * default does, not on every sample: a wakeup is work done in the
     * sampled program's time (one per sample doubled perf record's overhead
     * at 4 kHz; one per quarter of a 256 KiB ring still left ours 0.4-1.4
     * points above it). The reader polls every 100 ms anyway, well before a
     * ring fills. */
    a.watermark = 1;
    a.wakeup_watermark = (uint32_t)(RING_PAGES * (size_t)sysconf(_SC_PAGESIZE) / 2);
    int fd = (int)syscall(SYS_perf_event_open, &a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? sys_fail(err, "perf_event_open", errno) : fd;
}

static int open_ring(const struct ntl_profile_perf_config *cfg, int cpu, size_t page,
                     struct ring *r, struct ntl_error *err)
{
    int fd = open_event(cfg, cfg->pid, cpu, err);
    if (fd < 0)
        return fd;
    r->fd = fd;
    r->data_size = RING_PAGES * page;
    r->map = mmap(NULL, page + r->data_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (r->map == MAP_FAILED) {
        int e = errno;
        close(fd);
        r->fd = -1;
        r->map = NULL;
        return sys_fail(err, "mmap of the perf ring buffer", e);
    }
    return 0;
}

/* A running process's other threads (perf_event follows the threads a
 * thread creates, not its siblings), each writing into its CPU's ring. */
static int open_threads(struct ntl_profile_perf *h, const struct ntl_profile_perf_config *cfg,
                        struct ntl_error *err)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)cfg->pid);
    DIR *d = opendir(path);
    struct dirent *e;
    int rc = 0;
    if (!d)
        return 0;
    while (rc >= 0 && (e = readdir(d))) {
        long tid = strtol(e->d_name, NULL, 10);
        if (tid <= 0 || tid == cfg->pid)
            continue;
        for (uint32_t c = 0; c < h->n && rc >= 0; c++) {
            int fd = open_event(cfg, (int32_t)tid, (int)c, err);
            if (fd < 0) {
                rc = fd == NTL_ERR_NOT_FOUND ? 0 : fd;  /* it ended meanwhile */
                break;
            }
            if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, h->rings[c].fd) < 0 ||
                model_reserve((void **)&h->extra, &h->cap_extra, h->nextra, sizeof *h->extra) <
                    0) {
                rc = sys_fail(err, "redirecting a thread's samples", errno);
                close(fd);
                break;
            }
            h->extra[h->nextra++] = fd;
        }
    }
    closedir(d);
    return rc;
}

int ntl_profile_perf_open(const struct ntl_profile_perf_config *cfg, struct ntl_profile_perf **out,
                          struct ntl_error *err)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    struct ntl_profile_perf *h = calloc(1, sizeof *h);
    if (cpus < 1)
        cpus = 1;
    if (!h || !(h->rings = calloc((size_t)cpus, sizeof *h->rings)) ||
        !(h->copy = malloc(1u << 16))) {
        ntl_profile_perf_close(h);
        return ntl_error_set(err, NTL_ERR_NOMEM, "perf", NTL_NO_OFFSET, "out of memory");
    }
    h->page = (size_t)sysconf(_SC_PAGESIZE);
    for (long c = 0; c < cpus; c++) {
        int rc = open_ring(cfg, (int)c, h->page, &h->rings[h->n], err);
        if (rc < 0) {
            ntl_profile_perf_close(h);
            return rc;
        }
        h->n++;
    }
    int rc = cfg->pid > 0 && !cfg->enable_on_exec ? open_threads(h, cfg, err) : 0;
    if (rc < 0) {
        ntl_profile_perf_close(h);
        return rc;
    }
    *out = h;
    return 0;
}

int ntl_profile_perf_enable(struct ntl_profile_perf *h, struct ntl_error *err)
{
    for (uint32_t i = 0; i < h->n; i++)
        if (ioctl(h->rings[i].fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
            return sys_fail(err, "enabling the perf event", errno);
    for (size_t i = 0; i < h->nextra; i++)
        if (ioctl(h->extra[i], PERF_EVENT_IOC_ENABLE, 0) < 0)
            return sys_fail(err, "enabling the perf event", errno);
    return 0;
}

int ntl_profile_perf_wait(struct ntl_profile_perf *h, int ms, struct ntl_error *err)
{
    struct pollfd fds[256];
    uint32_t n = h->n < 256 ? h->n : 256;
    for (uint32_t i = 0; i < n; i++)
        fds[i] = (struct pollfd){.fd = h->rings[i].fd, .events = POLLIN};
    int rc = poll(fds, n, ms);
    if (rc < 0 && errno != EINTR)
        return sys_fail(err, "poll", errno);
    return rc > 0;
}

/* Whether pass 0 (what places samples: mappings, names) or pass 1 (the
 * rest) feeds a record of this type. */
static bool in_pass(uint32_t type, int pass)
{
    bool placing = type == NTL_PROFILE_PERF_MMAP || type == NTL_PROFILE_PERF_MMAP2 ||
                   type == NTL_PROFILE_PERF_COMM;
    return placing == (pass == 0);
}

/* Feeds the records of one pass between tail and head; the kernel writes
 * records whole but a record may wrap the ring's end, so each is
 * straightened. */
static int drain_ring(struct ntl_profile_perf *h, struct ring *r, int pass,
                      struct ntl_profile *p, unsigned shift, struct ntl_profile_perf_stats *st,
                      struct ntl_error *err)
{
    const uint8_t *data = r->map + h->page;
    uint64_t tail = ((struct perf_event_mmap_page *)r->map)->data_tail;
    int rc = 0;
    while (tail < r->head && rc >= 0) {
        size_t at = (size_t)(tail % r->data_size), avail = (size_t)(r->head - tail);
        uint8_t hdr[8];
        for (size_t i = 0; i < 8 && i < avail; i++)
            hdr[i] = data[(at + i) % r->data_size];
        size_t size = avail < 8 ? avail : (size_t)(hdr[6] | hdr[7] << 8);
        if (size > avail || size < 8)
            size = avail;  /* the parser names what is wrong with it */
        for (size_t i = 0; i < size; i++)
            h->copy[i] = data[(at + i) % r->data_size];
        struct ntl_profile_perf_record rec;
        size_t pos = 0;
        if ((rc = ntl_profile_perf_next(h->copy, size, &pos, tail, &rec, err)) > 0)
            rc = in_pass(rec.type, pass) ? ntl_profile_perf_feed(p, &rec, shift, st, err) : 0;
        tail += size;
    }
    return rc < 0 ? rc : 0;
}

/* Two passes over every ring: first the mappings and names, then the
 * samples, so that a sample on one CPU finds a module its process mapped
 * on another, whose record sits in that CPU's ring. */
int ntl_profile_perf_drain(struct ntl_profile_perf *h, struct ntl_profile *p,
                           unsigned bucket_shift, struct ntl_profile_perf_stats *st,
                           struct ntl_error *err)
{
    int rc = 0;
    for (uint32_t i = 0; i < h->n; i++)
        h->rings[i].head = __atomic_load_n(
            &((struct perf_event_mmap_page *)h->rings[i].map)->data_head, __ATOMIC_ACQUIRE);
    for (int pass = 0; pass < 2 && rc >= 0; pass++)
        for (uint32_t i = 0; i < h->n && rc >= 0; i++)
            rc = drain_ring(h, &h->rings[i], pass, p, bucket_shift, st, err);
    for (uint32_t i = 0; i < h->n; i++)
        __atomic_store_n(&((struct perf_event_mmap_page *)h->rings[i].map)->data_tail,
                         h->rings[i].head, __ATOMIC_RELEASE);
    return rc;
}

uint32_t ntl_profile_perf_cpus(const struct ntl_profile_perf *h) { return h->n; }

void ntl_profile_perf_close(struct ntl_profile_perf *h)
{
    if (!h)
        return;
    for (uint32_t i = 0; i < h->n; i++) {
        munmap(h->rings[i].map, h->page + h->rings[i].data_size);
        close(h->rings[i].fd);
    }
    for (size_t i = 0; i < h->nextra; i++)
        close(h->extra[i]);
    free(h->extra);
    free(h->rings);
    free(h->copy);
    free(h);
}
