/* A small client over the msrpc layers for the integration tests and the
 * benchmark: fetches HKEY_PERFORMANCE_DATA values from a winreg server.
 *
 *   msrpc-fetch [options] HOST[:PORT] VALUE...
 *     -U USER        (password from NTLENS_PASSWORD)
 *     -o FILE        write the last value's bytes to FILE
 *     -s SIZE        first QueryValue buffer size (default 65536)
 *     -m MAX         cap on the buffer (default 64 MiB)
 *     -n COUNT       fetch each value COUNT times on the same handle
 *     -t MS          per-call timeout
 *     -P PIPE        open \PIPE\PIPE instead of winreg
 *     --hklm KEY     read the VALUEs under HKLM\KEY instead of HKPD
 *     --record FILE  append every byte read from the pipe to FILE (captures
 *                    of real server answers for tests and fuzz corpora)
 *     --ready        print "ready" once the key is open (for tests that
 *                    disturb the server mid-call)
 *     --threads N    instead: open N sources (ntl_source_open) in N threads at
 *                    once, query "Global" on each, print how many succeeded
 *     --opnum N      also make a call with opnum N and an empty stub and
 *                    print the fault it gets
 * Prints one line per value: name, type, bytes, attempts, round trips. */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/msrpc.h"
#include "ntlens/msrpc_source.h"

/* A pipe that records what it reads, around the real one. */
struct recording_pipe {
    void *inner;
    FILE *log;
};

static int rec_write(void *pipe, const void *data, size_t n, struct ntl_error *err)
{
    struct recording_pipe *r = pipe;
    return ntl_smb_pipe_ops.write(r->inner, data, n, err);
}

static int rec_read(void *pipe, void *data, size_t n, struct ntl_error *err)
{
    struct recording_pipe *r = pipe;
    int rc = ntl_smb_pipe_ops.read(r->inner, data, n, err);
    if (rc >= 0)
        fwrite(data, 1, n, r->log);
    return rc;
}

static const struct ntl_rpc_pipe_ops recording_ops = {rec_write, rec_read};

static char thread_spec[300];

static void *source_thread(void *arg)
{
    struct ntl_source_options opt = {.password = getenv("NTLENS_PASSWORD")};
    struct ntl_source *src;
    struct ntl_error err;
    struct ntl_buf b;
    int rc;
    (void)arg;
    ntl_buf_init(&b, 0);
    rc = ntl_msrpc_source_open(thread_spec, &opt, &src, &err);
    if (rc >= 0) {
        rc = ntl_source_query(src, "Global", &b, &err);
        ntl_source_close(src);
    }
    if (rc < 0)
        fprintf(stderr, "msrpc-fetch: %s\n", err.message);
    else if (b.len == 0)
        rc = NTL_ERR_FORMAT;
    ntl_buf_free(&b);
    return (void *)(intptr_t)rc;
}

static int run_threads(const char *user, const char *host, long n)
{
    pthread_t th[256];
    long ok = 0;
    if (n < 1 || n > 256)
        return 2;
    snprintf(thread_spec, sizeof thread_spec, "smb://%s@%s", user ? user : "", host);
    for (long i = 0; i < n; i++)
        pthread_create(&th[i], NULL, source_thread, NULL);
    for (long i = 0; i < n; i++) {
        void *rc;
        pthread_join(th[i], &rc);
        ok += (intptr_t)rc >= 0;
    }
    printf("threads=%ld ok=%ld\n", n, ok);
    return ok == n ? 0 : 1;
}

