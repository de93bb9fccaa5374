#include "manifest_decode.h"

#include <stdlib.h>
#include <string.h>

#include "ntlens/etl.h"

static void decode_all(const struct ntl_etl_manifest *m, struct ntl_etl_mf *d,
                       struct ntl_etl_event *ev)
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

void fuzz_manifest_decode(const struct ntl_etl_manifest *m, const uint8_t *payload, size_t size)
{
    struct ntl_etl_event ev = {.kind = NTL_ETL_KIND_EVENT, .has_guid = true};
    struct ntl_etl_mf *d = ntl_etl_mf_new();
    if (!d)
        return;
    ev.payload = payload;
    ev.payload_size = size;
    decode_all(m, d, &ev);
    ev.is64 = true;
    decode_all(m, d, &ev);
    ntl_etl_mf_free(d);
}

uint8_t *fuzz_part(const uint8_t *data, size_t n)
{
    uint8_t *p = malloc(n ? n : 1);
    if (p)
        memcpy(p, data, n);
    return p;
}
