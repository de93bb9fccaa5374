/* /proc readers for the built-in provider. Each file is read whole with one
 * read() into a stack buffer (the kernel fills /proc files atomically per
 * read), parsed in place, and anything that is gone by the time we look
 * (ENOENT, ESRCH) silently drops the process or thread it belonged to. */
#include "procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ntlens/buf.h"

#define HNS_PER_SEC 10000000ull

struct clock_info {
    uint64_t hz;
};

/* Reads a small /proc file (relative to the directory dir, or AT_FDCWD) into
 * buf (NUL-terminated). -1 when it cannot be read (errno set), else the
 * length. Opening relative to an open /proc/PID saves the kernel a path
 * walk per file, which is most of the cost of a listing. */
static ssize_t read_small_at(int dir, const char *path, char *buf, size_t size)
{
    int fd = openat(dir, path, O_RDONLY | O_CLOEXEC);
    ssize_t n, total = 0;

    if (fd < 0)
        return -1;
    while ((size_t)total < size - 1) {
        n = read(fd, buf + total, size - 1 - (size_t)total);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (n == 0)
            break;
        total += n;
    }
    close(fd);
    buf[total] = '\0';
    return total;
}

/* A /proc file that may be large (/proc/interrupts on big machines). */
static int read_big(const char *path, struct ntl_buf *b)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    b->len = 0;
    if (fd < 0)
        return -1;
    for (;;) {
        ssize_t n;
        if (ntl_buf_reserve(b, 65536) < 0) {
            close(fd);
            errno = ENOMEM;
            return -1;
        }
        n = read(fd, b->data + b->len, b->cap - b->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        b->len += (size_t)n;
    }
    close(fd);
    b->data[b->len] = '\0';
    return 0;
}

static uint64_t ticks_to_100ns(uint64_t ticks, uint64_t hz)
{
    return ticks / hz * HNS_PER_SEC + ticks % hz * HNS_PER_SEC / hz;
}

/* Windows' priority scale from Linux scheduling: real-time policies map to
 * 16-31, others to the priority class their nice value corresponds to. */
static uint32_t windows_priority(long nice, unsigned long rt_priority, unsigned long policy)
{
    if ((policy == 1 || policy == 2) && rt_priority > 0) /* SCHED_FIFO, SCHED_RR */
        return 16 + (uint32_t)((rt_priority > 99 ? 99 : rt_priority) * 15 / 99);
    if (policy == 5) /* SCHED_IDLE */
        return 1;
    if (nice >= 10) return 4;   /* IDLE_PRIORITY_CLASS */
    if (nice > 0) return 6;     /* BELOW_NORMAL */
    if (nice == 0) return 8;    /* NORMAL */
    if (nice > -10) return 10;  /* ABOVE_NORMAL */
    return 13;                  /* HIGH */
}

/* The fields of /proc/<pid>/stat we use, numbered as in proc(5). */
struct stat_fields {
    char comm[64];
    char state;
    uint64_t ppid, minflt, majflt, utime, stime, num_threads, starttime, vsize, rss,
        rt_priority, policy;
    long nice;
};

static bool parse_stat(char *buf, struct stat_fields *f)
{
    char *open = strchr(buf, '('), *close = strrchr(buf, ')'), *p;
    size_t n;

    if (!open || !close || close < open || close[1] != ' ')
        return false;
    n = (size_t)(close - open - 1);
    if (n >= sizeof f->comm)
        n = sizeof f->comm - 1;
    memcpy(f->comm, open + 1, n);
    f->comm[n] = '\0';
    p = close + 2;
    f->state = *p;
    if (!*p)
        return false;
    p++;
    memset(&f->ppid, 0, sizeof *f - offsetof(struct stat_fields, ppid));
    for (int field = 4; field <= 41 && *p; field++) {
        char *end;
        unsigned long long v;
        long long sv;
        while (*p == ' ')
            p++;
        if (field == 19) {
            sv = strtoll(p, &end, 10);
            f->nice = (long)sv;
            v = 0;
        } else {
            v = strtoull(p, &end, 10);
        }
        if (end == p)
            return field > 24; /* older kernels end before rt_priority */
        p = end;
        switch (field) {
        case 4: f->ppid = v; break;
        case 10: f->minflt = v; break;
        case 12: f->majflt = v; break;
        case 14: f->utime = v; break;
        case 15: f->stime = v; break;
        case 20: f->num_threads = v; break;
        case 22: f->starttime = v; break;
        case 23: f->vsize = v; break;
        case 24: f->rss = v; break;
        case 40: f->rt_priority = v; break;
        case 41: f->policy = v; break;
        }
    }
    return true;
}

