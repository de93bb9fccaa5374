/* Kerberos credential sets: a ticket cache per set, handed to the SMB
 * helpers as their KRB5CCNAME (lib/msrpc sets it in each helper).
 *
 * A set with a keytab gets a FILE: cache of its own in a private directory
 * (0700 under $TMPDIR), filled by MIT's `kinit -k -t` (krb5-user; Debian has
 * no libkrb5 headers here, and kinit is the tool admins already trust with
 * keytabs, as k5start does) and filled again before the ticket ages past
 * `ticket_renew` or after a Kerberos logon failed. kinit writes a new file
 * that is renamed over the old, so a helper never reads half a cache. A set
 * with a ccache uses that cache as it is (kept fresh by k5start, sssd...).
 *
 * The state is reference counted: a connection being set up in the
 * background may outlive the config that named the set (a reload). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exporter.h"

struct exp_krb5 {
    atomic_int refs;
    pthread_mutex_t lock;
    char set[128];              /* the credential set, for messages */
    char keytab[PATH_MAX];      /* "": use ccache as it is */
    char principal[256];
    char ccache[PATH_MAX + 8];  /* "FILE:/path", what the helpers get */
    unsigned renew_s;
    double got_at;              /* monotonic seconds of the last kinit; 0: none */
    bool stale;                 /* a logon with the ticket failed */
};

extern char **environ;

static pthread_mutex_t dir_lock = PTHREAD_MUTEX_INITIALIZER;
static char dir[PATH_MAX];
static atomic_uint serial;

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void remove_dir(void)
{
    rmdir(dir);
}

/* The private directory, made on first use. */
static const char *private_dir(void)
{
    pthread_mutex_lock(&dir_lock);
    if (!dir[0]) {
        const char *tmp = getenv("TMPDIR");
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/ntlens-exporter-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (mkdtemp(path)) {
            memcpy(dir, path, sizeof dir);
            atexit(remove_dir);
        }
    }
    pthread_mutex_unlock(&dir_lock);
    return dir[0] ? dir : NULL;
}

struct exp_krb5 *exp_krb5_new(const char *set, const char *keytab, const char *principal,
                              const char *ccache, unsigned renew_s)
{
    struct exp_krb5 *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    atomic_init(&k->refs, 1);
    pthread_mutex_init(&k->lock, NULL);
    snprintf(k->set, sizeof k->set, "%s", set);
    snprintf(k->keytab, sizeof k->keytab, "%s", keytab ? keytab : "");
    snprintf(k->principal, sizeof k->principal, "%s", principal ? principal : "");
    k->renew_s = renew_s;
    if (ccache) /* a bare path is a FILE: cache, as KRB5CCNAME takes it */
        snprintf(k->ccache, sizeof k->ccache, "%s%s", strchr(ccache, ':') ? "" : "FILE:",
                 ccache);
    return k;
}

struct exp_krb5 *exp_krb5_ref(struct exp_krb5 *k)
{
    if (k)
        atomic_fetch_add(&k->refs, 1);
    return k;
}

void exp_krb5_unref(struct exp_krb5 *k)
{
    if (!k || atomic_fetch_sub(&k->refs, 1) != 1)
        return;
    if (k->keytab[0] && k->ccache[0])
        unlink(k->ccache + 5); /* ours: "FILE:" + path */
    pthread_mutex_destroy(&k->lock);
    free(k);
}

/* kinit's message with the keytab's path left out, on one line. */
static void clean_message(const struct exp_krb5 *k, char *text)
{
    char *at;
    while ((at = strstr(text, k->keytab)) != NULL) {
        static const char repl[] = "(the keytab)";
        size_t n = strlen(k->keytab), r = sizeof repl - 1;
        if (r > n)
            break;
        memcpy(at, repl, r);
        memmove(at + r, at + n, strlen(at + n) + 1);
    }
    text[strcspn(text, "\r\n")] = '\0';
}

/* Runs `kinit -k -t KEYTAB -c FILE:tmp PRINCIPAL`, then renames tmp over
 * the set's cache. Returns 0, or -1 with msg set. */
static int run_kinit(struct exp_krb5 *k, char *msg, size_t size)
{
    char tmp[sizeof k->ccache + 8], text[512] = "";
    snprintf(tmp, sizeof tmp, "%s.new", k->ccache);
    char *argv[] = {"kinit", "-k", "-t", k->keytab, "-c", tmp, k->principal, NULL};
    posix_spawn_file_actions_t fa;
    int fds[2], status = 0, rc;
    pid_t pid;
    size_t got = 0;
    ssize_t r;

    if (pipe2(fds, O_CLOEXEC) != 0)
        return snprintf(msg, size, "pipe: %s", strerror(errno)), -1;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    rc = posix_spawnp(&pid, "kinit", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    while (rc == 0 && (r = read(fds[0], text + got, sizeof text - 1 - got)) != 0)
        if (r > 0)
            got += (size_t)r;
        else if (errno != EINTR)
            break;
    text[got] = '\0';
    close(fds[0]);
    if (rc != 0)
        return snprintf(msg, size, "cannot run kinit (package krb5-user): %s", strerror(rc)), -1;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        clean_message(k, text);
        unlink(tmp + 5);
        return snprintf(msg, size, "kinit -k for %s failed: %s", k->principal,
                        text[0] ? text : "no message"), -1;
    }
    if (rename(tmp + 5, k->ccache + 5) != 0)
        return snprintf(msg, size, "rename %s: %s", tmp + 5, strerror(errno)), -1;
    return 0;
}

int exp_krb5_ticket(struct exp_krb5 *k, const char **ccache, char *msg, size_t size)
{
    int rc = 0;
    *ccache = NULL;
    pthread_mutex_lock(&k->lock);
    if (k->keytab[0] && !k->ccache[0]) {
        const char *d = private_dir();
        if (d)
            snprintf(k->ccache, sizeof k->ccache, "FILE:%s/krb5cc-%u", d,
                     atomic_fetch_add(&serial, 1));
        else
            rc = -1, snprintf(msg, size, "cannot make a private directory: %s", strerror(errno));
    }
    if (rc == 0 && k->keytab[0] &&
        (k->got_at == 0 || k->stale || mono() - k->got_at >= k->renew_s ||
         access(k->ccache + 5, F_OK) != 0)) {
        if ((rc = run_kinit(k, msg, size)) == 0) {
            k->got_at = mono();
            k->stale = false;
        }
    }
    pthread_mutex_unlock(&k->lock);
    if (rc == 0)
        *ccache = k->ccache;
    return rc;
}

void exp_krb5_failed(struct exp_krb5 *k)
{
    pthread_mutex_lock(&k->lock);
    k->stale = true;
    pthread_mutex_unlock(&k->lock);
}

const char *exp_krb5_set(const struct exp_krb5 *k)
{
    return k->set;
}
