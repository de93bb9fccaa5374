/* DCE/RPC PDU parsers on hostile bytes: header, bind_ack, a response
 * reassembled from consecutive fragments, and the stream tracker, which must
 * end a reply at the same byte however the reads split the stream. Seeds:
 * PDUs captured from smbd. */
#include <stddef.h>
#include <stdint.h>

#include "ntlens/dcerpc.h"
#include "ntlens/reader.h"

/* The stream tracker fed the input whole, then in reads of 1 to 16 bytes
 * (the first byte picks the size): the same result both ways. */
static void stream_splits(const uint8_t *data, size_t size)
{
    struct ntl_dcerpc_stream whole, split;
    size_t step = size ? (size_t)(data[0] & 15) + 1 : 1, off = 0;
    long all;
    ntl_dcerpc_stream_expect(&whole);
    all = ntl_dcerpc_stream_feed(&whole, data, size);
    ntl_dcerpc_stream_expect(&split);
    while (off < size && split.open) {
        size_t k = size - off < step ? size - off : step;
        long used = ntl_dcerpc_stream_feed(&split, data + off, k);
        if (used < 0) {
            off = (size_t)-1;
            break;
        }
        off += (size_t)used;
        if ((size_t)used < k)
            break;
    }
    if ((all < 0) != (off == (size_t)-1) || (all >= 0 && (size_t)all != off) ||
        whole.open != split.open)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_dcerpc_header h;
    struct ntl_dcerpc_bind_ack ack;
    struct ntl_dcerpc_response r;
    struct ntl_error err;
    struct ntl_buf stub;
    size_t off = 0;

    ntl_dcerpc_parse_header(data, size, &h, &err);
    ntl_dcerpc_parse_bind_ack(data, size, size >= 16 ? ntl_le32(data + 12) : 0, &ack, &err);
    ntl_buf_init(&stub, 1u << 20);
    ntl_dcerpc_response_init(&r, size >= 16 ? ntl_le32(data + 12) : 0, &stub);
    while (off + 16 <= size) {
        uint16_t len = ntl_le16(data + off + 8);
        int rc;
        if (len < 16 || len > size - off)
            break;
        rc = ntl_dcerpc_response_feed(&r, data + off, len, &err);
        off += len;
        if (rc != 0)
            break;
    }
    ntl_buf_free(&stub);
    stream_splits(data, size);
    return 0;
}
