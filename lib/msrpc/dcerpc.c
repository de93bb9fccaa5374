/* DCE/RPC connection-oriented PDUs (C706 12.6, MS-RPCE 2.2.2). */
#include "ntlens/dcerpc.h"

#include <string.h>

#include "ntlens/reader.h"

const struct ntl_dcerpc_syntax ntl_dcerpc_ndr_syntax = {
    {0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11, 0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60},
    2, 0,
};

#define REQUEST_HEADER 24u  /* common header + alloc_hint, p_cont_id, opnum */
#define RESPONSE_HEADER 24u /* common header + alloc_hint, p_cont_id, cancel_count, pad */
#define SEC_TRAILER 8u

static const struct {
    uint32_t status;
    const char *name;
} faults[] = {
    {0x00000005, "rpc_s_access_denied"},
    {0x000006d8, "rpc_s_call_cancelled (ERROR_RPC_CALL_CANCELLED)"},
    {0x000006f7, "nca_s_fault_ndr (RPC_X_BAD_STUB_DATA)"},
    {0x000006c6, "rpc_s_invalid_bound (RPC_S_INVALID_BOUND)"},
    {0x000006e4, "rpc_s_cannot_support (RPC_S_CANNOT_SUPPORT)"},
    {0x000006f8, "RPC_X_NULL_REF_POINTER"},
    {0x00000721, "rpc_s_sec_pkg_error (RPC_S_SEC_PKG_ERROR)"},
    {0x1c000001, "nca_s_fault_int_div_by_zero"},
    {0x1c000002, "nca_s_fault_addr_error"},
    {0x1c000006, "nca_s_fault_invalid_tag"},
    {0x1c000007, "nca_s_fault_invalid_bound"},
    {0x1c000008, "nca_s_rpc_version_mismatch"},
    {0x1c000009, "nca_s_unspec_reject"},
    {0x1c00000c, "nca_s_manager_not_entered"},
    {0x1c00000d, "nca_s_fault_cancel"},
    {0x1c00000e, "nca_s_fault_ill_inst"},
    {0x1c000012, "nca_s_fault_unspec"},
    {0x1c00001a, "nca_s_fault_context_mismatch"},
    {0x1c00001b, "nca_s_fault_remote_no_memory"},
    {0x1c00001c, "nca_s_invalid_pres_context_id"},
    {0x1c00001d, "nca_s_unsupported_authn_level"},
    {0x1c00001f, "nca_s_invalid_checksum"},
    {0x1c000020, "nca_s_invalid_crc"},
    {0x1c000021, "nca_s_fault_user_defined"},
    {0x1c010001, "nca_s_comm_failure"},
    {0x1c010002, "nca_s_op_rng_error"},
    {0x1c010003, "nca_s_unk_if"},
    {0x1c010006, "nca_s_wrong_boot_time"},
    {0x1c010009, "nca_s_you_crashed"},
    {0x1c01000b, "nca_s_proto_error"},
    {0x1c010013, "nca_s_out_args_too_big"},
    {0x1c010014, "nca_s_server_too_busy"},
    {0x1c010015, "nca_s_fault_string_too_long"},
    {0x1c010017, "nca_s_unsupported_type"},
};

const char *ntl_dcerpc_fault_name(uint32_t status)
{
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        if (faults[i].status == status)
            return faults[i].name;
    return NULL;
}

static const char *reject_reason(uint16_t r)
{
    static const char *const names[] = {
        "reason not specified", "temporary congestion", "local limit exceeded",
        "called paddr unknown", "protocol version not supported",
        "default context not supported", "user data not readable", "no psap available",
        "authentication type not recognized", "invalid checksum",
    };
    return r < sizeof names / sizeof names[0] ? names[r] : "unknown reason";
}

