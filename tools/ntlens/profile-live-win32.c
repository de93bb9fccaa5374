/* `ntlens profile` live on Windows: NT profile objects (NtCreateProfileEx)
 * are the producer there, and it is not written yet; say so plainly. */
#include "cli.h"
#include "profile-cli.h"

int profile_live(const char *cmd, struct ntl_profile *p, const struct profile_live_opts *lo,
                 struct ntl_profile_perf_stats *st)
{
    (void)p;
    (void)lo;
    (void)st;
    return cli_failf(cmd, "live profiling on Windows (NT profile objects) is not in this build; "
                     "profile an ETW trace with --etl");
}
