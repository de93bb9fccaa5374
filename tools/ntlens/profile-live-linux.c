/* `ntlens profile` live on Linux: perf_event's cpu-clock samples of a
 * process (-p), a command we start (-- COMMAND), or every process (-a). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli-stop.h"
#include "cli.h"
#include "ntlens/buf.h"
#include "ntlens/profile_nt.h"
#include "ntlens/profile_perf.h"
#include "profile-cli.h"

/* The executable mappings and name of a process already running. */
static void add_process(struct ntl_profile *p, uint32_t pid, unsigned shift)
{
    char path[64];
    struct ntl_buf b;
    struct ntl_error err = {0};
    snprintf(path, sizeof path, "/proc/%u/maps", pid);
    if (ntl_file_read(path, 64u << 20, &b, &err) == 0)
        ntl_profile_maps_parse(p, pid, (const char *)b.data, b.len, shift, &err);
    ntl_buf_free(&b); /* ntl_file_read starts the buffer afresh */
    snprintf(path, sizeof path, "/proc/%u/comm", pid);
    if (ntl_file_read(path, 4096, &b, &err) == 0 && b.len && ntl_buf_append(&b, "", 1) == 0) {
        char *nl = strchr((char *)b.data, '\n');
        if (nl)
            *nl = 0;
        ntl_profile_set_process(p, pid, (const char *)b.data, &err);
    }
    ntl_buf_free(&b);
}

/* The kernel and its modules, when their addresses are visible to us. */
static void add_kernel(struct ntl_profile *p, unsigned shift)
{
    struct ntl_buf ks, mods;
    struct ntl_error err = {0};
    ntl_buf_init(&ks, 256u << 20);
    ntl_buf_init(&mods, 16u << 20);
    if (ntl_file_read("/proc/kallsyms", 256u << 20, &ks, &err) == 0) {
        bool have_mods = ntl_file_read("/proc/modules", 16u << 20, &mods, &err) == 0;
        ntl_profile_kernel_parse(p, (const char *)ks.data, ks.len,
                                 have_mods ? (const char *)mods.data : NULL, mods.len, shift, &err);
    }
    ntl_buf_free(&ks);
    ntl_buf_free(&mods);
}

static void add_all_processes(struct ntl_profile *p, unsigned shift)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char *end;
        unsigned long pid = strtoul(e->d_name, &end, 10);
        if (!*end && pid)
            add_process(p, (uint32_t)pid, shift);
    }
    if (d)
        closedir(d);
}

/* A child stopped before exec until go is written; a failed exec writes
 * its errno to fail (closed on a successful exec). */
struct child {
    pid_t pid;
    int go, fail;
};

static int start_child(const char *cmd, char **argv, struct child *c)
{
    int go[2], fail[2];
    if (pipe(go) < 0 || pipe(fail) < 0 || fcntl(fail[1], F_SETFD, FD_CLOEXEC) < 0)
        return cli_failf(cmd, "pipe: %s", strerror(errno));
    c->pid = fork();
    if (c->pid < 0)
        return cli_failf(cmd, "fork: %s", strerror(errno));
    if (c->pid == 0) {
        char byte;
        close(go[1]);
        close(fail[0]);
        if (read(go[0], &byte, 1) == 1) {
            execvp(argv[0], argv);
            int e = errno;
            if (write(fail[1], &e, sizeof e) < 0)
                _exit(127);
        }
        _exit(127);
    }
    close(go[0]);
    close(fail[1]);
    c->go = go[1];
    c->fail = fail[0];
    return 0;
}

/* Lets the child exec; fails when the exec did. */
static int release_child(const char *cmd, const char *prog, struct child *c)
{
    int e;
    if (write(c->go, "g", 1) != 1)
        return cli_failf(cmd, "cannot start %s: %s", prog, strerror(errno));
    close(c->go);
    ssize_t n = read(c->fail, &e, sizeof e);
    close(c->fail);
    if (n == (ssize_t)sizeof e) {
        waitpid(c->pid, NULL, 0);
        c->pid = 0;
        return cli_failf(cmd, "cannot run %s: %s", prog, strerror(e));
    }
    return 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Samples until the child exits, the duration ends or Ctrl-C. */
static int sample_loop(const char *cmd, struct ntl_profile_perf *h, struct ntl_profile *p,
                       const struct profile_live_opts *lo, struct child *c,
                       struct ntl_profile_perf_stats *st)
{
    struct ntl_error err = {0};
    uint64_t start = now_ns(), end = lo->duration ? start + lo->duration * 1000000000u : 0;
    int status;
    for (;;) {
        if (ntl_profile_perf_wait(h, 100, &err) < 0 ||
            ntl_profile_perf_drain(h, p, lo->bucket_shift, st, &err) < 0)
            return cli_fail(cmd, &err, NULL);
        if (c->pid > 0 && waitpid(c->pid, &status, WNOHANG) == c->pid) {
            c->pid = 0;
            break;
        }
        if (cli_stop_requested() || (end && now_ns() >= end))
            break;
    }
    ntl_profile_info(p)->duration_ns = now_ns() - start;
    if (ntl_profile_perf_drain(h, p, lo->bucket_shift, st, &err) < 0)
        return cli_fail(cmd, &err, NULL);
    return 0;
}

int profile_live(const char *cmd, struct ntl_profile *p, const struct profile_live_opts *lo,
                 struct ntl_profile_perf_stats *st)
{
    struct ntl_profile_perf_config cfg = {.pid = lo->all ? -1 : (int32_t)lo->pid,
                                          .freq = lo->freq, .kernel = geteuid() == 0 || lo->all};
    struct child c = {0};
    struct ntl_profile_perf *h;
    struct ntl_error err = {0};
    int rc;
    if (lo->source != 0)
        return cli_failf(cmd, "--source %s: Linux samples cpu-clock only (ProfileTime)",
                         ntl_profile_nt_source_name(lo->source));
    if (lo->argc && (rc = start_child(cmd, lo->argv, &c)))
        return rc;
    if (lo->argc) {
        cfg.pid = (int32_t)c.pid;
        cfg.enable_on_exec = true;
    }
    if (ntl_profile_perf_open(&cfg, &h, &err) < 0) {
        if (c.pid > 0) {
            kill(c.pid, SIGKILL);
            waitpid(c.pid, NULL, 0);
        }
        if (err.status == NTL_ERR_NOT_FOUND)
            return cli_failf(cmd, "no process %u", (unsigned)lo->pid);
        return cli_fail(cmd, &err, lo->all ? "system-wide" : NULL);
    }
    snprintf(ntl_profile_info(p)->source, sizeof ntl_profile_info(p)->source, "cpu-clock");
    ntl_profile_info(p)->interval_ns = 1000000000u / lo->freq;
    ntl_profile_info(p)->cpus = ntl_profile_perf_cpus(h);
    if (cfg.kernel)
        add_kernel(p, lo->bucket_shift);
    if (lo->all)
        add_all_processes(p, lo->bucket_shift);
    else if (!lo->argc)
        add_process(p, (uint32_t)lo->pid, lo->bucket_shift);
    cli_stop_catch_signals();
    if (lo->argc)
        rc = release_child(cmd, lo->argv[0], &c);
    else
        rc = ntl_profile_perf_enable(h, &err) < 0 ? cli_fail(cmd, &err, NULL) : 0;
    if (!rc)
        rc = sample_loop(cmd, h, p, lo, &c, st);
    if (c.pid > 0) {
        kill(c.pid, SIGTERM);
        waitpid(c.pid, NULL, 0);
    }
    ntl_profile_perf_close(h);
    return rc;
}
