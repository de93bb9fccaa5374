/* One long-lived source per (module, host). libsmbclient is not thread-safe,
 * but every remote source runs in its own helper process (lib/msrpc/
 * transport-linux.c), so targets scrape in parallel on the HTTP server's
 * threads, each under its own lock.
 *
 * Connecting (TCP, SMB session, winreg, the os facts and the title
 * database: seconds against a slow host) runs on a thread of its own: a
 * probe waits for it only while its scrape has time left, then answers
 * probe_success 0 (error_kind connecting) and the connection carries on
 * for the next scrape. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exporter.h"
#include "ntlens/msrpc_source.h"
#include "ntlens/prom.h"
#include "ntlens/source_perf.h"

#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 60000
#define DEFAULT_CONNECT_MS 10000u /* lib/msrpc's defaults */
#define DEFAULT_CALL_MS 30000u

struct target {
    char *module, *host;
    pthread_mutex_t lock;
    struct ntl_source *src;
    struct ntl_perf_titles *titles;
    struct exp_os *os;        /* the os collector's facts, read when connecting */
    double retry_at;          /* monotonic seconds; no attempt before */
    unsigned backoff_ms;
    char error_kind[32];      /* of the last failure */
    /* While connecting, src, titles and os are the connecting thread's;
     * it clears the flag (under lock) and signals `connected`. */
    bool connecting;
    bool orphaned;            /* dropped by a reload while connecting: the thread frees it */
    pthread_cond_t connected;
    int connect_rc;           /* of the last connection attempt */
    char connect_msg[sizeof ((struct ntl_error *)0)->message];
    struct target *next;
};

