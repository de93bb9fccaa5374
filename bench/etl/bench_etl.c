/* ETL reading and MS-XCA decompression speed on the shared traces.
 *
 *   scan      every event of a trace held in memory (and streamed from the
 *             file): input MB/s, events/s
 *   images    the same plus decoding every image event
 *   xpress    decompressing the compressed buffers of net.4.5.2.x64.etl,
 *             output MB/s, against Samba's lzxpress_decompress
 *   huff      the same buffers compressed by wimlib (LZ77+Huffman), ours
 *             against wimlib's decompressor
 * Rivals are loaded at run time; without them only our figures print. The
 * Python reader (tests/etl/etl_ref.py) is the scanning rival, in etl.sh. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ntlens/buf.h"
#include "ntlens/compress.h"
#include "ntlens/etl.h"
#include "ntlens/etl_images.h"
#include "ntlens/reader.h"
#include "rival.h"

static double now(void)
{
    return (double)clock() / CLOCKS_PER_SEC;
}

static const char *data_path(const char *rel)
{
    static char buf[4096];
    const char *root = getenv("NTLENS_SHARED_DATA");
    snprintf(buf, sizeof buf, "%s/etl/%s", root ? root : "../shared/data", rel);
    return buf;
}

struct scan {
    const struct ntl_buf *file;
    bool images;
    uint64_t events, imgs;
};

static int scan_once(struct scan *s)
{
    struct ntl_etl *t;
    struct ntl_error err;
    struct ntl_etl_event ev;
    struct ntl_etl_image img;
    int rc;
    if (ntl_etl_open_mem(s->file->data, s->file->len, NULL, &t, &err) < 0)
        return -1;
    s->events = s->imgs = 0;
    while ((rc = ntl_etl_next(t, &ev, &err)) > 0) {
        s->events++;
        if (s->images && ntl_etl_image_decode(t, &ev, &img, &err) > 0)
            s->imgs++;
    }
    ntl_etl_close(t);
    return rc;
}

static void bench_scan(const char *name, bool images)
{
    struct ntl_buf file;
    struct ntl_error err;
    ntl_buf_init(&file, 0);
    if (ntl_file_read(data_path(name), 1u << 30, &file, &err) < 0) {
        printf("%s: %s (skipped)\n", name, err.message);
        return;
    }
    struct scan s = {&file, images, 0, 0};
    int iters = 0;
    double t0 = now(), t1 = t0;
    do {
        if (scan_once(&s) < 0) {
            printf("%s: read error\n", name);
            break;
        }
        iters++;
        t1 = now();
    } while (t1 - t0 < 1.0);
    double per = (t1 - t0) / iters;
    printf("%-6s %-34s %8.1f MB/s  %6.2f M events/s  (%" PRIu64 " events%s, %.1f MB)\n",
           images ? "images" : "scan", name, (double)file.len / per / 1e6, (double)s.events / per / 1e6,
           s.events, images ? ", images decoded" : "", (double)file.len / 1e6);
    ntl_buf_free(&file);
}

/* The same pass reading the file buffer by buffer (from the page cache). */
static void bench_scan_file(const char *name)
{
    const char *path = data_path(name);
    struct ntl_etl *t;
    struct ntl_error err;
    struct ntl_etl_event ev;
    uint64_t events = 0, bytes = 0;
    int iters = 0;
    double t0 = now(), t1 = t0;
    do {
        if (ntl_etl_open_file(path, NULL, &t, &err) < 0) {
            printf("%s: %s (skipped)\n", name, err.message);
            return;
        }
        events = 0;
        while (ntl_etl_next(t, &ev, &err) > 0)
            events++;
        bytes = ntl_etl_input_size(t);
        ntl_etl_close(t);
        iters++;
        t1 = now();
    } while (t1 - t0 < 1.0);
    double per = (t1 - t0) / iters;
    printf("%-6s %-34s %8.1f MB/s  %6.2f M events/s  (file mode, streamed)\n", "scan", name,
           (double)bytes / per / 1e6, (double)events / per / 1e6);
}

struct blob {
    uint8_t *data;
    size_t size, usize;
};

/* The compressed payloads of net.4.5.2.x64.etl's buffers. */
static size_t load_blobs(struct blob **out, struct ntl_buf *file)
{
    struct ntl_error err;
    size_t n = 0, cap = 0;
    *out = NULL;
    if (ntl_file_read(data_path("net.4.5.2.x64.etl"), 1u << 30, file, &err) < 0)
        return 0;
    for (size_t off = 0; off + 0x48 <= file->len;) {
        uint32_t bsize = ntl_le32(file->data + off), saved = ntl_le32(file->data + off + 4);
        uint16_t flags = ntl_le16(file->data + off + 0x34);
        if (bsize < 0x48 || bsize > file->len - off)
            break;
        if (flags & NTL_ETL_BUFFER_COMPRESSED) {
            if (n == cap) {
                cap = cap ? cap * 2 : 512;
                *out = realloc(*out, cap * sizeof **out);
            }
            (*out)[n].data = file->data + off + 0x48;
            (*out)[n].size = bsize - 0x48;
            (*out)[n].usize = saved - 0x48;
            n++;
        }
        off += bsize;
    }
    return n;
}

