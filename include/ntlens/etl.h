/* ETW trace files (.etl): a streaming reader over WMI buffers and the
 * events inside them, on any OS.
 *
 * An .etl file is a run of buffers, each a WMI_BUFFER_HEADER (0x48 bytes)
 * followed by events aligned to 8 bytes, then 0xFF filler. Buffers may be
 * compressed (MS-XCA, see ntlens/compress.h). The first event of the first
 * buffer carries the TRACE_LOGFILE_HEADER.
 *
 *     struct ntl_etl *t;
 *     struct ntl_etl_event ev;
 *     if (ntl_etl_open_file(path, NULL, &t, &err) < 0) ...
 *     while ((rc = ntl_etl_next(t, &ev, &err)) > 0) ...
 *     if (rc < 0 && ntl_etl_can_continue(t)) ... (skip the bad buffer, call next again)
 *     ntl_etl_close(t);
 *
 * Image events (Load/Unload/DCStart/DCEnd) are decoded by ntlens/etl_images.h,
 * Intel PT events by ntlens/etl_ipt.h. */
#ifndef NTLENS_ETL_H
#define NTLENS_ETL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* etl's own status codes (range -150..-199), beside the generic ones of
 * ntlens/error.h. */
enum ntl_etl_status {
    /* The file ends inside a buffer or its header: every whole buffer before
     * the cut has been read; nothing after it can be. err names the offset
     * where the cut buffer starts, where the file ends, and how many whole
     * buffers and events came before. */
    NTL_ETL_TRUNCATED = -150,
};

/* "file truncated" for NTL_ETL_TRUNCATED; ntl_status_name() for the others. */
const char *ntl_etl_status_name(int status);

#define NTL_ETL_BUFFER_HEADER_SIZE 0x48u
/* Largest buffer the reader accepts (on disk and decompressed). */
#define NTL_ETL_MAX_BUFFER_SIZE (64u << 20)

/* LogFileMode bit: buffers are compressed. */
#define NTL_ETL_MODE_COMPRESSED 0x04000000u

/* WMI_BUFFER_HEADER.BufferFlag bits. */
#define NTL_ETL_BUFFER_FLUSH_MARKER 0x0001u
#define NTL_ETL_BUFFER_EVENTS_LOST 0x0002u
#define NTL_ETL_BUFFER_BUFFER_LOST 0x0004u
#define NTL_ETL_BUFFER_PROC_INDEX 0x0020u
#define NTL_ETL_BUFFER_COMPRESSED 0x0040u

/* EVENT_HEADER.Flags bits. */
#define NTL_ETL_EH_EXTENDED_INFO 0x0001u
#define NTL_ETL_EH_STRING_ONLY 0x0004u
#define NTL_ETL_EH_TRACE_MESSAGE 0x0008u
#define NTL_ETL_EH_32_BIT_HEADER 0x0020u
#define NTL_ETL_EH_64_BIT_HEADER 0x0040u
#define NTL_ETL_EH_CLASSIC_HEADER 0x0100u

/* How an event's header is laid out. */
enum ntl_etl_kind {
    NTL_ETL_KIND_SYSTEM,    /* SYSTEM_TRACE_HEADER, 0x20 bytes, kernel hook id */
    NTL_ETL_KIND_COMPACT,   /* SYSTEM_TRACE_HEADER without CPU times, 0x18 */
    NTL_ETL_KIND_PERFINFO,  /* PERFINFO_TRACE_HEADER, 0x10, no pid/tid */
    NTL_ETL_KIND_CLASSIC,   /* EVENT_TRACE_HEADER with a class GUID, 0x30 */
    NTL_ETL_KIND_INSTANCE,  /* EVENT_INSTANCE_GUID_HEADER, 0x48 */
    NTL_ETL_KIND_EVENT,     /* EVENT_HEADER (manifest, TraceLogging), 0x50 */
    NTL_ETL_KIND_MESSAGE,   /* MESSAGE_TRACE_HEADER (WPP) */
    NTL_ETL_KIND_COUNT
};

/* "system", "compact", "perfinfo", "classic", "instance", "event", "message". */
const char *ntl_etl_kind_name(enum ntl_etl_kind kind);

struct ntl_guid {
    uint8_t b[16]; /* as stored: Data1..Data3 little-endian, then Data4 */
};

/* "ff1fd2fd-6008-42bb-9e75-00a20051f3be"; buf holds at least 37 bytes. */
char *ntl_guid_format(const struct ntl_guid *g, char *buf, size_t size);
/* Parses the form above, braces optional. */
bool ntl_guid_parse(const char *s, struct ntl_guid *g);
bool ntl_guid_equal(const struct ntl_guid *a, const struct ntl_guid *b);

