/* ntlens exporter: serves performance data to Prometheus, /metrics for this
 * host and /probe for any target over SMB (docs/exporter.md). */
#define _GNU_SOURCE /* pthread_rwlockattr_setkind_np */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-stop.h"
#include "cli.h"
#include "commands.h"
#include "exporter.h"
#include "parse-options.h"

static const struct opt_command exporter_command = {
    .name = "exporter",
    .synopsis = NULL,
    .summary = "serve performance data of many hosts to Prometheus",
    .description =
        "A Prometheus exporter in the multi-target pattern of blackbox_exporter and\n"
        "snmp_exporter: /metrics serves the exporter's own metrics and this host's\n"
        "performance data; /probe?target=HOST&module=NAME reads HOST over SMB at scrape\n"
        "time with the collectors and credentials of module NAME from the config file.\n"
        "Metric names follow windows_exporter (cpu, memory, logical_disk, physical_disk,\n"
        "net, process, system). Each target keeps one connection across scrapes. Logs go\n"
        "to stderr in logfmt. SIGHUP or POST /-/reload reloads the config; SIGINT or\n"
        "SIGTERM stops.",
};

static volatile sig_atomic_t hup;

static void on_hup(int sig)
{
    (void)sig;
    hup = 1;
}

struct exporter_opts {
    const char *config, *listen;
    long concurrency;
    bool check;
};

static int load(struct exp_server *s, const struct exporter_opts *o, const char *cmd)
{
    char msg[512];
    if (!o->config)
        return exp_config_default(&s->cfg) < 0 ? cli_failf(cmd, "out of memory") : EXIT_OK;
    if (exp_config_load(o->config, &s->cfg, msg, sizeof msg) < 0)
        return cli_failf(cmd, "%s", msg);
    s->config_path = o->config;
    return EXIT_OK;
}

static void serve(struct exp_server *s)
{
    char msg[512];
    struct sigaction sa = {0};
    sa.sa_handler = on_hup;
    sigaction(SIGHUP, &sa, NULL);
    cli_stop_catch_signals();
    while (!cli_stop_requested()) {
        cli_sleep_ms(200);
        if (!hup)
            continue;
        hup = 0;
        if (exp_server_reload(s, msg, sizeof msg) < 0)
            exp_log("error", "config reload failed; the old config stays", "err", msg,
                    (char *)NULL);
        else
            exp_log("info", "config reloaded", "config", s->config_path, (char *)NULL);
    }
}

int cmd_exporter(int argc, char **argv)
{
    struct exporter_opts o = {0};
    struct exp_server s = {0};
    char msg[512], threads[16];
    struct opt opts[] = {
        OPT_GROUP("Exporter options"),
        OPT_STRING(0, "config", &o.config, "FILE",
                   "the YAML config: credential sets and modules (default: one\n"
                   "module \"default\", every collector, anonymous)"),
        OPT_STRING(0, "listen", &o.listen, "ADDR:PORT",
                   "where to serve (default: the config's listen, else :9182)"),
        OPT_INT(0, "concurrency", &o.concurrency, "N", 1, 1024,
                "scrapes served at once (default: the config's, else 256);\n"
                "connection setups at once: the same, at most 32"),
        OPT_FLAG(0, "check-config", &o.check, "validate the config file and exit"),
        OPT_END(),
    };
    int n = parse_options(&exporter_command, opts, argc, argv);
    if (n < 0)
        return parse_options_exit(n);
    if (n > 0)
        return opt_usage_error(&exporter_command, "takes no operands");
    if (o.check && !o.config)
        return opt_usage_error(&exporter_command, "--check-config needs --config FILE");
    int rc = load(&s, &o, argv[0]);
    if (rc != EXIT_OK || o.check) {
        if (rc == EXIT_OK)
            printf("%s: valid, %zu modules, %zu credential sets\n", o.config, s.cfg.nmodules,
                   s.cfg.nauths);
        exp_config_free(&s.cfg);
        return rc;
    }
    const char *listen = o.listen ? o.listen : s.cfg.listen[0] ? s.cfg.listen : ":9182";
    long conc = o.concurrency ? o.concurrency : s.cfg.concurrency ? s.cfg.concurrency
                                                                   : EXP_CONCURRENCY;
    /* Writer-preferring: a reload under a steady stream of scrapes still gets
     * its turn (glibc's default lets readers starve it). */
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&s.lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    if (!(s.targets = exp_targets_new(conc < EXP_SETUPS ? (unsigned)conc : EXP_SETUPS))) {
        exp_config_free(&s.cfg);
        return cli_failf(argv[0], "out of memory");
    }
    if (exp_server_start(&s, listen, (unsigned)conc, msg, sizeof msg) < 0) {
        rc = cli_failf(argv[0], "%s", msg);
    } else {
        snprintf(threads, sizeof threads, "%ld", conc);
        exp_log("info", "listening", "address", listen, "concurrency", threads, "config",
                o.config ? o.config : "(built-in)", (char *)NULL);
        serve(&s);
        exp_log("info", "stopping", (char *)NULL);
        exp_server_stop(&s);
    }
    exp_targets_free(s.targets);
    exp_config_free(&s.cfg);
    pthread_rwlock_destroy(&s.lock);
    return rc;
}
