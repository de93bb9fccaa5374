/* The title database on arbitrary bytes: as names and as help texts, then
 * lookups and a round trip through the encoder. */
#include <stdint.h>
#include <stdlib.h>

#include "ntlens/buf.h"
#include "ntlens/perf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_perf_titles *t = ntl_perf_titles_new();
    struct ntl_error err;
    uint32_t idx;
    if (!t)
        return 0;
    ntl_perf_titles_add(t, false, data, size, &err);
    ntl_perf_titles_add(t, true, data, size, &err);
    for (uint32_t i = 0; i < 64; i++) {
        const char *n = ntl_perf_titles_name(t, i);
        if (n)
            ntl_perf_titles_find(t, n, &idx);
        ntl_perf_titles_help(t, i);
    }
    ntl_perf_titles_add_standard(t);
    struct ntl_buf enc;
    ntl_buf_init(&enc, 64u << 20);
    if (ntl_perf_titles_encode(t, false, &enc, &err) == 0) {
        struct ntl_perf_titles *t2 = ntl_perf_titles_new();
        if (t2 && ntl_perf_titles_add(t2, false, enc.data, enc.len, &err) < 0)
            abort(); /* what we encode, we must read back */
        ntl_perf_titles_free(t2);
    }
    ntl_buf_free(&enc);
    ntl_perf_titles_free(t);
    return 0;
}
