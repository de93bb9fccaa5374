/* An ETW event's payload as named, typed fields: TraceLogging (self-
 * describing) events, whose schema travels in the event itself.
 *
 * A TraceLogging event carries an EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL
 * extended item (the event's name and its fields' names, in-types and
 * out-types, as TraceLoggingProvider.h encodes them) and usually an
 * EVENT_HEADER_EXT_TYPE_PROV_TRAITS item (the provider's name).
 *
 *     struct ntl_etl_tl d;
 *     struct ntl_etl_field f;
 *     if ((rc = ntl_etl_tl_begin(&d, &ev, &err)) > 0)
 *         while ((rc = ntl_etl_tl_next(&d, &f, &err)) > 0) ...
 *
 * Fields come in payload order. A struct is a NTL_ETL_ITEM_STRUCT_BEGIN
 * item, its members (depth + 1), and a NTL_ETL_ITEM_STRUCT_END; an array is
 * ARRAY_BEGIN (with its element count), one VALUE or STRUCT_BEGIN..END per
 * element (named like the array, index set), and ARRAY_END. */
#ifndef NTLENS_ETL_FIELDS_H
#define NTLENS_ETL_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"
#include "ntlens/etl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* EVENT_HEADER_EXT_TYPE_* of the items TraceLogging events carry. */
#define NTL_ETL_EXT_PROV_TRAITS 12u
#define NTL_ETL_EXT_EVENT_SCHEMA_TL 11u

/* In-types (TDH_INTYPE_* / TlgIn_t): how a value is stored in the payload. */
enum ntl_etl_intype {
    NTL_ETL_IN_NULL = 0,          /* no bytes */
    NTL_ETL_IN_UNICODESTRING,     /* UTF-16, NUL-terminated */
    NTL_ETL_IN_ANSISTRING,        /* 8-bit (UTF-8 with out-type UTF8), NUL-terminated */
    NTL_ETL_IN_INT8, NTL_ETL_IN_UINT8, NTL_ETL_IN_INT16, NTL_ETL_IN_UINT16,
    NTL_ETL_IN_INT32, NTL_ETL_IN_UINT32, NTL_ETL_IN_INT64, NTL_ETL_IN_UINT64,
    NTL_ETL_IN_FLOAT, NTL_ETL_IN_DOUBLE,
    NTL_ETL_IN_BOOL32,            /* 4 bytes, 0 false */
    NTL_ETL_IN_BINARY,            /* UINT16 byte count, bytes */
    NTL_ETL_IN_GUID,
    NTL_ETL_IN_POINTER,           /* the trace's pointer size */
    NTL_ETL_IN_FILETIME,
    NTL_ETL_IN_SYSTEMTIME,        /* 8 UINT16: year, month, weekday, day, h, m, s, ms */
    NTL_ETL_IN_SID,               /* 8 bytes + 4 per sub-authority */
    NTL_ETL_IN_HEXINT32, NTL_ETL_IN_HEXINT64,
    NTL_ETL_IN_COUNTEDSTRING,     /* UINT16 byte count, UTF-16 */
    NTL_ETL_IN_COUNTEDANSISTRING, /* UINT16 byte count, 8-bit */
    NTL_ETL_IN_STRUCT,            /* the out-type is the member count */
    NTL_ETL_IN_COUNTEDBINARY,     /* UINT16 byte count, bytes */
    NTL_ETL_IN_COUNT
};

/* Out-types (TDH_OUTTYPE_* / TlgOut_t): how a value is meant to be shown. */
enum ntl_etl_outtype {
    NTL_ETL_OUT_NULL = 0, NTL_ETL_OUT_NOPRINT, NTL_ETL_OUT_STRING, NTL_ETL_OUT_BOOLEAN,
    NTL_ETL_OUT_HEX, NTL_ETL_OUT_PID, NTL_ETL_OUT_TID, NTL_ETL_OUT_PORT, NTL_ETL_OUT_IPV4,
    NTL_ETL_OUT_IPV6, NTL_ETL_OUT_SOCKETADDRESS, NTL_ETL_OUT_XML, NTL_ETL_OUT_JSON,
    NTL_ETL_OUT_WIN32ERROR, NTL_ETL_OUT_NTSTATUS, NTL_ETL_OUT_HRESULT, NTL_ETL_OUT_FILETIME,
    NTL_ETL_OUT_SIGNED, NTL_ETL_OUT_UNSIGNED,
    NTL_ETL_OUT_UTF8 = 35, NTL_ETL_OUT_PKCS7_WITH_TYPE_INFO = 36, NTL_ETL_OUT_CODE_POINTER = 37,
    NTL_ETL_OUT_DATETIME_UTC = 38,
};

/* "UINT32", "GUID", ...; NULL for an unknown value. */
const char *ntl_etl_intype_name(unsigned in_type);
/* "HEX", "PID", ...; NULL for an unknown value. */
const char *ntl_etl_outtype_name(unsigned out_type);