enum ntl_etl_clock {
    NTL_ETL_CLOCK_QPC = 1,        /* QueryPerformanceCounter ticks at PerfFreq */
    NTL_ETL_CLOCK_SYSTEM = 2,     /* FILETIME */
    NTL_ETL_CLOCK_CPU_CYCLE = 3,  /* cycles at CpuSpeedInMHz */
};

/* TRACE_LOGFILE_HEADER, with the strings that follow it. */
struct ntl_etl_logfile {
    uint32_t buffer_size;
    uint8_t version[4];            /* major, minor, sub, subminor */
    uint32_t provider_version;     /* Windows build */
    uint32_t number_of_processors;
    uint64_t end_time;             /* FILETIME */
    uint32_t timer_resolution;
    uint32_t maximum_file_size;
    uint32_t log_file_mode;
    uint32_t buffers_written;
    uint32_t start_buffers;
    uint32_t pointer_size;         /* 4 or 8: the layout of everything after it */
    uint32_t events_lost;
    uint32_t cpu_speed_mhz;
    int32_t tz_bias;               /* minutes, UTC = local + bias */
    char tz_standard_name[64];
    char tz_daylight_name[64];
    uint64_t boot_time;            /* FILETIME */
    uint64_t perf_freq;
    uint64_t start_time;           /* FILETIME */
    uint32_t reserved_flags;       /* clock type */
    uint32_t buffers_lost;
    char logger_name[256];         /* UTF-8 */
    char log_file_name[520];
    uint64_t header_timestamp;     /* raw timestamp of the header event: the clock's origin */
    enum ntl_etl_clock clock;
};

/* One WMI buffer as read from the file. */
struct ntl_etl_buffer {
    uint32_t index;                /* 0-based position in the file */
    uint64_t offset;               /* file offset of its header */
    uint32_t size;                 /* BufferSize: bytes on disk */
    uint32_t saved_offset;         /* end of its events (decompressed size when compressed) */
    uint32_t current_offset;
    uint64_t timestamp;
    uint64_t sequence;
    uint16_t processor;            /* ProcessorNumber, or ProcessorIndex (11 bits) */
    uint16_t logger_id;
    uint32_t state;
    uint16_t flags;                /* NTL_ETL_BUFFER_* */
    uint16_t type;
    bool compressed;
    uint32_t data_size;            /* bytes of events after decompression, header included */
    uint32_t events;               /* events in it (filled by ntl_etl_next_buffer) */
};

/* One event. Pointers stay valid until the next ntl_etl_next call (or, in
 * sorted mode without sorted_reload, until ntl_etl_close). */
struct ntl_etl_event {
    enum ntl_etl_kind kind;
    uint8_t header_type;           /* raw TRACE_HEADER_TYPE_*, 1..21 */
    bool is64;                     /* pointers in the payload are 8 bytes */
    uint16_t size;                 /* whole record, header included */
    uint64_t offset;               /* file offset of the record (buffer-relative + buffer offset;
                                    * inside a compressed buffer: offset of that buffer) */
    uint32_t buffer_index;
    uint32_t buffer_pos;           /* offset of the record inside its (decompressed) buffer */
    uint16_t cpu;
    uint64_t timestamp;            /* raw clock value; ntl_etl_time_to_filetime converts it */
    uint32_t pid, tid;             /* UINT32_MAX when the header has none */
    uint32_t kernel_time, user_time;

    /* SYSTEM, COMPACT, PERFINFO: the hook id; group = hook >> 8, opcode = hook & 0xff. */
    uint16_t hook_id;
    uint8_t group;
    /* Opcode (EventType) for every kind: hook low byte, Class.Type or EventDescriptor.Opcode. */
    uint8_t opcode;
    uint16_t version;
    /* PERFINFO/SYSTEM extensions (TRACE_HEADER_PEBS_INDEX_FLAG, PMC count). */
    bool has_pebs;
    uint64_t pebs_index;
    unsigned pmc_count;
    const uint8_t *pmc;            /* pmc_count little-endian u64 values */

    /* CLASSIC, INSTANCE, EVENT: the class or provider GUID. */
    bool has_guid;
    struct ntl_guid guid;
    uint8_t level;
    /* INSTANCE */
    uint32_t instance_id, parent_instance_id;
    struct ntl_guid parent_guid;
    /* EVENT */
    uint16_t event_id;
    uint8_t channel;
    uint16_t task;
    uint64_t keyword;
    uint16_t eh_flags;             /* NTL_ETL_EH_* */
    uint16_t eh_property;
    struct ntl_guid activity_id;
    const uint8_t *ext;            /* extended data items, see ntl_etl_ext_next */
    size_t ext_size;
    /* MESSAGE */
    uint16_t message_number;
    uint16_t message_flags;

