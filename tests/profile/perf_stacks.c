/* Every sample of a run of perf records (the data section of a perf.data
 * that perf record wrote with sample_type IP|TID|TIME|CALLCHAIN, cut out by
 * test_profile_stacks.py), through lib/profile as the live sampler puts
 * them: one line per sample, in order, "TIME TID frame;frame;..." innermost
 * first, named as ntl_profile_symbolize names them (ELF symbols of each
 * mapped file; the kernel from /proc/kallsyms and /proc/modules when given).
 *   perf_stacks RECORDS [KALLSYMS [MODULES]] */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/buf.h"
#include "ntlens/profile_perf.h"
#include "ntlens/profile_report.h"
#include "ntlens/profile_symbols.h"

static void die(const char *what, const struct ntl_error *err)
{
    fprintf(stderr, "perf_stacks: %s: %s\n", what, err->message);
    exit(1);
}

static void read_all(const char *path, struct ntl_buf *b)
{
    struct ntl_error err = {0};
    ntl_buf_init(b, 1u << 30);
    if (ntl_file_read(path, 1u << 30, b, &err) < 0)
        die(path, &err);
}

static void add_kernel(struct ntl_profile *p, const char *kallsyms, const char *modules)
{
    struct ntl_buf k, m = {0};
    struct ntl_error err = {0};
    read_all(kallsyms, &k);
    if (modules)
        read_all(modules, &m);
    if (ntl_profile_kernel_parse(p, (const char *)k.data, k.len, (const char *)m.data, m.len, 2,
                                 &err) < 0)
        die(kallsyms, &err);
    ntl_buf_free(&k);
    if (modules)
        ntl_buf_free(&m);
}

/* ELF symbols for every range mapped from a file (each path once: a path
 * already given a table is skipped). */
static void add_symbols(struct ntl_profile *p)
{
    struct ntl_error err = {0};
    for (size_t i = 0; i < ntl_profile_range_count(p); i++) {
        const struct ntl_profile_range *r = ntl_profile_range(p, i);
        struct ntl_profile_symtab *t;
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = !strcmp(ntl_profile_range(p, k)->path, r->path);
        if (!seen && r->path[0] == '/' && ntl_profile_symtab_from_elf(r->path, &t, &err) == 0 &&
            ntl_profile_use_symbols(p, r->path, t, &err) < 0)
            die(r->path, &err);
    }
}

/* The samples with the times of their records (each SAMPLE record is one
 * sample, in order). */
static void print_samples(struct ntl_profile *p, const uint64_t *times)
{
    struct ntl_profile_sample s;
    char name[512];
    size_t pos = 0;
    for (size_t n = 0; ntl_profile_stack_next(p, &pos, &s) > 0; n++) {
        ntl_profile_symbolize(p, s.pid, s.ip, name, sizeof name);
        printf("%" PRIu64 " %" PRIu32 " %s", times[n], s.tid, name);
        for (size_t i = 0; i < s.depth; i++) {
            ntl_profile_symbolize(p, s.pid, ntl_profile_frame_address(p, s.stack[i]), name, sizeof name);
            printf(";%s", name);
        }
        putchar('\n');
    }
}

int main(int argc, char **argv)
{
    struct ntl_profile *p;
    struct ntl_profile_perf_record r;
    struct ntl_profile_perf_stats st = {0};
    struct ntl_error err = {0};
    struct ntl_buf b;
    size_t pos = 0, n = 0;
    uint64_t *times;
    int rc;
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: perf_stacks RECORDS [KALLSYMS [MODULES]]\n");
        return 2;
    }
    if (ntl_profile_new(&p, &err) < 0)
        die("profile", &err);
    if (argc > 2)
        add_kernel(p, argv[2], argc > 3 ? argv[3] : NULL);
    read_all(argv[1], &b);
    /* A sample record is at least 48 bytes. */
    if (!(times = malloc(b.len / 48 * sizeof *times + 1)))
        return 1;
    while ((rc = ntl_profile_perf_next(b.data, b.len, &pos, 0, &r, &err)) > 0) {
        /* perf record synthesizes mappings of the kernel (pid -1, up to the
         * end of the address space) that a ring buffer never holds: the
         * kernel comes from kallsyms, as the live sampler adds it. */
        bool kernel_map = (r.type == NTL_PROFILE_PERF_MMAP || r.type == NTL_PROFILE_PERF_MMAP2) &&
                          r.pid == UINT32_MAX;
        if (!kernel_map && ntl_profile_perf_feed(p, &r, 2, &st, &err) < 0)
            die("record", &err);
        if (r.type == NTL_PROFILE_PERF_SAMPLE)
            times[n++] = r.time;
    }
    if (rc < 0)
        die(argv[1], &err);
    add_symbols(p);
    print_samples(p, times);
    free(times);
    ntl_buf_free(&b);
    ntl_profile_free(p);
    return 0;
}
