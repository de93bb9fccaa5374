/* Intel Processor Trace events in ETW traces (seed 002): class GUID
 * ff1fd2fd-6008-42bb-9e75-00a20051f3be, EventType 32, in a classic
 * EVENT_TRACE_HEADER or an EVENT_HEADER event. The payload is
 *   u64 EventTimeStamp, u32 Process, u32 Thread, u64 IptOption,
 *   u32 TraceSize, u32 TracePosition, then the trace bytes. */
#ifndef NTLENS_ETL_IPT_H
#define NTLENS_ETL_IPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"
#include "ntlens/etl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NTL_ETL_IPT_GUID "ff1fd2fd-6008-42bb-9e75-00a20051f3be"
#define NTL_ETL_IPT_EVENT_TYPE 32
#define NTL_ETL_IPT_HEADER_SIZE 32

/* ipt!_IPT_OPTION, bit fields of the low 32 bits. */
struct ntl_ipt_option {
    unsigned trace_mode;         /* bits 0-3 */
    unsigned time_mode;          /* 4-7 */
    unsigned mtc_freq;           /* 8-11 */
    unsigned cyc_thresh;         /* 12-15 */
    unsigned buffer_size;        /* 16-19: the buffer is 4 KiB << buffer_size */
    unsigned trace_session_mode; /* 20-22 */
    unsigned trace_child;        /* 23 */
    unsigned trace_code_mode;    /* 24-27: 1 user, 2 kernel, 3 both (WPR CodeMode) */
    unsigned reserved2;          /* 28-31 */
    uint32_t reserved3;          /* high 32 bits */
};

void ntl_ipt_option_decode(uint64_t value, struct ntl_ipt_option *opt);
/* Bytes of the configured circular buffer: 4096 << BufferSize (0 if absurd). */
uint64_t ntl_ipt_option_buffer_bytes(uint64_t value);

struct ntl_etl_ipt_event {
    uint64_t event_timestamp;    /* raw clock of the triggering event */
    uint32_t process, thread;
    uint64_t ipt_option;
    uint32_t trace_size;
    uint32_t trace_position;
    const uint8_t *trace;        /* trace_size bytes, in the event's memory */
    bool wrapped;                /* trace_size == configured buffer size */
};

/* 1 with *ipt filled when ev is an IPT event, 0 when it is not (err
 * untouched), NTL_ERR_TRUNCATED or NTL_ERR_FORMAT with err set when it is
 * one but malformed (payload shorter than its header, TraceSize past the
 * payload, position past size). */
int ntl_etl_ipt_decode(const struct ntl_etl_event *ev, struct ntl_etl_ipt_event *ipt,
                       struct ntl_error *err);
/* Reads ev's payload with the IPT layout whatever its header says: for
 * traces that log the event under a kernel hook id (`etl ipt --hook`).
 * 1, or NTL_ERR_TRUNCATED/NTL_ERR_FORMAT with err set when malformed. */
int ntl_etl_ipt_decode_payload(const struct ntl_etl_event *ev, struct ntl_etl_ipt_event *ipt,
                               struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
