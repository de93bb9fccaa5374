/* The exporter's YAML config (libyaml's document API keeps each node's line,
 * so every error names FILE:LINE and the key). Secrets are read here from
 * password and authentication files and never copied into a message. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "exporter.h"
#include "ntlens/prom.h"

/* The Kerberos keys of the credential set being read. */
struct krb5_keys {
    char keytab[PATH_MAX], principal[256], ccache[PATH_MAX];
    unsigned renew_s;
};

struct loader {
    yaml_document_t doc;
    const char *path;
    char *msg;
    size_t size;
    struct exp_config *cfg;
    struct krb5_keys krb5;
};

static int fail(struct loader *l, const yaml_node_t *n, const char *key, const char *fmt, ...)
    NTL_PRINTF(4, 5);
static int fail(struct loader *l, const yaml_node_t *n, const char *key, const char *fmt, ...)
{
    va_list ap;
    int k = snprintf(l->msg, l->size, "%s:%zu: %s: ", l->path, n ? n->start_mark.line + 1 : 0,
                     key);
    va_start(ap, fmt);
    if (k > 0 && (size_t)k < l->size)
        vsnprintf(l->msg + k, l->size - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *node(struct loader *l, int id)
{
    return yaml_document_get_node(&l->doc, id);
}

/* Calls fn for each key/value pair of mapping n. */
typedef int (*pair_fn)(struct loader *l, const char *path, const char *key, yaml_node_t *v,
                       void *arg);
static int each_pair(struct loader *l, yaml_node_t *n, const char *path, pair_fn fn, void *arg)
{
    if (!n || n->type != YAML_MAPPING_NODE)
        return fail(l, n, path, "must be a mapping");
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(l, p->key);
        const char *key = scalar(k);
        char sub[256];
        if (!key)
            return fail(l, k, path, "keys must be plain strings");
        snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", key);
        if (fn(l, sub, key, node(l, p->value), arg) < 0)
            return -1;
    }
    return 0;
}

static int get_bool(struct loader *l, const char *path, yaml_node_t *v, bool *out)
{
    const char *s = scalar(v);
    if (s && (!strcmp(s, "true") || !strcmp(s, "yes")))
        *out = true;
    else if (s && (!strcmp(s, "false") || !strcmp(s, "no")))
        *out = false;
    else
        return fail(l, v, path, "must be true or false");
    return 0;
}

static int get_long(struct loader *l, const char *path, yaml_node_t *v, long lo, long hi,
                    long *out)
{
    const char *s = scalar(v);
    char *end;
    errno = 0;
    long x = s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || *end || errno || x < lo || x > hi)
        return fail(l, v, path, "must be a whole number from %ld to %ld", lo, hi);
    *out = x;
    return 0;
}

static int copy(struct loader *l, const char *path, yaml_node_t *v, char *dst, size_t size)
{
    const char *s = scalar(v);
    if (!s || strlen(s) >= size)
        return fail(l, v, path, "must be a string of at most %zu bytes", size - 1);
    memcpy(dst, s, strlen(s) + 1);
    return 0;
}

/* "DOMAIN/USER", "DOMAIN\USER" or "USER". */
static void set_user(struct exp_auth *a, const char *s)
{
    const char *sep = strpbrk(s, "/\\");
    if (sep && (size_t)(sep - s) < sizeof a->domain) {
        memcpy(a->domain, s, (size_t)(sep - s));
        a->domain[sep - s] = '\0';
        s = sep + 1;
    }
    snprintf(a->user, sizeof a->user, "%s", s);
}

/* The first line of a password file. The message names the file, never
 * its content. */
static int read_password(struct loader *l, const char *path, yaml_node_t *v, struct exp_auth *a)
{
    const char *file = scalar(v);
    FILE *f = file ? fopen(file, "r") : NULL;
    if (!f)
        return fail(l, v, path, "cannot read %s: %s", file ? file : "(not a string)",
                    file ? strerror(errno) : "");
    if (!fgets(a->password, sizeof a->password, f))
        a->password[0] = '\0';
    a->password[strcspn(a->password, "\r\n")] = '\0';
    fclose(f);
    return 0;
}

