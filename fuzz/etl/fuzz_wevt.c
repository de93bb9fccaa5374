/* The compiled-manifest (WEVT_TEMPLATE) reader and the decoder on arbitrary
 * blobs. Input: a UINT16 length L, L bytes of WEVT_TEMPLATE, a UINT16
 * length M, M bytes of message table, then a payload that every event the
 * blob defines (up to 64) is decoded from, with 32- and 64-bit pointers. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/etl.h"
#include "ntlens/etl_manifest.h"
#include "ntlens/reader.h"

static void decode_all(const struct ntl_etl_manifest *m, struct ntl_etl_mf *d, struct ntl_etl_event *ev)
{
    struct ntl_etl_field f;
    struct ntl_error err;
    char text[512];
    size_t n = ntl_etl_manifest_events(m);
    uint8_t version;
    for (size_t i = 0; i < n && i < 64; i++) {
        ntl_etl_manifest_event_key(m, i, &ev->guid, &ev->event_id, &version);
        ev->version = version;
        if (ntl_etl_mf_begin(d, m, ev, &err) > 0)
            while (ntl_etl_mf_next(d, &f, &err) > 0)
                ntl_etl_field_text(&f, text, sizeof text);
        /* The names of the provider's levels and keyword bits (KEYW, LEVL). */
        for (unsigned b = 0; b < 64; b += 7)
            if (ntl_etl_manifest_keyword_name(m, &ev->guid, (uint64_t)1 << b) ||
                ntl_etl_manifest_level_name(m, &ev->guid, (uint8_t)b))
                ntl_etl_manifest_find_keyword(m, "GCKeyword", &ev->keyword);
    }
}

/* n bytes of data in an allocation of their own, so ASan sees any read past them. */
static uint8_t *part(const uint8_t *data, size_t n)
{
    uint8_t *p = malloc(n ? n : 1);
    if (p)
        memcpy(p, data, n);
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_etl_manifest *m;
    struct ntl_etl_event ev = {.kind = NTL_ETL_KIND_EVENT, .has_guid = true};
    struct ntl_error err;
    struct ntl_etl_mf *d;
    size_t len, mlen;
    if (size < 2 || (len = ntl_le16(data)) > size - 2 || size - 2 - len < 2 ||
        (mlen = ntl_le16(data + 2 + len)) > size - 4 - len)
        return 0;
    size_t rest = size - 4 - len - mlen;
    uint8_t *blob = part(data + 2, len), *msgs = part(data + 4 + len, mlen);
    uint8_t *payload = part(data + 4 + len + mlen, rest);
    if (blob && msgs && payload &&
        ntl_etl_manifest_parse_wevt(blob, len, mlen ? msgs : NULL, mlen, &m, &err) == 0) {
        ev.payload = payload;
        ev.payload_size = rest;
        if ((d = ntl_etl_mf_new())) {
            decode_all(m, d, &ev);
            ev.is64 = true;
            decode_all(m, d, &ev);
            ntl_etl_mf_free(d);
        }
        ntl_etl_manifest_free(m);
    }
    free(blob);
    free(msgs);
    free(payload);
    return 0;
}
