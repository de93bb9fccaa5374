/* The TraceLogging decoder on arbitrary schemas and payloads. Input: one
 * flags byte (bit 0: 64-bit pointers), a UINT16 schema length L, L bytes of
 * the EVENT_SCHEMA_TL item (its own size field included, so it may lie),
 * then the payload. Every field is also rendered as text. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/etl.h"
#include "ntlens/etl_fields.h"
#include "ntlens/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_etl_event ev = {.kind = NTL_ETL_KIND_EVENT};
    struct ntl_etl_tl d;
    struct ntl_etl_field f;
    struct ntl_error err;
    char text[512];
    uint8_t *ext;
    size_t len;

    if (size < 3 || (len = ntl_le16(data + 1)) > size - 3)
        return 0;
    if (!(ext = malloc(8 + len)))
        return 0;
    memset(ext, 0, 8);
    ntl_put_le16(ext + 2, NTL_ETL_EXT_EVENT_SCHEMA_TL);
    ntl_put_le16(ext + 6, (uint16_t)len);
    memcpy(ext + 8, data + 3, len);
    ev.is64 = data[0] & 1;
    ev.ext = ext;
    ev.ext_size = 8 + len;
    /* The payload in its own allocation, so ASan sees any read past it. */
    ev.payload_size = size - 3 - len;
    uint8_t *payload = malloc(ev.payload_size ? ev.payload_size : 1);
    if (payload) {
        memcpy(payload, data + 3 + len, ev.payload_size);
        ev.payload = payload;
        if (ntl_etl_tl_begin(&d, &ev, &err) > 0)
            while (ntl_etl_tl_next(&d, &f, &err) > 0)
                ntl_etl_field_text(&f, text, sizeof text);
    }
    free(payload);
    free(ext);
    return 0;
}
