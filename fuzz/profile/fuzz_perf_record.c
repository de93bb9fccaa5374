/* The perf ring-buffer record parser on arbitrary bytes: every record up
 * to the first bad one fed to a profile; the same bytes as /proc/PID/maps,
 * /proc/kallsyms and /proc/modules text and as a SystemModuleInformation
 * answer; then the report and the stacks. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ntlens/profile_nt.h"
#include "ntlens/profile_perf.h"
#include "ntlens/profile_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_profile *p;
    struct ntl_profile_perf_record r;
    struct ntl_profile_perf_stats st = {0};
    struct ntl_profile_module_row *m;
    struct ntl_profile_sample s;
    struct ntl_error err;
    size_t pos = 0, n;
    int rc;

    if (ntl_profile_new(&p, &err) < 0)
        return 0;
    while ((rc = ntl_profile_perf_next(data, size, &pos, 0, &r, &err)) != 0) {
        if (rc < 0)
            break;
        ntl_profile_perf_feed(p, &r, 2 + r.size % 30, &st, &err);
    }
    /* /proc/PID/maps text from the same bytes. */
    ntl_profile_maps_parse(p, 1, (const char *)data, size, 12, &err);
    ntl_profile_kernel_parse(p, (const char *)data, size, (const char *)data, size, 12, &err);
    ntl_profile_nt_modules_parse(p, data, size, size & 1, 12, &err);
    if (ntl_profile_modules(p, &m, &n, &err) == 0) {
        for (size_t i = 0; i < n && i < 4; i++) {
            struct ntl_profile_function_row *f;
            size_t nf;
            if (m[i].range != NTL_PROFILE_NO_RANGE &&
                ntl_profile_functions(p, m[i].range, &f, &nf, &err) == 0)
                free(f);
        }
        free(m);
    }
    pos = 0;
    while (ntl_profile_stack_next(p, &pos, &s) > 0)
        ;
    ntl_profile_free(p);
    return 0;
}