/* smbclient's authentication file: username=, password=, domain= lines. */
static int read_auth_file(struct loader *l, const char *path, yaml_node_t *v, struct exp_auth *a)
{
    const char *file = scalar(v);
    FILE *f = file ? fopen(file, "r") : NULL;
    char line[1024];
    if (!f)
        return fail(l, v, path, "cannot read %s: %s", file ? file : "(not a string)",
                    file ? strerror(errno) : "");
    while (fgets(line, sizeof line, f)) {
        char *eq = strchr(line, '='), *key = line, *val;
        if (!eq)
            continue;
        *eq = '\0';
        val = eq + 1;
        key += strspn(key, " \t");
        key[strcspn(key, " \t")] = '\0';
        val += strspn(val, " \t");
        val[strcspn(val, "\r\n")] = '\0';
        if (!strcmp(key, "username"))
            set_user(a, val);
        else if (!strcmp(key, "password"))
            snprintf(a->password, sizeof a->password, "%s", val);
        else if (!strcmp(key, "domain"))
            snprintf(a->domain, sizeof a->domain, "%s", val);
    }
    memset(line, 0, sizeof line);
    fclose(f);
    return 0;
}

/* keytab (must be readable now: kinit reads it at the first probe),
 * principal, ccache, ticket_renew (seconds). */
static int krb5_key(struct loader *l, const char *path, const char *key, yaml_node_t *v,
                    struct exp_auth *a)
{
    struct krb5_keys *k = &l->krb5;
    long x;
    (void)a;
    if (!strcmp(key, "ticket_renew")) {
        if (get_long(l, path, v, 60, 86400, &x) < 0)
            return -1;
        k->renew_s = (unsigned)x;
        return 0;
    }
    if (!strcmp(key, "principal"))
        return copy(l, path, v, k->principal, sizeof k->principal);
    if (!strcmp(key, "ccache"))
        return copy(l, path, v, k->ccache, sizeof k->ccache);
    if (copy(l, path, v, k->keytab, sizeof k->keytab) < 0)
        return -1;
    if (access(k->keytab, R_OK) != 0)
        return fail(l, v, path, "cannot read the keytab: %s", strerror(errno));
    return 0;
}

static int auth_key(struct loader *l, const char *path, const char *key, yaml_node_t *v,
                    void *arg)
{
    struct exp_auth *a = arg;
    if (!strcmp(key, "user")) {
        const char *s = scalar(v);
        if (!s)
            return fail(l, v, path, "must be a string");
        set_user(a, s);
        return 0;
    }
    if (!strcmp(key, "password_file"))
        return read_password(l, path, v, a);
    if (!strcmp(key, "authentication_file"))
        return read_auth_file(l, path, v, a);
    if (!strcmp(key, "kerberos"))
        return get_bool(l, path, v, &a->kerberos);
    if (!strcmp(key, "anonymous"))
        return get_bool(l, path, v, &a->anonymous);
    if (!strcmp(key, "password"))
        return fail(l, v, path, "passwords do not belong in the config: use password_file");
    if (!strcmp(key, "keytab") || !strcmp(key, "ccache") || !strcmp(key, "principal") ||
        !strcmp(key, "ticket_renew"))
        return krb5_key(l, path, key, v, a);
    return fail(l, v, path, "unknown key (user, password_file, authentication_file, "
                            "kerberos, keytab, principal, ccache, ticket_renew, anonymous)");
}

/* A Kerberos set's keytab/principal or ccache, checked together once the
 * set is read. */