    const uint8_t *payload;        /* user data after every header and extension */
    size_t payload_size;
};

/* One EVENT_HEADER extended data item. */
struct ntl_etl_ext_item {
    uint16_t type;                 /* EVENT_HEADER_EXT_TYPE_*: 1 related activity id, 2 SID, ... */
    const uint8_t *data;
    uint16_t size;
};

/* Iterates the extended items of an EVENT event: *pos starts at 0.
 * Returns 1 with *item filled, 0 when there are no more (err untouched), or
 * NTL_ERR_FORMAT with err set (at the event's offset) when an item overruns
 * the extended data. */
int ntl_etl_ext_next(const struct ntl_etl_event *ev, size_t *pos, struct ntl_etl_ext_item *item,
                     struct ntl_error *err);

struct ntl_etl_options {
    /* COMPRESSION_FORMAT_* for compressed buffers: 2 LZNT1, 3 XPRESS,
     * 4 XPRESS Huffman; 0: the format the first buffer's State names. */
    int compression_format;
    /* Read the whole trace first and return events in timestamp order
     * across CPUs (stable: equal timestamps keep file order). */
    bool sorted;
    /* Cap on the memory sorted mode may use for buffers; 0: 4 GiB. */
    uint64_t sorted_limit;
    /* Sorted mode holding only the buffers whose events are still to come:
     * each is read (and decompressed) again when its first event comes and
     * dropped after its last, so an event's pointers stay valid only until
     * the next ntl_etl_next call, as when streaming. The same events,
     * errors and order; faster, as holding a decompressed trace's copy
     * (page faults on fresh memory) costs more than decompressing twice. */
    bool sorted_reload;
    /* Called after each buffer is read with the input bytes consumed and the
     * total (for progress bars, also while sorted mode reads ahead). */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
    /* Decompress a compressed trace's buffers on a second thread, ahead of
     * the reader (events, errors and their order are the same); with
     * sorted_reload also for the second reading, in the order it takes
     * the buffers. */
    bool decompress_ahead;
};

struct ntl_etl;

/* Opens a file (streamed buffer by buffer) or a memory image (not copied;
 * must outlive the handle). Reads and checks the first buffer and the
 * logfile header. Returns 0 with *out set, or:
 *   NTL_ERR_IO          the file cannot be opened or sized (err: the system's
 *                       reason; the path is left to the caller to name)
 *   NTL_ERR_NOMEM
 *   NTL_ERR_ARGUMENT    opt names an unknown compression format
 *   NTL_ETL_TRUNCATED   the file ends inside the first buffer (or is empty)
 *   NTL_ERR_FORMAT      the first buffer or the logfile header is malformed
 *   NTL_ERR_TRUNCATED   the logfile header is shorter than its fields
 *   NTL_ERR_UNSUPPORTED the trace is compressed with an unknown format
 * Errors carry a file offset where one applies. */
int ntl_etl_open_file(const char *path, const struct ntl_etl_options *opt, struct ntl_etl **out,
                      struct ntl_error *err);
int ntl_etl_open_mem(const void *data, size_t size, const struct ntl_etl_options *opt,
                     struct ntl_etl **out, struct ntl_error *err);
void ntl_etl_close(struct ntl_etl *t);

const struct ntl_etl_logfile *ntl_etl_logfile(const struct ntl_etl *t);
/* Total input size in bytes (file size), and bytes consumed so far (for progress). */
uint64_t ntl_etl_input_size(const struct ntl_etl *t);
/* The COMPRESSION_FORMAT_* compressed buffers are read with. */
int ntl_etl_compression_format(const struct ntl_etl *t);
uint64_t ntl_etl_input_done(const struct ntl_etl *t);

/* Next event: 1 with *ev filled, 0 when there are no more (err untouched),
 * or a negative status with err set (naming the buffer and a file offset):
 *   NTL_ERR_FORMAT, NTL_ERR_TRUNCATED  a malformed buffer header or event
 *                       (the rest of that buffer is skipped), or a compressed
 *                       buffer that does not decompress
 *   NTL_ERR_LIMIT, NTL_ERR_UNSUPPORTED  decompression or a sorted-mode bound
 *   NTL_ERR_IO          a read failed, or the file shrank while read
 *   NTL_ERR_NOMEM
 *   NTL_ETL_TRUNCATED   the file ends inside a buffer: every event of the
 *                       whole buffers before it has been returned (in sorted
 *                       mode: calling again returns them, in order); then 0
 *   NTL_ERR_ARGUMENT    (ntl_etl_next_buffer in sorted mode)
 * After an error, ntl_etl_can_continue says whether calling ntl_etl_next
 * again skips the bad buffer and goes on (--keep-going), or the input
 * cannot be read further (a later call returns 0, or in sorted mode the
 * events read before the error). */
