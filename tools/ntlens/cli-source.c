#include "cli-source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-parallel.h"
#include "cli.h"
#include "ntlens/msrpc_source.h"

void cli_sources_init(struct cli_sources *cs)
{
    memset(cs, 0, sizeof *cs);
}

static void copy_str(char *dst, size_t size, const char *src, size_t n)
{
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* "DOMAIN/USER", "DOMAIN\USER" or "USER". */
static void set_user(struct cli_sources *cs, const char *arg)
{
    const char *sep = strpbrk(arg, "/\\");
    if (sep) {
        copy_str(cs->domain, sizeof cs->domain, arg, (size_t)(sep - arg));
        copy_str(cs->user, sizeof cs->user, sep + 1, strlen(sep + 1));
    } else {
        copy_str(cs->user, sizeof cs->user, arg, strlen(arg));
    }
}

/* smbclient's authentication file: "key = value" lines. */
static int read_auth_file(struct cli_sources *cs, const char *cmd)
{
    FILE *f = fopen(cs->auth_file, "r");
    char line[1024];

    if (!f)
        return cli_failf(cmd, "cannot open authentication file %s", cs->auth_file);
    while (fgets(line, sizeof line, f)) {
        char *eq = strchr(line, '='), *key = line, *val, *end;
        if (!eq)
            continue;
        *eq = '\0';
        val = eq + 1;
        while (*key == ' ' || *key == '\t')
            key++;
        for (end = eq; end > key && (end[-1] == ' ' || end[-1] == '\t'); end--)
            end[-1] = '\0';
        while (*val == ' ' || *val == '\t')
            val++;
        val[strcspn(val, "\r\n")] = '\0';
        if (!strcmp(key, "username"))
            set_user(cs, val);
        else if (!strcmp(key, "password"))
            copy_str(cs->password, sizeof cs->password, val, strlen(val));
        else if (!strcmp(key, "domain"))
            copy_str(cs->domain, sizeof cs->domain, val, strlen(val));
    }
    memset(line, 0, sizeof line);
    fclose(f);
    return EXIT_OK;
}

bool cli_sources_add(struct cli_sources *cs, const char *spec)
{
    if (cs->nspecs == CLI_SOURCE_MAX)
        return false;
    cs->specs[cs->nspecs++] = spec;
    return true;
}

int cli_source_option_cb(const struct opt *o, const char *arg, void *cs)
{
    if (!cli_sources_add(cs, arg))
        return opt_error(o, "may be given at most %d times", CLI_SOURCE_MAX);
    return 0;
}

int cli_user_option_cb(const struct opt *o, const char *arg, void *cs)
{
    (void)o;
    set_user(cs, arg);
    return 0;
}

/* A remote source needs a password unless anonymous, Kerberos, or given. */
/* NTLENS_PASSWORD, taken out of the environment at start. */
static char env_password[256];
static bool have_env_password;

static void wipe(char *p, size_t n)
{
    volatile char *v = p;
    while (n--)
        *v++ = 0;
}

void cli_sources_take_env_password(void)
{
    have_env_password = cli_take_env_secret("NTLENS_PASSWORD", env_password, sizeof env_password);
}

static int obtain_password(struct cli_sources *cs, const char *cmd)
{
    bool remote = false;

    for (size_t i = 0; i < cs->nspecs; i++)
        remote = remote || ntl_source_spec_is_remote(cs->specs[i]);
    if (!remote || cs->opt.anonymous || cs->opt.kerberos || cs->password[0])
        return EXIT_OK;
    if (have_env_password) {
        copy_str(cs->password, sizeof cs->password, env_password, strlen(env_password));
        wipe(env_password, sizeof env_password);
        have_env_password = false;
        return EXIT_OK;
    }
    if (!cli_prompt_password("Password: ", cs->password, sizeof cs->password))
        return cli_failf(cmd, "a password is needed: set NTLENS_PASSWORD, use -A FILE, "
                              "-k (Kerberos) or -N (anonymous)");
    return EXIT_OK;
}

int cli_sources_prepare(struct cli_sources *cs, const char *cmd)
{
    struct ntl_error err;
    int rc;

    if (cs->nspecs == 0)
        cs->specs[cs->nspecs++] = "local";
    if (cs->timeout_s)
        cs->opt.connect_timeout_ms = (unsigned)cs->timeout_s * 1000;
    if (cs->call_timeout_s)
        cs->opt.call_timeout_ms = (unsigned)cs->call_timeout_s * 1000;
    if (cs->max_block)
        cs->opt.max_block = (size_t)cs->max_block;
    /* A malformed remote spec ("smb://" without a host) is refused before
     * anyone is asked for a password. */
    for (size_t i = 0; i < cs->nspecs; i++) {
        ntl_error_clear(&err);
        if (ntl_source_spec_is_remote(cs->specs[i]) &&
            ntl_msrpc_source_check_spec(cs->specs[i], &err) < 0)
            return cli_usage_error(cmd, "-S %s: %s", cs->specs[i], err.message);
    }
    if (cs->auth_file && (rc = read_auth_file(cs, cmd)) != EXIT_OK)
        return rc;
    if ((rc = obtain_password(cs, cmd)) != EXIT_OK)
        return rc;
    cs->opt.user = cs->user[0] ? cs->user : NULL;
    cs->opt.domain = cs->domain[0] ? cs->domain : NULL;
    cs->opt.password = cs->password[0] ? cs->password : NULL;
    return EXIT_OK;
}

int cli_source_open_one(const struct cli_sources *cs, size_t i, struct ntl_source **out,
                        struct ntl_error *err)
{
    return ntl_msrpc_source_open(cs->specs[i], &cs->opt, out, err);
}

struct open_job {
    const struct cli_sources *cs;
    struct ntl_source **out;
    struct ntl_error *errs;
    int *rcs;
};

static void open_one_job(void *arg, size_t i)
{
    struct open_job *j = arg;
    ntl_error_clear(&j->errs[i]);
    j->out[i] = NULL;
    j->rcs[i] = cli_source_open_one(j->cs, i, &j->out[i], &j->errs[i]);
}

int cli_sources_open(struct cli_sources *cs, const char *cmd, struct ntl_source **out)
{
    int rc;

    if ((rc = cli_sources_prepare(cs, cmd)) != EXIT_OK)
        return rc;
    struct ntl_error *errs = calloc(cs->nspecs, sizeof *errs);
    int *rcs = calloc(cs->nspecs, sizeof *rcs);
    if (!errs || !rcs) {
        free(errs);
        free(rcs);
        return cli_failf(cmd, "out of memory");
    }
    cli_parallel(cs->nspecs, open_one_job, &(struct open_job){cs, out, errs, rcs});
    for (size_t i = 0; i < cs->nspecs; i++)
        if (rcs[i] < 0)
            rc = cli_fail(cmd, &errs[i], cs->specs[i]);
    if (rc != EXIT_OK)
        cli_sources_close(out, cs->nspecs);
    free(errs);
    free(rcs);
    return rc;
}

void cli_sources_close(struct ntl_source **sources, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ntl_source_close(sources[i]);
        sources[i] = NULL;
    }
}

void cli_sources_clear(struct cli_sources *cs)
{
    wipe(cs->password, sizeof cs->password);
    cs->opt.password = NULL;
}
