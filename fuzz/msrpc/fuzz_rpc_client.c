/* The whole client on a hostile server byte stream: bind, OpenHKPD, and a
 * QueryValue fetch with buffer growth (session.h), through a replaying pipe. Seeds:
 * complete smbd sessions recorded by tests/msrpc/msrpc-fetch --record. */
#include <stddef.h>
#include <stdint.h>

#include "ntlens/msrpc.h"
#include "replay.h"
#include "session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct replay_pipe pipe = {data, size, 0, 0};
    fuzz_winreg_session(&replay_ops, &pipe);
    return 0;
}
