/* Counter paths (ntlens/perf_path.h): the input is a path, a NUL, then a
 * PERF_DATA_BLOCK; the path is parsed and expanded against the block with
 * Windows' standard names. Wildcards must never take exponential time, and
 * every match must point into the block. */
#include <stdint.h>
#include <string.h>

#include "ntlens/perf_path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct ntl_perf_titles *titles;
    const uint8_t *nul = memchr(data, 0, size < 1024 ? size : 1024);
    struct ntl_perf_path p;
    struct ntl_perf_path_iter it;
    struct ntl_perf_path_match m;
    struct ntl_perf_block *b = NULL;
    struct ntl_error err;

    if (!titles && (!(titles = ntl_perf_titles_new()) || ntl_perf_titles_add_standard(titles) < 0))
        return 0;
    if (!nul || ntl_perf_path_parse((const char *)data, &p, &err) < 0)
        return 0;
    if (ntl_perf_block_parse(nul + 1, size - (size_t)(nul + 1 - data), &b, &err) == 0) {
        ntl_perf_path_iter_begin(&it, &p, b, titles);
        while (ntl_perf_path_next(&it, "M", &m, &err) > 0)
            if (m.counter >= m.object->ncounters ||
                (m.instance && (m.instance < m.object->instances ||
                                m.instance >= m.object->instances + m.object->ninstances)))
                __builtin_trap();
    }
    ntl_perf_block_free(b);
    return 0;
}
