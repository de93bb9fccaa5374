/* The compiled-manifest (WEVT_TEMPLATE) reader and the decoder on arbitrary
 * blobs. Input: a UINT16 length L, L bytes of WEVT_TEMPLATE, a UINT16
 * length M, M bytes of message table, then a payload that every event the
 * blob defines (up to 64) is decoded from, with 32- and 64-bit pointers. */
#include <stdlib.h>

#include "manifest_decode.h"
#include "ntlens/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_etl_manifest *m;
    struct ntl_error err;
    size_t len, mlen;
    if (size < 2 || (len = ntl_le16(data)) > size - 2 || size - 2 - len < 2 ||
        (mlen = ntl_le16(data + 2 + len)) > size - 4 - len)
        return 0;
    size_t rest = size - 4 - len - mlen;
    uint8_t *blob = fuzz_part(data + 2, len), *msgs = fuzz_part(data + 4 + len, mlen);
    uint8_t *payload = fuzz_part(data + 4 + len + mlen, rest);
    if (blob && msgs && payload &&
        ntl_etl_manifest_parse_wevt(blob, len, mlen ? msgs : NULL, mlen, &m, &err) == 0) {
        fuzz_manifest_decode(m, payload, rest);
        ntl_etl_manifest_free(m);
    }
    free(blob);
    free(msgs);
    free(payload);
    return 0;
}
