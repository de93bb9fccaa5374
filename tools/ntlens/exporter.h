/* ntlens exporter: a Prometheus multi-target exporter of performance data
 * (docs/exporter.md). exporter-config.c reads the YAML config, exporter-
 * targets.c keeps one long-lived source per target, exporter-http.c serves
 * the pages with libmicrohttpd, exporter-log.c writes logfmt on stderr. */
#ifndef NTLENS_TOOL_EXPORTER_H
#define NTLENS_TOOL_EXPORTER_H

#include <pthread.h>
#include <regex.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/perf.h"
#include "ntlens/prom.h"
#include "ntlens/source.h"

/* A credential set. The password (read from password_file or the
 * authentication file) never leaves this struct: not in pages, logs or
 * errors. */
struct exp_auth {
    char *name;
    char user[256], domain[256], password[256];
    bool kerberos, anonymous;
    struct exp_krb5 *krb5;         /* kerberos with a keytab or a ccache; NULL: KRB5CCNAME */
};

struct exp_module {
    char *name;
    const struct exp_auth *auth;   /* NULL: anonymous */
    unsigned collectors;           /* enum ntl_prom_collector mask */
    bool generic;                  /* also every object through the generic mapping */
    uint32_t *objects;             /* generic: object indices; NULL: all */
    size_t nobjects;
    uint32_t detail;               /* generic detail level */
    unsigned connect_timeout_ms, call_timeout_ms;
    unsigned port;                 /* 0: 445 */
    bool has_instances;            /* instances was given */
    regex_t instances;             /* instance names written (POSIX extended) */
};

/* Settings one target overrides in every module (targets: in the config). */
struct exp_override {
    char *target;                  /* as /probe's target names it */
    const struct exp_auth *auth;   /* NULL: the module's */
    unsigned port, connect_timeout_ms, call_timeout_ms; /* 0: the module's */
};

struct exp_config {
    struct exp_auth *auths;
    size_t nauths;
    struct exp_override *overrides;
    size_t noverrides;
    struct exp_module *modules;
    size_t nmodules;
    char listen[128];              /* "" when the file does not set it */
    long concurrency;              /* 0 when the file does not set it */
};

/* Reads and validates path. Returns 0, or -1 with msg set to
 * "FILE:LINE: KEY: what is wrong" (never a secret). */
int exp_config_load(const char *path, struct exp_config *cfg, char *msg, size_t size);
/* The built-in config without a file: module "default", every collector,
 * anonymous. */
int exp_config_default(struct exp_config *cfg);
void exp_config_free(struct exp_config *cfg);
const struct exp_module *exp_config_module(const struct exp_config *cfg, const char *name);
/* Applies the overrides the config has for target to m (a copy of a module). */
void exp_config_apply_target(const struct exp_config *cfg, const char *target,
                             struct exp_module *m);

/* logfmt on stderr: "ts=... level=info msg=... k=v ...", values quoted
 * when needed. kv is a NULL-terminated list of key, value pairs. */
void exp_log(const char *level, const char *msg, ...);

#endif

/* ------------------------------------------------------------------------
 * Targets (exporter-targets.c): one long-lived source per (module, host),
 * reused across scrapes; after a failure the source is closed and the next
 * attempt waits (1 s, doubling to 60 s), during which probes fail at once.
 * ------------------------------------------------------------------------ */
struct exp_targets;
struct exp_stats {
    uint64_t probes, failures, reloads, reload_failures;
    double probe_seconds;
    size_t connected;
};

/* Probes at once (--concurrency's default). A probe spends nearly all its
 * time waiting on its target's helper, on the HTTP connection's own thread
 * (there whether it holds a slot or not): a slot costs memory only while
 * its reply is parsed and written. 32 let a few stuck targets, each holding
 * a slot for its whole scrape timeout, fail the scrapes queued behind them. */
#define EXP_CONCURRENCY 256
/* Connection setups at once, at most: they use CPU (SMB session, the title
 * database), and ~500 at once starved each other (docs/exporter.md). */
#define EXP_SETUPS 32

/* setups: connection setups at once (the others queue; their probes answer
 * "connecting" meanwhile). */
