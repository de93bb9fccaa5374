/* The SMB named-pipe transport over libsmbclient: SMB2/3, NTLMv2 or
 * Kerberos, signing and encryption are all libsmbclient's; this file opens
 * \\HOST\IPC$\PIPE\name and moves bytes.
 *
 * libsmbclient (Samba 4.17) is not safe to call from several threads at
 * once, even on separate contexts: its talloc stack frames and loadparm are
 * process-wide, and concurrent negotiations abort in talloc. So each pipe
 * runs its libsmbclient context in a helper process of its own and talks
 * to it over a socketpair: sources in different threads share nothing, run
 * truly in parallel, and a server that hangs holds up only its own source.
 * A single-threaded program forks the helper (fast: the libraries are
 * already loaded). A threaded one asks its zygote (smb-zygote-linux.c), a
 * fresh exec of this program that forks helpers, so no lock another thread
 * held at fork time is inherited and the relocated libraries are shared.
 * Settings and credentials come over the socket, never in argv or the
 * environment. */
/* close_range */
#define _GNU_SOURCE
#include "ntlens/dcerpc.h"
#include "ntlens/msrpc.h"
#include "smb-helper.h"
#include "smbclient-linux.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_CONNECT_MS 10000u
#define DEFAULT_CALL_MS 30000u
#define PIPE_OPEN_TRIES 5
#define PIPE_RETRY_MS 400

/* A call that runs out of time keeps the connection: the helper finishes
 * it whenever the server answers, and before the next call the parent
 * reads and drops what is left of that reply. Knowing where a reply ends
 * takes DCE/RPC's fragment framing (frag_length, PFC_LAST_FRAG), which
 * ntl_dcerpc_stream follows over every byte read, so a late reply is never
 * taken for the next call's. */

/* The parent's handle. */
struct ntl_smb_pipe {
    int sock;                 /* our end of the socketpair */
    pid_t child;              /* a helper we forked, or 0 */
    int pidfd;                /* a helper the zygote forked, or -1 */
    unsigned call_ms;         /* the deadline of one call, from its first write */
    unsigned open_call_ms;    /* call_ms as the open set it */
    uint64_t deadline;        /* CLOCK_MONOTONIC ms when the current call must end */
    bool replying;            /* the last operation was a read: a write starts a call */
    bool timed_out;           /* a call ran out of time: the child may still answer it */
    bool dead;                /* the helper or the session is gone: every call fails */
    int pending;              /* the op the child serves and has not answered, or 0 */
    uint32_t pending_len;
    uint64_t late_until;      /* after a timeout: when a reply still owed means broken */
    struct ntl_dcerpc_stream reply; /* where the server's reply stream stands */
    char where[300];          /* "host:port", for messages */
};

/* The helper's settings, sent whole over the socket (the pointers are the
 * helper's own). */
struct child_args {
    SMBCCTX *ctx;
    SMBCFILE *file;
    uint32_t call_ms;
    uint16_t port;
    uint8_t kerberos;
    char url[600];
    char domain[256];
    char user[256];
    char password[256];
    char ccache[512];         /* KRB5CCNAME for this helper; "": inherited */
};

#define HELPER_FD NTL_SMB_HELPER_FD

/* Requests: a header, then `len` bytes for OP_WRITE. Replies: a header whose
 * status is 0 or -errno (the open's reply also says whether the logon
 * failed), then `len` bytes for OP_READ. */
enum { OP_WRITE = 1, OP_READ = 2, OP_CLOSE = 3 };

struct msg {
    int32_t op_or_status;
    uint32_t len;
    uint32_t logon_failed;
};

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

/* libsmbclient in the helper: loaded before the fork by the parent (or the
 * zygote), so the helper only looks it up. */
static const struct ntl_smbclient *smb;

static void auth_fn(SMBCCTX *ctx, const char *srv, const char *shr, char *wg, int wglen,
                    char *un, int unlen, char *pw, int pwlen)
{
    struct child_args *p = smb->getOptionUserData(ctx);
    (void)srv;
    (void)shr;
    if (p->domain[0])
        snprintf(wg, (size_t)wglen, "%s", p->domain);
    snprintf(un, (size_t)unlen, "%s", p->user);
    snprintf(pw, (size_t)pwlen, "%s", p->password);
}

