/* The zygote: one process, started by exec from a threaded program, that
 * forks an SMB helper per pipe.
 *
 * A threaded program may not fork a helper (a lock another thread held at
 * fork time would stay held in the child), so it used to exec a helper per
 * pipe: each a fresh process that relocated libsmbclient's ~110 libraries on
 * its own, 2.7 MB of private pages of which 2 MB were relocated library
 * data. The zygote pays that once; its children share those pages copy on
 * write and keep only what their own SMB session dirties. Every helper is
 * still a process of its own with one libsmbclient context on one thread
 * (libsmbclient is not thread-safe even across contexts), so a target that
 * stalls or crashes still holds up or takes down nothing but itself.
 *
 * Requests carry the helper's socket end (SCM_RIGHTS); the answer carries a
 * pidfd of the child, the caller's handle to stop it (the helper is the
 * zygote's child, so the caller cannot wait for it). The zygote never sees
 * a credential: those go to the helper over its own socket. It ends when
 * the program closes its end (or exits). */
#define _GNU_SOURCE
#include "smb-helper.h"
#include "smbclient-linux.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define ZYGOTE_ENV "NTLENS_SMB_HELPER"
#define ZYGOTE_VALUE "zygote"
#define REPLY_MS 5000

/* The program's side: one zygote per process, shared by every thread. */
static pthread_mutex_t zlock = PTHREAD_MUTEX_INITIALIZER;
static int zsock = -1;
static pid_t zpid = -1;

extern char **environ;

/* What the zygote (and so each helper) gets of the environment: only what
 * libsmbclient and Kerberos read (home, temp, locale, time zone, smb.conf
 * and krb5 locations, the ticket cache). Credentials come over the socket;
 * nothing else of the caller's environment is its business. */
static bool env_needed(const char *var)
{
    static const char *const names[] = {"HOME=", "PATH=", "TMPDIR=", "LANG=", "TZ=",
                                        "USER=", "LOGNAME=", "SMB_CONF_PATH="};
    static const char *const prefixes[] = {"LC_", "KRB5"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strncmp(var, names[i], strlen(names[i])))
            return true;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(var, prefixes[i], strlen(prefixes[i])))
            return true;
    return false;
}

/* Passes fd (may be -1: none) with n bytes of data. */
static int send_fd(int sock, const void *data, size_t n, int fd)
{
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov = {(void *)data, n};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        struct cmsghdr *c;
        memset(&u, 0, sizeof u);
        msg.msg_control = u.buf;
        msg.msg_controllen = sizeof u.buf;
        c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    return sendmsg(sock, &msg, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
}

/* Receives one message of n bytes and the fd it carries (-1: none).
 * Returns 0, or -1 at end of stream or on error. */
static int recv_fd(int sock, void *data, size_t n, int *fd)
{
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov = {data, n};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                         .msg_controllen = sizeof u.buf};
    ssize_t r;
    *fd = -1;
    do
        r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    while (r < 0 && errno == EINTR);
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); r > 0 && c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len == CMSG_LEN(sizeof(int)))
            memcpy(fd, CMSG_DATA(c), sizeof *fd);
    if (r == (ssize_t)n)
        return 0;
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
    return -1;
}

