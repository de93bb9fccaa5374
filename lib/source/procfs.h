/* Reading this host's state from /proc for the built-in provider (Linux
 * only). Everything is converted to Windows' units on the way in: times in
 * 100 ns, sizes in bytes, priorities on Windows' 0-31 scale, thread states
 * and wait reasons as Windows numbers them. */
#ifndef NTLENS_SOURCE_PROCFS_H
#define NTLENS_SOURCE_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"

struct lp_proc {
    uint32_t pid, ppid;
    char name[64];
    uint32_t pri_base;
    uint32_t threads;        /* the kernel's count (num_threads) */
    uint32_t handles;        /* open file descriptors; 0 when unreadable */
    uint64_t user_100ns, kernel_100ns;
    uint64_t start_100ns;    /* since boot */
    uint64_t vsize, vpeak, rss, hwm, priv, pte; /* bytes */
    uint64_t faults;         /* minor + major */
    size_t first_thread;     /* into lp_snapshot.thread */
    size_t nthread;          /* threads read (may differ from threads) */
};

struct lp_thread {
    uint32_t tid, pid;
    uint32_t pri_current, pri_base;
    uint32_t state, wait_reason;
    uint64_t cswitch;
    uint64_t user_100ns, kernel_100ns;
    uint64_t start_100ns;    /* since boot */
};

struct lp_cpu {              /* all in 100 ns */
    bool present;            /* listed in /proc/stat (online) */
    uint64_t user, system, idle, iowait, irq, softirq;
    uint64_t interrupts;
};

struct lp_snapshot {
    /* what to read */
    bool want_procs, want_threads, want_details, want_cpus, want_memory, want_system;

    struct lp_proc *proc;
    size_t nproc, capproc;
    struct lp_thread *thread;
    size_t nthread, capthread;
    struct lp_cpu *cpu;      /* indexed by CPU number, ncpu entries */
    size_t ncpu, capcpu;
    size_t nonline;          /* entries present */
    struct lp_cpu cpu_total; /* sums over all CPUs */

    uint64_t uptime_100ns;   /* CLOCK_BOOTTIME when read */
    uint64_t ctxt;           /* context switches since boot */
    uint32_t procs_running;
    uint64_t mem_available, committed, commit_limit, cached, slab_reclaimable,
        slab_unreclaimable;  /* bytes */
    uint64_t page_faults;
};

/* Reads what the want_* flags ask for; processes and threads that vanish
 * while being read are left out. */
int lp_snapshot_read(struct lp_snapshot *s, struct ntl_error *err);
void lp_snapshot_free(struct lp_snapshot *s);

#endif
