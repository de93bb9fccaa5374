/* The HTTP side: libmicrohttpd with a thread per connection, so a probe that
 * waits on a slow target holds up no other connection (a thread pool runs
 * each thread's connections one after the other: with a Prometheus
 * connection per target, one hung target delayed the dozens queued behind
 * it). --concurrency probes run at once (a semaphore); a connection limit
 * and a timeout bound slow clients.
 * Query strings are checked before anything is looked up: one target, one
 * module, each once, of bounded length, a target that is a host name or
 * address (it becomes part of an smb:// spec, so nothing else may pass). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "exporter.h"
#include "exporter-mhd.h"
#include "ntlens/prom.h"

#define PAGE_LIMIT (64u << 20)
#define MAX_VALUE 255
#define SCRAPE_TIMEOUT_HEADER "X-Prometheus-Scrape-Timeout-Seconds"
#define CONNECTION_LIMIT 4096u       /* Prometheus keeps a connection per target */
#define THREAD_STACK (512u << 10)    /* a handler's frames are small; 8 MB each is not */
#define SLOT_WAIT_S 10.0             /* for a free probe slot, without a scrape timeout */

/* Set once before the daemon starts, read by its threads after. */
static const struct exp_mhd *mhd;

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *type,
                             const void *data, size_t len)
{
    struct MHD_Response *r =
        mhd->create_response_from_buffer(len, (void *)data, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    mhd->add_response_header(r, "Content-Type", type);
    enum MHD_Result rc = mhd->queue_response(c, code, r);
    mhd->destroy_response(r);
    return rc;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned code, const char *msg)
{
    char buf[600];
    int n = snprintf(buf, sizeof buf, "%s\n", msg);
    return reply(c, code, "text/plain; charset=utf-8", buf, (size_t)n);
}

struct query {
    const char *target, *module;
    unsigned ntarget, nmodule, nother;
};

static enum MHD_Result arg(void *p, enum MHD_ValueKind kind, const char *key, const char *value)
{
    struct query *q = p;
    (void)kind;
    if (!strcmp(key, "target")) {
        q->target = value;
        q->ntarget++;
    } else if (!strcmp(key, "module")) {
        q->module = value;
        q->nmodule++;
    } else {
        q->nother++;
    }
    return MHD_YES;
}

/* A DNS name, IPv4 or IPv6 address, with an optional :PORT. */
static bool host_ok(const char *h)
{
    size_t n = strlen(h);
    if (!n || n > MAX_VALUE || h[0] == '-' || h[0] == '.')
        return false;
    return strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") == n;
}

/* The problem with a probe's query string, or NULL. */
static const char *query_error(const struct query *q)
{
    if (q->ntarget == 0)
        return "missing parameter: target";
    if (q->ntarget > 1)
        return "parameter target given more than once";
    if (q->nmodule > 1)
        return "parameter module given more than once";
    if (q->nother)
        return "unknown parameter (only target and module are accepted)";
    if (!q->target || !host_ok(q->target))
        return "target must be a host name or address with an optional :PORT, at most 255 "
               "characters";
    if (q->module && strlen(q->module) > MAX_VALUE)
        return "module name too long";
    return NULL;
}

static enum MHD_Result send_page(struct MHD_Connection *c, struct ntl_buf *page, int rc)
{
    enum MHD_Result r = rc == 0 ? reply(c, 200, "text/plain; version=0.0.4; charset=utf-8",
                                        page->data ? (const void *)page->data : "", page->len)
                                : text(c, 500, "the page could not be written (out of memory "
                                                "or larger than 64 MiB)");
    ntl_buf_free(page);
    return r;
}

/* How long a probe may take: Prometheus sends its scrape timeout in
 * X-Prometheus-Scrape-Timeout-Seconds; the probe keeps half a second of it
 * (blackbox_exporter's offset) to write the page, or half of a timeout
 * under a second. 0 without the header; -1 when it is not a number of
 * seconds up to a day. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double scrape_budget(struct MHD_Connection *c)
{
    const char *h = mhd->lookup_connection_value(c, MHD_HEADER_KIND, SCRAPE_TIMEOUT_HEADER);
    char *end;
    double t;
    if (!h)
        return 0;
    errno = 0;
    t = strtod(h, &end);
    if (end == h || *end || errno || !(t > 0 && t <= 86400))
        return -1;
    return t > 1 ? t - 0.5 : t / 2;
}

/* Waits for one of the --concurrency probe slots, at most `budget` seconds
 * (0: SLOT_WAIT_S). */
static bool take_slot(struct exp_server *s, double budget)
{
    struct timespec until;
    double wait = budget > 0 ? budget : SLOT_WAIT_S;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)wait;
    until.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (sem_timedwait(&s->slots, &until) != 0)
        if (errno != EINTR)
            return false;
    return true;
}

