/* What the manifest harnesses (fuzz_etl_manifest: XML; fuzz_wevt: WEVT_TEMPLATE)
 * do with a manifest they could read: decode a payload as every event it
 * defines (up to 64), with 32- and 64-bit pointers, rendering each field. */
#ifndef FUZZ_MANIFEST_DECODE_H
#define FUZZ_MANIFEST_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "ntlens/etl_manifest.h"

void fuzz_manifest_decode(const struct ntl_etl_manifest *m, const uint8_t *payload, size_t size);

/* n bytes of data in an allocation of their own, so ASan sees any read past them. */
uint8_t *fuzz_part(const uint8_t *data, size_t n);

#endif
