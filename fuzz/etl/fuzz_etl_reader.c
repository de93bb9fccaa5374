/* The .etl reader on arbitrary bytes: open (streaming or sorted, any
 * compression format), read every event skipping bad buffers, and decode
 * image, IPT, extended data and fields (kernel MOF, TraceLogging) on each. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/etl.h"
#include "ntlens/etl_fields.h"
#include "ntlens/etl_images.h"
#include "ntlens/etl_ipt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_etl_options opt = {0};
    struct ntl_etl *t;
    struct ntl_error err;
    struct ntl_etl_event ev;
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
    while ((rc = ntl_etl_next(t, &ev, &err)) != 0) {
        if (rc < 0) {
            if (!ntl_etl_can_continue(t))
                break;
            continue;
        }
        struct ntl_etl_image img;
        struct ntl_etl_ipt_event ipt;
        struct ntl_etl_ext_item item;
        size_t pos = 0;
        ntl_etl_image_decode(t, &ev, &img, &err);
        ntl_etl_ipt_decode(&ev, &ipt, &err);
        while (ntl_etl_ext_next(&ev, &pos, &item, NULL) > 0)
            ;
        struct ntl_etl_mof mof;
        struct ntl_etl_tl tl;
        struct ntl_etl_field f;
        char text[256];
        if (ntl_etl_mof_begin(&mof, &ev) > 0)
            while (ntl_etl_mof_next(&mof, &f, &err) > 0)
                ntl_etl_field_text(&f, text, sizeof text);
        if (ntl_etl_tl_begin(&tl, &ev, &err) > 0)
            while (ntl_etl_tl_next(&tl, &f, &err) > 0)
                ntl_etl_field_text(&f, text, sizeof text);
        (void)ntl_etl_time_to_filetime(t, ev.timestamp);
    }
    ntl_etl_close(t);
    return 0;
}
