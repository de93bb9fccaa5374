/* `ntlens ps`: one sample of a source's Process and Thread objects turned
 * into rows, with the values PsList shows. Fields a source does not send
 * are marked absent (shown empty), never invented. */
#ifndef NTLENS_TOOL_PS_H
#define NTLENS_TOOL_PS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/perf.h"
#include "ntlens/perf_value.h"
#include "ntlens/source.h"

/* Process fields taken from raw counters (times in 100 ns, sizes in bytes). */
enum ps_field {
    PF_PID, PF_PPID, PF_PRI, PF_THREADS, PF_HANDLES, PF_CPU, PF_USER, PF_KERNEL,
    PF_VM, PF_WS, PF_PRIV, PF_PRIV_PEAK, PF_FAULTS, PF_NONPAGED, PF_PAGED, PF_N
};

enum ps_tfield { TF_TID, TF_PID, TF_PRI, TF_CSWITCH, TF_STATE, TF_WAIT, TF_USER, TF_KERNEL, TF_N };

struct ps_proc {
    const char *name;         /* instance name (borrowed from the block) */
    uint64_t v[PF_N];
    uint32_t have;            /* 1u << enum ps_field */
    double elapsed;           /* seconds, when have_elapsed */
    bool have_elapsed;
    struct ntl_perf_raw cpu_raw; /* % Processor Time, for CPU % between samples */
    bool have_cpu_raw;
    double cpu_pct;           /* set by ps_sample_cpu */
    bool have_cpu_pct;
};

struct ps_thread {
    size_t proc;              /* index into ps_sample.procs, or SIZE_MAX */
    uint64_t v[TF_N];
    uint32_t have;            /* 1u << enum ps_tfield */
    double elapsed;
    bool have_elapsed;
};

struct ps_sample {
    char host[256];           /* the block's system name, else the source's description */
    struct ntl_buf raw;
    struct ntl_perf_block *block;
    struct ps_proc *procs;
    size_t nprocs;
    struct ps_thread *threads;
    size_t nthreads;
    bool have_threads;        /* the source sent a Thread object */
    unsigned ncpu;            /* Processor instances, 0 when unknown */
};

/* The indices ps needs, each as candidates: every index the source's title
 * database gives its name, then Windows' standard one. Names repeat (Samba's
 * database has several "% Privileged Time"), and only the object's own
 * counter definitions tell which one it uses. */
#define PS_CANDIDATES 6
struct ps_index {
    uint32_t idx[PS_CANDIDATES];
    unsigned n;
};

struct ps_indices {
    struct ps_index process, thread, processor;
    struct ps_index pf[PF_N], tf[TF_N];
    struct ps_index elapsed;
};

/* Loads the source's English names (falling back to Windows' standard
 * table) and resolves the indices ps needs. *titles is owned by the caller. */
int ps_titles_load(struct ntl_source *src, struct ntl_perf_titles **titles, struct ps_indices *ix,
                   struct ntl_error *err);

/* Queries the source (Process, plus Thread and Processor when asked) and
 * fills out. NTL_ERR_EOF at the end of a capture. */
int ps_sample_take(struct ntl_source *src, const struct ps_indices *ix, bool threads, bool cpus,
                   struct ps_sample *out, struct ntl_error *err);
/* CPU % of each process of cur from prev (same source), normalised to the
 * whole machine when the processor count is known. */
void ps_sample_cpu(struct ps_sample *cur, const struct ps_sample *prev);
void ps_sample_free(struct ps_sample *s);

/* "Running", "Wait:UserReq", ... as PsList shows thread states. */
const char *ps_thread_state(char *buf, size_t size, const struct ps_thread *t);

/* Calls fn(arg, i) for i in [0, n), each in its own thread when n > 1, and
 * returns when all are done (platform code: ps-parallel-*.c). */
void ps_parallel(size_t n, void (*fn)(void *arg, size_t i), void *arg);

/* Sleeps (platform code: ps-sleep-linux.c, ps-sleep-win32.c). */
void ps_sleep_ms(unsigned ms);
bool ps_stdout_is_terminal(void);

#endif