/* The zygote's loop: fork a helper per request, reap the ones that ended. */
static _Noreturn void zygote_run(void)
{
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, SIG_IGN); /* the program decides when to stop */
    signal(SIGCHLD, SIG_DFL); /* no automatic reaping: a pid stays ours until waited */
    /* Once here, so the helpers share its relocated pages; a failure is
     * the program's to report (it loaded the library before asking). */
    ntl_smbclient_load();
    for (;;) {
        struct pollfd pfd = {.fd = NTL_SMB_HELPER_FD, .events = POLLIN};
        uint8_t req;
        int32_t status = 0;
        int fd, pidfd = -1;
        pid_t pid;

        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (poll(&pfd, 1, 1000) <= 0)
            continue;
        if (recv_fd(NTL_SMB_HELPER_FD, &req, sizeof req, &fd) < 0)
            _exit(0);
        if (fd < 0)
            continue;
        pid = fork();
        if (pid == 0) {
            dup2(fd, NTL_SMB_HELPER_FD); /* also closes our copy of the request socket */
            close(fd);
            signal(SIGCHLD, SIG_DFL);
            ntl_smb_helper_run();
        }
        /* Not reaped before this loop comes round again: the pid is the
         * child's, even if it has ended already. */
        if (pid < 0 || (pidfd = pidfd_open(pid, 0)) < 0)
            status = errno;
        close(fd);
        send_fd(NTL_SMB_HELPER_FD, &status, sizeof status, pidfd);
        if (pidfd >= 0)
            close(pidfd);
        else if (pid > 0)
            kill(pid, SIGKILL); /* nobody could stop it later */
    }
}

/* Started by exec, before main. */
__attribute__((constructor)) static void zygote_entry(void)
{
    const char *env = getenv(ZYGOTE_ENV);
    if (!env || strcmp(env, ZYGOTE_VALUE))
        return;
    unsetenv(ZYGOTE_ENV);
    zygote_run();
}

/* Fork and exec of this program as the zygote, with `sock` as its fd 3;
 * only async-signal-safe calls between the two. Under zlock. */
static int start_zygote(void)
{
    static char *const argv[] = {"ntlens-smb-zygote", NULL};
    size_t n = 0, k = 0;
    char **envp;
    int sv[2];

    while (environ[n])
        n++;
    if (!(envp = calloc(n + 2, sizeof *envp)))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (env_needed(environ[i]))
            envp[k++] = environ[i];
    envp[k++] = ZYGOTE_ENV "=" ZYGOTE_VALUE;
    envp[k] = NULL;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        free(envp);
        return -1;
    }
    zpid = fork();
    if (zpid == 0) {
        dup2(sv[1], NTL_SMB_HELPER_FD); /* dup2 clears FD_CLOEXEC on the copy */
        execve("/proc/self/exe", argv, envp);
        _exit(127);
    }
    free(envp);
    close(sv[1]);
    if (zpid < 0) {
        close(sv[0]);
        return -1;
    }
    zsock = sv[0];
    return 0;
}

/* Ends a zygote that stopped answering. Its helpers go on serving their
 * pipes: they hold their own sockets. Under zlock. */
static void stop_zygote(void)
{
    close(zsock);
    zsock = -1;
    kill(zpid, SIGKILL);
    waitpid(zpid, NULL, 0);
    zpid = -1;
}

static int ask_zygote(int sock)
{
    struct pollfd pfd = {.fd = zsock, .events = POLLIN};
    uint8_t req = 1;
    int32_t status = EPIPE;
    int pidfd = -1, n;

    if (send_fd(zsock, &req, sizeof req, sock) < 0)
        return -EPIPE;
    do
        n = poll(&pfd, 1, REPLY_MS);
    while (n < 0 && errno == EINTR);
    if (n <= 0 || recv_fd(zsock, &status, sizeof status, &pidfd) < 0)
        return -EPIPE;
    if (status != 0 || pidfd < 0) {
        if (pidfd >= 0)
            close(pidfd);
        return -(status ? status : EIO);
    }
    return pidfd;
}

int ntl_smb_zygote_spawn(int sock)
{
    int rc = -EPIPE;
    pthread_mutex_lock(&zlock);
    /* A second try with a new zygote when the old one is gone. */
    for (int attempt = 0; attempt < 2 && rc == -EPIPE; attempt++) {
        if (zsock < 0 && start_zygote() < 0) {
            rc = -errno;
            break;
        }
        if ((rc = ask_zygote(sock)) == -EPIPE)
            stop_zygote();
    }
    pthread_mutex_unlock(&zlock);
    if (rc < 0) {
        errno = -rc;
        return -1;
    }
    return rc;
}
