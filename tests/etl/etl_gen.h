/* A test generator that writes .etl files byte by byte, from the layouts the
 * reader documents: buffers with every event header kind, image and Intel PT
 * events, compressed buffers (in each MS-XCA format, with simple but valid
 * encodings) and deliberately broken ones. */
#ifndef NTLENS_TEST_ETL_GEN_H
#define NTLENS_TEST_ETL_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"

struct gen {
    struct ntl_buf file;      /* finished buffers */
    struct ntl_buf buf;       /* the buffer being filled (header included) */
    uint32_t buffer_size;
    int pointer_size;         /* 4 or 8 */
    uint16_t cpu;
    uint64_t seq;
    int compress;             /* 0, or the COMPRESSION_FORMAT_* buffers are written in */
};

/* Starts a trace and writes its first buffer's TRACE_LOGFILE_HEADER event
 * (SYSTEM header, hook 0). The first buffer stays open for more events. */
void gen_init(struct gen *g, uint32_t buffer_size, int pointer_size, uint32_t log_file_mode,
              uint64_t header_ts, uint64_t perf_freq, uint64_t start_filetime, uint32_t clock_type,
              const char *logger_name, const char *log_file_name);
void gen_free(struct gen *g);

/* Closes the open buffer (0xFF filler up to BufferSize, or compressed when
 * g->compress is set and the buffer is not the first) and opens a new one
 * for cpu. */
void gen_next_buffer(struct gen *g, uint16_t cpu);
/* Closes the open buffer; g->file then holds the whole trace. */
void gen_finish(struct gen *g);

/* Kernel events. version carries the PEBS flag (0x8000) and PMC count (bits
 * 8-10) as the marker does; ext holds those extension bytes (8 each). */
void gen_system(struct gen *g, bool compact, bool is64, uint16_t version, uint16_t hook,
                uint32_t tid, uint32_t pid, uint64_t ts, const void *ext, size_t ext_len,
                const void *payload, size_t n);
void gen_perfinfo(struct gen *g, bool is64, uint16_t version, uint16_t hook, uint64_t ts,
                  const void *ext, size_t ext_len, const void *payload, size_t n);
/* EVENT_TRACE_HEADER (instance: EVENT_INSTANCE_GUID_HEADER). guid in text form. */
void gen_classic(struct gen *g, bool instance, bool is64, const char *guid, uint8_t type,
                 uint8_t level, uint16_t version, uint32_t tid, uint32_t pid, uint64_t ts,
                 const void *payload, size_t n);
/* EVENT_HEADER; ext (already laid out as extended items) may be NULL. */
void gen_event(struct gen *g, bool is64, const char *guid, uint16_t id, uint8_t opcode,
               uint16_t task, uint64_t keyword, uint32_t tid, uint32_t pid, uint64_t ts,
               const void *ext, size_t ext_len, const void *payload, size_t n);
/* MESSAGE_TRACE_HEADER with sequence, timestamp and system info. */
void gen_message(struct gen *g, uint16_t number, uint32_t tid, uint32_t pid, uint64_t ts,
                 const void *payload, size_t n);
/* Raw bytes at the current position (for broken records). */
void gen_raw(struct gen *g, const void *p, size_t n);

/* An Image_Load (version 3) event in a SYSTEM header of group 0x14 (or
 * 0x03 when process_group), or a PERFINFO header when perfinfo. */
void gen_image(struct gen *g, bool perfinfo, bool process_group, bool is64, uint8_t opcode,
               uint64_t ts, uint64_t base, uint64_t size, uint32_t pid, uint32_t checksum,
               uint32_t tds, uint64_t default_base, const char *name);
/* A ProcessorTrace event: classic (EVENT_TRACE_HEADER) or EVENT_HEADER. */
void gen_ipt(struct gen *g, bool event_header, uint64_t ts, uint64_t event_ts, uint32_t process,
             uint32_t thread, uint64_t option, uint32_t trace_position, const uint8_t *trace,
             uint32_t trace_size);

/* Compressors producing valid, simple streams: XPRESS with literals and
 * matches of a run, LZNT1 with stored chunks, XPRESS Huffman with a flat
 * 9-bit code. Return the compressed size. */
size_t gen_xpress(const uint8_t *in, size_t n, struct ntl_buf *out);
size_t gen_lznt1_stored(const uint8_t *in, size_t n, struct ntl_buf *out);
size_t gen_xpress_huff_flat(const uint8_t *in, size_t n, struct ntl_buf *out);

/* One event or more of each kernel class no shared trace records, in
 * pointer_size (4 or 8), PERFINFO where the payload names the process
 * (gen_classes.c). */
void gen_classes_file(struct gen *g, int pointer_size);

#endif
