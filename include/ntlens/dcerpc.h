/* DCE/RPC connection-oriented PDUs (C706 chapter 12, MS-RPCE 2.2.2): the
 * 16-byte common header, bind / bind_ack / bind_nak, request, response and
 * fault. This layer only builds and parses bytes; it never does I/O, so it
 * can be used (and fuzzed) on captured traffic alone.
 *
 * Only little-endian, ASCII, IEEE data representation (drep 10 00 00 00) is
 * produced; other representations are refused with NTL_ERR_UNSUPPORTED.
 * Authentication is left to the transport (SMB signing/encryption), so PDUs
 * with an auth trailer are accepted but the trailer is ignored. */
#ifndef NTLENS_DCERPC_H
#define NTLENS_DCERPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NTL_DCERPC_HEADER_SIZE 16u
/* The smallest fragment any peer must accept (C706 12.6.3.1). */
#define NTL_DCERPC_MIN_FRAG 1432u
/* What we offer in bind: the largest fragment Windows and Samba use. */
#define NTL_DCERPC_DEFAULT_FRAG 4280u

enum ntl_dcerpc_ptype {
    NTL_DCERPC_REQUEST = 0,
    NTL_DCERPC_RESPONSE = 2,
    NTL_DCERPC_FAULT = 3,
    NTL_DCERPC_BIND = 11,
    NTL_DCERPC_BIND_ACK = 12,
    NTL_DCERPC_BIND_NAK = 13,
};

enum {
    NTL_DCERPC_PFC_FIRST_FRAG = 0x01,
    NTL_DCERPC_PFC_LAST_FRAG = 0x02,
};

struct ntl_dcerpc_header {
    uint8_t rpc_vers, rpc_vers_minor, ptype, pfc_flags;
    uint8_t drep[4];
    uint16_t frag_length;
    uint16_t auth_length;
    uint32_t call_id;
};

/* An interface or transfer syntax: UUID (in its wire byte order) + version. */
struct ntl_dcerpc_syntax {
    uint8_t uuid[16];
    uint16_t version;
    uint16_t version_minor;
};

/* NDR 2.0 transfer syntax 8a885d04-1ceb-11c9-9fe8-08002b104860 v2. */
extern const struct ntl_dcerpc_syntax ntl_dcerpc_ndr_syntax;

/* Parses and checks the common header of the bytes at data: version 5.0,
 * little-endian drep, frag_length >= 16 + auth_length. Does not require the
 * whole fragment to be present (a transport reads the header first). */
int ntl_dcerpc_parse_header(const void *data, size_t size, struct ntl_dcerpc_header *h,
                            struct ntl_error *err);

/* Appends a bind PDU offering one presentation context (id 0) for iface
 * over NDR. */
int ntl_dcerpc_build_bind(struct ntl_buf *out, uint32_t call_id, uint16_t max_xmit,
                          uint16_t max_recv, const struct ntl_dcerpc_syntax *iface,
                          struct ntl_error *err);

struct ntl_dcerpc_bind_ack {
    uint16_t max_xmit_frag;   /* largest fragment the server sends */
    uint16_t max_recv_frag;   /* largest fragment the server accepts */
    uint32_t assoc_group_id;
    uint16_t result;          /* of context 0: 0 acceptance */
    uint16_t reason;
};

/* Parses one complete bind_ack (or bind_nak, which gives NTL_ERR_REMOTE with
 * the reject reason named) for call_id. A context that was not accepted, a
 * transfer syntax other than NDR, or fragment sizes below 16 bytes are
 * errors. */
int ntl_dcerpc_parse_bind_ack(const void *data, size_t size, uint32_t call_id,
                              struct ntl_dcerpc_bind_ack *ack, struct ntl_error *err);

/* Appends the request PDUs for one call: the stub split into fragments of
 * at most max_frag bytes each, with FIRST/LAST flags and alloc_hint set to
 * the stub bytes that remain from each fragment on. */
int ntl_dcerpc_build_request(struct ntl_buf *out, uint32_t call_id, uint16_t opnum,
                             uint16_t context_id, const void *stub, size_t stub_len,
                             uint16_t max_frag, struct ntl_error *err);

/* Reassembles the response to one call from its fragments. */
struct ntl_dcerpc_response {
    uint32_t call_id;
    struct ntl_buf *stub;     /* stub bytes are appended here (its limit caps them) */
    bool started;
    bool done;
    uint32_t fault_status;    /* set when a fault PDU ended the call */
    uint64_t origin;          /* stream offset of the next fragment, for errors */
};

/* Where a stream of connection-oriented PDUs stands, from its bytes alone:
 * the transport feeds it every byte it reads of one reply, however the
 * reads split it, to know where the reply ends without parsing it (a reply
 * abandoned by a timed-out call is read and dropped that way). */
struct ntl_dcerpc_stream {
    uint8_t hdr[NTL_DCERPC_HEADER_SIZE]; /* the current fragment's header, as far as read */
    uint8_t hdr_have;
    uint32_t frag_left;       /* of the current fragment's body */
    bool last;                /* the current fragment ends the reply */
    bool open;                /* a reply is expected and not all read */
};

/* Expects one reply (one or more fragments, the last with PFC_LAST_FRAG). */
void ntl_dcerpc_stream_expect(struct ntl_dcerpc_stream *s);
/* Follows the framing over n bytes of the reply; bytes after its end are not
 * consumed. Returns the bytes consumed, or -1 when a header's frag_length is
 * shorter than the header itself (the stream cannot be followed). */
long ntl_dcerpc_stream_feed(struct ntl_dcerpc_stream *s, const void *data, size_t n);
/* How many bytes the stream needs next: the rest of a header or of a body
 * (0 once the reply is whole). */
uint32_t ntl_dcerpc_stream_want(const struct ntl_dcerpc_stream *s);

void ntl_dcerpc_response_init(struct ntl_dcerpc_response *r, uint32_t call_id,
                              struct ntl_buf *stub);
/* Feeds one complete fragment (header included). Returns 1 when the call is
 * complete, 0 when more fragments follow; a fault PDU gives NTL_ERR_REMOTE
 * naming the fault status (fault_status holds the code). Checks the call id,
 * the packet type, fragment flags in order, and alloc_hint against the
 * stub limit. */
int ntl_dcerpc_response_feed(struct ntl_dcerpc_response *r, const void *frag, size_t size,
                             struct ntl_error *err);

/* "nca_s_op_rng_error", "nca_s_fault_ndr", ... or NULL when unknown. */
const char *ntl_dcerpc_fault_name(uint32_t status);

#ifdef __cplusplus
}
#endif
#endif