static const char *ptype_name(uint8_t t)
{
    static const char *const names[] = {
        "request", "ping", "response", "fault", "working", "nocall", "reject", "ack",
        "cl_cancel", "fack", "cancel_ack", "bind", "bind_ack", "bind_nak", "alter_context",
        "alter_context_resp", "auth3", "shutdown", "co_cancel", "orphaned",
    };
    return t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

int ntl_dcerpc_parse_header(const void *data, size_t size, struct ntl_dcerpc_header *h,
                            struct ntl_error *err)
{
    const uint8_t *p = data;

    if (size < NTL_DCERPC_HEADER_SIZE)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "DCE/RPC header", 0,
                             "%zu bytes, a PDU header needs 16", size);
    h->rpc_vers = p[0];
    h->rpc_vers_minor = p[1];
    h->ptype = p[2];
    h->pfc_flags = p[3];
    memcpy(h->drep, p + 4, 4);
    h->frag_length = ntl_le16(p + 8);
    h->auth_length = ntl_le16(p + 10);
    h->call_id = ntl_le32(p + 12);
    if (h->rpc_vers != 5 || h->rpc_vers_minor > 1)
        return ntl_error_set(err, NTL_ERR_FORMAT, "DCE/RPC header", 0,
                             "RPC version %u.%u, expected 5.0 (not a DCE/RPC PDU)",
                             h->rpc_vers, h->rpc_vers_minor);
    if ((h->drep[0] & 0xf0) != 0x10 || (h->drep[0] & 0x0f) != 0 || h->drep[1] != 0)
        return ntl_error_set(err, NTL_ERR_UNSUPPORTED, "DCE/RPC header", 4,
                             "data representation %02x %02x: only little-endian ASCII IEEE "
                             "is supported", h->drep[0], h->drep[1]);
    if (h->frag_length < NTL_DCERPC_HEADER_SIZE ||
        (h->auth_length && h->frag_length < NTL_DCERPC_HEADER_SIZE + SEC_TRAILER + h->auth_length))
        return ntl_error_set(err, NTL_ERR_FORMAT, "DCE/RPC header", 8,
                             "frag_length %u too small (auth_length %u)", h->frag_length,
                             h->auth_length);
    return NTL_OK;
}

static void put_header(uint8_t *p, uint8_t ptype, uint8_t flags, uint16_t frag_len,
                       uint32_t call_id)
{
    p[0] = 5;
    p[1] = 0;
    p[2] = ptype;
    p[3] = flags;
    p[4] = 0x10;
    p[5] = p[6] = p[7] = 0;
    ntl_put_le16(p + 8, frag_len);
    ntl_put_le16(p + 10, 0);
    ntl_put_le32(p + 12, call_id);
}

static void put_syntax(uint8_t *p, const struct ntl_dcerpc_syntax *s)
{
    memcpy(p, s->uuid, 16);
    ntl_put_le16(p + 16, s->version);
    ntl_put_le16(p + 18, s->version_minor);
}

int ntl_dcerpc_build_bind(struct ntl_buf *out, uint32_t call_id, uint16_t max_xmit,
                          uint16_t max_recv, const struct ntl_dcerpc_syntax *iface,
                          struct ntl_error *err)
{
    const uint16_t len = 16 + 8 + 4 + 4 + 20 + 20;
    uint8_t *p;

    if (ntl_buf_grow_zero(out, len, &p) < 0)
        return ntl_error_set(err, NTL_ERR_NOMEM, "bind", NTL_NO_OFFSET, "out of memory");
    put_header(p, NTL_DCERPC_BIND, NTL_DCERPC_PFC_FIRST_FRAG | NTL_DCERPC_PFC_LAST_FRAG, len,
               call_id);
    ntl_put_le16(p + 16, max_xmit);
    ntl_put_le16(p + 18, max_recv);
    ntl_put_le32(p + 20, 0);          /* assoc_group_id: a new association */
    p[24] = 1;                         /* n_context_elem */
    ntl_put_le16(p + 28, 0);          /* p_cont_id */
    p[30] = 1;                         /* n_transfer_syn */
    put_syntax(p + 32, iface);
    put_syntax(p + 52, &ntl_dcerpc_ndr_syntax);
    return NTL_OK;
}

static int expect_ptype(const struct ntl_dcerpc_header *h, uint8_t want, uint64_t origin,
                        struct ntl_error *err)
{
    if (h->ptype != want)
        return ntl_error_set(err, NTL_ERR_FORMAT, "DCE/RPC header", origin + 2,
                             "packet type %u (%s), expected %s", h->ptype, ptype_name(h->ptype),
                             ptype_name(want));
    return NTL_OK;
}

