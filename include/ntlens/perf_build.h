/* A writer of real PERF_DATA_BLOCK bytes (WinPerf.h, 64-bit layout) and of
 * title databases ("Counter <lang>" / "Help <lang>" MULTI_SZ answers).
 *
 * Producers (the Linux provider, the Samba provider, tests, benchmarks) build
 * one block at a time:
 *
 *     struct ntl_perf_builder b;
 *     ntl_perf_build_begin(&b, &buf, &header, &err);
 *     ntl_perf_build_object(&b, &process_object, &err);      // counters defined
 *     ntl_perf_build_instance(&b, &inst, values, &err);       // once per instance
 *     ntl_perf_build_end_object(&b, &err);
 *     ntl_perf_build_object(&b, &memory_object, &err);        // no instances:
 *     ntl_perf_build_counters(&b, values, &err);              //   one counter block
 *     ntl_perf_build_end_object(&b, &err);
 *     ntl_perf_build_finish(&b, &err);
 *
 * Layout, as Windows writes it: the 88-byte PERF_DATA_BLOCK, the system name
 * (UTF-16LE, NUL-terminated) padded to 8 bytes, then each PERF_OBJECT_TYPE
 * (64 bytes), its PERF_COUNTER_DEFINITIONs (40 bytes each), then for every
 * instance a PERF_INSTANCE_DEFINITION (24 bytes) with its UTF-16LE name padded
 * to 8 bytes followed by a PERF_COUNTER_BLOCK; objects without instances have
 * one PERF_COUNTER_BLOCK. Counter values sit at CounterOffset in each counter
 * block, each aligned to its size (4 or 8), the block padded to 8 bytes.
 * TotalByteLength fields (block and objects) include their headers.
 *
 * All growth goes through the caller's ntl_buf, so its limit bounds the
 * block; hitting it returns NTL_ERR_LIMIT. A rejected instance (a name over
 * NTL_PERF_BUILD_MAX_NAME, the limit) leaves the block as it was, so the
 * object can still be closed; after any other error start again. */
#ifndef NTLENS_PERF_BUILD_H
#define NTLENS_PERF_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sizes of the WinPerf.h structures this writer emits. */
#define NTL_PERF_BUILD_BLOCK_SIZE 88u
#define NTL_PERF_BUILD_OBJECT_SIZE 64u
#define NTL_PERF_BUILD_COUNTER_SIZE 40u
#define NTL_PERF_BUILD_INSTANCE_SIZE 24u

/* Most counters one object may define. */
#define NTL_PERF_BUILD_MAX_COUNTERS 256u
/* Longest instance name, in UTF-16 units without the terminator. */
#define NTL_PERF_BUILD_MAX_NAME 1024u

/* WinPerf.h's PERF_NO_UNIQUE_ID, for ntl_perf_build_instance.unique_id. */
#define NTL_PERF_BUILD_NO_UNIQUE_ID (-1)

struct ntl_perf_build_header {
    /* SYSTEMTIME in UTC: year, month, day of week, day, hour, minute,
     * second, milliseconds. */
    uint16_t system_time[8];
    int64_t perf_time;         /* high-resolution counter */
    int64_t perf_freq;         /* its ticks per second */
    int64_t perf_time_100ns;   /* 100 ns units, FILETIME-style */
    const char *system_name;   /* UTF-8; NULL: no name (length 0) */
    uint32_t version;          /* 0: 1 (PERF_DATA_VERSION) */
    uint32_t revision;         /* 0: 1 (PERF_DATA_REVISION) */
    int32_t default_object;    /* title index, or -1 */
};

struct ntl_perf_build_counter {
    uint32_t name_index;       /* CounterNameTitleIndex */
    uint32_t help_index;       /* CounterHelpTitleIndex */
    int32_t default_scale;     /* power of 10 */
    uint32_t detail_level;     /* 100, 200, 300, 400 */
    uint32_t type;             /* PERF_COUNTER_* from WinPerf.h */
    uint32_t size;             /* CounterSize: 4 or 8 */
};

