/* What /proc tells of a thread without stopping it: name, state, wait
 * channel, CPU times, the kernel's own stack; and the thread list. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live-linux.h"

/* Reads a small /proc file whole, NUL-terminated. Its length, or a negative errno. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    size_t n = fread(buf, 1, size - 1, f);
    int e = ferror(f) ? errno : 0;
    fclose(f);
    if (e)
        return -e;
    buf[n] = 0;
    return (ssize_t)n;
}

static const char *state_name(char c)
{
    switch (c) {
    case 'R': return "R (running)";
    case 'S': return "S (sleeping)";
    case 'D': return "D (disk sleep)";
    case 'T': return "T (stopped)";
    case 't': return "t (tracing stop)";
    case 'X': return "X (dead)";
    case 'Z': return "Z (zombie)";
    case 'P': return "P (parked)";
    case 'I': return "I (idle)";
    }
    return "";
}

/* /proc/PID/task/TID/stat: "tid (comm) state ... utime stime ...". comm
 * may hold spaces and parentheses, so the fields start after the last ')'. */
static int read_stat(struct ntl_stack_process *p, struct ntl_stack_thread *t, const char *dir,
                     struct ntl_error *err)
{
    char path[96], buf[1024];
    snprintf(path, sizeof path, "%s/stat", dir);
    ssize_t n = read_small(path, buf, sizeof buf);
    if (n < 0)
        return ntl_stack_thread_note(p, t, err, "the thread exited before it was read");
    char *open = strchr(buf, '('), *close = strrchr(buf, ')');
    if (!open || !close || close < open || close[1] != ' ')
        return 0;
    *close = 0;
    const char *name = ntl_stack_strdup(p, open + 1);
    const char *state = state_name(close[2]);
    /* Fields 4..15 follow the state; utime and stime are fields 14 and 15. */
    char *s = close + 3;
    unsigned long long v[12];
    int k = 0;
    for (; k < 12; k++) {
        char *end;
        v[k] = strtoull(s, &end, 10);
        if (end == s)
            break;
        s = end;
    }
    if (!name)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    t->name = name;
    t->state = state;
    long hz = sysconf(_SC_CLK_TCK);
    if (k == 12 && hz > 0) {
        t->user_ns = v[10] * (1000000000ull / (uint64_t)hz);
        t->kernel_ns = v[11] * (1000000000ull / (uint64_t)hz);
    }
    return 0;
}

bool stack_proc_thread_exited(pid_t pid, uint32_t tid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/task/%" PRIu32 "/stat", (int)pid, tid);
    if (read_small(path, buf, sizeof buf) < 0)
        return true;
    const char *close = strrchr(buf, ')');
    return close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
}

int stack_proc_thread(struct ntl_stack_process *p, struct ntl_stack_thread *t, pid_t pid,
                      struct ntl_error *err)
{
    char dir[64], path[96], buf[256];
    snprintf(dir, sizeof dir, "/proc/%d/task/%" PRIu32, (int)pid, t->tid);
    int rc = read_stat(p, t, dir, err);
    if (rc < 0 || *t->note)
        return rc;
    snprintf(path, sizeof path, "%s/wchan", dir);
    if (read_small(path, buf, sizeof buf) > 0 && strcmp(buf, "0") != 0) {
        buf[strcspn(buf, "\n")] = 0;
        if (!(t->wait = ntl_stack_strdup(p, buf)))
            return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    }
    return 0;
}

bool stack_proc_parse_kernel_line(char *line, struct ntl_stack_frame *f)
{
    char *s = line, *end;
    if (strncmp(s, "[<", 2) != 0)
        return false;
    uint64_t addr = strtoull(s + 2, &end, 16);
    if (end == s + 2 || strncmp(end, ">] ", 3) != 0)
        return false;
    s = end + 3;
    *f = (struct ntl_stack_frame){
        .pc = addr ? addr : NTL_STACK_UNKNOWN, .mode = NTL_STACK_KERNEL,
        .how = NTL_STACK_KERNEL_LIST, .module = "vmlinux", .function = s, .file = "",
    };
    size_t len = strcspn(s, "+ \n");
    char stop = s[len];
    s[len] = 0;
    if (!len)
        return false;
    s += len + 1;
    if (stop == '+') {
        f->function_offset = strtoull(s, &end, 16);
        s = end;
        s += strcspn(s, " \n");
        stop = *s ? *s++ : 0;
    }
    /* A module's function: "name+0x1c/0x40 [module]". */
    if (stop == ' ' && *s == '[') {
        char *close = strchr(s, ']');
        if (close) {
            *close = 0;
            f->module = s + 1;
        }
    }
    return true;
}

