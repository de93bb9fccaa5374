/* The capture reader on arbitrary bytes, then every snapshot and title
 * database it yields through their parsers. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/perf.h"
#include "ntlens/perf_capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_capture *c;
    struct ntl_error err;
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    if (ntl_capture_parse(copy, size, &c, &err) == 0) {
        ntl_capture_description(c);
        for (size_t i = 0; i < ntl_capture_snapshot_count(c); i++) {
            const struct ntl_capture_snapshot *s = ntl_capture_snapshot(c, i);
            struct ntl_perf_block *b;
            if (strlen(s->query) > size)
                abort();
            if (ntl_perf_block_parse(s->block, s->size, &b, &err) == 0)
                ntl_perf_block_free(b);
        }
        for (size_t i = 0; i < ntl_capture_titles_count(c); i++) {
            const struct ntl_capture_titles *t = ntl_capture_titles_at(c, i);
            struct ntl_perf_titles *db = ntl_perf_titles_new();
            if (db)
                ntl_perf_titles_add(db, t->help, t->data, t->size, &err);
            ntl_perf_titles_free(db);
            ntl_capture_find_titles(c, t->help, t->langid);
        }
        ntl_capture_free(c);
    }
    free(copy);
    return 0;
}
