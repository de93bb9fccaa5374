/* The manifest reader and decoder on arbitrary XML and payloads. Input: a
 * UINT16 XML length L, L bytes of manifest XML, then a payload that every
 * event the manifest defines (up to 64) is decoded from, with 32- and
 * 64-bit pointers; every field is also rendered as text. */
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
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_etl_manifest *m;
    struct ntl_etl_event ev = {.kind = NTL_ETL_KIND_EVENT, .has_guid = true};
    struct ntl_error err;
    struct ntl_etl_mf *d;
    size_t len;
    if (size < 2 || (len = ntl_le16(data)) > size - 2)
        return 0;
    /* Each part in its own allocation, so ASan sees any read past it. */
    char *xml = malloc(len ? len : 1);
    uint8_t *payload = malloc(size - 2 - len ? size - 2 - len : 1);
    if (xml && payload && (memcpy(xml, data + 2, len), ntl_etl_manifest_parse(xml, len, &m, &err) == 0)) {
        memcpy(payload, data + 2 + len, size - 2 - len);
        ev.payload = payload;
        ev.payload_size = size - 2 - len;
        if ((d = ntl_etl_mf_new())) {
            decode_all(m, d, &ev);
            ev.is64 = true;
            decode_all(m, d, &ev);
            ntl_etl_mf_free(d);
        }
        ntl_etl_manifest_free(m);
    }
    free(xml);
    free(payload);
    return 0;
}