static int fail(const struct ntl_error *err)
{
    char buf[512];
    fprintf(stderr, "msrpc-fetch: %s\n", ntl_error_format(err, buf, sizeof buf));
    return 1;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"hklm", required_argument, NULL, 'K'},
                                             {"record", required_argument, NULL, 'R'},
                                             {"opnum", required_argument, NULL, 'O'},
                                             {"ready", no_argument, NULL, 'Y'},
                                             {"threads", required_argument, NULL, 'T'},
                                             {NULL, 0, NULL, 0}};
    struct recording_pipe rec = {NULL, NULL};
    long opnum = -1;
    bool ready = false;
    long threads = 0;
    struct ntl_smb_target t = {0};
    struct ntl_smb_pipe *pipe;
    struct ntl_rpc_client rpc;
    struct ntl_winreg_handle root, key;
    struct ntl_error err;
    struct ntl_buf value;
    const char *outfile = NULL, *hklm_key = NULL, *pipe_name = "winreg";
    unsigned long initial = 65536, max = 64ul << 20, count = 1;
    char host[256], *colon;
    int opt, rc = 0;

    while ((opt = getopt_long(argc, argv, "U:o:s:m:n:t:P:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'U': t.user = optarg; break;
        case 'o': outfile = optarg; break;
        case 's': initial = strtoul(optarg, NULL, 0); break;
        case 'm': max = strtoul(optarg, NULL, 0); break;
        case 'n': count = strtoul(optarg, NULL, 0); break;
        case 't': t.call_timeout_ms = (unsigned)strtoul(optarg, NULL, 0); break;
        case 'K': hklm_key = optarg; break;
        case 'P': pipe_name = optarg; break;
        case 'R':
            if (!(rec.log = fopen(optarg, "ab"))) {
                fprintf(stderr, "msrpc-fetch: cannot open %s\n", optarg);
                return 1;
            }
            break;
        case 'O': opnum = strtol(optarg, NULL, 0); break;
        case 'Y': ready = true; break;
        case 'T': threads = strtol(optarg, NULL, 0); break;
        default: return 2;
        }
    }
    if (argc - optind < 2) {
        fprintf(stderr, "usage: msrpc-fetch [-U USER] [-o FILE] [-s SIZE] [-m MAX] [-n N] "
                        "[--hklm KEY] HOST[:PORT] VALUE...\n");
        return 2;
    }
    if (threads)
        return run_threads(t.user, argv[optind], threads);
    snprintf(host, sizeof host, "%s", argv[optind]);
    if ((colon = strrchr(host, ':'))) {
        *colon = '\0';
        t.port = (uint16_t)atoi(colon + 1);
    }
    t.host = host;
    t.password = getenv("NTLENS_PASSWORD");
    ntl_error_clear(&err);
    if (ntl_smb_pipe_open(&t, pipe_name, &pipe, &err) < 0)
        return fail(&err);
    rec.inner = pipe;
    if (rec.log)
        ntl_rpc_client_init(&rpc, &recording_ops, &rec, max + 4096);
    else
        ntl_rpc_client_init(&rpc, &ntl_smb_pipe_ops, pipe, max + 4096);
    if (ntl_rpc_bind(&rpc, &ntl_winreg_syntax, &err) < 0 ||
        (hklm_key ? ntl_winreg_open_hklm(&rpc, &root, &err)
                  : ntl_winreg_open_hkpd(&rpc, &root, &err)) < 0)
        return fail(&err);
    key = root;
    if (ready) {
        printf("ready\n");
        fflush(stdout);
    }
    if (opnum >= 0) {
        struct ntl_buf out;
        uint32_t fault = 0;
        ntl_buf_init(&out, 1u << 20);
        if (ntl_rpc_call(&rpc, (uint16_t)opnum, "", 0, &out, &fault, &err) < 0) {
            char buf[512];
            printf("opnum %ld: fault=0x%08x %s\n", opnum, fault, ntl_error_format(&err, buf, sizeof buf));
        } else {
            printf("opnum %ld: no fault, %zu stub bytes\n", opnum, out.len);
        }
        ntl_buf_free(&out);
    }
    if (hklm_key && ntl_winreg_open_key(&rpc, &root, hklm_key, &key, &err) < 0)
        return fail(&err);
    ntl_buf_init(&value, max);
    for (int i = optind + 1; i < argc && rc == 0; i++) {
        struct ntl_winreg_fetch f = {.initial_size = (uint32_t)initial, .max_size = max};
        bool perf = !hklm_key && strncmp(argv[i], "Counter ", 8) && strncmp(argv[i], "Help ", 5) &&
                    strncmp(argv[i], "Explain ", 8);
        unsigned trips = rpc.round_trips, attempts = 0;
        for (unsigned long n = 0; n < count; n++) {
            if (ntl_winreg_fetch_value(&rpc, &key, argv[i],
                                       perf ? NTL_WINREG_VALUE_PERF_DATA : NTL_WINREG_VALUE_PLAIN,
                                       &f, &value, &err) < 0) {
                rc = fail(&err);
                break;
            }
            attempts += f.attempts;
        }
        if (rc == 0)
            printf("%s type=%u bytes=%zu attempts=%u round_trips=%u buffer=%u\n", argv[i], f.type,
                   value.len, attempts, rpc.round_trips - trips, f.last_size);
    }
    if (rc == 0 && outfile) {
        FILE *fp = fopen(outfile, "wb");
        if (!fp || fwrite(value.data, 1, value.len, fp) != value.len || fclose(fp) != 0) {
            fprintf(stderr, "msrpc-fetch: cannot write %s\n", outfile);
            rc = 1;
        }
    }
    if (rc == 0 && hklm_key && ntl_winreg_close_key(&rpc, &key, &err) < 0)
        rc = fail(&err);
    if (rc == 0 && ntl_winreg_close_key(&rpc, &root, &err) < 0)
        rc = fail(&err);
    ntl_buf_free(&value);
    ntl_rpc_client_free(&rpc);
    ntl_smb_pipe_close(pipe);
    if (rec.log)
        fclose(rec.log);
    return rc;
}
