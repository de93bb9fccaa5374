/* Samba's perfmon store lives on the Samba server; libtdb is not built
 * for Windows. */
#include "ntlens/msrpc.h"

int ntl_samba_perfmon_write(const char *state_dir, const struct ntl_perf_block *b,
                            const struct ntl_perf_titles *t, struct ntl_samba_perfmon_stats *st,
                            struct ntl_error *err)
{
    (void)state_dir;
    (void)b;
    (void)t;
    (void)st;
    return ntl_error_set(err, NTL_ERR_UNSUPPORTED, NULL, NTL_NO_OFFSET,
                         "Samba's perfmon store is written on the Samba server (Linux); "
                         "this Windows build cannot write it");
}