typedef long (*decomp_fn)(const uint8_t *, size_t, uint8_t *, size_t);

static long ours_xpress(const uint8_t *in, size_t n, uint8_t *out, size_t m)
{
    return ntl_xpress_decompress(in, n, out, m, 0, NULL);
}

static long ours_huff(const uint8_t *in, size_t n, uint8_t *out, size_t m)
{
    return ntl_xpress_huff_decompress(in, n, out, m, 0, NULL);
}

/* Output MB/s of fn over every blob; -1 if fn fails. */
static double rate(decomp_fn fn, const struct blob *b, size_t n, uint8_t *out)
{
    uint64_t bytes = 0;
    int iters = 0;
    double t0 = now(), t1 = t0;
    do {
        for (size_t i = 0; i < n; i++) {
            long r = fn(b[i].data, b[i].size, out, b[i].usize);
            if (r != (long)b[i].usize)
                return -1;
            bytes += (uint64_t)r;
        }
        iters++;
        t1 = now();
    } while (t1 - t0 < 1.0);
    return (double)bytes / (t1 - t0) / 1e6;
}

static void report(const char *what, double ours, const char *rival_name, double rival)
{
    printf("%-24s ours %8.1f MB/s", what, ours);
    if (rival > 0)
        printf("   %s %8.1f MB/s   ratio %.2fx\n", rival_name, rival, ours / rival);
    else
        printf("   (%s not available)\n", rival_name);
}

static void bench_decompress(void)
{
    struct ntl_buf file;
    struct blob *b;
    ntl_buf_init(&file, 0);
    size_t n = load_blobs(&b, &file);
    if (!n) {
        printf("xpress: net.4.5.2.x64.etl not readable (skipped)\n");
        return;
    }
    uint8_t *out = malloc(1 << 20), *tmp = malloc(1 << 20);
    uint64_t in_total = 0, out_total = 0;
    for (size_t i = 0; i < n; i++) {
        in_total += b[i].size;
        out_total += b[i].usize;
    }
    printf("xpress: %zu buffers, %.1f MB -> %.1f MB\n", n, in_total / 1e6, out_total / 1e6);
    double ours = rate(ours_xpress, b, n, out);
    double samba = rival_samba_xpress(b[0].data, b[0].size, out, b[0].usize) == (long)b[0].usize
                       ? rate(rival_samba_xpress, b, n, out) : -1;
    report("xpress (plain LZ77)", ours, "samba", samba);

    /* The same data, compressed by wimlib as LZ77+Huffman. */
    struct blob *h = calloc(n, sizeof *h);
    size_t nh = 0;
    for (size_t i = 0; i < n; i++) {
        long u = ntl_xpress_decompress(b[i].data, b[i].size, tmp, b[i].usize, 0, NULL);
        uint8_t *c = malloc(b[i].usize);
        long cn = u > 0 ? rival_wimlib_huff_compress(tmp, (size_t)u, c, b[i].usize - 1) : -1;
        if (cn <= 0) {
            free(c);
            continue;
        }
        h[nh].data = c;
        h[nh].size = (size_t)cn;
        h[nh].usize = (size_t)u;
        nh++;
    }
    if (nh) {
        double ours_h = rate(ours_huff, h, nh, out);
        double wim = rate(rival_wimlib_huff_decompress, h, nh, out);
        report("xpress-huff (LZ77+Huff)", ours_h, "wimlib", wim);
    } else {
        printf("xpress-huff: wimlib not available to compress test data (skipped)\n");
    }
    for (size_t i = 0; i < nh; i++)
        free(h[i].data);
    free(h);
    free(b);
    free(out);
    free(tmp);
    ntl_buf_free(&file);
}

int main(void)
{
    bench_scan("ShutdownPerfDiagLogger.etl", false);
    bench_scan_file("ShutdownPerfDiagLogger.etl");
    bench_scan("ShutdownPerfDiagLogger.etl", true);
    bench_scan("net.4.5.2.x64.etl", false);
    bench_scan("net.4.5.2.x64.etl", true);
    bench_scan("PerfViewData-gcevents.etl", false);
    bench_decompress();
    return 0;
}
