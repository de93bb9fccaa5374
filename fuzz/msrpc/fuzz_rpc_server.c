/* The whole client against a server state machine: the harness reads each
 * PDU the client sends and answers it with a well-formed reply built from
 * the input (a bind_ack for a bind; a response in 1-8 fragments with the
 * call id, alloc_hint and flags right for a request), or, as the input asks,
 * with a fault, a bind_nak or a wrong packet type, a wrong call id or
 * alloc_hint, or raw bytes. A recorded session (fuzz_rpc_client) goes stale
 * after the first mutation that changes a length; here the framing stays
 * right and mutation reaches the NDR of OpenHKPD and QueryValue answers.
 *
 * Input: one plan per call the client completes: an op byte (bits 0-1: 0
 * reply, 1 fault, 2 bind_nak for a bind and a wrong type otherwise, 3 raw
 * bytes; bits 2-4: fragments - 1; bit 5: wrong call id; bit 6: a UINT32
 * alloc_hint follows), a UINT32 length, then the stub (reply), the status
 * (fault) or the bytes (raw). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ntlens/buf.h"
#include "ntlens/dcerpc.h"
#include "ntlens/msrpc.h"
#include "ntlens/reader.h"
#include "session.h"

struct server {
    const uint8_t *in, *end;  /* the plans */
    struct ntl_buf pending;   /* bytes the client has written, not yet a PDU */
    struct ntl_buf replies;   /* what the client reads next */
    size_t read_pos;
};

static void put_header(struct ntl_buf *o, uint8_t ptype, uint8_t flags, uint16_t frag_len,
                       uint32_t call_id)
{
    uint8_t h[NTL_DCERPC_HEADER_SIZE] = {5, 0, ptype, flags, 0x10, 0, 0, 0};
    ntl_put_le16(h + 8, frag_len);
    ntl_put_le32(h + 12, call_id);
    ntl_buf_append(o, h, sizeof h);
}

static void bind_ack(struct server *s, uint32_t call_id)
{
    static const uint8_t body[] = {
        0xb8, 0x10, 0xb8, 0x10, 0x34, 0x12, 0, 0, /* max frags 4280, assoc group */
        6, 0, '4', '9', '1', '5', '2', 0,         /* secondary address, aligned to 4 */
        1, 0, 0, 0, 0, 0, 0, 0,                   /* one result: acceptance */
    };
    put_header(&s->replies, NTL_DCERPC_BIND_ACK, 3, NTL_DCERPC_HEADER_SIZE + sizeof body + 20,
               call_id);
    ntl_buf_append(&s->replies, body, sizeof body);
    ntl_buf_append(&s->replies, ntl_dcerpc_ndr_syntax.uuid, 16);
    ntl_buf_put_u16(&s->replies, ntl_dcerpc_ndr_syntax.version);
    ntl_buf_put_u16(&s->replies, ntl_dcerpc_ndr_syntax.version_minor);
}

/* The stub in `frags` response fragments. */
static void response(struct server *s, uint32_t call_id, const uint8_t *stub, size_t len,
                     unsigned frags, bool lie, uint32_t hint)
{
    size_t per = len / frags + 1;
    for (unsigned i = 0; i < frags; i++) {
        size_t off = per * i < len ? per * i : len;
        size_t n = len - off < per ? len - off : per;
        uint8_t flags = (i == 0 ? NTL_DCERPC_PFC_FIRST_FRAG : 0) |
                        (i + 1 == frags ? NTL_DCERPC_PFC_LAST_FRAG : 0);
        put_header(&s->replies, NTL_DCERPC_RESPONSE, flags,
                   (uint16_t)(NTL_DCERPC_HEADER_SIZE + 8 + n), call_id);
        ntl_buf_put_u32(&s->replies, lie ? hint : (uint32_t)(len - off));
        ntl_buf_put_u32(&s->replies, 0); /* context 0, cancel count, reserved */
        ntl_buf_append(&s->replies, stub + off, n);
    }
}

/* Answers the PDU the client completed, by the next plan. */
static void answer(struct server *s, uint8_t ptype, uint32_t call_id)
{
    if (s->end - s->in < 5)
        return; /* no plan: the client reads end of stream */
    uint8_t op = s->in[0];
    size_t len = ntl_le32(s->in + 1);
    s->in += 5;
    uint32_t hint = 0;
    if ((op & 0x40) && s->end - s->in >= 4) {
        hint = ntl_le32(s->in);
        s->in += 4;
    }
    if (len > (size_t)(s->end - s->in))
        len = (size_t)(s->end - s->in);
    /* Kept under a fragment's 16-bit length for every fragment count. */
    if (len > 60000)
        len = 60000;
    const uint8_t *data = s->in;
    s->in += len;
    if (op & 0x20)
        call_id ^= 0x5a;
    switch (op & 3) {
    case 0:
        if (ptype == NTL_DCERPC_BIND)
            bind_ack(s, call_id);
        else
            response(s, call_id, data, len, 1 + ((op >> 2) & 7), op & 0x40, hint);
        break;
    case 1:
        put_header(&s->replies, NTL_DCERPC_FAULT, 3, NTL_DCERPC_HEADER_SIZE + 16, call_id);
        ntl_buf_put_u32(&s->replies, 0);
        ntl_buf_put_u32(&s->replies, 0);
        ntl_buf_put_u32(&s->replies, len >= 4 ? ntl_le32(data) : 0x1c010002u);
        ntl_buf_put_u32(&s->replies, 0);
        break;
    case 2:
        put_header(&s->replies, ptype == NTL_DCERPC_BIND ? NTL_DCERPC_BIND_NAK : NTL_DCERPC_BIND_ACK,
                   3, (uint16_t)(NTL_DCERPC_HEADER_SIZE + (len < 64 ? len : 64)), call_id);
        ntl_buf_append(&s->replies, data, len < 64 ? len : 64);
        break;
    default:
        ntl_buf_append(&s->replies, data, len);
        break;
    }
}

static int server_write(void *pipe, const void *data, size_t n, struct ntl_error *err)
{
    struct server *s = pipe;
    if (ntl_buf_append(&s->pending, data, n) < 0)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    /* Every complete PDU; the last fragment of a call (or a bind) gets its answer. */
    while (s->pending.len >= NTL_DCERPC_HEADER_SIZE) {
        const uint8_t *p = s->pending.data;
        size_t frag = ntl_le16(p + 8);
        if (frag < NTL_DCERPC_HEADER_SIZE || frag > s->pending.len)
            break;
        if (p[2] == NTL_DCERPC_BIND || (p[3] & NTL_DCERPC_PFC_LAST_FRAG))
            answer(s, p[2], ntl_le32(p + 12));
        memmove(s->pending.data, p + frag, s->pending.len - frag);
        s->pending.len -= frag;
    }
    return NTL_OK;
}

static int server_read(void *pipe, void *data, size_t n, struct ntl_error *err)
{
    struct server *s = pipe;
    if (n > s->replies.len - s->read_pos)
        return ntl_error_set(err, NTL_ERR_EOF, NULL, NTL_NO_OFFSET, "server has no more to say");
    memcpy(data, s->replies.data + s->read_pos, n);
    s->read_pos += n;
    return NTL_OK;
}

static const struct ntl_rpc_pipe_ops server_ops = {server_write, server_read};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct server s = {.in = data, .end = data + size};
    ntl_buf_init(&s.pending, 1u << 20);
    ntl_buf_init(&s.replies, 4u << 20);
    fuzz_winreg_session(&server_ops, &s);
    ntl_buf_free(&s.pending);
    ntl_buf_free(&s.replies);
    return 0;
}
