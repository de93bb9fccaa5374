/* The RPC client: bind, then calls with fragmentation both ways, over any
 * message pipe (struct ntl_rpc_pipe_ops). */
#include "ntlens/msrpc.h"

#include <string.h>

#include "ntlens/reader.h"

#define DEFAULT_MAX_STUB ((size_t)(64u << 20) + 4096)

void ntl_rpc_client_init(struct ntl_rpc_client *c, const struct ntl_rpc_pipe_ops *ops,
                         void *pipe, size_t max_stub)
{
    memset(c, 0, sizeof *c);
    c->ops = ops;
    c->pipe = pipe;
    c->next_call_id = 1;
    c->max_xmit = NTL_DCERPC_DEFAULT_FRAG;
    c->max_recv = NTL_DCERPC_DEFAULT_FRAG;
    c->max_stub = max_stub ? max_stub : DEFAULT_MAX_STUB;
    ntl_buf_init(&c->tx, 0);
    ntl_buf_init(&c->frag, 0xffff);
}

void ntl_rpc_client_free(struct ntl_rpc_client *c)
{
    ntl_buf_free(&c->tx);
    ntl_buf_free(&c->frag);
}

/* Reads one whole fragment into c->frag: the 16-byte header, then exactly
 * frag_length - 16 more bytes (a longer read would block on a pipe). */
static int read_fragment(struct ntl_rpc_client *c, uint16_t max_len, struct ntl_error *err)
{
    struct ntl_dcerpc_header h;
    int rc;

    c->frag.len = 0;
    if (ntl_buf_reserve(&c->frag, 0xffff) < 0)
        return ntl_error_set(err, NTL_ERR_NOMEM, "response", NTL_NO_OFFSET, "out of memory");
    if ((rc = c->ops->read(c->pipe, c->frag.data, NTL_DCERPC_HEADER_SIZE, err)) < 0)
        return rc;
    if ((rc = ntl_dcerpc_parse_header(c->frag.data, NTL_DCERPC_HEADER_SIZE, &h, err)) < 0) {
        if (err && err->offset != NTL_NO_OFFSET)
            err->offset += c->rx_offset;
        return rc;
    }
    if (h.frag_length > max_len)
        return ntl_error_set(err, NTL_ERR_FORMAT, "DCE/RPC header", c->rx_offset + 8,
                             "frag_length %u exceeds the negotiated %u", h.frag_length,
                             max_len);
    if ((rc = c->ops->read(c->pipe, c->frag.data + NTL_DCERPC_HEADER_SIZE,
                           h.frag_length - NTL_DCERPC_HEADER_SIZE, err)) < 0)
        return rc;
    c->frag.len = h.frag_length;
    return NTL_OK;
}

int ntl_rpc_bind(struct ntl_rpc_client *c, const struct ntl_dcerpc_syntax *iface,
                 struct ntl_error *err)
{
    struct ntl_dcerpc_bind_ack ack;
    uint32_t call_id = c->next_call_id++;
    int rc;

    c->tx.len = 0;
    if ((rc = ntl_dcerpc_build_bind(&c->tx, call_id, c->max_xmit, c->max_recv, iface, err)) < 0)
        return rc;
    if ((rc = c->ops->write(c->pipe, c->tx.data, c->tx.len, err)) < 0)
        return rc;
    /* A bind_ack may come in fragments as large as anything; accept the
     * maximum a header can describe. */
    if ((rc = read_fragment(c, 0xffff, err)) < 0)
        return rc;
    rc = ntl_dcerpc_parse_bind_ack(c->frag.data, c->frag.len, call_id, &ack, err);
    c->rx_offset += c->frag.len;
    if (rc < 0)
        return rc;
    /* Our fragments must fit what the server receives, and we must accept
     * what it sends (never more than we offered, by C706; tolerate more). */
    if (ack.max_recv_frag < c->max_xmit)
        c->max_xmit = ack.max_recv_frag;
    if (ack.max_xmit_frag > c->max_recv)
        c->max_recv = ack.max_xmit_frag;
    c->bound = true;
    return NTL_OK;
}

int ntl_rpc_call(struct ntl_rpc_client *c, uint16_t opnum, const void *stub, size_t stub_len,
                 struct ntl_buf *out, uint32_t *fault, struct ntl_error *err)
{
    struct ntl_dcerpc_response resp;
    size_t sent = 0;
    uint32_t call_id = c->next_call_id++;
    size_t saved_limit = out->limit;
    int rc;

    if (fault)
        *fault = 0;
    if (!c->bound)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "request", NTL_NO_OFFSET, "not bound");
    c->tx.len = 0;
    if ((rc = ntl_dcerpc_build_request(&c->tx, call_id, opnum, 0, stub, stub_len, c->max_xmit,
                                       err)) < 0)
        return rc;
    /* One write per fragment: a message-mode pipe delivers each write as one
     * PDU. */
    while (sent < c->tx.len) {
        uint16_t flen = ntl_le16(c->tx.data + sent + 8);
        if ((rc = c->ops->write(c->pipe, c->tx.data + sent, flen, err)) < 0)
            return rc;
        sent += flen;
    }
    if (out->limit > c->max_stub)
        out->limit = c->max_stub;
    ntl_dcerpc_response_init(&resp, call_id, out);
    resp.origin = c->rx_offset;
    do {
        if ((rc = read_fragment(c, c->max_recv, err)) < 0)
            break;
        rc = ntl_dcerpc_response_feed(&resp, c->frag.data, c->frag.len, err);
        c->rx_offset += c->frag.len;
    } while (rc == 0);
    out->limit = saved_limit;
    c->round_trips++;
    if (fault)
        *fault = resp.fault_status;
    return rc < 0 ? rc : NTL_OK;
}