/* libsmbclient reports a failed logon only as EACCES, like a denied pipe;
 * its debug log (level 3) names the logon failure. Set in the helper,
 * which has one thread and one context. */
static bool logon_failed;

static void log_fn(void *priv, int level, const char *msg)
{
    (void)priv;
    (void)level;
    if (strstr(msg, "login failed: ") || strstr(msg, "session setup failed: "))
        logon_failed = true;
}

/* Our own TCP probe, so that an unreachable host or a closed port fails
 * within the connect timeout with a precise message before libsmbclient
 * (whose single timeout, twice the call timeout, then bounds each SMB call)
 * starts. */
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

static int open_error(struct ntl_smb_pipe *p, int e, bool logon, bool kerberos,
                      const char *name, struct ntl_error *err)
{
    /* With -k and no ticket cache at all, SPNEGO has no mechanism to offer
     * and libsmbclient fails the session setup with EINVAL, not EACCES. */
    if (kerberos && logon && e == EINVAL)
        e = EACCES;
    switch (e) {
    case EPERM:
    case EACCES:
        if ((e == EPERM || logon) && kerberos)
            return ntl_error_set(err, NTL_ERR_AUTH, NULL, NTL_NO_OFFSET,
                                 "Kerberos logon failure at %s: no valid ticket (run kinit), or "
                                 "the host is not named as in its service principal (use its "
                                 "DNS name, not an address)", p->where);
        if (e == EPERM || logon)
            return ntl_error_set(err, NTL_ERR_AUTH, NULL, NTL_NO_OFFSET,
                                 "logon failure at %s: wrong user name or password, or the "
                                 "account may not log on", p->where);

        return ntl_error_set(err, NTL_ERR_ACCESS, NULL, NTL_NO_OFFSET,
                             "access denied to \\PIPE\\%s at %s (on Windows, remote "
                             "performance data needs an administrator and the RemoteRegistry "
                             "service)", name, p->where);
    case ENOSYS: /* what the helper says when it could not load libsmbclient */
        return ntl_error_set(err, NTL_ERR_UNSUPPORTED, NULL, NTL_NO_OFFSET,
                             "remote sources need libsmbclient (libsmbclient.so.0, Debian "
                             "package libsmbclient), which could not be loaded");
    case ENOENT:
    case ENODEV:
        return ntl_error_set(err, NTL_ERR_NOT_FOUND, NULL, NTL_NO_OFFSET,
                             "\\PIPE\\%s is not available at %s (on Windows, start the "
                             "RemoteRegistry service)", name, p->where);
    case ETIMEDOUT:
        return ntl_error_set(err, NTL_ERR_TIMEOUT, NULL, NTL_NO_OFFSET,
                             "%s did not complete the SMB negotiation and session setup in "
                             "time (no answer, or not an SMB server)", p->where);
    case EINVAL:
        /* What libsmbclient makes of a negotiate response it cannot parse
         * (the URL it is given is always well formed). */
        return ntl_error_set(err, NTL_ERR_CONNECT, NULL, NTL_NO_OFFSET,
                             "no SMB2/3 session with %s: its answer to the SMB negotiation is "
                             "malformed (not an SMB server, or a broken one)", p->where);
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

/* Options for the child's context. NULL when libsmbclient cannot start. */
static SMBCCTX *make_context(struct child_args *c)
{
    if (!(smb = ntl_smbclient_load())) {
        errno = ENOSYS;
        return NULL;
    }
    SMBCCTX *ctx = smb->new_context();
    if (!ctx)
        return NULL;
    smb->setDebug(ctx, 3);
    smb->setLogCallback(ctx, NULL, log_fn);
    smb->setOptionUserData(ctx, c);
    smb->setFunctionAuthDataWithContext(ctx, auth_fn);
    /* Twice the call timeout: the parent gives a call up first and keeps
     * the session, and libsmbclient, whose timeout leaves the session
     * unusable, waits for the late reply as long as the parent would. */
    smb->setTimeout(ctx, (int)(c->call_ms * 2));
    smb->setPort(ctx, c->port);
    smb->setOptionProtocols(ctx, "SMB2_02", "SMB3");
    /* Signing and encryption follow the server: libsmbclient signs, and
     * encrypts (SMB3 AES-GCM) where the server requires it. */
    smb->setOptionNoAutoAnonymousLogin(ctx, c->user[0] != '\0' || c->kerberos);
    smb->setOptionUseKerberos(ctx, c->kerberos);
    smb->setOptionFallbackAfterKerberos(ctx, !c->kerberos);
    if (!smb->init_context(ctx)) {
        smb->free_context(ctx, 1);
        return NULL;
    }
    return ctx;
}

static bool send_all(int fd, const void *data, size_t n)
{
    const uint8_t *d = data;
    while (n > 0) {
        ssize_t w = send(fd, d, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        d += w;
        n -= (size_t)w;
    }
    return true;
}

/* Reads exactly n bytes; 0 ok, -ETIMEDOUT when timeout_ms (0: forever)
 * passes, -EPIPE at end of stream, -errno otherwise. */
static int recv_all(int fd, void *data, size_t n, unsigned timeout_ms)
{
    uint8_t *d = data;
    while (n > 0) {
        ssize_t r;
        if (timeout_ms) {
            struct pollfd pfd = {.fd = fd, .events = POLLIN};
            int k = poll(&pfd, 1, (int)timeout_ms);
            if (k < 0 && errno == EINTR)
                continue;
            if (k == 0)
                return -ETIMEDOUT;
        }
        r = recv(fd, d, n, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            return -EPIPE;
        if (r < 0)
            return -errno;
        d += r;
        n -= (size_t)r;
    }
    return 0;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The child: opens the pipe, reports, then serves reads and writes until
 * OP_CLOSE or the parent goes away. Never returns. */
static _Noreturn void child_main(int sock, struct child_args *c)
{
    struct msg m = {0, 0, 0};
    uint8_t *buf = NULL;
    size_t cap = 0;
    int e = 0;

    /* The caller's ticket cache for this pipe (an exporter's credential
     * set), read by libsmbclient's Kerberos code from the environment. */
    if (c->kerberos && c->ccache[0])
        setenv("KRB5CCNAME", c->ccache, 1);
    c->ctx = make_context(c);
    if (!c->ctx)
        e = errno ? errno : ENOMEM;
    for (int attempt = 0; c->ctx && attempt < PIPE_OPEN_TRIES; attempt++) {
        logon_failed = false;
        errno = 0;
        c->file = smb->getFunctionOpen(c->ctx)(c->ctx, c->url, O_RDWR, 0);
        e = errno;
        if (c->file)
            break;
        /* Windows starts RemoteRegistry on demand: the pipe appears after
         * a moment. */
        if (e != ENOENT && e != ENODEV && e != EBUSY && e != EAGAIN)
            break;
        nanosleep(&(struct timespec){0, PIPE_RETRY_MS * 1000000L}, NULL);
    }
    wipe(c->password, sizeof c->password);
    m.op_or_status = c->file ? 0 : -(e ? e : EIO);
    m.logon_failed = logon_failed;
    if (!send_all(sock, &m, sizeof m) || !c->file)
        _exit(0);

    for (;;) {
        struct msg req;
        ssize_t n;
        if (recv_all(sock, &req, sizeof req, 0) < 0 || req.op_or_status == OP_CLOSE)
            break;
        if (req.len > cap) {
            uint8_t *grown = realloc(buf, req.len);
            if (!grown)
                break;
            buf = grown;
            cap = req.len;
        }
        m.len = 0;
        m.logon_failed = 0;
        if (req.op_or_status == OP_WRITE) {
            size_t done = 0;
            if (recv_all(sock, buf, req.len, 0) < 0)
                break;
            m.op_or_status = 0;
            while (done < req.len) {
                errno = 0;
                n = smb->getFunctionWrite(c->ctx)(c->ctx, c->file, buf + done, req.len - done);
                if (n <= 0) {
                    m.op_or_status = -(errno ? errno : EPIPE);
                    break;
                }
                done += (size_t)n;
            }
            if (!send_all(sock, &m, sizeof m))
                break;
        } else if (req.op_or_status == OP_READ) {
            /* libsmbclient's read on a pipe blocks until it has the count
             * asked for; the caller asks for exactly one fragment's bytes. */
            size_t done = 0;
            m.op_or_status = 0;
            while (done < req.len) {
                errno = 0;
                n = smb->getFunctionRead(c->ctx)(c->ctx, c->file, buf + done, req.len - done);
                if (n <= 0) {
                    m.op_or_status = n == 0 ? -EPIPE : -(errno ? errno : EIO);
                    break;
                }
                done += (size_t)n;
            }
            m.len = m.op_or_status == 0 ? req.len : 0;
            if (!send_all(sock, &m, sizeof m) || !send_all(sock, buf, m.len))
                break;
        } else {
            break;
        }
    }
    smb->getFunctionClose(c->ctx)(c->ctx, c->file);
    smb->free_context(c->ctx, 1);
    _exit(0);
}

/* The helper: read the settings from HELPER_FD and serve the pipe. */
void ntl_smb_helper_run(void)
{
    static struct child_args args;

    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, SIG_IGN); /* the parent decides when to stop */
    if (recv_all(HELPER_FD, &args, sizeof args, 0) < 0)
        _exit(1);
    args.ctx = NULL;
    args.file = NULL;
    args.url[sizeof args.url - 1] = args.domain[sizeof args.domain - 1] = '\0';
    args.user[sizeof args.user - 1] = args.password[sizeof args.password - 1] = '\0';
    child_main(HELPER_FD, &args);
}

void ntl_smb_pipe_close(struct ntl_smb_pipe *p)
{
    /* The child closes the SMB session and exits; do not wait on a server
     * that stopped answering, nor at all after a call ran out of time (the
     * child is still blocked in it). */
    int wait_ms = 0;
    if (!p)
        return;
    if (!p->timed_out && !p->pending)
        wait_ms = 1000;
    if (p->sock >= 0) {
        struct msg m = {OP_CLOSE, 0, 0};
        send_all(p->sock, &m, sizeof m);
        close(p->sock);
    }
    if (p->pidfd >= 0) {
        /* The zygote reaps its helpers, so nothing here need wait for one
         * to log off: a program closing a fleet's pipes (a reload, the
         * exporter's exit: 1,000 targets took minutes one second each)
         * does not wait at all, and only a helper stuck in a call is
         * killed. */
        if (p->timed_out || p->pending)
            pidfd_send_signal(p->pidfd, SIGKILL, NULL, 0);
        close(p->pidfd);
    }
    if (p->child > 0) {
        for (int i = 0; i < wait_ms / 20 && waitpid(p->child, NULL, WNOHANG) == 0; i++)
            nanosleep(&(struct timespec){0, 20 * 1000000L}, NULL);
        if (waitpid(p->child, NULL, WNOHANG) == 0) {
            kill(p->child, SIGKILL);
            waitpid(p->child, NULL, 0);
        }
    }
    free(p);
}

/* True when this process runs one thread (from /proc/self/stat). */
static bool single_threaded(void)
{
    char buf[1024], *p;
    long threads = 0;
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f)
        return false;
    p = fgets(buf, sizeof buf, f) ? strrchr(buf, ')') : NULL;
    fclose(f);
    /* After "pid (comm)": state is field 3, num_threads field 20. */
    for (int field = 3; p && field <= 20; field++)
        p = strchr(p + 1, ' ');
    if (p)
        threads = strtol(p + 1, NULL, 10);
    return threads == 1;
}

/* Starts the helper with `sock` as its fd 3: a fork when this process has
 * one thread (p->child), otherwise through the zygote (p->pidfd). */
static int spawn_helper(struct ntl_smb_pipe *p, int sock)
{
    if (!single_threaded())
        return (p->pidfd = ntl_smb_zygote_spawn(sock)) < 0 ? -1 : 0;
    /* Loaded before the fork, once, so that later helpers find it loaded
     * (a threaded program leaves it to the zygote and keeps its own
     * memory and first probe free of it). */
    ntl_smbclient_load();
    p->child = fork();
    if (p->child == 0) {
        if (sock != HELPER_FD) {
            dup2(sock, HELPER_FD); /* dup2 clears FD_CLOEXEC on the copy */
        } else {
            int fl = fcntl(sock, F_GETFD);
            fcntl(sock, F_SETFD, fl & ~FD_CLOEXEC);
        }
        /* Other sources' sockets would hide their peers' end of stream:
         * keep only stdio and ours. */
        close_range(HELPER_FD + 1, ~0u, 0);
        ntl_smb_helper_run();
    }
    return p->child < 0 ? -1 : 0;
}

/* libsmbclient refuses "[::1]" in a URL (EINVAL) but, like Windows, takes
 * the UNC spelling of an IPv6 address: ':' as '-', the zone's '%' as 's',
 * under ipv6-literal.net ("0--1.ipv6-literal.net"). */
static const char *ipv6_unc_name(const char *addr, char name[static 128])
{
    size_t n = 0;
    for (; *addr && n < 128 - sizeof ".ipv6-literal.net"; addr++)
        name[n++] = *addr == ':' ? '-' : *addr == '%' ? 's' : *addr;
    memcpy(name + n, ".ipv6-literal.net", sizeof ".ipv6-literal.net");
    return name;
}

int ntl_smb_pipe_open(const struct ntl_smb_target *t, const char *name,
                      struct ntl_smb_pipe **out, struct ntl_error *err)
{
    char v6name[128];
    unsigned connect_ms = t->connect_timeout_ms ? t->connect_timeout_ms : DEFAULT_CONNECT_MS;
    unsigned call_ms = t->call_timeout_ms ? t->call_timeout_ms : DEFAULT_CALL_MS;
    uint16_t port = t->port ? t->port : 445;
    bool v6 = strchr(t->host, ':') != NULL;
    struct ntl_smb_pipe *p;
    struct child_args args;
    struct msg m;
    bool ok;
    int sv[2], rc;

    *out = NULL;
    p = calloc(1, sizeof *p);
    if (!p)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    p->sock = -1;
    p->pidfd = -1;
    p->call_ms = p->open_call_ms = call_ms;
    p->replying = true;
    snprintf(p->where, sizeof p->where, v6 ? "[%s]:%u" : "%s:%u", t->host, port);

    if ((rc = probe_tcp(t->host, port, connect_ms, p->where, err)) < 0)
        goto fail;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        rc = ntl_error_set(err, NTL_ERR_SYSTEM, NULL, NTL_NO_OFFSET, "socketpair: %s",
                           strerror(errno));
        goto fail;
    }
    memset(&args, 0, sizeof args);
    args.call_ms = call_ms;
    args.port = port;
    args.kerberos = t->kerberos;
    copy(args.ccache, sizeof args.ccache, t->krb5_ccache);
    copy(args.domain, sizeof args.domain, t->domain);
    copy(args.user, sizeof args.user, t->user);
    copy(args.password, sizeof args.password, t->password);
    snprintf(args.url, sizeof args.url, "smb://%s/IPC$/%s",
             v6 ? ipv6_unc_name(t->host, v6name) : t->host, name);
    rc = spawn_helper(p, sv[1]);
    close(sv[1]);
    p->sock = sv[0];
    if (rc < 0) {
        wipe(&args, sizeof args);
        rc = ntl_error_set(err, NTL_ERR_SYSTEM, NULL, NTL_NO_OFFSET,
                           "cannot start the SMB helper process: %s", strerror(errno));
        goto fail;
    }
    ok = send_all(p->sock, &args, sizeof args);
    wipe(&args, sizeof args);
    if (!ok) {
        rc = ntl_error_set(err, NTL_ERR_SYSTEM, NULL, NTL_NO_OFFSET,
                           "the SMB helper process did not start");
        goto fail;
    }
    /* The open may retry the pipe and wait for a slow session setup. */
    rc = recv_all(p->sock, &m, sizeof m,
                  call_ms * 2 + PIPE_OPEN_TRIES * (PIPE_RETRY_MS + call_ms / 4) + 5000);
    if (rc < 0) {
        rc = ntl_error_set(err, rc == -ETIMEDOUT ? NTL_ERR_TIMEOUT : NTL_ERR_CONNECT, NULL,
                           NTL_NO_OFFSET, "no SMB session with %s: %s", p->where,
                           rc == -ETIMEDOUT ? "the server did not answer in time"
                                            : "the SMB client process ended");
        goto fail;
    }
    if (m.op_or_status < 0) {
        rc = open_error(p, -m.op_or_status, m.logon_failed != 0, t->kerberos, name, err);
        goto fail;
    }
    *out = p;
    return NTL_OK;
fail:
    ntl_smb_pipe_close(p);
    return rc;
}

void ntl_smb_pipe_set_call_timeout(struct ntl_smb_pipe *p, unsigned ms)
{
    p->call_ms = ms ? ms : p->open_call_ms;
}

/* After a timeout: how long the abandoned call's reply may still take
 * before the session counts as broken, beyond the call's own bound. */
static unsigned late_ms(const struct ntl_smb_pipe *p)
{
    return p->open_call_ms; /* the child's libsmbclient waits 2 x open_call_ms */
}

static int deadline_passed(struct ntl_smb_pipe *p, const char *what, struct ntl_error *err)
{
    if (!p->timed_out)
        p->late_until = now_ms() + late_ms(p);
    p->timed_out = true;
    return ntl_error_set(err, NTL_ERR_TIMEOUT, NULL, NTL_NO_OFFSET,
                         "%s %s: the server stopped answering (the call did not complete "
                         "within %u s; see --call-timeout)",
                         what, p->where, (p->call_ms + 999) / 1000);
}

/* The helper ended, or the session cannot be trusted any more: this pipe
 * fails every call from now on, and its owner opens a new one. */
static int gone(struct ntl_smb_pipe *p, const char *what, const char *why,
                struct ntl_error *err)
{
    p->dead = true;
    p->timed_out = p->timed_out || p->pending != 0; /* the close kills a stuck helper */
    return ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET, "%s %s: %s", what, p->where,
                         why);
}

/* What remains of the current call's time, at least 1 ms; 0 when none. */
static unsigned remaining_ms(const struct ntl_smb_pipe *p)
{
    uint64_t now = now_ms();
    return now >= p->deadline ? 0 : (unsigned)(p->deadline - now);
}

/* Receives the child's answer to the request it was left serving, within
 * this call's time and the late bound, and feeds a read's bytes to the
 * tracker (they belong to an abandoned reply: dropped). */
static int take_late(struct ntl_smb_pipe *p, const char *what, struct ntl_error *err)
{
    uint8_t chunk[4096];
    uint64_t t = now_ms();
    unsigned left = remaining_ms(p);
    struct msg m;
    int rc;

    if (t >= p->late_until)
        return gone(p, what, "the server never finished answering a call that ran out of "
                    "time (the connection is dropped)", err);
    if (!left)
        return deadline_passed(p, what, err);
    if (left > p->late_until - t)
        left = (unsigned)(p->late_until - t);
    rc = recv_all(p->sock, &m, sizeof m, left);
    if (rc == -ETIMEDOUT)
        return now_ms() >= p->late_until ? take_late(p, what, err)
                                         : deadline_passed(p, what, err);
    if (rc < 0)
        return gone(p, what, "the SMB client process ended", err);
    int op = p->pending;
    p->pending = 0;
    if (m.op_or_status < 0)
        return gone(p, what, "the call that ran out of time failed late (the connection is "
                    "dropped)", err);
    if (op != OP_READ)
        return NTL_OK;
    if (m.len != p->pending_len)
        return gone(p, what, "the SMB client process ended", err);
    for (uint32_t n = m.len, k; n > 0; n -= k) {
        k = n < sizeof chunk ? n : (uint32_t)sizeof chunk;
        if (recv_all(p->sock, chunk, k, p->open_call_ms) < 0)
            return gone(p, what, "the SMB client process ended", err);
        if (ntl_dcerpc_stream_feed(&p->reply, chunk, k) < 0)
            return gone(p, what, "a late reply is not DCE/RPC", err);
    }
    return NTL_OK;
}

/* Before a call: reads and drops what is left of a reply nobody reads any
 * more (a call that ran out of time, or one its caller gave up), asking
 * the child for it fragment by fragment, so the next reply read is this
 * call's own. */
static int settle(struct ntl_smb_pipe *p, const char *what, struct ntl_error *err)
{
    int rc;
    if (!p->timed_out)
        p->late_until = now_ms() + late_ms(p);
    while (p->pending || p->reply.open) {
        if (!p->pending) {
            uint32_t want = ntl_dcerpc_stream_want(&p->reply);
            struct msg m = {OP_READ, want, 0};
            if (!send_all(p->sock, &m, sizeof m))
                return gone(p, what, "the SMB client process ended", err);
            p->pending = OP_READ;
            p->pending_len = want;
        }
        if ((rc = take_late(p, what, err)) < 0)
            return rc;
    }
    p->timed_out = false;
    return NTL_OK;
}

/* One request to the child and its reply header. libsmbclient bounds each
 * SMB operation in the child, but a server that dribbles a reply out, each
 * piece just inside that bound, would hold a call for ever: the parent
 * bounds the whole call, from its first write to its last read. */
static int exchange(struct ntl_smb_pipe *p, int op, const void *data, size_t n,
                    struct msg *reply, const char *what, struct ntl_error *err)
{
    struct msg m = {op, (uint32_t)n, 0};
    unsigned left;
    int rc;

    if (n > UINT32_MAX)
        return ntl_error_set(err, NTL_ERR_LIMIT, NULL, NTL_NO_OFFSET, "%zu bytes at once", n);
    if (p->dead)
        return gone(p, what, "the connection was lost before", err);
    /* A call starts with a write after a read, or after a call that ran
     * out of time (in its writes, maybe: its caller gave it up). */
    if (op == OP_WRITE && (p->replying || p->timed_out)) {
        p->deadline = now_ms() + p->call_ms;
        if ((p->timed_out || p->reply.open) && (rc = settle(p, what, err)) < 0)
            return rc;
        ntl_dcerpc_stream_expect(&p->reply);
    }
    if (p->timed_out) /* within a call that ran out of time */
        return deadline_passed(p, what, err);
    if (!send_all(p->sock, &m, sizeof m) || (op == OP_WRITE && !send_all(p->sock, data, n)))
        return gone(p, what, "the SMB client process ended", err);
    p->pending = op;
    p->pending_len = (uint32_t)n;
    p->replying = op == OP_READ;
    if (!(left = remaining_ms(p)))
        return deadline_passed(p, what, err);
    rc = recv_all(p->sock, reply, sizeof *reply, left);
    if (rc == -ETIMEDOUT)
        return deadline_passed(p, what, err);
    if (rc < 0)
        return gone(p, what, "the SMB client process ended", err);
    p->pending = 0;
    if (reply->op_or_status < 0) {
        int e = -reply->op_or_status;
        if (e == EPIPE && op == OP_READ)
            return ntl_error_set(err, NTL_ERR_EOF, NULL, NTL_NO_OFFSET,
                                 "%s closed the pipe in the middle of a reply", p->where);
        if (e == ETIMEDOUT)
            return deadline_passed(p, what, err);
        return ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET, "%s %s: %s", what,
                             p->where, strerror(e));
    }
    return NTL_OK;
}

static int pipe_write(void *pipe, const void *data, size_t n, struct ntl_error *err)
{
    struct msg reply;
    return exchange(pipe, OP_WRITE, data, n, &reply, "writing to the pipe at", err);
}

static int pipe_read(void *pipe, void *data, size_t n, struct ntl_error *err)
{
    struct ntl_smb_pipe *p = pipe;
    struct msg reply;
    int rc = exchange(p, OP_READ, NULL, n, &reply, "reading a reply from", err);
    if (rc < 0)
        return rc;
    /* The child sends the bytes right after the header. */
    if (reply.len != n || recv_all(p->sock, data, n, p->call_ms) < 0)
        return gone(p, "reading a reply from", "the SMB client process ended", err);
    /* A malformed header is the RPC layer's to report; the stream is lost. */
    if (ntl_dcerpc_stream_feed(&p->reply, data, n) < 0)
        p->dead = true;
    return NTL_OK;
}

const struct ntl_rpc_pipe_ops ntl_smb_pipe_ops = {pipe_write, pipe_read};