int ntl_dcerpc_parse_bind_ack(const void *data, size_t size, uint32_t call_id,
                              struct ntl_dcerpc_bind_ack *ack, struct ntl_error *err)
{
    struct ntl_dcerpc_header h;
    struct ntl_reader r;
    uint16_t sec_len;
    uint8_t n_results;
    const uint8_t *syntax;
    int rc;

    if ((rc = ntl_dcerpc_parse_header(data, size, &h, err)) < 0)
        return rc;
    if (h.frag_length > size)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "bind_ack", size,
                             "frag_length %u but %zu bytes", h.frag_length, size);
    if (h.call_id != call_id)
        return ntl_error_set(err, NTL_ERR_FORMAT, "bind_ack", 12,
                             "call_id %u answers no bind (expected %u)", h.call_id, call_id);
    ntl_reader_init(&r, data, h.frag_length - h.auth_length - (h.auth_length ? SEC_TRAILER : 0), 0);
    ntl_reader_skip(&r, NTL_DCERPC_HEADER_SIZE);
    if (h.ptype == NTL_DCERPC_BIND_NAK) {
        uint16_t reason = 0;
        ntl_reader_u16(&r, &reason);
        return ntl_error_set(err, NTL_ERR_REMOTE, "bind_nak", 16,
                             "the server rejected the bind: %s (%u)", reject_reason(reason),
                             reason);
    }
    if ((rc = expect_ptype(&h, NTL_DCERPC_BIND_ACK, 0, err)) < 0)
        return rc;
    if (!ntl_reader_u16(&r, &ack->max_xmit_frag) || !ntl_reader_u16(&r, &ack->max_recv_frag) ||
        !ntl_reader_u32(&r, &ack->assoc_group_id) || !ntl_reader_u16(&r, &sec_len) ||
        !ntl_reader_skip(&r, sec_len) || !ntl_reader_seek(&r, (r.pos + 3) & ~(size_t)3) ||
        !ntl_reader_u8(&r, &n_results) || !ntl_reader_skip(&r, 3))
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "bind_ack", ntl_reader_offset(&r),
                             "bind_ack ends inside its fixed fields");
    if (n_results < 1)
        return ntl_error_set(err, NTL_ERR_FORMAT, "bind_ack", ntl_reader_offset(&r) - 4,
                             "no presentation context result");
    if (!ntl_reader_u16(&r, &ack->result) || !ntl_reader_u16(&r, &ack->reason) ||
        !ntl_reader_bytes(&r, 20, &syntax))
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "bind_ack", ntl_reader_offset(&r),
                             "bind_ack ends inside its context result");
    if (ack->result != 0)
        return ntl_error_set(err, NTL_ERR_REMOTE, "bind_ack", ntl_reader_offset(&r) - 24,
                             "the server does not offer this interface over NDR "
                             "(result %u, reason %u%s)", ack->result, ack->reason,
                             ack->reason == 1 ? ": abstract syntax not supported" : "");
    if (memcmp(syntax, ntl_dcerpc_ndr_syntax.uuid, 16) || ntl_le16(syntax + 16) != 2)
        return ntl_error_set(err, NTL_ERR_FORMAT, "bind_ack", ntl_reader_offset(&r) - 20,
                             "accepted transfer syntax is not NDR 2.0");
    /* Every peer must take fragments of NTL_DCERPC_MIN_FRAG (C706
     * 12.6.3.1); a server that claims less cannot carry a request. */
    if (ack->max_xmit_frag < NTL_DCERPC_MIN_FRAG)
        return ntl_error_set(err, NTL_ERR_FORMAT, "bind_ack", 16,
                             "max_xmit_frag %u is below the %u bytes every DCE/RPC peer must "
                             "handle", ack->max_xmit_frag, NTL_DCERPC_MIN_FRAG);
    if (ack->max_recv_frag < NTL_DCERPC_MIN_FRAG)
        return ntl_error_set(err, NTL_ERR_FORMAT, "bind_ack", 18,
                             "max_recv_frag %u is below the %u bytes every DCE/RPC peer must "
                             "accept: no request fits", ack->max_recv_frag, NTL_DCERPC_MIN_FRAG);
    return NTL_OK;
}

