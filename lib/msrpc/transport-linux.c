/* The SMB named-pipe transport over libsmbclient: SMB2/3, NTLMv2 or
 * Kerberos, signing and encryption are all libsmbclient's; this file opens
 * \\HOST\IPC$\PIPE\name and moves bytes.
 *
 * Every pipe has its own SMBCCTX. libsmbclient (Samba 4.17) is not safe to
 * call from several threads at once even on separate contexts (its talloc
 * stack frames and loadparm are process-wide), so every libsmbclient call
 * holds smbc_lock: sources in different threads are safe, and overlap all
 * their work except the SMB calls themselves. */
#include "ntlens/msrpc.h"

#include <errno.h>
#include <fcntl.h>
#include <libsmbclient.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_CONNECT_MS 10000u
#define DEFAULT_CALL_MS 30000u
#define PIPE_OPEN_TRIES 5
#define PIPE_RETRY_MS 400

struct ntl_smb_pipe {
    SMBCCTX *ctx;
    SMBCFILE *file;
    char where[300];          /* "host:port", for messages */
    char domain[256];
    char user[256];
    char password[256];
};

static pthread_mutex_t smbc_lock = PTHREAD_MUTEX_INITIALIZER;

static void copy(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

static void wipe(void *p, size_t n)
{
    volatile unsigned char *v = p;
    while (n--)
        *v++ = 0;
}

static void auth_fn(SMBCCTX *ctx, const char *srv, const char *shr, char *wg, int wglen,
                    char *un, int unlen, char *pw, int pwlen)
{
    struct ntl_smb_pipe *p = smbc_getOptionUserData(ctx);
    (void)srv;
    (void)shr;
    if (p->domain[0])
        snprintf(wg, (size_t)wglen, "%s", p->domain);
    snprintf(un, (size_t)unlen, "%s", p->user);
    snprintf(pw, (size_t)pwlen, "%s", p->password);
}

/* libsmbclient reports a failed logon only as EACCES, like a denied pipe;
 * its debug log (level 3) names the logon failure. Samba's debug callback
 * is process-wide but runs on the thread making the call, so the finding
 * is kept per thread. */
static _Thread_local bool logon_failed;

static void log_fn(void *priv, int level, const char *msg)
{
    (void)priv;
    (void)level;
    if (strstr(msg, "login failed: ") || strstr(msg, "session setup failed: "))
        logon_failed = true;
}

/* Our own TCP probe, so that an unreachable host or a closed port fails
 * within the connect timeout with a precise message before libsmbclient
 * (whose single timeout then bounds each SMB call) starts. */
static int probe_tcp(const char *host, uint16_t port, unsigned timeout_ms, const char *where,
                     struct ntl_error *err)
{
    struct addrinfo hints, *res = NULL, *ai;
    char service[8];
    int last_errno = 0, rc;

    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    snprintf(service, sizeof service, "%u", port);
    rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0)
        return ntl_error_set(err, NTL_ERR_CONNECT, NULL, NTL_NO_OFFSET,
                             "cannot resolve host '%s': %s", host, gai_strerror(rc));
    for (ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                        ai->ai_protocol);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            close(fd);
            freeaddrinfo(res);
            return NTL_OK;
        }
        if (errno == EINPROGRESS) {
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            int n = poll(&pfd, 1, (int)timeout_ms);
            if (n == 0) {
                close(fd);
                freeaddrinfo(res);
                return ntl_error_set(err, NTL_ERR_TIMEOUT, NULL, NTL_NO_OFFSET,
                                     "cannot connect to %s: no answer within %u s "
                                     "(host down or filtered; see --timeout)", where,
                                     (timeout_ms + 999) / 1000);
            }
            if (n > 0) {
                int so = 0;
                socklen_t len = sizeof so;
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &len);
                if (so == 0) {
                    close(fd);
                    freeaddrinfo(res);
                    return NTL_OK;
                }
                errno = so;
            }
        }
        last_errno = errno;
        close(fd);
    }
    freeaddrinfo(res);
    return ntl_error_set(err, NTL_ERR_CONNECT, NULL, NTL_NO_OFFSET, "cannot connect to %s: %s%s",
                         where, strerror(last_errno),
                         last_errno == ECONNREFUSED ? " (nothing listens on that port)" : "");
}

