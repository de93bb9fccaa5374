/* The .etl reader on arbitrary bytes: open (streaming or sorted, any
 * compression format), read every event skipping bad buffers, and decode
 * image, IPT, extended data and fields (kernel MOF, TraceLogging) on each. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etl_consume.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_etl_options opt = {0};
    struct ntl_etl *t;
    struct ntl_error err;
    int rc;

    if (size < 1)
        return 0;
    bool by_buffer = (data[0] & 0x80) && !(data[0] & 1);
    opt.sorted = data[0] & 1;
    opt.compression_format = 2 + (data[0] >> 1) % 3;
    opt.sorted_limit = 16u << 20;
    if (ntl_etl_open_mem(data + 1, size - 1, &opt, &t, &err) < 0)
        return 0;
    if (by_buffer) {
        struct ntl_etl_buffer b;
        while ((rc = ntl_etl_next_buffer(t, &b, &err)) != 0)
            if (rc < 0 && !ntl_etl_can_continue(t))
                break;
        ntl_etl_close(t);
        return 0;
    }
    fuzz_etl_consume(t);
    ntl_etl_close(t);
    return 0;
}