struct ntl_perf_build_object {
    uint32_t name_index;       /* ObjectNameTitleIndex */
    uint32_t help_index;       /* ObjectHelpTitleIndex */
    uint32_t detail_level;
    int32_t default_counter;   /* index into counters, or -1 */
    bool has_instances;        /* false: NumInstances = PERF_NO_INSTANCES (-1) */
    uint32_t code_page;        /* 0: instance names are UTF-16LE */
    int64_t perf_time;         /* object's own timebase (PERF_ELAPSED_TIME...) */
    int64_t perf_freq;
    const struct ntl_perf_build_counter *counters;
    uint32_t num_counters;     /* at most NTL_PERF_BUILD_MAX_COUNTERS */
};

struct ntl_perf_build_instance {
    const char *name;          /* UTF-8 */
    uint32_t parent_object;    /* ParentObjectTitleIndex, 0: none */
    uint32_t parent_instance;  /* ParentObjectInstance: index of the parent's
                                  instance in its object */
    int32_t unique_id;         /* NTL_PERF_BUILD_NO_UNIQUE_ID when names identify */
};

/* The writer's state. Public so it can live on the stack; touch it only
 * through the functions below. */
struct ntl_perf_builder {
    struct ntl_buf *out;
    size_t block_start;        /* offset of PERF_DATA_BLOCK in out */
    size_t object_start;       /* offset of the open PERF_OBJECT_TYPE; 0 when none */
    bool in_object;
    bool object_has_instances;
    bool object_has_data;      /* counter block written (objects without instances) */
    uint32_t num_objects;
    uint32_t num_instances;
    uint32_t num_counters;
    uint32_t data_size;        /* counter block size (ByteLength), multiple of 8 */
    uint32_t offsets[NTL_PERF_BUILD_MAX_COUNTERS];
    uint8_t sizes[NTL_PERF_BUILD_MAX_COUNTERS];
};

/* Starts a block at the end of out (normally empty). */
int ntl_perf_build_begin(struct ntl_perf_builder *b, struct ntl_buf *out,
                         const struct ntl_perf_build_header *h, struct ntl_error *err);
/* Opens an object and writes its counter definitions; counter offsets are
 * assigned in order, each aligned to its size. */
int ntl_perf_build_object(struct ntl_perf_builder *b, const struct ntl_perf_build_object *o,
                          struct ntl_error *err);
/* Adds an instance with its counter block: values[i] is the value of counter
 * i (truncated to 32 bits where CounterSize is 4). Only for objects with
 * has_instances. */
int ntl_perf_build_instance(struct ntl_perf_builder *b, const struct ntl_perf_build_instance *inst,
                            const uint64_t *values, struct ntl_error *err);
/* The single counter block of an object without instances (exactly once). */
int ntl_perf_build_counters(struct ntl_perf_builder *b, const uint64_t *values,
                            struct ntl_error *err);
/* Closes the open object: fills in TotalByteLength and NumInstances. */
int ntl_perf_build_end_object(struct ntl_perf_builder *b, struct ntl_error *err);
/* Closes the block: fills in TotalByteLength and NumObjectTypes. Returns the
 * block's length in bytes. */
int ntl_perf_build_finish(struct ntl_perf_builder *b, struct ntl_error *err);

/* Fills a SYSTEMTIME (UTC) from seconds and milliseconds since 1970. */
void ntl_perf_build_systemtime(uint16_t st[8], int64_t unix_seconds, unsigned millis);

/* One entry of a title database. */
struct ntl_perf_title {
    uint32_t index;
    const char *text;          /* UTF-8 */
};

/* Appends a title database answer in Windows' format: UTF-16LE strings
 * "index", "text", ... each NUL-terminated, then a final NUL. When
 * last_index is non-zero the answer starts with the pair "1", "<last_index>"
 * as "Counter <lang>" does (Help answers have no such pair). Entries are
 * written in the order given (Windows gives increasing indices). */
int ntl_perf_build_titles(struct ntl_buf *out, const struct ntl_perf_title *titles, size_t n,
                          uint32_t last_index, struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
