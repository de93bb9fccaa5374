/* The Samba store's records for hostile PERF_DATA_BLOCKs (what
 * `samba-provider -S` relays from another host): every block the parser
 * accepts must map onto records without overflow. Seeds: Global blocks from
 * smbd. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ntlens/msrpc.h"
#include "ntlens/perf.h"

static int put(void *ctx, enum ntl_samba_db db, const char *key, const void *value, size_t len,
               struct ntl_error *err)
{
    size_t *total = ctx;
    (void)db;
    (void)err;
    *total += strlen(key) + len + (len ? ((const uint8_t *)value)[len - 1] : 0);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_perf_block *b = NULL;
    struct ntl_error err;
    size_t total = 0;

    if (ntl_perf_block_parse(data, size, &b, &err) == 0) {
        ntl_samba_perfmon_records(b, NULL, put, &total, NULL, &err);
        ntl_perf_block_free(b);
    }
    return 0;
}
