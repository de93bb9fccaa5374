/* The manifest reader and decoder on arbitrary XML and payloads. Input: a
 * UINT16 XML length L, L bytes of manifest XML, then a payload that every
 * event the manifest defines (up to 64) is decoded from, with 32- and
 * 64-bit pointers; every field is also rendered as text. */
#include <stdlib.h>

#include "manifest_decode.h"
#include "ntlens/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_etl_manifest *m;
    struct ntl_error err;
    size_t len;
    if (size < 2 || (len = ntl_le16(data)) > size - 2)
        return 0;
    uint8_t *xml = fuzz_part(data + 2, len), *payload = fuzz_part(data + 2 + len, size - 2 - len);
    if (xml && payload && ntl_etl_manifest_parse((const char *)xml, len, &m, &err) == 0) {
        fuzz_manifest_decode(m, payload, size - 2 - len);
        ntl_etl_manifest_free(m);
    }
    free(xml);
    free(payload);
    return 0;
}
