/* The PERF_DATA_BLOCK parser on arbitrary bytes, then everything a command
 * does with a parsed block: every counter of every instance through the
 * value formulas (against itself as the earlier sample), parents and
 * instance path names. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/perf.h"
#include "ntlens/perf_value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_perf_block *b;
    struct ntl_error err;
    size_t needed;
    char name[256];

    ntl_perf_block_classify(data, size, &needed);
    /* a private copy, so reads past the input are caught exactly */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    if (ntl_perf_block_parse(copy, size, &b, &err) == 0) {
        for (size_t o = 0; o < b->nobjects; o++) {
            const struct ntl_perf_object *obj = &b->objects[o];
            size_t ni = obj->counters_block ? 1 : obj->ninstances;
            for (size_t i = 0; i < obj->ninstances; i++)
                ntl_perf_instance_path_name(&obj->instances[i], name, sizeof name);
            for (size_t c = 0; c < obj->ncounters; c++) {
                for (size_t i = 0; i < ni; i++) {
                    struct ntl_perf_raw r, prev;
                    double v;
                    if (ntl_perf_raw_get(b, obj, c, i, &r, &err) < 0)
                        continue;
                    prev = r;
                    prev.value /= 2;
                    prev.base /= 3;
                    prev.perf_time /= 2;
                    prev.perf_time_100ns /= 2;
                    prev.object_time /= 2;
                    ntl_perf_value_compute(&r, &prev, &v);
                    ntl_perf_value_compute(&r, NULL, &v);
                }
            }
            ntl_perf_block_find_object(b, obj->name_index);
        }
        ntl_perf_block_free(b);
    }
    free(copy);
    return 0;
}