static int krb5_check(struct loader *l, const char *path, yaml_node_t *v, struct exp_auth *a)
{
    struct krb5_keys *k = &l->krb5;
    if (k->keytab[0] && k->ccache[0])
        return fail(l, v, path, "keytab and ccache exclude each other (kinit fills a cache of "
                                "its own from the keytab)");
    if (k->keytab[0] && !k->principal[0])
        return fail(l, v, path, "a keytab needs principal (e.g. monitor@EXAMPLE.COM)");
    if (!k->keytab[0] && (k->principal[0] || k->renew_s))
        return fail(l, v, path, "principal and ticket_renew go with keytab");
    if (!k->keytab[0] && !k->ccache[0])
        return 0;
    if (a->password[0] || a->anonymous)
        return fail(l, v, path, "a Kerberos set takes no password and is not anonymous");
    /* libsmbclient logs on anonymously without a user name, ticket or not. */
    if (!a->user[0] && k->ccache[0])
        return fail(l, v, path, "a ccache set needs user (the ticket's principal name)");
    if (!a->user[0])
        snprintf(a->user, sizeof a->user, "%.*s", (int)strcspn(k->principal, "@"),
                 k->principal);
    a->kerberos = true;
    if (!(a->krb5 = exp_krb5_new(a->name, k->keytab, k->principal,
                                 k->ccache[0] ? k->ccache : NULL,
                                 k->renew_s ? k->renew_s : 3600)))
        return fail(l, v, path, "out of memory");
    return 0;
}

static int add_auth(struct loader *l, const char *path, const char *key, yaml_node_t *v,
                    void *arg)
{
    (void)arg;
    struct exp_config *c = l->cfg;
    struct exp_auth *a = &c->auths[c->nauths];
    memset(a, 0, sizeof *a);
    if (!(a->name = strdup(key)))
        return fail(l, v, path, "out of memory");
    c->nauths++;
    memset(&l->krb5, 0, sizeof l->krb5);
    if (each_pair(l, v, path, auth_key, a) < 0)
        return -1;
    return krb5_check(l, path, v, a);
}

static int find_auth(struct loader *l, const char *path, yaml_node_t *v,
                     const struct exp_auth **out)
{
    for (size_t i = 0; i < l->cfg->nauths; i++)
        if (scalar(v) && !strcmp(scalar(v), l->cfg->auths[i].name)) {
            *out = &l->cfg->auths[i];
            return 0;
        }
    return fail(l, v, path, "no credential set '%s' under auths (before modules and targets)",
                scalar(v) ? scalar(v) : "?");
}

static int collectors(struct loader *l, const char *path, yaml_node_t *v, unsigned *mask)
{
    if (!v || v->type != YAML_SEQUENCE_NODE)
        return fail(l, v, path, "must be a list of collectors");
    *mask = 0;
    for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++) {
        yaml_node_t *n = node(l, *i);
        unsigned bit;
        if (!scalar(n) || ntl_prom_collector_parse(scalar(n), &bit) < 0)
            return fail(l, n, path, "unknown collector '%s' (cpu, memory, logical_disk, "
                                    "physical_disk, net, process, system, os)",
                        scalar(n) ? scalar(n) : "?");
        *mask |= bit;
    }
    return 0;
}

static int objects(struct loader *l, const char *path, yaml_node_t *v, struct exp_module *m)
{
    if (!v || v->type != YAML_SEQUENCE_NODE)
        return fail(l, v, path, "must be a list of object indices");
    size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
    free(m->objects);
    if (!(m->objects = calloc(n ? n : 1, sizeof *m->objects)))
        return fail(l, v, path, "out of memory");
    m->nobjects = 0;
    for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++) {
        long x;
        if (get_long(l, path, node(l, *i), 1, NTL_PERF_TITLES_MAX_INDEX, &x) < 0)
            return -1;
        m->objects[m->nobjects++] = (uint32_t)x;
    }
    return 0;
}

static int detail(struct loader *l, const char *path, yaml_node_t *v, uint32_t *out)
{
    static const char *names[] = {"novice", "advanced", "expert", "wizard"};
    for (size_t i = 0; i < 4; i++)
        if (scalar(v) && !strcmp(scalar(v), names[i])) {
            *out = (uint32_t)(i + 1) * 100;
            return 0;
        }
    return fail(l, v, path, "must be novice, advanced, expert or wizard");
}

