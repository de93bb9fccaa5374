/* Decompressing ahead of the reader (ahead.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ahead.h"
#include "ntlens/compress.h"
#include "ntlens/etl.h"
#include "ntlens/reader.h"
#include "ntlens/thread.h"

/* Buffers kept ready: enough that the reader rarely waits, few enough
 * (64 KiB each, typically) to stay in the cache. A full ring waits until
 * the reader has taken half, so that the threads wake each other seldom. */
#define SLOTS 8
#define HDR NTL_ETL_BUFFER_HEADER_SIZE

struct slot {
    uint64_t key;      /* the buffer's place in the thread's order (see struct etl_ahead) */
    uint8_t *data;
    size_t cap;
    long n;            /* decompressed bytes after the header, or < 0: failed */
};

struct etl_ahead {
    struct ntl_lock *lock;
    struct ntl_threads *thread; /* the one decompressing */
    const uint8_t *mem;
    FILE *f;
    uint64_t size, from, file_pos;
    int format;
    /* The order of the buffers: walking the file from `from` (each key is
     * the buffer's offset), or list[0..list_n) (key i + 1 is list[i]).
     * Keys grow in the order the reader takes the buffers. */
    uint64_t *list;
    size_t list_n;
    uint8_t *raw;      /* file input: the buffer being decompressed */
    size_t raw_cap;
    struct slot slots[SLOTS];
    unsigned head, count;  /* ready: slots[head .. head + count) (mod SLOTS) */
    bool done, stop;
    bool full;             /* the thread waits for the reader to take half */
    /* Every buffer before passed is ready or left to the reader. The
     * reader waits only for one the thread has not passed, and each wait
     * leaves the thread's next buffer to the reader: when the thread is
     * the slower, both decompress. */
    uint64_t passed, waits, skipped;
    /* The buffer the thread is decompressing (0: none; no key is 0), and
     * the end of those the reader took before the thread started them: it
     * decompresses rather than waits for a thread that has not begun (on a
     * loaded machine, one not running). */
    uint64_t working, reader_end;
};

static bool reserve(uint8_t **p, size_t *cap, size_t need)
{
    if (*cap >= need)
        return true;
    uint8_t *n = realloc(*p, need);
    if (!n)
        return false;
    *p = n;
    *cap = need;
    return true;
}

bool etl_block_reserve(uint8_t **p, size_t *cap, size_t need)
{
    if (*cap >= need)
        return true;
    size_t c = 4096;
    while (c < need)
        c *= 2;
    free(*p);
    *cap = 0;
    if (!(*p = malloc(c)))
        return false;
    *cap = c;
    return true;
}

/* n bytes at off, after the `have` already in a->raw; NULL on a read error. */
static const uint8_t *input(struct etl_ahead *a, uint64_t off, size_t have, size_t n)
{
    if (a->mem)
        return a->mem + off;
    if (!reserve(&a->raw, &a->raw_cap, n))
        return NULL;
    if (a->file_pos != off + have && fseeko(a->f, (off_t)(off + have), SEEK_SET) != 0)
        return NULL;
    size_t got = fread(a->raw + have, 1, n - have, a->f);
    a->file_pos = off + have + got;
    return got == n - have ? a->raw : NULL;
}

/* Claims the compressed buffer of key off (next: the key after it): 1
 * with *s a free slot for it (waiting for the reader to take some when all
 * are full), 0 when it is left to the reader (which waited for this
 * thread, or took it before this thread began it), -1 when stopped. */
static int claim(struct etl_ahead *a, uint64_t off, uint64_t next, struct slot **s)
{
    int k = 1;
    ntl_lock_take(a->lock);
    a->full = a->count == SLOTS && off >= a->reader_end && a->skipped >= a->waits;
    while (a->full && !a->stop)
        ntl_lock_wait(a->lock);
    if (a->stop) {
        k = -1;
    } else if (off < a->reader_end || a->skipped < a->waits) {
        a->skipped += off >= a->reader_end;
        a->passed = next;
        ntl_lock_wake(a->lock);
        k = 0;
    } else {
        *s = &a->slots[(a->head + a->count) % SLOTS];
        a->working = off;
    }
    ntl_lock_drop(a->lock);
    return k;
}

static void decompress(struct etl_ahead *a, struct slot *s, const uint8_t *raw, uint64_t off,
                       uint32_t bsize, uint32_t usize)
{
    struct ntl_error err;
    s->n = -1;
    if (!etl_block_reserve(&s->data, &s->cap, usize))
        return;
    memcpy(s->data, raw, HDR);
    s->n = ntl_decompress(a->format, raw + HDR, bsize - HDR, s->data + HDR, usize - HDR,
                          off + HDR, &err);
}

/* The buffer of key: its offset and the key after it (walking the file:
 * bsize on from it). */
