/* `ntlens profile` live on Windows: NT profile objects over the kernel's
 * modules (-a) or a process's (-p), as Kernrate. */
#include "cli-stop.h"
#include "cli.h"
#include "ntlens/profile_nt.h"
#include "profile-cli.h"

static bool stop_requested(void *ctx)
{
    (void)ctx;
    return cli_stop_requested();
}

int profile_live(const char *cmd, struct ntl_profile *p, const struct profile_live_opts *lo,
                 struct ntl_profile_perf_stats *st)
{
    struct ntl_profile_nt_config cfg = {
        .pid = lo->all ? 0 : (uint32_t)lo->pid, .source = lo->source,
        .interval = lo->source == 0 ? (uint32_t)(10000000u / lo->freq) : 0,
        .bucket_shift = lo->bucket_shift, .stop = stop_requested,
        .duration_ms = (uint32_t)(lo->duration * 1000)};
    struct ntl_error err = {0};
    (void)st;
    if (lo->argc)
        return cli_failf(cmd, "starting a command to profile is Linux only; on Windows start "
                         "it, then profile it with -p PID");
    struct ntl_profile_info *info = ntl_profile_info(p);
    snprintf(info->source, sizeof info->source, "Profile%s",
             ntl_profile_nt_source_name(lo->source));
    info->interval_ns = (uint64_t)cfg.interval * 100;
    info->duration_ns = lo->duration * 1000000000u;
    cli_stop_catch_signals();
    if (ntl_profile_nt_run(&cfg, p, &err) < 0)
        return cli_fail(cmd, &err, NULL);
    return 0;
}
