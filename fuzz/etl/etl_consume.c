#include "etl_consume.h"

#include "ntlens/etl_fields.h"
#include "ntlens/etl_images.h"
#include "ntlens/etl_ipt.h"

static void decode(struct ntl_etl *t, const struct ntl_etl_event *ev)
{
    struct ntl_error err;
    struct ntl_etl_image img;
    struct ntl_etl_ipt_event ipt;
    struct ntl_etl_ext_item item;
    struct ntl_etl_mof mof;
    struct ntl_etl_tl tl;
    struct ntl_etl_field f;
    char text[256];
    size_t pos = 0;

    ntl_etl_image_decode(t, ev, &img, &err);
    ntl_etl_ipt_decode(ev, &ipt, &err);
    while (ntl_etl_ext_next(ev, &pos, &item, NULL) > 0)
        ;
    if (ntl_etl_mof_begin(&mof, ev) > 0)
        while (ntl_etl_mof_next(&mof, &f, &err) > 0)
            ntl_etl_field_text(&f, text, sizeof text);
    if (ntl_etl_tl_begin(&tl, ev, &err) > 0)
        while (ntl_etl_tl_next(&tl, &f, &err) > 0)
            ntl_etl_field_text(&f, text, sizeof text);
    (void)ntl_etl_time_to_filetime(t, ev->timestamp);
}

void fuzz_etl_consume(struct ntl_etl *t)
{
    struct ntl_etl_event ev;
    struct ntl_error err;
    int rc;

    while ((rc = ntl_etl_next(t, &ev, &err)) != 0) {
        if (rc < 0) {
            if (!ntl_etl_can_continue(t))
                break;
            continue;
        }
        decode(t, &ev);
    }
}
