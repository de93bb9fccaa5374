/* PsList's view of a parsed performance-data block: the Process, Thread and
 * Processor objects turned into rows of the values PsList shows, CPU %
 * between two samples, and thread state names. Objects and counters are
 * found by name through the title database, with Windows' standard indices
 * as further candidates. Fields a block does not carry are marked absent,
 * never invented. Taking a sample from a source: ntlens/source_perf.h. */
#ifndef NTLENS_PERF_PS_H
#define NTLENS_PERF_PS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/error.h"
#include "ntlens/perf.h"
#include "ntlens/perf_value.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Process fields taken from raw counters (times in 100 ns, sizes in bytes). */
enum ntl_perf_ps_field {
    NTL_PERF_PS_PID, NTL_PERF_PS_PPID, NTL_PERF_PS_PRI, NTL_PERF_PS_THREADS,
    NTL_PERF_PS_HANDLES, NTL_PERF_PS_CPU, NTL_PERF_PS_USER, NTL_PERF_PS_KERNEL,
    NTL_PERF_PS_VM, NTL_PERF_PS_WS, NTL_PERF_PS_PRIV, NTL_PERF_PS_PRIV_PEAK,
    NTL_PERF_PS_FAULTS, NTL_PERF_PS_NONPAGED, NTL_PERF_PS_PAGED, NTL_PERF_PS_NFIELDS
};

/* Thread fields. */
enum ntl_perf_ps_tfield {
    NTL_PERF_PS_T_TID, NTL_PERF_PS_T_PID, NTL_PERF_PS_T_PRI, NTL_PERF_PS_T_CSWITCH,
    NTL_PERF_PS_T_STATE, NTL_PERF_PS_T_WAIT, NTL_PERF_PS_T_USER, NTL_PERF_PS_T_KERNEL,
    NTL_PERF_PS_T_NFIELDS
};

struct ntl_perf_ps_proc {
    const char *name;         /* instance name (borrowed from the block) */
    uint64_t v[NTL_PERF_PS_NFIELDS];
    uint32_t have;            /* 1u << enum ntl_perf_ps_field */
    double elapsed;           /* seconds, when have_elapsed */
    bool have_elapsed;
    struct ntl_perf_raw cpu_raw; /* % Processor Time, for CPU % between samples */
    bool have_cpu_raw;
    double cpu_pct;           /* set by ntl_perf_ps_sample_cpu */
    bool have_cpu_pct;
};

struct ntl_perf_ps_thread {
    size_t proc;              /* index into ntl_perf_ps_sample.procs, or SIZE_MAX */
    uint64_t v[NTL_PERF_PS_T_NFIELDS];
    uint32_t have;            /* 1u << enum ntl_perf_ps_tfield */
    double elapsed;
    bool have_elapsed;
};

struct ntl_perf_ps_sample {
    char host[256];           /* the block's system name ("" when it has none) */
    struct ntl_buf raw;       /* the answer the block was parsed from */
    struct ntl_perf_block *block;
    struct ntl_perf_ps_proc *procs;
    size_t nprocs;
    struct ntl_perf_ps_thread *threads;
    size_t nthreads;
    bool have_threads;        /* the block holds a Thread object */
    unsigned ncpu;            /* Processor instances, 0 when unknown */
};

/* Each index as candidates: every index the title database gives its name,
 * then Windows' standard one. Names repeat (Samba's database has several
 * "% Privileged Time"), and only the object's own counter definitions tell
 * which one it uses. */
#define NTL_PERF_PS_CANDIDATES 6
struct ntl_perf_ps_index {
    uint32_t idx[NTL_PERF_PS_CANDIDATES];
    unsigned n;               /* at least 1 (the standard index) */
};

struct ntl_perf_ps_indices {
    struct ntl_perf_ps_index process, thread, processor;
    struct ntl_perf_ps_index pf[NTL_PERF_PS_NFIELDS], tf[NTL_PERF_PS_T_NFIELDS];
    struct ntl_perf_ps_index elapsed;
};

/* Resolves the indices from the titles (which may be empty: the standard
 * indices remain). Cannot fail. */
void ntl_perf_ps_indices_resolve(const struct ntl_perf_titles *t, struct ntl_perf_ps_indices *ix);

/* The query that asks for Process, plus Thread and Processor when wanted
 * ("230 232 238"); returns buf. */
const char *ntl_perf_ps_query(const struct ntl_perf_ps_indices *ix, bool threads, bool cpus,
                              char *buf, size_t size);

/* Empties s (raw ready to receive an answer). */
void ntl_perf_ps_sample_init(struct ntl_perf_ps_sample *s);
/* Parses s->raw (one answer to ntl_perf_ps_query) and fills the rows;
 * threads and cpus say whether to read the Thread and Processor objects.
 * Returns 0, or with err set: what ntl_perf_block_parse returns
 * (NTL_ERR_TRUNCATED, NTL_ERR_FORMAT, NTL_ERR_LIMIT, NTL_ERR_NOMEM),
 * NTL_ERR_NOT_FOUND when the block holds no Process object, NTL_ERR_NOMEM.
 * Call ntl_perf_ps_sample_free after either. */
int ntl_perf_ps_sample_parse(struct ntl_perf_ps_sample *s, const struct ntl_perf_ps_indices *ix,
                             bool threads, bool cpus, struct ntl_error *err);
/* CPU % of each process of cur from prev (same machine), normalised to the
 * whole machine when the processor count is known. A process without a
 * previous sample (or when memory runs out) gets have_cpu_pct false. */
void ntl_perf_ps_sample_cpu(struct ntl_perf_ps_sample *cur, const struct ntl_perf_ps_sample *prev);
void ntl_perf_ps_sample_free(struct ntl_perf_ps_sample *s);

/* "Running", "Wait:UserReq", ... as PsList shows thread states; "" when the
 * block has no state, the number when it is not a known one. Returns buf. */
const char *ntl_perf_ps_thread_state(char *buf, size_t size, const struct ntl_perf_ps_thread *t);

#ifdef __cplusplus
}
#endif
#endif
