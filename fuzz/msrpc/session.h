/* What the RPC client fuzzers ask of a server, whatever answers: bind to
 * winreg, OpenHKPD, fetch "Global" (with buffer growth) and "Counter 009",
 * and close the key, as `ntlens ps` and `counters` do. */
#ifndef NTLENS_FUZZ_MSRPC_SESSION_H
#define NTLENS_FUZZ_MSRPC_SESSION_H

#include "ntlens/buf.h"
#include "ntlens/msrpc.h"
#include "ntlens/winreg.h"

static void fuzz_winreg_session(const struct ntl_rpc_pipe_ops *ops, void *pipe)
{
    struct ntl_rpc_client c;
    struct ntl_winreg_handle h;
    struct ntl_winreg_fetch f = {.initial_size = 512, .max_size = 1u << 20};
    struct ntl_error err;
    struct ntl_buf out;

    ntl_rpc_client_init(&c, ops, pipe, 1u << 20);
    ntl_buf_init(&out, 1u << 20);
    if (ntl_rpc_bind(&c, &ntl_winreg_syntax, &err) == 0 &&
        ntl_winreg_open_hkpd(&c, &h, &err) == 0) {
        ntl_winreg_fetch_value(&c, &h, "Global", NTL_WINREG_VALUE_PERF_DATA, &f, &out, &err);
        f.initial_size = 512;
        ntl_winreg_fetch_value(&c, &h, "Counter 009", NTL_WINREG_VALUE_PLAIN, &f, &out, &err);
        ntl_winreg_close_key(&c, &h, &err);
    }
    ntl_buf_free(&out);
    ntl_rpc_client_free(&c);
}

#endif
