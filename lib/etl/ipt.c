/* Intel PT events: the ProcessorTrace event of seed 002 and its IptOption. */
#include <string.h>

#include "ntlens/etl_ipt.h"
#include "ntlens/reader.h"

/* ff1fd2fd-6008-42bb-9e75-00a20051f3be as stored. */
static const struct ntl_guid ipt_guid = {{0xfd, 0xd2, 0x1f, 0xff, 0x08, 0x60, 0xbb, 0x42, 0x9e, 0x75,
                                          0x00, 0xa2, 0x00, 0x51, 0xf3, 0xbe}};

void ntl_ipt_option_decode(uint64_t v, struct ntl_ipt_option *o)
{
    o->trace_mode = v & 15;
    o->time_mode = (v >> 4) & 15;
    o->mtc_freq = (v >> 8) & 15;
    o->cyc_thresh = (v >> 12) & 15;
    o->buffer_size = (v >> 16) & 15;
    o->trace_session_mode = (v >> 20) & 7;
    o->trace_child = (v >> 23) & 1;
    o->trace_code_mode = (v >> 24) & 15;
    o->reserved2 = (v >> 28) & 15;
    o->reserved3 = (uint32_t)(v >> 32);
}

uint64_t ntl_ipt_option_buffer_bytes(uint64_t v)
{
    return (uint64_t)4096 << ((v >> 16) & 15);
}

int ntl_etl_ipt_decode(const struct ntl_etl_event *ev, struct ntl_etl_ipt_event *ipt,
                       struct ntl_error *err)
{
    if (ev->kind != NTL_ETL_KIND_CLASSIC && ev->kind != NTL_ETL_KIND_INSTANCE &&
        ev->kind != NTL_ETL_KIND_EVENT)
        return 0;
    if (!ntl_guid_equal(&ev->guid, &ipt_guid) || ev->opcode != NTL_ETL_IPT_EVENT_TYPE)
        return 0;
    return ntl_etl_ipt_decode_payload(ev, ipt, err);
}

int ntl_etl_ipt_decode_payload(const struct ntl_etl_event *ev, struct ntl_etl_ipt_event *ipt,
                               struct ntl_error *err)
{
    const uint8_t *p = ev->payload;
    size_t n = ev->payload_size;
    if (n < NTL_ETL_IPT_HEADER_SIZE)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "ProcessorTrace event", ev->offset,
                             "%zu payload bytes, too few for the 32-byte IPT header", n);
    memset(ipt, 0, sizeof *ipt);
    ipt->event_timestamp = ntl_le64(p);
    ipt->process = ntl_le32(p + 8);
    ipt->thread = ntl_le32(p + 12);
    ipt->ipt_option = ntl_le64(p + 16);
    ipt->trace_size = ntl_le32(p + 24);
    ipt->trace_position = ntl_le32(p + 28);
    if (ipt->trace_size > n - NTL_ETL_IPT_HEADER_SIZE)
        return ntl_error_set(err, NTL_ERR_FORMAT, "ProcessorTrace event", ev->offset,
                             "TraceSize %u past the %zu trace bytes the event holds",
                             ipt->trace_size, n - NTL_ETL_IPT_HEADER_SIZE);
    if (ipt->trace_position > ipt->trace_size)
        return ntl_error_set(err, NTL_ERR_FORMAT, "ProcessorTrace event", ev->offset,
                             "TracePosition %u past TraceSize %u", ipt->trace_position,
                             ipt->trace_size);
    ipt->trace = p + NTL_ETL_IPT_HEADER_SIZE;
    ipt->wrapped = ipt->trace_size == ntl_ipt_option_buffer_bytes(ipt->ipt_option);
    return 1;
}
