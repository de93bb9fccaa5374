/* The profile's insides, shared by the model (profile.c), the report
 * (report.c) and the producers in this module. */
#ifndef NTLENS_PROFILE_MODEL_H
#define NTLENS_PROFILE_MODEL_H

#include "ntlens/buf.h"
#include "ntlens/profile.h"
#include "ntlens/profile_symbols.h"
#include "u64map.h"

/* Distinct buckets hit, processes and threads kept at most. */
#define MODEL_MAX_BUCKETS (1u << 28)
#define MODEL_MAX_IDS (1u << 24)
#define MODEL_MAX_STACK_BYTES ((size_t)8 << 30)

struct model_range {
    struct ntl_profile_range pub;
    char *name, *path;
    struct ntl_profile_symtab *syms;
};

/* A process's (or the kernel's) active ranges, sorted by base, disjoint. */
struct model_space {
    uint32_t pid;
    size_t *idx;
    size_t n, cap;
};

struct model_proc {
    uint32_t pid;
    char *name;
    uint64_t hits, unknown;
};

struct model_thread {
    uint32_t tid, pid;
    uint64_t hits;
};

struct model_symtab {
    char *path;
    struct ntl_profile_symtab *syms;
};

struct ntl_profile {
    struct ntl_profile_info info;
    struct model_range *ranges;
    size_t nranges, cap_ranges;
    struct model_space *spaces;
    size_t nspaces, cap_spaces;
    struct u64map space_of;    /* pid -> index in spaces */
    struct u64map buckets;     /* range << 32 | bucket -> hits */
    struct model_proc *procs;
    size_t nprocs, cap_procs;
    struct u64map proc_of;     /* pid -> index in procs */
    struct model_thread *threads;
    size_t nthreads, cap_threads;
    struct u64map thread_of;   /* tid -> index in threads */
    struct model_symtab *symtabs;
    size_t nsymtabs, cap_symtabs;
    uint64_t total, unknown;
    /* Stacks: per sample u32 pid, u32 tid, u64 weight, u64 ip, u64 depth,
     * then depth u64 addresses. */
    struct ntl_buf stacks;
};

/* The index of the active range of pid's space holding addr, or -1. */
long model_range_at(const struct ntl_profile *p, uint32_t pid, uint64_t addr);

/* Grows an array of elem-sized items to hold n + 1. 0, or -1 out of memory. */
int model_reserve(void **v, size_t *cap, size_t n, size_t elem);

#endif