static int module_key(struct loader *l, const char *path, const char *key, yaml_node_t *v,
                      void *arg)
{
    struct exp_module *m = arg;
    long x;
    if (!strcmp(key, "auth"))
        return find_auth(l, path, v, &m->auth);
    if (!strcmp(key, "collectors"))
        return collectors(l, path, v, &m->collectors);
    if (!strcmp(key, "generic"))
        return get_bool(l, path, v, &m->generic);
    if (!strcmp(key, "objects"))
        return objects(l, path, v, m);
    if (!strcmp(key, "detail"))
        return detail(l, path, v, &m->detail);
    if (!strcmp(key, "timeout") || !strcmp(key, "call_timeout")) {
        if (get_long(l, path, v, 1, 3600, &x) < 0)
            return -1;
        *(key[0] == 't' ? &m->connect_timeout_ms : &m->call_timeout_ms) = (unsigned)x * 1000;
        return 0;
    }
    if (!strcmp(key, "instances")) {
        char why[160];
        int rc;
        if (!scalar(v))
            return fail(l, v, path, "must be a regular expression");
        if (m->has_instances)
            regfree(&m->instances);
        m->has_instances = false;
        if ((rc = regcomp(&m->instances, scalar(v), REG_EXTENDED | REG_NOSUB)) != 0) {
            regerror(rc, &m->instances, why, sizeof why);
            return fail(l, v, path, "not a regular expression: %s", why);
        }
        m->has_instances = true;
        return 0;
    }
    if (!strcmp(key, "port")) {
        if (get_long(l, path, v, 1, 65535, &x) < 0)
            return -1;
        m->port = (unsigned)x;
        return 0;
    }
    return fail(l, v, path, "unknown key (auth, collectors, generic, objects, detail, instances, "
                            "timeout, call_timeout, port)");
}

static void module_defaults(struct exp_module *m)
{
    m->collectors = NTL_PROM_ALL;
    m->detail = NTL_PERF_DETAIL_WIZARD;
}

static int add_module(struct loader *l, const char *path, const char *key, yaml_node_t *v,
                      void *arg)
{
    (void)arg;
    struct exp_config *c = l->cfg;
    struct exp_module *m = &c->modules[c->nmodules];
    memset(m, 0, sizeof *m);
    module_defaults(m);
    if (!(m->name = strdup(key)))
        return fail(l, v, path, "out of memory");
    c->nmodules++;
    return each_pair(l, v, path, module_key, m);
}

static int override_key(struct loader *l, const char *path, const char *key, yaml_node_t *v,
                        void *arg)
{
    struct exp_override *o = arg;
    long x;
    if (!strcmp(key, "auth"))
        return find_auth(l, path, v, &o->auth);
    if (!strcmp(key, "port")) {
        if (get_long(l, path, v, 1, 65535, &x) < 0)
            return -1;
        o->port = (unsigned)x;
        return 0;
    }
    if (!strcmp(key, "timeout") || !strcmp(key, "call_timeout")) {
        if (get_long(l, path, v, 1, 3600, &x) < 0)
            return -1;
        *(key[0] == 't' ? &o->connect_timeout_ms : &o->call_timeout_ms) = (unsigned)x * 1000;
        return 0;
    }
    return fail(l, v, path, "unknown key (auth, port, timeout, call_timeout)");
}

static int add_override(struct loader *l, const char *path, const char *key, yaml_node_t *v,
                        void *arg)
{
    (void)arg;
    struct exp_config *c = l->cfg;
    struct exp_override *o = &c->overrides[c->noverrides];
    memset(o, 0, sizeof *o);
    if (!(o->target = strdup(key)))
        return fail(l, v, path, "out of memory");
    c->noverrides++;
    return each_pair(l, v, path, override_key, o);
}

static size_t mapping_size(yaml_node_t *n)
{
    return n && n->type == YAML_MAPPING_NODE
               ? (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start)
               : 0;
}

