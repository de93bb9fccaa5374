/* Sorted mode's two ways against each other on arbitrary bytes: every
 * buffer held from the first reading, and sorted_reload (each buffer read
 * again when its first event comes, dropped after its last; on half the
 * inputs decompressed ahead by a second thread). They must
 * return the same events (every header field and the payload's bytes),
 * the same errors with the same messages, in the same order. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/etl.h"

static void same_event(const struct ntl_etl_event *a, const struct ntl_etl_event *b)
{
    if (a->kind != b->kind || a->size != b->size || a->offset != b->offset ||
        a->buffer_index != b->buffer_index || a->buffer_pos != b->buffer_pos ||
        a->timestamp != b->timestamp || a->pid != b->pid || a->tid != b->tid ||
        a->payload_size != b->payload_size || a->ext_size != b->ext_size ||
        memcmp(a->payload, b->payload, a->payload_size) ||
        (a->ext_size && memcmp(a->ext, b->ext, a->ext_size)))
        abort();
}

static void same_error(const struct ntl_error *a, const struct ntl_error *b)
{
    char ta[512], tb[512];
    ntl_error_format(a, ta, sizeof ta);
    ntl_error_format(b, tb, sizeof tb);
    if (strcmp(ta, tb))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_etl_options opt = {.sorted = true, .sorted_limit = 16u << 20};
    struct ntl_etl *held, *reload;
    struct ntl_error ea, eb;
    struct ntl_etl_event a, b;

    if (size < 1)
        return 0;
    opt.compression_format = 2 + data[0] % 3;
    int ra = ntl_etl_open_mem(data + 1, size - 1, &opt, &held, &ea);
    opt.sorted_reload = true;
    /* Half the inputs with the thread decompressing ahead of both readings. */
    opt.decompress_ahead = data[0] & 0x80;
    int rb = ntl_etl_open_mem(data + 1, size - 1, &opt, &reload, &eb);
    if ((ra < 0) != (rb < 0))
        abort();
    if (ra < 0)
        return 0;
    for (int n = 0; n < 1000000; n++) {
        ra = ntl_etl_next(held, &a, &ea);
        rb = ntl_etl_next(reload, &b, &eb);
        if (ra != rb || ntl_etl_can_continue(held) != ntl_etl_can_continue(reload))
            abort();
        if (ra > 0)
            same_event(&a, &b);
        else if (ra < 0)
            same_error(&ea, &eb);
        if (ra == 0)
            break; /* after an error: the next buffer, or the events read before it */
    }
    ntl_etl_close(held);
    ntl_etl_close(reload);
    return 0;
}