int stack_proc_kernel_frames(struct ntl_stack_process *p, struct ntl_stack_thread *t,
                             pid_t pid, unsigned max_frames, char *why, size_t why_size,
                             struct ntl_error *err)
{
    char path[96], line[512];
    snprintf(path, sizeof path, "/proc/%d/task/%" PRIu32 "/stack", (int)pid, t->tid);
    FILE *f = fopen(path, "re");
    if (!f) {
        int e = errno;
        snprintf(why, why_size,
                 e == ENOENT ? "no kernel frames: this kernel has no %s (CONFIG_STACKTRACE)"
                 : e == EACCES || e == EPERM ? "no kernel frames: reading %s needs root"
                                             : "no kernel frames: %s: %s",
                 path, strerror(e));
        return 0;
    }
    int rc = 0;
    struct ntl_stack_frame fr;
    while (rc == 0 && t->nframes < max_frames && fgets(line, sizeof line, f))
        if (stack_proc_parse_kernel_line(line, &fr))
            rc = ntl_stack_frame_add(p, t, &fr, err);
    if (ferror(f))
        snprintf(why, why_size, "no kernel frames: reading %s needs root", path);
    fclose(f);
    return rc;
}

int stack_proc_parse_syscall(const char *s, struct stack_syscall *sc)
{
    if (strncmp(s, "running", 7) == 0)
        return -EAGAIN;
    char *end;
    errno = 0;
    long nr = strtol(s, &end, 10);
    if (end == s || errno)
        return -EINVAL;
    /* The number, then six arguments (none outside a call), SP and PC. */
    uint64_t v[8];
    int want = nr < 0 ? 2 : 8, k = 0;
    for (s = end; k < want; k++, s = end) {
        v[k] = strtoull(s, &end, 16);
        if (end == s || (*end && *end != ' ' && *end != '\n'))
            return -EINVAL;
    }
    s += strspn(s, " \n");
    if (*s)
        return -EINVAL;
    *sc = (struct stack_syscall){.nr = nr, .sp = v[want - 2], .pc = v[want - 1]};
    return 0;
}

int stack_proc_syscall(pid_t pid, uint32_t tid, struct stack_syscall *sc)
{
    char path[96], buf[256];
    snprintf(path, sizeof path, "/proc/%d/task/%" PRIu32 "/syscall", (int)pid, tid);
    ssize_t n = read_small(path, buf, sizeof buf);
    return n < 0 ? (int)n : stack_proc_parse_syscall(buf, sc);
}

uint64_t stack_proc_entry(pid_t pid)
{
    char path[64];
    unsigned char ident[EI_NIDENT];
    /* auxv holds the process's own word size: a 32-bit program's pairs are 4 bytes each. */
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    FILE *f = fopen(path, "re");
    bool is64 = f && fread(ident, 1, sizeof ident, f) == sizeof ident &&
                memcmp(ident, ELFMAG, SELFMAG) == 0 && ident[EI_CLASS] == ELFCLASS64;
    if (f)
        fclose(f);
    snprintf(path, sizeof path, "/proc/%d/auxv", (int)pid);
    if (!is64 || !(f = fopen(path, "re")))
        return NTL_STACK_UNKNOWN;
    uint64_t pair[2], entry = NTL_STACK_UNKNOWN;
    while (entry == NTL_STACK_UNKNOWN && fread(pair, sizeof pair, 1, f) == 1 &&
           pair[0] != AT_NULL)
        if (pair[0] == AT_ENTRY)
            entry = pair[1];
    fclose(f);
    return entry;
}

static int by_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int stack_proc_tids(pid_t pid, uint32_t **tids, size_t *n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return -errno;
    size_t cap = 0;
    *tids = NULL;
    *n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            uint32_t *grown = realloc(*tids, cap * sizeof(**tids));
            if (!grown) {
                closedir(d);
                free(*tids);
                *tids = NULL;
                return -ENOMEM;
            }
            *tids = grown;
        }
        (*tids)[(*n)++] = (uint32_t)strtoul(e->d_name, NULL, 10);
    }
    closedir(d);
    qsort(*tids, *n, sizeof(**tids), by_u32);
    return 0;
}

void stack_access_advice(pid_t pid, char *buf, size_t size)
{
    char scope[16] = "";
    int n = snprintf(buf, size, "not allowed to trace process %d: run ntlens as root (or with "
                     "CAP_SYS_PTRACE)", (int)pid);
    if (read_small("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof scope) <= 0 || n < 0 ||
        (size_t)n >= size)
        return;
    int level = atoi(scope);
    if (level == 1)
        snprintf(buf + n, size - (size_t)n, "; kernel.yama.ptrace_scope is 1, so even the "
                 "process's owner may not trace it unless it is ntlens's child: "
                 "`sysctl kernel.yama.ptrace_scope=0` allows it");
    else if (level == 2)
        snprintf(buf + n, size - (size_t)n, "; kernel.yama.ptrace_scope is 2: only root "
                 "may trace");
    else if (level >= 3)
        snprintf(buf + n, size - (size_t)n, "; kernel.yama.ptrace_scope is 3: no process "
                 "may be traced until the next reboot");
}
