/* The whole client on a hostile server byte stream: bind, OpenHKPD, and a
 * QueryValue fetch with buffer growth, through a replaying pipe. Seeds:
 * complete smbd sessions recorded by tests/msrpc/msrpc-fetch --record. */
#include <stddef.h>
#include <stdint.h>

#include "ntlens/msrpc.h"
#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct replay_pipe pipe = {data, size, 0, 0};
    struct ntl_rpc_client c;
    struct ntl_winreg_handle h;
    struct ntl_winreg_fetch f = {.initial_size = 512, .max_size = 1u << 20};
    struct ntl_error err;
    struct ntl_buf out;

    ntl_rpc_client_init(&c, &replay_ops, &pipe, 1u << 20);
    ntl_buf_init(&out, 1u << 20);
    if (ntl_rpc_bind(&c, &ntl_winreg_syntax, &err) == 0 &&
        ntl_winreg_open_hkpd(&c, &h, &err) == 0) {
        ntl_winreg_fetch_value(&c, &h, "Global", NTL_WINREG_VALUE_PERF_DATA, &f, &out, &err);
        f.initial_size = 512;
        ntl_winreg_fetch_value(&c, &h, "Counter 009", NTL_WINREG_VALUE_PLAIN, &f, &out, &err);
    }
    ntl_buf_free(&out);
    ntl_rpc_client_free(&c);
    return 0;
}