struct exp_targets {
    pthread_mutex_t lock;     /* the list and the statistics */
    struct target *list;
    struct exp_stats stats;
    atomic_size_t connected;  /* targets with a source, kept without the lock */
    /* Setups at once. Unbounded, a fleet's first minute (1,000 targets
     * connecting within one scrape interval) ran ~500 setups at once, each
     * so slow on a loaded machine that half the fleet stayed unconnected. */
    sem_t setups;
    atomic_int inflight;      /* connecting threads, which use setups */
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct exp_targets *exp_targets_new(unsigned setups)
{
    struct exp_targets *t = calloc(1, sizeof *t);
    if (t && sem_init(&t->setups, 0, setups ? setups : 1) != 0) {
        free(t);
        return NULL;
    }
    if (t)
        pthread_mutex_init(&t->lock, NULL);
    return t;
}

/* Closes the connection. The title database stays: a reconnection (after
 * the server dropped us, or restarted) reuses it, and only a reload or a
 * failure to read it drops it. */
static void disconnect(struct exp_targets *t, struct target *g)
{
    if (g->src)
        atomic_fetch_sub(&t->connected, 1);
    ntl_source_close(g->src);
    g->src = NULL;
}

static void drop_titles(struct target *g)
{
    ntl_perf_titles_free(g->titles);
    g->titles = NULL;
}

static void free_target(struct target *g)
{
    drop_titles(g);
    free(g->os);
    pthread_cond_destroy(&g->connected);
    pthread_mutex_destroy(&g->lock);
    free(g->module);
    free(g->host);
    free(g);
}

/* A target still connecting is left to its connecting thread. */
static void free_list(struct exp_targets *t, struct target *g)
{
    while (g) {
        struct target *next = g->next;
        pthread_mutex_lock(&g->lock);
        g->orphaned = g->connecting;
        pthread_mutex_unlock(&g->lock);
        if (!g->orphaned) {
            disconnect(t, g);
            free_target(g);
        }
        g = next;
    }
}

void exp_targets_reset(struct exp_targets *t)
{
    pthread_mutex_lock(&t->lock);
    free_list(t, t->list);
    t->list = NULL;
    pthread_mutex_unlock(&t->lock);
}

void exp_targets_free(struct exp_targets *t)
{
    if (!t)
        return;
    free_list(t, t->list);
    if (atomic_load(&t->inflight)) /* orphaned setups still use t; the program exits */
        return;
    sem_destroy(&t->setups);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* Waits at most wait_ms for the target's lock: a second scraper of the same
 * target (an HA pair of Prometheus servers) waits for the first scrape, but
 * a target that hangs holds no more than one server thread for long. */
static bool lock_target(struct target *g, unsigned wait_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += wait_ms / 1000;
    until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    return pthread_mutex_timedlock(&g->lock, &until) == 0;
}

/* The target, found or added, or NULL when out of memory. */
static struct target *find(struct exp_targets *t, const char *module, const char *host)
{
    struct target *g;
    pthread_mutex_lock(&t->lock);
    for (g = t->list; g; g = g->next)
        if (!strcmp(g->module, module) && !strcmp(g->host, host))
            break;
    if (!g && (g = calloc(1, sizeof *g)) != NULL) {
        g->module = strdup(module);
        g->host = strdup(host);
        if (!g->module || !g->host) {
            free(g->module);
            free(g->host);
            free(g);
            g = NULL;
        } else {
            pthread_condattr_t ca;
            pthread_condattr_init(&ca);
            pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
            pthread_mutex_init(&g->lock, NULL);
            pthread_cond_init(&g->connected, &ca);
            pthread_condattr_destroy(&ca);
            g->next = t->list;
            t->list = g;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return g;
}

/* smb://[DOMAIN;]USER@HOST[:PORT]; "local" for this machine. The password
 * goes through the options, never into the spec. */
static void make_spec(const struct exp_module *m, const char *host, char *spec, size_t size)
{
    const struct exp_auth *a = m->auth;
    char port[16] = "";
    if (!strcmp(host, "local")) {
        snprintf(spec, size, "local");
        return;
    }
    if (m->port && !strchr(host, ':'))
        snprintf(port, sizeof port, ":%u", m->port);
    if (a && a->user[0] && !a->anonymous)
        snprintf(spec, size, "smb://%s%s%s@%s%s", a->domain, a->domain[0] ? ";" : "", a->user,
                 host, port);
    else
        snprintf(spec, size, "smb://%s%s", host, port);
}

/* The smaller bound: a setting (0: its default) or what the scrape has left
 * (0: no scrape timeout). */
static unsigned bound_ms(unsigned setting, unsigned dflt, unsigned left)
{
    unsigned ms = setting ? setting : dflt;
    return left && left < ms ? left : ms;
}

/* What a connecting thread needs, copied: the config it came from may be
 * reloaded (and freed) before it ends. */
struct connect_job {
    struct exp_targets *t;
    struct target *g;
    char spec[700], module[128], password[256], auth[128];
    struct ntl_source_options opt;
    struct exp_krb5 *krb5;         /* a reference, or NULL */
    struct ntl_source *src;        /* the target's only once the setup is done */
    unsigned collectors;
    bool generic;
};

/* The title database, once per target: a reconnection keeps it. */
static int load_titles(struct target *g, struct ntl_source *src, bool help,
                       struct ntl_error *err)
{
    bool missing = false;
    int rc;
    if (g->titles)
        return 0;
    if (!(g->titles = ntl_perf_titles_new()))
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    rc = ntl_source_load_titles(src, NTL_TITLES_COUNTER, NTL_PERF_LANG_ENGLISH,
                                NTL_SOURCE_TITLES_OWN, g->titles, &missing, err);
    if (rc == 0 && missing)
        rc = ntl_perf_titles_add_standard(g->titles);
    if (rc == 0 && help) /* help texts only serve the generic mapping's HELP lines */
        ntl_source_load_titles(src, NTL_TITLES_HELP, NTL_PERF_LANG_ENGLISH,
                               NTL_SOURCE_TITLES_OWN, g->titles, NULL, NULL);
    if (rc < 0)
        drop_titles(g);
    return rc;
}

/* Opens the source (j->src) and reads what each scrape reuses. Runs without
 * the target's lock: while it is marked connecting, no probe touches its
 * titles or os facts, and the source becomes the target's at the end. */
static int connect_target(struct connect_job *j, struct ntl_error *err)
{
    struct target *g = j->g;
    char msg[400];
    int rc;

    if (j->krb5 && exp_krb5_ticket(j->krb5, &j->opt.krb5_ccache, msg, sizeof msg) < 0)
        return ntl_error_set(err, NTL_ERR_AUTH, NULL, NTL_NO_OFFSET, "credential set '%s': %s",
                             j->auth, msg);
    if ((rc = ntl_msrpc_source_open(j->spec, &j->opt, &j->src, err)) < 0) {
        if (rc == NTL_ERR_AUTH && j->krb5)
            exp_krb5_failed(j->krb5); /* a fresh ticket for the next attempt */
        return rc;
    }
    if ((j->collectors & NTL_PROM_OS) && strcmp(g->host, "local") != 0) {
        if (!g->os && !(g->os = malloc(sizeof *g->os)))
            return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
        if ((rc = exp_os_read(j->src, g->os, err)) < 0)
            return rc;
    }
    return load_titles(g, j->src, j->generic, err);
}

static void grow_backoff(struct target *g)
{
    g->backoff_ms = g->backoff_ms ? g->backoff_ms * 2 : BACKOFF_MIN_MS;
    if (g->backoff_ms > BACKOFF_MAX_MS)
        g->backoff_ms = BACKOFF_MAX_MS;
    g->retry_at = now() + g->backoff_ms / 1000.0;
}

static const char *error_kind(int rc);

/* The connecting thread: connects, hands the result to the target (or
 * frees a target a reload dropped meanwhile), wakes the waiting probes. */
static void *connect_thread(void *arg)
{
    struct connect_job *j = arg;
    struct target *g = j->g;
    struct ntl_error err = {0};
    while (sem_wait(&j->t->setups) != 0)
        ;
    int rc = connect_target(j, &err);
    sem_post(&j->t->setups);
    struct exp_targets *t = j->t;

    if (rc < 0) {
        if (strstr(err.message, "Kerberos") && !strstr(err.message, "credential set")) {
            char why[sizeof err.message];
            snprintf(why, sizeof why, "%s", err.message);
            ntl_error_set(&err, rc, NULL, NTL_NO_OFFSET, "credential set '%s': %.300s", j->auth,
                          why);
        }
        exp_log("warn", "connect failed", "target", g->host, "module", j->module,
                "error_kind", error_kind(rc), "err", err.message, (char *)NULL);
        ntl_source_close(j->src);
        j->src = NULL;
    }
    pthread_mutex_lock(&g->lock);
    g->src = j->src;
    g->connecting = false;
    g->connect_rc = rc;
    snprintf(g->connect_msg, sizeof g->connect_msg, "%s", rc < 0 ? err.message : "");
    if (rc < 0) {
        grow_backoff(g);
        snprintf(g->error_kind, sizeof g->error_kind, "%s", error_kind(rc));
    } else if (!g->orphaned) {
        atomic_fetch_add(&j->t->connected, 1);
    }
    pthread_cond_broadcast(&g->connected);
    bool orphaned = g->orphaned;
    pthread_mutex_unlock(&g->lock);
    if (orphaned) {
        ntl_source_close(g->src);
        free_target(g);
    }
    exp_krb5_unref(j->krb5);
    memset(j->password, 0, sizeof j->password);
    free(j);
    atomic_fetch_sub(&t->inflight, 1); /* the last use of t */
    return NULL;
}

/* Starts connecting g with m's settings (the module's own timeouts: the
 * connection outlives the scrape). Called with g->lock held. */
static int start_connect(struct exp_targets *t, struct target *g, const struct exp_module *m,
                         struct ntl_error *err)
{
    struct connect_job *j = calloc(1, sizeof *j);
    pthread_attr_t attr;
    pthread_t th;
    if (!j)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    j->t = t;
    j->g = g;
    make_spec(m, g->host, j->spec, sizeof j->spec);
    snprintf(j->module, sizeof j->module, "%s", m->name);
    j->opt.connect_timeout_ms = m->connect_timeout_ms ? m->connect_timeout_ms : DEFAULT_CONNECT_MS;
    j->opt.call_timeout_ms = m->call_timeout_ms ? m->call_timeout_ms : DEFAULT_CALL_MS;
    j->opt.anonymous = !m->auth || m->auth->anonymous;
    if (m->auth) {
        snprintf(j->auth, sizeof j->auth, "%s", m->auth->name);
        snprintf(j->password, sizeof j->password, "%s", m->auth->password);
        j->opt.password = j->password[0] ? j->password : NULL;
        j->opt.kerberos = m->auth->kerberos;
        j->krb5 = exp_krb5_ref(m->auth->krb5);
    }
    j->collectors = m->collectors;
    j->generic = m->generic;
    g->connecting = true;
    atomic_fetch_add(&t->inflight, 1);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int e = pthread_create(&th, &attr, connect_thread, j);
    pthread_attr_destroy(&attr);
    if (e == 0)
        return 0;
    g->connecting = false;
    atomic_fetch_sub(&t->inflight, 1);
    exp_krb5_unref(j->krb5);
    free(j);
    return ntl_error_set(err, NTL_ERR_SYSTEM, NULL, NTL_NO_OFFSET, "cannot start a thread: %s",
                         strerror(e));
}

/* The module's instance regex, matched against the name without "#N". */
static bool keep_instance(void *arg, const struct ntl_perf_object *o,
                          const struct ntl_perf_instance *in)
{
    const struct exp_module *m = arg;
    (void)o;
    return regexec(&m->instances, in->name, 0, NULL, 0) == 0;
}

static int write_metrics(const struct exp_module *m, struct target *g,
                         const struct ntl_perf_block *b, struct ntl_buf *out,
                         struct ntl_error *err)
{
    struct ntl_prom_page pg = {b, g->titles, NULL, 0, NULL, NULL, g->os ? &g->os->facts : NULL};
    if (m->has_instances) {
        pg.keep = keep_instance;
        pg.keep_arg = (void *)m;
    }
    struct ntl_prom_generic gen = {.detail = m->detail, .objects = m->objects,
                                   .nobjects = m->nobjects};
    int rc = ntl_prom_write_windows(&pg, m->collectors, out, err);
    if (rc == 0 && m->generic)
        rc = ntl_prom_write_generic(&pg, &gen, out, err);
    return rc;
}

/* Milliseconds left before `until` (monotonic seconds; 0: no bound), at
 * least 1; 0 when there is no bound. */
static unsigned left_ms(double until)
{
    double left = until - now();
    return until == 0 ? 0 : left < 0.001 ? 1 : (unsigned)(left * 1000);
}

/* An absolute CLOCK_MONOTONIC time (the targets' condition variables use
 * that clock). */
static struct timespec mono_at(double t)
{
    struct timespec ts = {(time_t)t, (long)((t - (double)(time_t)t) * 1e9)};
    return ts;
}

/* g's connection: waits for its connecting thread (started here unless the
 * backoff says wait) while the scrape has time left. Called and returns
 * with g->lock held. Returns 0 with g->src set, or a negative status with
 * kind (32 bytes) set to the failure's error_kind. */
static int ensure_connected(struct exp_targets *t, struct target *g,
                            const struct exp_module *m, double until, char *kind,
                            struct ntl_error *err)
{
    int rc;
    if (g->src && !g->connecting)
        return 0;
    if (!g->connecting && now() < g->retry_at) {
        snprintf(kind, 32, "%s", g->error_kind[0] ? g->error_kind : "connect");
        return ntl_error_set(err, NTL_ERR_CONNECT, NULL, NTL_NO_OFFSET,
                             "waiting before reconnecting (last attempt: %.300s)",
                             g->connect_msg);
    }
    if (!g->connecting && (rc = start_connect(t, g, m, err)) < 0) {
        snprintf(kind, 32, "%s", error_kind(rc));
        return rc;
    }
    struct timespec ts = mono_at(until);
    while (g->connecting)
        if (until ? pthread_cond_timedwait(&g->connected, &g->lock, &ts) == ETIMEDOUT
                  : pthread_cond_wait(&g->connected, &g->lock) != 0)
            break;
    if (g->connecting) {
        snprintf(kind, 32, "connecting");
        return ntl_error_set(err, NTL_ERR_TIMEOUT, NULL, NTL_NO_OFFSET,
                             "still connecting when the scrape timeout came (the connection "
                             "carries on for the next scrape)");
    }
    if (g->src)
        return 0;
    snprintf(kind, 32, "%s", g->error_kind);
    return ntl_error_set(err, g->connect_rc, NULL, NTL_NO_OFFSET, "%s", g->connect_msg);
}

/* Gathers one snapshot into page (a buffer of its own, so a failure halfway
 * leaves nothing of it in the answer), all of it before `until` (monotonic
 * seconds; 0: only the module's timeouts bound it). Returns 0, or a
 * negative status with kind set. */
static int scrape(struct exp_targets *t, struct target *g, const struct exp_module *m,
                  double until, struct ntl_buf *page, char *kind, struct ntl_error *err)
{
    struct ntl_perf_block *b = NULL;
    struct ntl_buf raw;
    int rc;
    if ((rc = ensure_connected(t, g, m, until, kind, err)) < 0)
        return rc;
    if (until && now() >= until) { /* the connection stays */
        snprintf(kind, 32, "timeout");
        return ntl_error_set(err, NTL_ERR_TIMEOUT, NULL, NTL_NO_OFFSET,
                             "the scrape timeout passed while waiting for the connection");
    }
    if (strcmp(g->host, "local"))
        rc = ntl_msrpc_smb_set_call_timeout(
            g->src, bound_ms(m->call_timeout_ms, DEFAULT_CALL_MS, left_ms(until)), err);
    /* The raw block lives for this scrape only: a fleet's idle targets
     * hold no snapshot (hundreds of KB each on Windows). */
    ntl_buf_init(&raw, 0);
    if (rc == 0 && (rc = ntl_source_snapshot(g->src, "Global", &raw, &b, err)) == 0)
        rc = write_metrics(m, g, b, page, err);
    ntl_perf_block_free(b);
    ntl_buf_free(&raw);
    if (rc < 0) {
        snprintf(kind, 32, "%s", error_kind(rc));
        snprintf(g->error_kind, sizeof g->error_kind, "%s", kind);
    }
    /* A query that ran out of time keeps its connection: the transport
     * drops the late reply before the next call, and says NTL_ERR_IO once
     * the reply is later than the call timeout allows. Reconnecting costs
     * far more than a query, most of all on the loaded server that made
     * the query late. */
    if (rc < 0 && rc != NTL_ERR_LIMIT && rc != NTL_ERR_TIMEOUT) {
        disconnect(t, g); /* the connection may be broken: the next scrape reconnects */
        grow_backoff(g);
    }
    return rc;
}

/* The error_kind label: what an alert rule tells apart. */
static const char *error_kind(int rc)
{
    switch (rc) {
    case NTL_ERR_CONNECT: return "connect";
    case NTL_ERR_AUTH: return "auth";
    case NTL_ERR_ACCESS: return "access";
    case NTL_ERR_TIMEOUT: return "timeout";
    case NTL_ERR_REMOTE: return "remote";
    case NTL_ERR_IO: return "io";
    case NTL_ERR_TRUNCATED:
    case NTL_ERR_FORMAT: return "malformed_data";
    case NTL_ERR_LIMIT: return "limit";
    case NTL_ERR_NOMEM: return "out_of_memory";
    default: return "other";
    }
}

static int probe_lines(struct ntl_buf *out, bool ok, const char *kind, double seconds)
{
    struct ntl_prom_label l = {"error_kind", kind};
    if (ntl_prom_family(out, "probe_success", "Whether the target was read.", NTL_PROM_GAUGE,
                        NULL) < 0 ||
        ntl_prom_sample(out, "probe_success", l.value[0] ? &l : NULL, l.value[0] ? 1 : 0,
                        ok ? 1 : 0, NULL) < 0 ||
        ntl_prom_family(out, "probe_duration_seconds", "How long the probe took.",
                        NTL_PROM_GAUGE, NULL) < 0 ||
        ntl_prom_sample(out, "probe_duration_seconds", NULL, 0, seconds, NULL) < 0)
        return -1;
    return 0;
}

int exp_targets_probe(struct exp_targets *t, const struct exp_module *m, const char *host,
                      double timeout_s, struct ntl_buf *out)
{
    struct ntl_error err = {0};
    struct ntl_buf page;
    double start = now(), until = timeout_s > 0 ? start + timeout_s : 0;
    struct target *g = find(t, m->name, host ? host : "local");
    char kind[32] = "";
    int rc;

    if (!g)
        return -1;
    if (!lock_target(g, bound_ms(m->connect_timeout_ms, DEFAULT_CONNECT_MS, left_ms(until)))) {
        pthread_mutex_lock(&t->lock);
        t->stats.probes++;
        t->stats.failures++;
        pthread_mutex_unlock(&t->lock);
        return probe_lines(out, false, "busy", now() - start);
    }
    ntl_buf_init(&page, out->limit);
    rc = scrape(t, g, m, until, &page, kind, &err);
    if (rc == 0) {
        g->backoff_ms = 0;
        g->error_kind[0] = '\0';
    }
    double took = now() - start;
    if (rc < 0)
        exp_log("warn", "probe failed", "target", g->host, "module", m->name, "error_kind",
                kind, "err", err.message, (char *)NULL);
    int wrc = probe_lines(out, rc == 0, rc == 0 ? "" : kind, took);
    if (wrc == 0 && rc == 0 && page.len && ntl_buf_append(out, page.data, page.len) < 0)
        wrc = -1;
    pthread_mutex_unlock(&g->lock);
    ntl_buf_free(&page);
    pthread_mutex_lock(&t->lock);
    t->stats.probes++;
    t->stats.failures += rc < 0;
    t->stats.probe_seconds += took;
    pthread_mutex_unlock(&t->lock);
    return wrc;
}

void exp_targets_stats(struct exp_targets *t, struct exp_stats *s)
{
    pthread_mutex_lock(&t->lock);
    *s = t->stats;
    pthread_mutex_unlock(&t->lock);
    s->connected = atomic_load(&t->connected);
}

void exp_targets_count_reload(struct exp_targets *t, bool ok)
{
    pthread_mutex_lock(&t->lock);
    t->stats.reloads++;
    t->stats.reload_failures += !ok;
    pthread_mutex_unlock(&t->lock);
}