static void place(const struct etl_ahead *a, uint64_t key, uint32_t bsize, uint64_t *off,
                  uint64_t *next)
{
    *off = a->list ? a->list[key - 1] : key;
    *next = a->list ? key + 1 : key + bsize;
}

/* The compressed buffer of key at off decompressed into a slot, unless
 * left to the reader. false when stopped or the input fails. */
static bool one(struct etl_ahead *a, uint64_t key, uint64_t next, uint64_t off, uint32_t bsize,
                uint32_t usize)
{
    const uint8_t *raw;
    struct slot *s;
    int k = claim(a, key, next, &s);
    if (k < 0 || (k > 0 && !(raw = input(a, off, HDR, bsize))))
        return false;
    if (k > 0) {
        s->key = key;
        decompress(a, s, raw, off, bsize, usize);
        ntl_lock_take(a->lock);
        a->count++;
        a->passed = next;
        a->working = 0;
        ntl_lock_wake(a->lock);
        ntl_lock_drop(a->lock);
    }
    return true;
}

static void work(void *arg)
{
    struct etl_ahead *a = arg;
    const uint8_t *h;
    uint64_t off, next;
    for (uint64_t key = a->from; !a->list || key <= a->list_n; key = next) {
        place(a, key, 0, &off, &next);
        if (a->size - off < HDR || !(h = input(a, off, 0, HDR)))
            break;
        uint32_t bsize = ntl_le32(h), usize = ntl_le32(h + 4);
        if (bsize < HDR || bsize > NTL_ETL_MAX_BUFFER_SIZE || bsize > a->size - off)
            break;
        place(a, key, bsize, &off, &next);
        if ((ntl_le16(h + 0x34) & NTL_ETL_BUFFER_COMPRESSED) && usize >= HDR &&
            usize <= NTL_ETL_MAX_BUFFER_SIZE && !one(a, key, next, off, bsize, usize))
            break;
    }
    ntl_lock_take(a->lock);
    a->done = true;
    ntl_lock_wake(a->lock);
    ntl_lock_drop(a->lock);
}

struct etl_ahead *etl_ahead_start(const uint8_t *mem, const char *path, uint64_t size, int format,
                                  uint64_t from)
{
    struct etl_ahead *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->mem = mem;
    a->size = size;
    a->format = format;
    a->from = a->passed = from;
    if ((!mem && !(a->f = fopen(path, "rb"))) || !(a->lock = ntl_lock_new()) ||
        ntl_threads_start(&a->thread, 1, work, a) < 0) {
        etl_ahead_stop(a);
        return NULL;
    }
    return a;
}

/* Stops and joins the thread. */
static void stop_thread(struct etl_ahead *a)
{
    if (!a->thread)
        return;
    ntl_lock_take(a->lock);
    a->stop = true;
    ntl_lock_wake(a->lock);
    ntl_lock_drop(a->lock);
    ntl_threads_join(a->thread);
    a->thread = NULL;
}

int etl_ahead_follow(struct etl_ahead *a, uint64_t *list, size_t n)
{
    stop_thread(a);
    free(a->list);
    a->list = list;
    a->list_n = n;
    a->from = a->passed = 1;
    a->head = a->count = 0;
    a->done = a->stop = a->full = false;
    a->waits = a->skipped = a->working = a->reader_end = 0;
    return ntl_threads_start(&a->thread, 1, work, a);
}

long etl_ahead_take(struct etl_ahead *a, uint64_t off, uint8_t **buf, size_t *cap)
{
    long n = -1;
    ntl_lock_take(a->lock);
    for (bool waited = false;;) {
        while (!a->count && !a->done && a->passed <= off) {
            if (a->working != off) {
                a->reader_end = off + 1;
                break;
            }
            a->waits += !waited;
            waited = true;
            ntl_lock_wait(a->lock);
        }
        struct slot *s = &a->slots[a->head];
        if (!a->count || s->key > off)
            break;
        bool mine = s->key == off;
        if (mine && s->n >= 0) {
            uint8_t *d = s->data;
            size_t c = s->cap;
            s->data = *buf;
            s->cap = *cap;
            *buf = d;
            *cap = c;
            n = s->n;
        }
        /* Taken, or passed over by the reader (a repeated buffer). */
        a->head = (a->head + 1) % SLOTS;
        a->count--;
        if (a->full && a->count <= SLOTS / 2) {
            a->full = false;
            ntl_lock_wake(a->lock);
        }
        if (mine)
            break;
    }
    ntl_lock_drop(a->lock);
    return n;
}

void etl_ahead_stop(struct etl_ahead *a)
{
    if (!a)
        return;
    stop_thread(a);
    ntl_lock_free(a->lock);
    if (a->f)
        fclose(a->f);
    for (unsigned i = 0; i < SLOTS; i++)
        free(a->slots[i].data);
    free(a->raw);
    free(a->list);
    free(a);
}