int ntl_dcerpc_build_request(struct ntl_buf *out, uint32_t call_id, uint16_t opnum,
                             uint16_t context_id, const void *stub, size_t stub_len,
                             uint16_t max_frag, struct ntl_error *err)
{
    /* Stub bytes per fragment, kept a multiple of 8 so that fragment
     * boundaries never split NDR alignment (what Windows does). */
    size_t chunk_max = ((size_t)max_frag - REQUEST_HEADER) & ~(size_t)7;
    size_t done = 0;
    const uint8_t *s = stub;

    if (max_frag < REQUEST_HEADER + 8)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "request", NTL_NO_OFFSET,
                             "fragment size %u too small", max_frag);
    if (stub_len > UINT32_MAX)
        return ntl_error_set(err, NTL_ERR_LIMIT, "request", NTL_NO_OFFSET,
                             "stub of %zu bytes is too large", stub_len);
    do {
        size_t chunk = stub_len - done < chunk_max ? stub_len - done : chunk_max;
        uint8_t flags = (done == 0 ? NTL_DCERPC_PFC_FIRST_FRAG : 0) |
                        (done + chunk == stub_len ? NTL_DCERPC_PFC_LAST_FRAG : 0);
        uint8_t *p;

        if (ntl_buf_grow_zero(out, REQUEST_HEADER + chunk, &p) < 0)
            return ntl_error_set(err, NTL_ERR_NOMEM, "request", NTL_NO_OFFSET,
                                 "out of memory");
        put_header(p, NTL_DCERPC_REQUEST, flags, (uint16_t)(REQUEST_HEADER + chunk), call_id);
        ntl_put_le32(p + 16, (uint32_t)(stub_len - done));
        ntl_put_le16(p + 20, context_id);
        ntl_put_le16(p + 22, opnum);
        if (chunk)
            memcpy(p + REQUEST_HEADER, s + done, chunk);
        done += chunk;
    } while (done < stub_len);
    return NTL_OK;
}

void ntl_dcerpc_response_init(struct ntl_dcerpc_response *r, uint32_t call_id,
                              struct ntl_buf *stub)
{
    memset(r, 0, sizeof *r);
    r->call_id = call_id;
    r->stub = stub;
    stub->len = 0;
}

int ntl_dcerpc_response_feed(struct ntl_dcerpc_response *r, const void *frag, size_t size,
                             struct ntl_error *err)
{
    const uint8_t *p = frag;
    const uint64_t o = r->origin;
    struct ntl_dcerpc_header h;
    size_t stub_end;
    uint32_t alloc_hint;
    int rc;