static enum MHD_Result busy(struct MHD_Connection *c)
{
    return text(c, 503, "every probe slot stayed busy (see --concurrency)");
}

static enum MHD_Result probe(struct exp_server *s, struct MHD_Connection *c)
{
    struct query q = {0};
    struct ntl_buf page;
    const char *bad;
    double budget = scrape_budget(c);
    mhd->get_connection_values(c, MHD_GET_ARGUMENT_KIND, arg, &q);
    if ((bad = query_error(&q)) != NULL)
        return text(c, 400, bad);
    if (budget < 0)
        return text(c, 400, SCRAPE_TIMEOUT_HEADER " must be a number of seconds, above 0 "
                            "and at most 86400");
    double start = now_s();
    if (!take_slot(s, budget))
        return busy(c);
    if (budget > 0) { /* what is left of it after the wait */
        double left = budget - (now_s() - start);
        budget = left > 0.001 ? left : 0.001;
    }
    pthread_rwlock_rdlock(&s->lock);
    const char *name = q.module ? q.module : s->cfg.modules[0].name;
    const struct exp_module *m = exp_config_module(&s->cfg, name);
    if (!m) {
        pthread_rwlock_unlock(&s->lock);
        sem_post(&s->slots);
        return text(c, 400, "unknown module (see the modules of the config file)");
    }
    struct exp_module eff = *m; /* the module as this target overrides it */
    exp_config_apply_target(&s->cfg, q.target, &eff);
    ntl_buf_init(&page, PAGE_LIMIT);
    int rc = exp_targets_probe(s->targets, &eff, q.target, budget, &page);
    pthread_rwlock_unlock(&s->lock);
    sem_post(&s->slots);
    return send_page(c, &page, rc);
}

/* Resident memory from /proc/self/statm (pages). */
static double resident_bytes(void)
{
    unsigned long size, rss;
    FILE *f = fopen("/proc/self/statm", "r");
    int n = f ? fscanf(f, "%lu %lu", &size, &rss) : 0;
    if (f)
        fclose(f);
    return n == 2 ? (double)rss * 4096.0 : 0;
}

