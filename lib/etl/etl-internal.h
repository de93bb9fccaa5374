/* Shared between the reader's files; not public. */
#ifndef NTLENS_ETL_INTERNAL_H
#define NTLENS_ETL_INTERNAL_H

#include <stdio.h>

#include "ntlens/etl.h"

/* A position in one buffer's (decompressed) bytes. */
struct etl_cur {
    const uint8_t *data;
    size_t end;              /* end of the events */
    size_t soft_end;         /* where the buffer's header says they end, when end
                                is only a bound: past it, what does not parse as
                                an event is the end, not an error */
    size_t pos;              /* next record */
    uint64_t last_timestamp; /* the latest event's so far */
    uint32_t index;
    uint64_t buf_offset;     /* file offset of the buffer */
    bool compressed;
    uint16_t cpu;
    uint32_t pointer_size;
    struct ntl_error *err;
};

/* A buffer of the sorted mode. With sorted_reload, data is a block of
 * cap bytes while the buffer's events are being returned (cur.data points
 * into it, or into the memory image), else NULL. */
struct etl_kept {
    uint8_t *data;
    size_t cap;
    bool loaded;
    uint32_t left;           /* its events not yet returned (sorted_reload) */
    uint64_t ahead_key;      /* its key in the decompressing thread's list, or 0 */
    struct ntl_etl_buffer buf;
    struct etl_cur cur;
};

/* A block a dropped buffer left, for the next one to be read again. */
struct etl_block {
    uint8_t *p;
    size_t cap;
};

/* An event of the sorted mode: where its bytes are kept. */
struct sorted_ev {
    uint64_t timestamp;
    uint32_t buffer;  /* index into ntl_etl.kept */
    uint32_t pos;
};

/* Sorts *a (n events, room for *cap) by timestamp, stable (file order
 * among equal times); the result may be in a new array, which then
 * replaces *a (freed) with *cap = n. 0, or -1 out of memory (*a as it was). */
int etl_sort_events(struct sorted_ev **a, size_t n, size_t *cap);
struct etl_seen;

struct ntl_etl {
    int format;
    uint32_t pointer_size;
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
    /* input */
    FILE *f;
    uint64_t file_pos;
    const uint8_t *mem;
    uint64_t size;
    uint64_t next_buffer;
    uint32_t buffer_index;
    uint8_t *raw;
    size_t raw_cap;
    bool raw_body_missing;   /* the current buffer was not read (etl_raw_body) */
    uint8_t *dec;
    size_t dec_cap;
    struct etl_ahead *ahead; /* decompressing on a second thread, or NULL */
    /* current buffer */
    struct ntl_etl_buffer buf;
    struct etl_cur cur;
    bool cur_valid;
    bool can_continue;
    bool fatal;
    /* header */
    struct ntl_etl_logfile lf;
    struct ntl_etl_event first;
    bool pending_first;
    struct ntl_etl_stats st;
    /* sorted mode */
    bool sorted_mode, sorted_ready;
    uint64_t sorted_limit;
    struct etl_kept *kept;
    size_t kept_n, kept_cap;
    uint64_t kept_bytes;
    struct sorted_ev *sorted;
    size_t sorted_n, sorted_cap, sorted_next;
    const struct ntl_etl_buffer *sorted_buf;
    bool sorted_reload;
    size_t drop;             /* 1 + the kept buffer to drop at the next call; 0: none */
    struct etl_block *spare;
    size_t spare_n, spare_cap;
    /* irregularities (irregular.c) */
    struct ntl_etl_irregularity irr[NTL_ETL_MAX_IRREGULARITIES];
    size_t irr_n;
    struct etl_seen *seen;   /* buffers by sequence number, to find repeats */
    size_t seen_n, seen_cap;
    uint8_t *scratch;        /* an earlier buffer re-read for comparison */
    size_t scratch_cap;
};

int etl_parse_event(const struct etl_cur *c, size_t pos, struct ntl_etl_event *ev);
/* The next event in file order (reader.c), as ntl_etl_next streaming. */
int etl_stream_next(struct ntl_etl *t, struct ntl_etl_event *ev, struct ntl_error *err);
/* Bytes [pos, pos+n) of the file (not a memory image) read into dst. */
int etl_file_read(struct ntl_etl *t, uint64_t pos, size_t n, uint8_t *dst, struct ntl_error *err);
/* The current buffer read into t->raw and *raw pointed there, when
 * load_buffer left it unread (the decompressing thread had it). */
int etl_raw_body(struct ntl_etl *t, const uint8_t **raw, struct ntl_error *err);
/* Bytes [pos, pos+n) of the input: a pointer into memory, or read into t->raw. */
int etl_input_read(struct ntl_etl *t, uint64_t pos, size_t n, const uint8_t **out,
                   struct ntl_error *err);
/* Sorted mode (sorted.c): ntl_etl_next, and what closing frees. */
int etl_sorted_next(struct ntl_etl *t, struct ntl_etl_event *ev, struct ntl_error *err);
void etl_sorted_free(struct ntl_etl *t);

/* Records an irregularity (counted always, kept while there is room). */
void etl_irregular(struct ntl_etl *t, uint64_t offset, const char *structure, const char *fmt, ...)
    NTL_PRINTF(4, 5);
/* Whether the buffer at off (bsize bytes at raw) repeats an earlier one: the
 * same sequence number and the same bytes (raw: its header at least;
 * etl_raw_body reads the rest when needed). 1 with *first its offset, 0 when
 * not (it is remembered), or NTL_ERR_NOMEM / NTL_ERR_IO. */
int etl_buffer_repeats(struct ntl_etl *t, const uint8_t *raw, uint32_t bsize, uint64_t off,
                       uint64_t *first, struct ntl_error *err);
/* Forgets both, for reading the file again from its start. */
void etl_irregular_reset(struct ntl_etl *t);
void etl_irregular_free(struct ntl_etl *t);

#endif