enum ntl_etl_item {
    NTL_ETL_ITEM_VALUE,
    NTL_ETL_ITEM_STRUCT_BEGIN,
    NTL_ETL_ITEM_STRUCT_END,
    NTL_ETL_ITEM_ARRAY_BEGIN,
    NTL_ETL_ITEM_ARRAY_END,
};

/* One item of a decoded payload. Pointers point into the event and stay
 * valid as long as it does. */
struct ntl_etl_field {
    enum ntl_etl_item item;
    const char *name;             /* NUL-terminated, as the schema spells it */
    unsigned depth;               /* 0 for the event's own fields */
    uint8_t in_type;              /* enum ntl_etl_intype */
    uint8_t out_type;             /* enum ntl_etl_outtype (for a struct: its member count) */
    uint32_t tag;                 /* the field's tag (28 bits), 0 when none */
    bool in_array;                /* an element: index is its position */
    uint32_t index;
    uint32_t count;               /* ARRAY_BEGIN: elements */
    bool custom;                  /* TlgInCustom: data is opaque, schema describes it */
    const uint8_t *schema;
    size_t schema_size;
    /* VALUE: the value's bytes (a string without its count or NUL, a
     * BINARY without its count) and where they are in the payload. */
    const uint8_t *data;
    size_t size;
    size_t payload_offset;
    /* A manifest field with a map: the value's name ("GC|Heap" for a
     * bitmap); NULL when unmapped or no entry matches. */
    const char *map_text;
};

#define NTL_ETL_TL_MAX_DEPTH 16

/* Decoder state (caller-allocated, nothing to free); fields are private. */
struct ntl_etl_tl {
    const char *event_name;       /* the schema's event name */
    const char *provider_name;    /* from the provider traits; NULL without them */
    /* private */
    const struct ntl_etl_event *ev;
    const uint8_t *meta;
    size_t meta_size, meta_pos, pay_pos;
    uint64_t items_left;
    unsigned depth;
    int status;
    struct ntl_etl_tl_frame {
        bool array;
        size_t meta_begin, meta_end;   /* struct members / array element, and after them */
        uint32_t left, count, index;
        struct ntl_etl_field desc;     /* the array's field descriptor */
        bool elem_struct;
        uint32_t members;
    } stack[NTL_ETL_TL_MAX_DEPTH];
};

/* Starts decoding ev. Returns 1 when ev is a TraceLogging event (its schema
 * item found and its header parsed; event_name and provider_name set), 0
 * when it has no schema item, or NTL_ERR_FORMAT / NTL_ERR_TRUNCATED (err
 * set, at the event's file offset) when its extended items or the schema's
 * header are malformed. */
int ntl_etl_tl_begin(struct ntl_etl_tl *d, const struct ntl_etl_event *ev, struct ntl_error *err);

/* The next item: 1 with *f filled, 0 after the last field (the payload then
 * consumed exactly), or, with err set (at the event's file offset; the
 * message names the field and the payload offset):
 *   NTL_ERR_TRUNCATED   a value or the schema runs past its end
 *   NTL_ERR_FORMAT      a field has an unknown in-type, a bad count, or
 *                       payload bytes are left after the last field
 *   NTL_ERR_LIMIT       structs nest deeper than NTL_ETL_TL_MAX_DEPTH, or
 *                       more items than the payload can hold (empty structs
 *                       in huge arrays)
 * After an error, further calls return the same error. */
int ntl_etl_tl_next(struct ntl_etl_tl *d, struct ntl_etl_field *f, struct ntl_error *err);

/* The provider name of a PROV_TRAITS item: 1 with *name set (pointing into
 * the item), 0 when the item holds none, NTL_ERR_FORMAT when it is malformed. */
int ntl_etl_tl_traits_name(const struct ntl_etl_ext_item *item, const char **name,
                           struct ntl_error *err);

/* A value as text: integers in decimal (HEX out-type, HEXINT and POINTER in
 * 0x hex), floats with %.17g, booleans "true"/"false", strings as UTF-8,
 * GUID, FILETIME and SYSTEMTIME as ISO 8601, SID as S-1-..., binary and
 * custom data as lowercase hex, IPV4 / IPV6 / PORT out-types as addresses
 * and host-order ports. Returns the length the full text needs (like
 * snprintf); buf always NUL-terminated when size > 0. */
size_t ntl_etl_field_text(const struct ntl_etl_field *f, char *buf, size_t size);

/* How a value is best shown in JSON. */
enum ntl_etl_value_class {
    NTL_ETL_VALUE_TEXT,           /* a string */
    NTL_ETL_VALUE_SIGNED,         /* ntl_etl_field_i64 */
    NTL_ETL_VALUE_UNSIGNED,       /* ntl_etl_field_u64 */
    NTL_ETL_VALUE_FLOAT,          /* ntl_etl_field_f64 */
    NTL_ETL_VALUE_BOOL,           /* ntl_etl_field_u64 != 0 */
};
enum ntl_etl_value_class ntl_etl_field_class(const struct ntl_etl_field *f);
/* Integer, boolean and float values (0 for others); a PORT in host order. */
int64_t ntl_etl_field_i64(const struct ntl_etl_field *f);
uint64_t ntl_etl_field_u64(const struct ntl_etl_field *f);
double ntl_etl_field_f64(const struct ntl_etl_field *f);