static int own_metrics(struct exp_server *s, struct ntl_buf *out)
{
    struct exp_stats st;
    exp_targets_stats(s->targets, &st);
    const struct {
        const char *name, *help;
        enum ntl_prom_type type;
        double v;
    } m[] = {
        {"ntlens_exporter_probes_total", "Probes served.", NTL_PROM_COUNTER, (double)st.probes},
        {"ntlens_exporter_probe_failures_total", "Probes whose target could not be read.",
         NTL_PROM_COUNTER, (double)st.failures},
        {"ntlens_exporter_probe_seconds_total", "Time spent in probes.", NTL_PROM_COUNTER,
         st.probe_seconds},
        {"ntlens_exporter_connected_targets", "Targets with an open connection.",
         NTL_PROM_GAUGE, (double)st.connected},
        {"ntlens_exporter_config_reloads_total", "Config reloads attempted.", NTL_PROM_COUNTER,
         (double)st.reloads},
        {"ntlens_exporter_config_reload_failures_total", "Config reloads refused.",
         NTL_PROM_COUNTER, (double)st.reload_failures},
        {"ntlens_exporter_resident_memory_bytes", "Resident memory of the exporter process "
         "(its helper processes not included).", NTL_PROM_GAUGE, resident_bytes()},
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (ntl_prom_family(out, m[i].name, m[i].help, m[i].type, NULL) < 0 ||
            ntl_prom_sample(out, m[i].name, NULL, 0, m[i].v, NULL) < 0)
            return -1;
    return 0;
}

static enum MHD_Result metrics(struct exp_server *s, struct MHD_Connection *c)
{
    struct ntl_buf page;
    struct exp_module local = {.name = "local", .collectors = NTL_PROM_ALL};
    ntl_buf_init(&page, PAGE_LIMIT);
    int rc = own_metrics(s, &page);
    /* this host through the same collectors, as windows_exporter serves its own */
    if (rc == 0) {
        if (!take_slot(s, 0)) {
            ntl_buf_free(&page);
            return busy(c);
        }
        pthread_rwlock_rdlock(&s->lock); /* a reload waits: it frees targets */
        rc = exp_targets_probe(s->targets, &local, NULL, 0, &page);
        pthread_rwlock_unlock(&s->lock);
        sem_post(&s->slots);
    }
    return send_page(c, &page, rc);
}

static enum MHD_Result reload(struct exp_server *s, struct MHD_Connection *c)
{
    char msg[512];
    if (exp_server_reload(s, msg, sizeof msg) < 0)
        return text(c, 500, msg);
    return text(c, 200, "config reloaded");
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **state)
{
    struct exp_server *s = cls;
    (void)version;
    (void)upload;
    if (!*state) { /* the first call is for the headers only */
        *state = s;
        return MHD_YES;
    }
    if (*upload_size)
        return text(c, 413, "no request body is accepted");
    bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    if (!strcmp(url, "/-/reload"))
        return strcmp(method, "POST") ? text(c, 405, "use POST") : reload(s, c);
    if (!get)
        return text(c, 405, "use GET");
    if (!strcmp(url, "/metrics"))
        return metrics(s, c);
    if (!strcmp(url, "/probe"))
        return probe(s, c);
    if (!strcmp(url, "/"))
        return text(c, 200, "ntlens exporter: /metrics (this exporter and host), "
                            "/probe?target=HOST&module=NAME, POST /-/reload");
    return text(c, 404, "not found: /metrics, /probe?target=HOST&module=NAME, /-/reload");
}

static int parse_addr(const char *addr, struct sockaddr_storage *ss, char *msg, size_t size)
{
    char host[128];
    const char *colon = strrchr(addr, ':');
    memset(ss, 0, sizeof *ss);
    if (!colon || (size_t)(colon - addr) >= sizeof host || !colon[1]) {
        snprintf(msg, size, "listen address '%s' must be HOST:PORT", addr);
        return -1;
    }
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port < 1 || port > 65535) {
        snprintf(msg, size, "listen address '%s': bad port", addr);
        return -1;
    }
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
    size_t n = strlen(host);
    if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
        host[n - 1] = '\0';
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        if (inet_pton(AF_INET6, host + 1, &v6->sin6_addr) == 1)
            return 0;
    } else {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        if (!*host || inet_pton(AF_INET, host, &v4->sin_addr) == 1)
            return 0;
    }
    snprintf(msg, size, "listen address '%s': not an IP address", addr);
    return -1;
}

int exp_server_start(struct exp_server *s, const char *addr, unsigned threads, char *msg,
                     size_t size)
{
    struct sockaddr_storage ss;
    if (parse_addr(addr, &ss, msg, size) < 0 || !(mhd = exp_mhd_load(msg, size)))
        return -1;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_POLL;
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    if (sem_init(&s->slots, 0, threads) != 0) {
        snprintf(msg, size, "cannot make %u probe slots", threads);
        return -1;
    }
    s->daemon = mhd->start_daemon(flags, 0, NULL, NULL, handle, s,
                                  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                                  MHD_OPTION_CONNECTION_LIMIT, CONNECTION_LIMIT,
                                  MHD_OPTION_THREAD_STACK_SIZE, (size_t)THREAD_STACK,
                                  MHD_OPTION_CONNECTION_TIMEOUT, 60u,
                                  MHD_OPTION_END);
    if (!s->daemon) {
        sem_destroy(&s->slots);
        snprintf(msg, size, "cannot listen on %s (in use, or not an address of this host)", addr);
        return -1;
    }
    return 0;
}

void exp_server_stop(struct exp_server *s)
{
    if (s->daemon) {
        mhd->stop_daemon(s->daemon);
        sem_destroy(&s->slots);
    }
    s->daemon = NULL;
}

int exp_server_reload(struct exp_server *s, char *msg, size_t size)
{
    struct exp_config fresh;
    if (!s->config_path) {
        snprintf(msg, size, "no config file to reload (started without --config)");
        return -1;
    }
    if (exp_config_load(s->config_path, &fresh, msg, size) < 0) {
        exp_targets_count_reload(s->targets, false);
        return -1;
    }
    pthread_rwlock_wrlock(&s->lock);
    exp_config_free(&s->cfg);
    s->cfg = fresh;
    exp_targets_reset(s->targets);
    pthread_rwlock_unlock(&s->lock);
    exp_targets_count_reload(s->targets, true);
    return 0;
}
