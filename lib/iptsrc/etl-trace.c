/* The n-th Intel PT trace of an ETW trace (seed 002: one event's trace,
 * decoded against the kernel's modules), copied out of the event and
 * unwrapped when its ring buffer wrapped, as `etl ipt` writes it. */
#include <string.h>

#include "ntlens/etl.h"
#include "ntlens/etl_ipt.h"
#include "ntlens/ipt_sources.h"

/* The trace's bytes into t, unwrapped from its write position when full. */
static int take(struct ntl_ipt_trace *t, const struct ntl_etl_ipt_event *ipt,
                const struct ntl_etl_event *ev, struct ntl_error *err)
{
    int rc = ntl_buf_append(&t->file, ipt->trace, ipt->trace_size);
    if (rc < 0)
        return ntl_error_set(err, rc, "IPT event", ev->offset, "no memory for its trace");
    t->file_size = t->file.len;
    t->data = t->file.data;
    t->size = t->file.len;
    if (!ipt->wrapped)
        return 0;
    rc = ntl_ipt_unwrap(t->file.data, t->file.len, ipt->trace_position, &t->linear, &t->wrap, err);
    if (rc < 0) {
        ntl_error_prefix(err, "IPT event at offset 0x%llx (a wrapped buffer)",
                         (unsigned long long)ev->offset);
        return rc;
    }
    t->wrapped = true;
    t->data = t->linear.data;
    t->size = t->linear.len;
    return 0;
}

int ntl_iptsrc_etl_trace(struct ntl_ipt_trace *t, const char *path, unsigned n,
                         struct ntl_iptsrc_etl_trace *info, struct ntl_error *err)
{
    struct ntl_etl *etl;
    struct ntl_etl_event ev;
    struct ntl_etl_ipt_event ipt;
    unsigned seen = 0;
    int rc;

    memset(t, 0, sizeof *t);
    memset(info, 0, sizeof *info);
    ntl_buf_init(&t->file, NTL_IPT_MAX_TRACE);
    ntl_buf_init(&t->linear, NTL_IPT_MAX_TRACE);
    if (n == 0)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                             "IPT events are numbered from 1");
    if ((rc = ntl_etl_open_file(path, NULL, &etl, err)) < 0)
        return rc;
    while ((rc = ntl_etl_next(etl, &ev, err)) > 0) {
        int d = ntl_etl_ipt_decode(&ev, &ipt, err);
        if (d < 0) {
            rc = d;
            break;
        }
        if (d == 0 || ++seen < n)
            continue;
        info->event_offset = ev.offset;
        info->process = ipt.process;
        info->thread = ipt.thread;
        info->ipt_option = ipt.ipt_option;
        info->timestamp = ev.timestamp;
        info->wrapped = ipt.wrapped;
        rc = take(t, &ipt, &ev, err);
        break;
    }
    ntl_etl_close(etl);
    info->count = seen;
    if (rc == 0 && seen < n)
        rc = ntl_error_set(err, NTL_ERR_NOT_FOUND, NULL, NTL_NO_OFFSET,
                           "IPT event %u asked for, the trace has %u", n, seen);
    return rc < 0 ? rc : 0;
}
