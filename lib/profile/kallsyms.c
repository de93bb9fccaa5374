/* The Linux kernel's ranges and functions from /proc/kallsyms and
 * /proc/modules text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "ntlens/profile_perf.h"

#define MAX_LINE 512

struct ksym {
    uint64_t addr;
    char name[128];
    char module[64];   /* "" for the core kernel */
};

/* The next line of text from *pos into line (cut at MAX_LINE - 1); false
 * at the end. *at is the line's offset. */
static bool next_line(const char *text, size_t len, size_t *pos, char *line, size_t *at)
{
    if (*pos >= len)
        return false;
    const char *nl = memchr(text + *pos, '\n', len - *pos);
    size_t n = nl ? (size_t)(nl - (text + *pos)) : len - *pos;
    *at = *pos;
    memcpy(line, text + *pos, n < MAX_LINE ? n : MAX_LINE - 1);
    line[n < MAX_LINE ? n : MAX_LINE - 1] = 0;
    *pos += n + 1;
    return true;
}

/* A text symbol of a kallsyms line: 1, 0 for another kind, or -1. */
static int parse_ksym(const char *line, struct ksym *k)
{
    unsigned long long addr;
    char type;
    k->module[0] = 0;
    int n = sscanf(line, "%llx %c %127s [%63[^]]]", &addr, &type, k->name, k->module);
    if (n < 3)
        return -1;
    k->addr = addr;
    return type == 't' || type == 'T';
}

static int add_symbols(struct ntl_profile *p, const char *path, const struct ksym *v, size_t n,
                       const char *module, uint64_t base, uint64_t size, struct ntl_error *err)
{
    struct ntl_profile_symtab *t;
    int rc = ntl_profile_symtab_new(&t, err);
    for (size_t i = 0; i < n && rc >= 0; i++)
        if (!strcmp(v[i].module, module) && v[i].addr >= base && v[i].addr - base < size)
            rc = ntl_profile_symtab_add(t, v[i].name, v[i].addr - base, 0, err);
    if (rc < 0) {
        ntl_profile_symtab_free(t);
        return rc;
    }
    return ntl_profile_use_symbols(p, path, t, err);
}

/* [kernel.kallsyms]: _stext to _etext, else the text symbols' span. */
static int add_core(struct ntl_profile *p, const struct ksym *v, size_t n, unsigned shift,
                    struct ntl_error *err)
{
    uint64_t lo = UINT64_MAX, hi = 0, stext = 0, etext = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].module[0])
            continue;
        lo = v[i].addr < lo ? v[i].addr : lo;
        hi = v[i].addr > hi ? v[i].addr : hi;
        if (!strcmp(v[i].name, "_stext"))
            stext = v[i].addr;
        if (!strcmp(v[i].name, "_etext"))
            etext = v[i].addr;
    }
    if (stext && etext > stext) {
        lo = stext;
        hi = etext;
    }
    if (!hi)
        return 0;  /* no core symbols, or every address hidden */
    int rc = ntl_profile_add_range(p, NTL_PROFILE_KERNEL_PID, "[kernel.kallsyms]",
                                   "[kernel.kallsyms]", lo, hi - lo + 1, shift, err);
    if (rc < 0)
        return rc;
    return (rc = add_symbols(p, "[kernel.kallsyms]", v, n, "", lo, hi - lo + 1, err)) < 0 ? rc : 1;
}

/* "NAME SIZE REFS DEPS STATE 0xADDR" lines. */
static int add_modules(struct ntl_profile *p, const struct ksym *v, size_t n, const char *text,
                       size_t len, unsigned shift, struct ntl_error *err)
{
    char line[MAX_LINE], name[64], path[80];
    unsigned long long size, addr;
    size_t pos = 0, at;
    int added = 0;
    while (next_line(text, len, &pos, line, &at)) {
        if (!line[0])
            continue;
        if (sscanf(line, "%63s %llu %*s %*s %*s %llx", name, &size, &addr) != 3)
            return ntl_error_set(err, NTL_ERR_FORMAT, "/proc/modules", at, "not a module line");
        if (!addr || !size)
            continue;
        snprintf(path, sizeof path, "[%s]", name);
        int rc = ntl_profile_add_range(p, NTL_PROFILE_KERNEL_PID, path, path, addr, size, shift,
                                       err);
        if (rc < 0 || (rc = add_symbols(p, path, v, n, name, addr, size, err)) < 0)
            return rc;
        added++;
    }
    return added;
}

int ntl_profile_kernel_parse(struct ntl_profile *p, const char *kallsyms, size_t klen,
                             const char *modules, size_t mlen, unsigned bucket_shift,
                             struct ntl_error *err)
{
    struct ksym *v = NULL;
    size_t n = 0, cap = 0, pos = 0, at;
    char line[MAX_LINE];
    int rc = 0;
    while (rc >= 0 && next_line(kallsyms, klen, &pos, line, &at)) {
        if (!line[0])
            continue;
        if (model_reserve((void **)&v, &cap, n, sizeof *v) < 0)
            rc = ntl_error_set(err, NTL_ERR_NOMEM, "/proc/kallsyms", NTL_NO_OFFSET,
                               "out of memory");
        else if ((rc = parse_ksym(line, &v[n])) < 0)
            rc = ntl_error_set(err, NTL_ERR_FORMAT, "/proc/kallsyms", at, "not a symbol line");
        else
            n += rc && v[n].addr;
    }
    int core = rc < 0 ? rc : add_core(p, v, n, bucket_shift, err);
    int mods = core < 0 || !modules || !n ? 0 : add_modules(p, v, n, modules, mlen, bucket_shift,
                                                            err);
    free(v);
    return core < 0 ? core : mods < 0 ? mods : core + mods;
}
