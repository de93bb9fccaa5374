/* A trace's compressed buffers decompressed on a second thread, ahead of
 * the reader (ntl_etl_options.decompress_ahead). The thread walks the
 * buffers from where the reader will go on, as the reader does (each
 * BufferSize from the last), and keeps up to a few decompressed; the
 * reader takes the one it reaches, or decompresses for itself whatever the
 * thread does not have (a failure there is told by the reader's own try),
 * and, each time it had to wait for the thread, the thread's next one.
 * For sorted mode's second reading the thread follows a list instead. */
#ifndef NTLENS_ETL_AHEAD_H
#define NTLENS_ETL_AHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct etl_ahead;

/* A thread over the trace's size bytes, at mem or in the file at path (its
 * own handle), decompressing with format from the buffer at offset from;
 * NULL when it cannot start. */
struct etl_ahead *etl_ahead_start(const uint8_t *mem, const char *path, uint64_t size, int format,
                                  uint64_t from);
/* The thread stopped and started again over the compressed buffers at
 * list[0..n) in that order (list is the thread's, freed at stop), for
 * sorted mode's second reading: the reader takes list[i] with key i + 1.
 * 0, or -1 when it cannot start (etl_ahead_take then returns -1). */
int etl_ahead_follow(struct etl_ahead *a, uint64_t *list, size_t n);
/* The compressed buffer at off (its key) decompressed, header first, as the reader
 * lays it out: swapped into *buf (capacity *cap; the old one goes to the
 * thread). Its length after the header, or -1 when the thread has none. */
long etl_ahead_take(struct etl_ahead *a, uint64_t off, uint8_t **buf, size_t *cap);
/* A block of at least need bytes for a buffer's decompressed bytes: its
 * old bytes are not kept (it is refilled whole; realloc copied them), and
 * its size is rounded up to a power of two, so the blocks the reader and
 * the thread swap fit every buffer of a trace (64 KiB ones all) and are
 * not grown again. false when out of memory (*p then NULL, *cap 0). */
bool etl_block_reserve(uint8_t **p, size_t *cap, size_t need);
/* Stops and joins the thread, frees everything. */
void etl_ahead_stop(struct etl_ahead *a);

#endif
