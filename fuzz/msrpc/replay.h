/* A pipe that serves a recorded byte stream as the server's answers and
 * swallows what the client writes (fuzzers and tests of the RPC client). */
#ifndef NTLENS_FUZZ_MSRPC_REPLAY_H
#define NTLENS_FUZZ_MSRPC_REPLAY_H

#include <string.h>

#include "ntlens/msrpc.h"

struct replay_pipe {
    const uint8_t *data;
    size_t size, pos;
    size_t written;
};

static int replay_write(void *pipe, const void *data, size_t n, struct ntl_error *err)
{
    struct replay_pipe *r = pipe;
    (void)data;
    (void)err;
    r->written += n;
    return NTL_OK;
}

static int replay_read(void *pipe, void *data, size_t n, struct ntl_error *err)
{
    struct replay_pipe *r = pipe;
    if (n > r->size - r->pos)
        return ntl_error_set(err, NTL_ERR_EOF, NULL, NTL_NO_OFFSET, "recording ends");
    memcpy(data, r->data + r->pos, n);
    r->pos += n;
    return NTL_OK;
}

static const struct ntl_rpc_pipe_ops replay_ops = {replay_write, replay_read};

#endif