    if (r->done)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "response", o, "call already complete");
    if ((rc = ntl_dcerpc_parse_header(frag, size, &h, err)) < 0) {
        if (err)
            err->offset = err->offset == NTL_NO_OFFSET ? o : err->offset + o;
        return rc;
    }
    if (h.frag_length != size)
        return ntl_error_set(err, NTL_ERR_FORMAT, "response", o + 8,
                             "frag_length %u but the fragment has %zu bytes", h.frag_length,
                             size);
    if (h.call_id != r->call_id)
        return ntl_error_set(err, NTL_ERR_FORMAT, "response", o + 12,
                             "call_id %u, expected %u", h.call_id, r->call_id);
    if (size < RESPONSE_HEADER)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "response", o + size,
                             "a %s PDU needs 24 bytes, got %zu", ptype_name(h.ptype), size);
    alloc_hint = ntl_le32(p + 16);
    if (h.ptype == NTL_DCERPC_FAULT) {
        const char *name;
        if (size < 32)
            return ntl_error_set(err, NTL_ERR_TRUNCATED, "fault", o + size,
                                 "fault PDU of %zu bytes has no status", size);
        r->fault_status = ntl_le32(p + 24);
        r->done = true;
        name = ntl_dcerpc_fault_name(r->fault_status);
        return ntl_error_set(err, NTL_ERR_REMOTE, "fault", o + 24,
                             "the server answered with RPC fault 0x%08x (%s)", r->fault_status,
                             name ? name : "unknown fault");
    }
    if ((rc = expect_ptype(&h, NTL_DCERPC_RESPONSE, o, err)) < 0)
        return rc;
    if (!r->started != !!(h.pfc_flags & NTL_DCERPC_PFC_FIRST_FRAG))
        return ntl_error_set(err, NTL_ERR_FORMAT, "response", o + 3,
                             r->started ? "a second first fragment in one call"
                                        : "the call's first fragment lacks PFC_FIRST_FRAG");
    if (!r->started && alloc_hint > r->stub->limit)
        return ntl_error_set(err, NTL_ERR_LIMIT, "response", o + 16,
                             "alloc_hint %u exceeds the %zu-byte cap on one answer", alloc_hint,
                             r->stub->limit);
    if (!r->started && alloc_hint && ntl_buf_reserve(r->stub, alloc_hint) < 0)
        return ntl_error_set(err, NTL_ERR_NOMEM, "response", o + 16, "out of memory");
    r->started = true;
    stub_end = size - (h.auth_length ? h.auth_length + SEC_TRAILER : 0);
    if (stub_end < RESPONSE_HEADER)
        return ntl_error_set(err, NTL_ERR_FORMAT, "response", o + 10,
                             "auth_length %u leaves no room for the stub", h.auth_length);
    rc = ntl_buf_append(r->stub, p + RESPONSE_HEADER, stub_end - RESPONSE_HEADER);
    if (rc == NTL_ERR_LIMIT)
        return ntl_error_set(err, NTL_ERR_LIMIT, "response", o + RESPONSE_HEADER,
                             "the answer exceeds the %zu-byte cap", r->stub->limit);
    if (rc < 0)
        return ntl_error_set(err, rc, "response", o, "out of memory");
    r->origin += size;
    if (h.pfc_flags & NTL_DCERPC_PFC_LAST_FRAG) {
        r->done = true;
        return 1;
    }
    return 0;
}

void ntl_dcerpc_stream_expect(struct ntl_dcerpc_stream *s)
{
    *s = (struct ntl_dcerpc_stream){.open = true};
}

uint32_t ntl_dcerpc_stream_want(const struct ntl_dcerpc_stream *s)
{
    if (!s->open)
        return 0;
    return s->hdr_have < sizeof s->hdr ? (uint32_t)(sizeof s->hdr - s->hdr_have) : s->frag_left;
}

/* A whole header read: the body's length and whether it ends the reply. */
static bool stream_header(struct ntl_dcerpc_stream *s)
{
    bool le = (s->hdr[4] & 0x10) != 0; /* drep[0]: integer byte order */
    uint32_t len = le ? s->hdr[8] | (uint32_t)s->hdr[9] << 8
                      : (uint32_t)s->hdr[8] << 8 | s->hdr[9];
    if (len < sizeof s->hdr)
        return false;
    s->frag_left = len - (uint32_t)sizeof s->hdr;
    s->last = (s->hdr[3] & NTL_DCERPC_PFC_LAST_FRAG) != 0;
    return true;
}

long ntl_dcerpc_stream_feed(struct ntl_dcerpc_stream *s, const void *data, size_t n)
{
    const uint8_t *d = data;
    size_t used = 0;
    while (used < n && s->open) {
        size_t k = ntl_dcerpc_stream_want(s);
        if (k > n - used)
            k = n - used;
        if (s->hdr_have < sizeof s->hdr) {
            memcpy(s->hdr + s->hdr_have, d + used, k);
            s->hdr_have = (uint8_t)(s->hdr_have + k);
            if (s->hdr_have == sizeof s->hdr && !stream_header(s))
                return -1;
        } else {
            s->frag_left -= (uint32_t)k;
        }
        used += k;
        if (s->hdr_have == sizeof s->hdr && s->frag_left == 0) {
            s->hdr_have = 0;
            s->open = !s->last;
        }
    }
    return (long)used;
}