struct exp_targets *exp_targets_new(unsigned setups);
void exp_targets_free(struct exp_targets *t);
/* Closes every source (a reload: modules and credentials may have changed).
 * The caller makes sure no probe runs meanwhile (exp_server's rwlock, which
 * every probe holds for reading). */
void exp_targets_reset(struct exp_targets *t);
/* Appends one target's page to out: probe_success, probe_duration_seconds,
 * and, on success, the module's metrics. host NULL is this machine
 * ("local"). timeout_s > 0 bounds the whole probe (waiting for the
 * connection's setup, for another scrape of the same target, the query)
 * besides the module's timeouts: a setup still running then fails the probe
 * with error_kind connecting and carries on; a query that runs out fails
 * with error_kind timeout. A target error never fails the page: it shows as
 * probe_success 0 with an error_kind label. Returns 0, or -1 when out of
 * memory or the page limit was hit. */
int exp_targets_probe(struct exp_targets *t, const struct exp_module *m, const char *host,
                      double timeout_s, struct ntl_buf *out);
void exp_targets_stats(struct exp_targets *t, struct exp_stats *s);
void exp_targets_count_reload(struct exp_targets *t, bool ok);

/* ------------------------------------------------------------------------
 * Kerberos credential sets (exporter-krb5.c): the ticket cache each set's
 * helpers use; with a keytab, kinit fills a private cache and fills it
 * again after renew_s seconds or a failed logon.
 * ------------------------------------------------------------------------ */
struct exp_krb5;

/* keytab and principal, or ccache (a path or "TYPE:NAME"). NULL when out
 * of memory. Nothing runs until exp_krb5_ticket. */
struct exp_krb5 *exp_krb5_new(const char *set, const char *keytab, const char *principal,
                              const char *ccache, unsigned renew_s);
struct exp_krb5 *exp_krb5_ref(struct exp_krb5 *k);
/* The last reference removes the private cache. */
void exp_krb5_unref(struct exp_krb5 *k);
/* Sets *ccache to the cache to use, running kinit first when the set has a
 * keytab and its ticket is missing, old or failed. Returns 0, or -1 with msg
 * set (kinit's own words, the keytab's path left out). Thread-safe. */
int exp_krb5_ticket(struct exp_krb5 *k, const char **ccache, char *msg, size_t size);
/* A logon with the set's ticket failed: the next exp_krb5_ticket renews it. */
void exp_krb5_failed(struct exp_krb5 *k);
const char *exp_krb5_set(const struct exp_krb5 *k);

/* ------------------------------------------------------------------------
 * The os collector's registry facts (exporter-os.c)
 * ------------------------------------------------------------------------ */
struct exp_os {
    char text[11][256];              /* the values read, as text */
    struct ntl_prom_os_facts facts;  /* pointing into text */
};

/* Reads the facts over a remote source's winreg connection (three keys,
 * about 18 round trips). Keys the host lacks or denies leave their facts
 * NULL. Returns 0, or a transport, RPC or format failure. */
int exp_os_read(struct ntl_source *src, struct exp_os *os, struct ntl_error *err);

/* ------------------------------------------------------------------------
 * The server (exporter-http.c)
 * ------------------------------------------------------------------------ */
struct exp_server {
    pthread_rwlock_t lock;          /* cfg: probes read it, a reload swaps it */
    struct exp_config cfg;
    const char *config_path;        /* NULL: the built-in config */
    struct exp_targets *targets;
    struct MHD_Daemon *daemon;
    sem_t slots;                    /* --concurrency probes at once */
};

/* Starts serving on addr ("HOST:PORT", "[V6]:PORT" or ":PORT"), a thread
 * per connection, `threads` probes at once. Returns 0, or -1 with msg set. */
int exp_server_start(struct exp_server *s, const char *addr, unsigned threads, char *msg,
                     size_t size);
void exp_server_stop(struct exp_server *s);
/* Loads the config file again and, when it is valid, swaps it in and drops
 * every connection. Returns 0, or -1 with msg set (the old config stays). */
int exp_server_reload(struct exp_server *s, char *msg, size_t size);