static int top_key(struct loader *l, const char *path, const char *key, yaml_node_t *v,
                   void *arg)
{
    (void)arg;
    struct exp_config *c = l->cfg;
    if ((!strcmp(key, "auths") && c->auths) || (!strcmp(key, "modules") && c->modules) ||
        (!strcmp(key, "targets") && c->overrides))
        return fail(l, v, path, "given twice");
    if (!strcmp(key, "targets")) {
        if (!(c->overrides = calloc(mapping_size(v) + 1, sizeof *c->overrides)))
            return fail(l, v, path, "out of memory");
        return each_pair(l, v, path, add_override, NULL);
    }
    if (!strcmp(key, "auths")) {
        if (!(c->auths = calloc(mapping_size(v) + 1, sizeof *c->auths)))
            return fail(l, v, path, "out of memory");
        return each_pair(l, v, path, add_auth, NULL);
    }
    if (!strcmp(key, "modules")) {
        if (!(c->modules = calloc(mapping_size(v) + 1, sizeof *c->modules)))
            return fail(l, v, path, "out of memory");
        return each_pair(l, v, path, add_module, NULL);
    }
    if (!strcmp(key, "listen"))
        return copy(l, path, v, c->listen, sizeof c->listen);
    if (!strcmp(key, "concurrency"))
        return get_long(l, path, v, 1, 1024, &c->concurrency);
    return fail(l, v, path, "unknown key (listen, concurrency, auths, modules, targets)");
}

int exp_config_load(const char *path, struct exp_config *cfg, char *msg, size_t size)
{
    struct loader l = {.path = path, .msg = msg, .size = size, .cfg = cfg};
    yaml_parser_t parser;
    FILE *f = fopen(path, "rb");
    int rc = -1;

    memset(cfg, 0, sizeof *cfg);
    if (!f) {
        snprintf(msg, size, "%s: %s", path, strerror(errno));
        return -1;
    }
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, f);
    if (!yaml_parser_load(&parser, &l.doc)) {
        snprintf(msg, size, "%s:%zu: %s", path, parser.problem_mark.line + 1,
                 parser.problem ? parser.problem : "not YAML");
    } else {
        yaml_node_t *root = yaml_document_get_root_node(&l.doc);
        rc = root ? each_pair(&l, root, "", top_key, NULL) : 0;
        if (rc == 0 && cfg->nmodules == 0) {
            snprintf(msg, size, "%s: modules: at least one module is needed", path);
            rc = -1;
        }
        yaml_document_delete(&l.doc);
    }
    yaml_parser_delete(&parser);
    fclose(f);
    if (rc < 0)
        exp_config_free(cfg);
    return rc;
}

int exp_config_default(struct exp_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->modules = calloc(1, sizeof *cfg->modules);
    if (!cfg->modules || !(cfg->modules[0].name = strdup("default"))) {
        free(cfg->modules);
        return -1;
    }
    module_defaults(&cfg->modules[0]);
    cfg->nmodules = 1;
    return 0;
}

void exp_config_free(struct exp_config *cfg)
{
    for (size_t i = 0; i < cfg->nauths; i++) {
        free(cfg->auths[i].name);
        exp_krb5_unref(cfg->auths[i].krb5);
        memset(&cfg->auths[i], 0, sizeof cfg->auths[i]);
    }
    for (size_t i = 0; i < cfg->nmodules; i++) {
        free(cfg->modules[i].name);
        free(cfg->modules[i].objects);
        if (cfg->modules[i].has_instances)
            regfree(&cfg->modules[i].instances);
    }
    for (size_t i = 0; i < cfg->noverrides; i++)
        free(cfg->overrides[i].target);
    free(cfg->overrides);
    free(cfg->auths);
    free(cfg->modules);
    memset(cfg, 0, sizeof *cfg);
}

const struct exp_module *exp_config_module(const struct exp_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->nmodules; i++)
        if (!strcmp(cfg->modules[i].name, name))
            return &cfg->modules[i];
    return NULL;
}

void exp_config_apply_target(const struct exp_config *cfg, const char *target,
                             struct exp_module *m)
{
    for (size_t i = 0; i < cfg->noverrides; i++) {
        const struct exp_override *o = &cfg->overrides[i];
        if (strcmp(o->target, target) != 0)
            continue;
        if (o->auth)
            m->auth = o->auth;
        if (o->port)
            m->port = o->port;
        if (o->connect_timeout_ms)
            m->connect_timeout_ms = o->connect_timeout_ms;
        if (o->call_timeout_ms)
            m->call_timeout_ms = o->call_timeout_ms;
    }
}