/* Kernel (MOF) events: the NT Kernel Logger's classes as Microsoft documents
 * them, for SYSTEM, COMPACT and PERFINFO events. Fields are values, except
 * StackWalk's Stack, an array of pointers (ARRAY_BEGIN, values, ARRAY_END).
 * Pointers are NTL_ETL_IN_POINTER (pointer-sized counts carry out-type
 * UNSIGNED), a WmiSid is NTL_ETL_IN_SID holding the SID only (size 0 when
 * the event has none), an IPv6 address NTL_ETL_IN_BINARY with out-type IPV6.
 * Classes: Process (Start, End, DCStart, DCEnd, Defunct v2-v5; Terminate;
 * PerfCtr, PerfCtrRundown), Thread (Start, End, DCStart, DCEnd v2-v3;
 * ThreadName when Windows 10 writes it), Image (Load, Unload, DCStart, DCEnd
 * v2-v3; KernelBase), PerfInfo SampledProfile, DiskIo v3 (Read, Write,
 * FlushBuffers, the Init events), FileIo names, PageFault HardFault,
 * StackWalk Stack and the compressed-stack key events (KeyCreate, KeyDelete,
 * KeyRundown, StackKeyKernel, StackKeyUser), SystemConfig Services v3,
 * Thread CSwitch and ReadyThread v2, PerfInfo SysCallEnter, SysCallExit,
 * DPC, TimerDPC and ThreadedDPC v2,
 * UdpIp (IPv4 and IPv6 Send, Recv), TcpIp IPv6 Send and
 * Recv. */
struct ntl_etl_mof {
    const char *class_name;       /* "Process", "Thread", "Image", ... */
    /* private */
    const struct ntl_etl_event *ev;
    const void *layout;
    size_t index, pos;
    int status;
    bool in_array;
    uint32_t array_index;
};

/* 1 when ev's group, opcode and version have a known layout (class_name
 * set), 0 when not. */
int ntl_etl_mof_begin(struct ntl_etl_mof *d, const struct ntl_etl_event *ev);
/* The next field: 1 with *f filled, 0 after the last (the payload then
 * consumed exactly), or with err set (at the event's file offset):
 *   NTL_ERR_TRUNCATED  a field runs past the payload
 *   NTL_ERR_FORMAT     payload bytes are left after the last field
 * After an error, further calls return the same status. */
int ntl_etl_mof_next(struct ntl_etl_mof *d, struct ntl_etl_field *f, struct ntl_error *err);
/* Right after ntl_etl_mof_next gave a pointer array's ARRAY_BEGIN: passes
 * over its count elements, the next call giving its ARRAY_END, for a caller
 * that reads them at once: *data set at the first, each a pointer's size,
 * which is returned. -1 (nothing done) when the last item was no such
 * ARRAY_BEGIN. */
int ntl_etl_mof_skip_pointers(struct ntl_etl_mof *d, const uint8_t **data);

/* A kernel layout's fixed prefix, for decoding many events of one layout
 * without walking it: the fields before the first whose size or presence
 * the payload decides (a SID, a string, an array, a last optional string),
 * at fixed offsets. It depends only on an event's kind, group, opcode,
 * version and pointer size. For an event of that layout whose payload holds
 * total bytes or more, ntl_etl_mof_next gives f[0..n) (data then pointing at
 * payload + payload_offset) and then what the decoder from
 * ntl_etl_mof_resume gives. */
#define NTL_ETL_MOF_PREFIX_MAX 24
struct ntl_etl_mof_prefix {
    const char *class_name;
    size_t n, total;              /* the fixed fields and their bytes */
    bool whole;                   /* they are all of the layout's fields */
    struct ntl_etl_field f[NTL_ETL_MOF_PREFIX_MAX];   /* data NULL */
    /* private */
    const void *layout;
};

/* 1 with *p set when ev's group, opcode and version have a known layout
 * (as ntl_etl_mof_begin), 0 when not. */
int ntl_etl_mof_prefix(struct ntl_etl_mof_prefix *p, const struct ntl_etl_event *ev);
/* Starts d on ev (of p's layout, payload_size >= p->total) after p's fields. */
void ntl_etl_mof_resume(struct ntl_etl_mof *d, const struct ntl_etl_mof_prefix *p,
                        const struct ntl_etl_event *ev);

/* The name of a well-known provider or kernel event class ("Microsoft-
 * Windows-DotNETRuntime", "Windows Kernel/Process"); NULL when unknown. */
const char *ntl_etl_provider_name(const struct ntl_guid *g);
/* The GUID of a well-known provider name (case-insensitive); false when unknown. */
bool ntl_etl_provider_lookup(const char *name, struct ntl_guid *g);

/* "S-1-5-21-..." from a SID of size bytes; NULL when it is malformed. */
char *ntl_sid_format(const uint8_t *sid, size_t size, char *buf, size_t bufsize);

#ifdef __cplusplus
}
#endif
#endif
