/* libFuzzer: module maps ("BASE SIZE NAME" lines). A parsed map is sorted,
 * every module is non-empty and does not wrap, and every module's first
 * and last byte are attributed to a module that holds them. */
#include <stdlib.h>

#include "ntlens/ipt_modules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_ipt_module_map map;
    struct ntl_error err;
    if (ntl_ipt_module_map_parse((const char *)data, size, &map, &err) < 0)
        return 0;
    for (size_t i = 0; i < map.n; i++) {
        const struct ntl_ipt_module *m = &map.mods[i];
        if (!m->size || m->base + m->size - 1 < m->base || !m->name[0])
            abort();
        if (i && map.mods[i - 1].base > m->base)
            abort();
        uint64_t probe[2] = {m->base, m->base + m->size - 1};
        for (int k = 0; k < 2; k++) {
            long j = ntl_ipt_module_map_find(&map, probe[k]);
            /* Lookups give up after 64 overlapping modules; a hit must hold the address. */
            if (j >= 0 && probe[k] - map.mods[j].base >= map.mods[j].size)
                abort();
        }
    }
    ntl_ipt_module_map_free(&map);
    return 0;
}