static int open_error(struct ntl_smb_pipe *p, int e, const char *name, struct ntl_error *err)
{
    switch (e) {
    case EPERM:
    case EACCES:
        if (e == EPERM || logon_failed)
            return ntl_error_set(err, NTL_ERR_AUTH, NULL, NTL_NO_OFFSET,
                                 "logon failure at %s: wrong user name or password, or the "
                                 "account may not log on", p->where);

        return ntl_error_set(err, NTL_ERR_ACCESS, NULL, NTL_NO_OFFSET,
                             "access denied to \\PIPE\\%s at %s (on Windows, remote "
                             "performance data needs an administrator and the RemoteRegistry "
                             "service)", name, p->where);
    case ENOENT:
    case ENODEV:
        return ntl_error_set(err, NTL_ERR_NOT_FOUND, NULL, NTL_NO_OFFSET,
                             "\\PIPE\\%s is not available at %s (on Windows, start the "
                             "RemoteRegistry service)", name, p->where);
    case ETIMEDOUT:
        return ntl_error_set(err, NTL_ERR_TIMEOUT, NULL, NTL_NO_OFFSET,
                             "%s did not answer the SMB session setup in time", p->where);
    case ECONNRESET:
    case EPROTONOSUPPORT:
    case EPROTO:
    case ENOTSUP:
    case EIO:
    case ECONNREFUSED:
    case ECONNABORTED:
        return ntl_error_set(err, NTL_ERR_CONNECT, NULL, NTL_NO_OFFSET,
                             "no SMB2/3 session with %s: %s (the server may speak only "
                             "SMB1, or require settings this client lacks)", p->where,
                             strerror(e));
    }
    return ntl_error_set(err, NTL_ERR_CONNECT, NULL, NTL_NO_OFFSET,
                         "cannot open \\PIPE\\%s at %s: %s", name, p->where, strerror(e));
}

/* Options for one context; called with smbc_lock held. On failure
 * p->ctx is freed and NULL. */
static void configure(struct ntl_smb_pipe *p, const struct ntl_smb_target *t, unsigned call_ms,
                      uint16_t port)
{
    smbc_setDebug(p->ctx, 3);
    smbc_setLogCallback(p->ctx, NULL, log_fn);
    smbc_setOptionUserData(p->ctx, p);
    smbc_setFunctionAuthDataWithContext(p->ctx, auth_fn);
    smbc_setTimeout(p->ctx, (int)call_ms);
    smbc_setPort(p->ctx, port);
    smbc_setOptionProtocols(p->ctx, "SMB2_02", "SMB3");
    /* Signing and encryption follow the server: libsmbclient signs, and
     * encrypts (SMB3 AES-GCM) where the server requires it. */
    smbc_setOptionNoAutoAnonymousLogin(p->ctx, p->user[0] != '\0' || t->kerberos);
    smbc_setOptionUseKerberos(p->ctx, t->kerberos);
    smbc_setOptionFallbackAfterKerberos(p->ctx, !t->kerberos);
    if (!smbc_init_context(p->ctx)) {
        smbc_free_context(p->ctx, 1);
        p->ctx = NULL;
    }
}

void ntl_smb_pipe_close(struct ntl_smb_pipe *p)
{
    if (!p)
        return;
    if (p->ctx) {
        pthread_mutex_lock(&smbc_lock);
        if (p->file)
            smbc_getFunctionClose(p->ctx)(p->ctx, p->file);
        smbc_free_context(p->ctx, 1);
        pthread_mutex_unlock(&smbc_lock);
    }
    wipe(p, sizeof *p);
    free(p);
}

int ntl_smb_pipe_open(const struct ntl_smb_target *t, const char *name,
                      struct ntl_smb_pipe **out, struct ntl_error *err)
{
    unsigned connect_ms = t->connect_timeout_ms ? t->connect_timeout_ms : DEFAULT_CONNECT_MS;
    unsigned call_ms = t->call_timeout_ms ? t->call_timeout_ms : DEFAULT_CALL_MS;
    uint16_t port = t->port ? t->port : 445;
    bool v6 = strchr(t->host, ':') != NULL;
    struct ntl_smb_pipe *p;
    char url[600];
    int rc, e = 0;