int ntl_etl_next(struct ntl_etl *t, struct ntl_etl_event *ev, struct ntl_error *err);
bool ntl_etl_can_continue(const struct ntl_etl *t);

/* Buffer by buffer instead of event by event (streaming mode only): reads
 * the next buffer and all its events, and fills *b with its header fields
 * and event count. 1 with a buffer, 0 at the end, < 0 on an error, after
 * which *b describes the bad buffer when its header could be read (b->size
 * != 0) and ntl_etl_can_continue applies as for ntl_etl_next. Do not mix
 * with ntl_etl_next on one handle. */
int ntl_etl_next_buffer(struct ntl_etl *t, struct ntl_etl_buffer *b, struct ntl_error *err);

/* The buffer the last event came from (streaming mode); in sorted mode the
 * buffer of the last event returned. */
const struct ntl_etl_buffer *ntl_etl_current_buffer(const struct ntl_etl *t);

/* Counters over what has been read so far. */
struct ntl_etl_stats {
    uint64_t buffers;
    uint64_t buffers_compressed;
    uint64_t buffers_bad;          /* skipped after an error */
    uint64_t bytes_compressed;     /* on-disk bytes of compressed buffers */
    uint64_t bytes_decompressed;
    uint64_t events;
    uint64_t events_by_kind[NTL_ETL_KIND_COUNT];
    uint64_t buffers_events_lost;  /* buffers flagged EVENTS_LOST */
    uint64_t first_timestamp, last_timestamp; /* raw; 0 when no event */
    uint32_t max_cpu;              /* highest processor number seen */
    uint64_t cpu_mask;             /* processors 0..63 seen */
    bool truncated;                /* the file ends inside a buffer (NTL_ETL_TRUNCATED) */
    uint64_t buffers_duplicate;    /* a repeat of an earlier buffer: its events read once */
    uint64_t irregularities;       /* every one found, also past the kept list */
};
void ntl_etl_get_stats(const struct ntl_etl *t, struct ntl_etl_stats *st);

/* Something odd the reader read past rather than failing on, so that nothing
 * is lost silently: a buffer whose Offset is out of range (its events are
 * then read up to the end-of-events marker), a buffer written twice (same
 * sequence number, same bytes: its events are read once). */
struct ntl_etl_irregularity {
    uint64_t offset;               /* of the field or buffer, in the file */
    char structure[32];            /* "WMI_BUFFER_HEADER" */
    char message[200];
};
#define NTL_ETL_MAX_IRREGULARITIES 64
/* Those found so far in reading order, at most NTL_ETL_MAX_IRREGULARITIES
 * (stats.irregularities counts all). Points into t; valid until the next
 * read or close. */
size_t ntl_etl_irregularities(const struct ntl_etl *t, const struct ntl_etl_irregularity **list);

/* Raw timestamp -> FILETIME (100 ns since 1601, UTC), with the logfile's
 * clock type, PerfFreq (or CPU speed) and start time. */
uint64_t ntl_etl_time_to_filetime(const struct ntl_etl *t, uint64_t timestamp);
/* FILETIME -> "2020-01-03T14:05:06.1234567Z". */
char *ntl_filetime_format(uint64_t filetime, char *buf, size_t size);

/* Names for kernel hook ids: group "Process", "Thread", "Image", ...; opcode
 * "Load", "DCStart", ... NULL when unknown. */
const char *ntl_etl_group_name(uint8_t group);
const char *ntl_etl_opcode_name(uint8_t group, uint8_t opcode);
/* Parses a group name (case-insensitive) or number. -1 when unknown. */
int ntl_etl_group_parse(const char *s);

/* The standard levels and keywords of winmeta.xml, which every manifest
 * provider shares: level 1..5 "win:Critical" .. "win:Verbose" (0
 * "win:LogAlways"), keyword bits 48..55 "win:ResponseTime" ..
 * "win:EventlogClassic". NULL for others. The parsers take these names (and
 * without "win:") case-insensitively: a level 0..255, a keyword's mask; -1
 * or 0 when unknown. */
const char *ntl_etl_level_name(uint8_t level);
const char *ntl_etl_keyword_name(uint64_t mask);
int ntl_etl_level_parse(const char *name);
uint64_t ntl_etl_keyword_parse(const char *name);

#ifdef __cplusplus
}
#endif
#endif
