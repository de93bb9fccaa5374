/* DCE/RPC PDU parsers on hostile bytes: header, bind_ack, and a response
 * reassembled from consecutive fragments. Seeds: PDUs captured from smbd. */
#include <stddef.h>
#include <stdint.h>

#include "ntlens/dcerpc.h"
#include "ntlens/reader.h"

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
    return 0;
}