    *out = NULL;
    p = calloc(1, sizeof *p);
    if (!p)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    snprintf(p->where, sizeof p->where, v6 ? "[%s]:%u" : "%s:%u", t->host, port);
    copy(p->domain, sizeof p->domain, t->domain);
    copy(p->user, sizeof p->user, t->user);
    copy(p->password, sizeof p->password, t->password);

    if ((rc = probe_tcp(t->host, port, connect_ms, p->where, err)) < 0)
        goto fail;

    pthread_mutex_lock(&smbc_lock);
    p->ctx = smbc_new_context();
    if (p->ctx)
        configure(p, t, call_ms, port);
    pthread_mutex_unlock(&smbc_lock);
    if (!p->ctx) {
        rc = ntl_error_set(err, NTL_ERR_SYSTEM, NULL, NTL_NO_OFFSET,
                           "cannot create an SMB client context (libsmbclient)");
        goto fail;
    }
    snprintf(url, sizeof url, v6 ? "smb://[%s]/IPC$/%s" : "smb://%s/IPC$/%s", t->host, name);
    for (int attempt = 0; attempt < PIPE_OPEN_TRIES; attempt++) {
        pthread_mutex_lock(&smbc_lock);
        logon_failed = false;
        errno = 0;
        p->file = smbc_getFunctionOpen(p->ctx)(p->ctx, url, O_RDWR, 0);
        e = errno;
        pthread_mutex_unlock(&smbc_lock);
        if (p->file)
            break;
        /* Windows starts RemoteRegistry on demand: the pipe appears after
         * a moment. */
        if (e != ENOENT && e != ENODEV && e != EBUSY && e != EAGAIN)
            break;
        nanosleep(&(struct timespec){0, PIPE_RETRY_MS * 1000000L}, NULL);
    }
    if (!p->file) {
        rc = open_error(p, e, name, err);
        goto fail;
    }
    wipe(p->password, sizeof p->password);
    *out = p;
    return NTL_OK;
fail:
    ntl_smb_pipe_close(p);
    return rc;
}

static int pipe_write(void *pipe, const void *data, size_t n, struct ntl_error *err)
{
    struct ntl_smb_pipe *p = pipe;
    const uint8_t *d = data;

    while (n > 0) {
        ssize_t w;
        int e;
        pthread_mutex_lock(&smbc_lock);
        errno = 0;
        w = smbc_getFunctionWrite(p->ctx)(p->ctx, p->file, d, n);
        e = errno;
        pthread_mutex_unlock(&smbc_lock);
        if (w <= 0)
            return ntl_error_set(err, e == ETIMEDOUT ? NTL_ERR_TIMEOUT : NTL_ERR_IO, NULL,
                                 NTL_NO_OFFSET, "writing to the pipe at %s: %s", p->where,
                                 e ? strerror(e) : "connection closed");
        d += w;
        n -= (size_t)w;
    }
    return NTL_OK;
}

static int pipe_read(void *pipe, void *data, size_t n, struct ntl_error *err)
{
    struct ntl_smb_pipe *p = pipe;
    uint8_t *d = data;

    while (n > 0) {
        ssize_t r;
        int e;
        pthread_mutex_lock(&smbc_lock);
        errno = 0;
        r = smbc_getFunctionRead(p->ctx)(p->ctx, p->file, d, n);
        e = errno;
        pthread_mutex_unlock(&smbc_lock);
        if (r == 0)
            return ntl_error_set(err, NTL_ERR_EOF, NULL, NTL_NO_OFFSET,
                                 "%s closed the pipe in the middle of a reply", p->where);
        if (r < 0)
            return ntl_error_set(err, e == ETIMEDOUT ? NTL_ERR_TIMEOUT : NTL_ERR_IO, NULL,
                                 NTL_NO_OFFSET, "reading a reply from %s: %s%s", p->where,
                                 strerror(e),
                                 e == ETIMEDOUT ? " (the server stopped answering)" : "");
        d += r;
        n -= (size_t)r;
    }
    return NTL_OK;
}

const struct ntl_rpc_pipe_ops ntl_smb_pipe_ops = {pipe_write, pipe_read};