/* "Key:   1234 kB" lines of /proc/<pid>/status and /proc/meminfo. */
static uint64_t kb_field(const char *text, const char *key)
{
    const char *p = text;
    size_t n = strlen(key);
    while ((p = strstr(p, key)) != NULL) {
        if ((p == text || p[-1] == '\n') && p[n] == ':')
            return strtoull(p + n + 1, NULL, 10) * 1024;
        p += n;
    }
    return 0;
}

static uint32_t count_fds(int pdir)
{
    int fd = openat(pdir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    struct dirent *e;
    uint32_t n = 0;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* comm is cut at 15 bytes; argv[0] often has the whole name. */
static void full_name(int pdir, char *name, size_t size)
{
    char buf[512], *base;

    if (strlen(name) < 15 || read_small_at(pdir, "cmdline", buf, sizeof buf) <= 0)
        return;
    base = strrchr(buf, '/');
    base = base ? base + 1 : buf;
    if (!strncmp(base, name, 15) && strlen(base) < size) {
        memcpy(name, base, strlen(base) + 1);
    }
}

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    size_t c = *cap ? *cap : 64;
    void *q;
    if (need <= *cap)
        return p;
    while (c < need)
        c *= 2;
    q = realloc(p, c * elem);
    if (!q)
        return NULL;
    *cap = c;
    return q;
}

/* Thread State / Thread Wait Reason from a Linux state letter. */
static void windows_state(char st, uint32_t *state, uint32_t *reason)
{
    *reason = 0;
    switch (st) {
    case 'R': *state = 2; break;                   /* Running */
    case 'S': *state = 5; *reason = 6; break;      /* Wait, UserRequest */
    case 'D': *state = 5; *reason = 0; break;      /* Wait, Executive */
    case 'T': case 't': *state = 5; *reason = 5; break; /* Wait, Suspended */
    case 'Z': case 'X': case 'x': *state = 4; break;    /* Terminated */
    case 'I': *state = 5; *reason = 0; break;      /* idle kernel thread */
    default: *state = 7; break;                    /* Unknown */
    }
}

static int read_threads(struct lp_snapshot *s, struct lp_proc *p, int pdir, uint64_t hz)
{
    char path[64], buf[1024];
    int tfd = openat(pdir, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = tfd >= 0 ? fdopendir(tfd) : NULL;
    struct dirent *e;

    p->first_thread = s->nthread;
    p->nthread = 0;
    if (!d) { /* gone */
        if (tfd >= 0)
            close(tfd);
        return 0;
    }
    while ((e = readdir(d)) != NULL) {
        struct stat_fields f;
        struct lp_thread *t;
        char *end;
        unsigned long tid = strtoul(e->d_name, &end, 10);
        void *grown;

        if (*end || e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "%lu/stat", tid);
        if (read_small_at(dirfd(d), path, buf, sizeof buf) <= 0 || !parse_stat(buf, &f))
            continue;
        if (!(grown = grow(s->thread, &s->capthread, s->nthread + 1, sizeof *s->thread))) {
            closedir(d);
            return -1;
        }
        s->thread = grown;
        t = &s->thread[s->nthread];
        memset(t, 0, sizeof *t);
        t->tid = (uint32_t)tid;
        t->pid = p->pid;
        t->pri_base = windows_priority(f.nice, 0, f.policy == 5 ? 5 : 0);
        t->pri_current = windows_priority(f.nice, f.rt_priority, f.policy);
        windows_state(f.state, &t->state, &t->wait_reason);
        t->user_100ns = ticks_to_100ns(f.utime, hz);
        t->kernel_100ns = ticks_to_100ns(f.stime, hz);
        t->start_100ns = ticks_to_100ns(f.starttime, hz);
        /* schedstat's third field counts the times the thread was switched
         * onto a CPU, which is what Windows counts; status is the fallback. */
        snprintf(path, sizeof path, "%lu/schedstat", tid);
        if (read_small_at(dirfd(d), path, buf, sizeof buf) > 0) {
            char *q = buf;
            strtoull(q, &q, 10);
            strtoull(q, &q, 10);
            t->cswitch = strtoull(q, NULL, 10);
        } else {
            snprintf(path, sizeof path, "%lu/status", tid);
            if (read_small_at(dirfd(d), path, buf, sizeof buf) > 0) {
                char *v = strstr(buf, "voluntary_ctxt_switches:");
                char *nv = strstr(buf, "nonvoluntary_ctxt_switches:");
                if (v)
                    t->cswitch += strtoull(v + 24, NULL, 10);
                if (nv)
                    t->cswitch += strtoull(nv + 27, NULL, 10);
            }
        }
        s->nthread++;
        p->nthread++;
    }
    closedir(d);
    return 0;
}

/* 0 read, 1 gone (skip), -1 out of memory. */
static int read_process(struct lp_snapshot *s, uint32_t pid, uint64_t hz, struct lp_proc *p)
{
    char path[32], buf[4096];
    struct stat_fields f;
    int pdir, rc = 0;

    memset(p, 0, sizeof *p);
    snprintf(path, sizeof path, "/proc/%u", pid);
    if ((pdir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return 1;
    if (read_small_at(pdir, "stat", buf, sizeof buf) <= 0 || !parse_stat(buf, &f)) {
        close(pdir);
        return 1;
    }
    p->pid = pid;
    p->ppid = (uint32_t)f.ppid;
    memcpy(p->name, f.comm, sizeof p->name);
    full_name(pdir, p->name, sizeof p->name);
    p->pri_base = windows_priority(f.nice, f.rt_priority, f.policy);
    p->threads = (uint32_t)f.num_threads;
    p->user_100ns = ticks_to_100ns(f.utime, hz);
    p->kernel_100ns = ticks_to_100ns(f.stime, hz);
    p->start_100ns = ticks_to_100ns(f.starttime, hz);
    p->vsize = f.vsize;
    p->faults = f.minflt + f.majflt;
    if (s->want_details && read_small_at(pdir, "status", buf, sizeof buf) > 0) {
        p->vpeak = kb_field(buf, "VmPeak");
        p->hwm = kb_field(buf, "VmHWM");
        p->rss = kb_field(buf, "VmRSS");
        p->priv = kb_field(buf, "RssAnon") + kb_field(buf, "VmSwap");
        p->pte = kb_field(buf, "VmPTE");
    } else {
        p->rss = f.rss * (uint64_t)sysconf(_SC_PAGESIZE);
    }
    if (s->want_details)
        p->handles = count_fds(pdir);
    if (s->want_threads && read_threads(s, p, pdir, hz) < 0)
        rc = -1;
    close(pdir);
    return rc;
}

static int read_processes(struct lp_snapshot *s, uint64_t hz, struct ntl_error *err)
{
    DIR *d = opendir("/proc");
    struct dirent *e;

    if (!d)
        return ntl_error_set(err, NTL_ERR_SYSTEM, NULL, NTL_NO_OFFSET, "cannot open /proc: %s",
                             strerror(errno));
    while ((e = readdir(d)) != NULL) {
        char *end;
        unsigned long pid = strtoul(e->d_name, &end, 10);
        void *grown;
        int rc;

        if (*end || e->d_name[0] < '1' || e->d_name[0] > '9' || pid > UINT32_MAX)
            continue;
        if (!(grown = grow(s->proc, &s->capproc, s->nproc + 1, sizeof *s->proc))) {
            closedir(d);
            return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
        }
        s->proc = grown;
        rc = read_process(s, (uint32_t)pid, hz, &s->proc[s->nproc]);
        if (rc < 0) {
            closedir(d);
            return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
        }
        if (rc == 0)
            s->nproc++;
    }
    closedir(d);
    return 0;
}

/* Per-CPU interrupt counts: the header names the CPU columns. */
static void read_interrupts(struct lp_snapshot *s)
{
    struct ntl_buf b;
    char *line, *next;
    int col_cpu[4096];
    size_t ncols = 0;

    ntl_buf_init(&b, 64u << 20);
    if (read_big("/proc/interrupts", &b) < 0 || !b.len) {
        ntl_buf_free(&b);
        return;
    }
    line = (char *)b.data;
    next = strchr(line, '\n');
    if (next)
        *next++ = '\0';
    for (char *p = line; (p = strstr(p, "CPU")) != NULL && ncols < 4096;) {
        p += 3;
        col_cpu[ncols++] = atoi(p);
    }
    for (line = next; line && *line; line = next) {
        char *colon, *p, *end;
        uint64_t v[4096];
        size_t k = 0;

        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (!(colon = strchr(line, ':')))
            continue;
        p = colon + 1;
        for (; k < ncols; k++) {
            v[k] = strtoull(p, &end, 10);
            if (end == p)
                break;
            p = end;
        }
        if (k < ncols) /* ERR:, MIS: are system-wide, not per CPU */
            continue;
        for (k = 0; k < ncols; k++)
            if (col_cpu[k] >= 0 && (size_t)col_cpu[k] < s->ncpu)
                s->cpu[col_cpu[k]].interrupts += v[k];
    }
    ntl_buf_free(&b);
}

static int read_cpus(struct lp_snapshot *s, uint64_t hz, struct ntl_error *err)
{
    struct ntl_buf b;
    char *line, *next;

    ntl_buf_init(&b, 64u << 20);
    if (read_big("/proc/stat", &b) < 0 || !b.len) {
        ntl_buf_free(&b);
        return ntl_error_set(err, NTL_ERR_SYSTEM, NULL, NTL_NO_OFFSET, "cannot read /proc/stat: %s",
                             strerror(errno));
    }
    s->ncpu = 0;
    for (line = (char *)b.data; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (!strncmp(line, "cpu", 3) && line[3] >= '0' && line[3] <= '9') {
            unsigned long long t[8] = {0};
            char *p = line + 3, *end;
            unsigned long id = strtoul(p, &end, 10);
            void *grown;
            struct lp_cpu *c;

            p = end;
            for (int i = 0; i < 8; i++) {
                t[i] = strtoull(p, &end, 10);
                p = end;
            }
            if (id > 65535)
                continue;
            if (!(grown = grow(s->cpu, &s->capcpu, (size_t)id + 1, sizeof *s->cpu))) {
                ntl_buf_free(&b);
                return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
            }
            s->cpu = grown;
            while (s->ncpu <= id)
                memset(&s->cpu[s->ncpu++], 0, sizeof *s->cpu);
            c = &s->cpu[id];
            c->present = true;
            c->user = ticks_to_100ns(t[0] + t[1], hz); /* user + nice */
            c->system = ticks_to_100ns(t[2], hz);
            c->idle = ticks_to_100ns(t[3], hz);
            c->iowait = ticks_to_100ns(t[4], hz);
            c->irq = ticks_to_100ns(t[5], hz);
            c->softirq = ticks_to_100ns(t[6], hz);
        } else if (!strncmp(line, "ctxt ", 5)) {
            s->ctxt = strtoull(line + 5, NULL, 10);
        } else if (!strncmp(line, "procs_running ", 14)) {
            s->procs_running = (uint32_t)strtoul(line + 14, NULL, 10);
        }
    }
    ntl_buf_free(&b);
    read_interrupts(s);
    memset(&s->cpu_total, 0, sizeof s->cpu_total);
    s->nonline = 0;
    for (size_t i = 0; i < s->ncpu; i++) {
        s->nonline += s->cpu[i].present;
        s->cpu_total.user += s->cpu[i].user;
        s->cpu_total.system += s->cpu[i].system;
        s->cpu_total.idle += s->cpu[i].idle;
        s->cpu_total.iowait += s->cpu[i].iowait;
        s->cpu_total.irq += s->cpu[i].irq;
        s->cpu_total.softirq += s->cpu[i].softirq;
        s->cpu_total.interrupts += s->cpu[i].interrupts;
    }
    return 0;
}

static void read_memory(struct lp_snapshot *s)
{
    char buf[8192];
    if (read_small_at(AT_FDCWD, "/proc/meminfo", buf, sizeof buf) > 0) {
        s->mem_available = kb_field(buf, "MemAvailable");
        s->committed = kb_field(buf, "Committed_AS");
        s->commit_limit = kb_field(buf, "CommitLimit");
        s->cached = kb_field(buf, "Cached");
        s->slab_reclaimable = kb_field(buf, "SReclaimable");
        s->slab_unreclaimable = kb_field(buf, "SUnreclaim");
    }
    if (read_small_at(AT_FDCWD, "/proc/vmstat", buf, sizeof buf) > 0) {
        char *p = strstr(buf, "\npgfault ");
        s->page_faults = p ? strtoull(p + 9, NULL, 10) : 0;
    }
}

int lp_snapshot_read(struct lp_snapshot *s, struct ntl_error *err)
{
    struct timespec ts;
    long hz = sysconf(_SC_CLK_TCK);
    int rc;

    if (hz <= 0)
        hz = 100;
    s->nproc = s->nthread = s->ncpu = 0;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    s->uptime_100ns = (uint64_t)ts.tv_sec * HNS_PER_SEC + (uint64_t)ts.tv_nsec / 100;
    if ((s->want_cpus || s->want_system || s->want_procs) && (rc = read_cpus(s, (uint64_t)hz, err)) < 0)
        return rc;
    if (s->want_memory)
        read_memory(s);
    if ((s->want_procs || s->want_system) && (rc = read_processes(s, (uint64_t)hz, err)) < 0)
        return rc;
    return 0;
}

void lp_snapshot_free(struct lp_snapshot *s)
{
    free(s->proc);
    free(s->thread);
    free(s->cpu);
    s->proc = NULL;
    s->thread = NULL;
    s->cpu = NULL;
    s->nproc = s->nthread = s->ncpu = 0;
    s->capproc = s->capthread = s->capcpu = 0;
}
