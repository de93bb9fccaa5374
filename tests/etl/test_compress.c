/* The MS-XCA decompressors: the specification's examples, hand-built
 * streams, the generator's encoders, bounds on both sides, and (under Wine
 * or Windows) ntdll's own RtlCompressBuffer as the peer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "etl_gen.h"
#include "ntlens/compress.h"

#ifdef _WIN32
#include <windows.h>
#endif

static void test_xpress_spec(void)
{
    /* MS-XCA 3.1: 26 literals, then a flag bit set where the input ends. */
    uint8_t in1[4 + 26] = {0x3f, 0x00, 0x00, 0x00};
    uint8_t out[400];
    struct ntl_error err = {0};
    for (int i = 0; i < 26; i++)
        in1[4 + i] = (uint8_t)('a' + i);
    long n = ntl_xpress_decompress(in1, sizeof in1, out, sizeof out, 0, &err);
    CHECK_EQ_INT(n, 26);
    CHECK(!memcmp(out, "abcdefghijklmnopqrstuvwxyz", 26));

    /* MS-XCA 3.1: "abc" 100 times: three literals and one long match
     * (length in a half byte, a byte and a u16). */
    static const uint8_t in2[] = {0xff, 0xff, 0xff, 0x1f, 0x61, 0x62, 0x63, 0x17, 0x00, 0x0f, 0xff, 0x26, 0x01};
    n = ntl_xpress_decompress(in2, sizeof in2, out, sizeof out, 0, &err);
    CHECK_EQ_INT(n, 300);
    int ok = 1;
    for (int i = 0; i < 300; i++)
        ok &= out[i] == "abc"[i % 3];
    CHECK(ok);

    /* Bounds: output one byte short, input cut inside the long length. */
    n = ntl_xpress_decompress(in2, sizeof in2, out, 299, 100, &err);
    CHECK_EQ_INT(n, NTL_ERR_LIMIT);
    CHECK_EQ_U64(err.offset, 107);
    n = ntl_xpress_decompress(in2, sizeof in2 - 1, out, sizeof out, 0, &err);
    CHECK_EQ_INT(n, NTL_ERR_TRUNCATED);
    n = ntl_xpress_decompress(in2, 2, out, sizeof out, 0, &err);
    CHECK_EQ_INT(n, NTL_ERR_TRUNCATED);
    /* A match before any output. */
    static const uint8_t in3[] = {0x00, 0x00, 0x00, 0x80, 0x00, 0x00};
    n = ntl_xpress_decompress(in3, sizeof in3, out, sizeof out, 0, &err);
    CHECK_EQ_INT(n, NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, 4);
}

static void fill_sample(uint8_t *p, size_t n)
{
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        if ((i / 1000) % 3 == 0)
            p[i] = (uint8_t)(x >> 24);               /* noise */
        else if ((i / 1000) % 3 == 1)
            p[i] = "the quick brown fox "[i % 20];   /* text */
        else
            p[i] = (i / 300) & 1 ? 0 : 0x5a;         /* long runs */
    }
}

static void roundtrip(int format, size_t len)
{
    uint8_t *in = malloc(len), *out = malloc(len + 16);
    struct ntl_buf c;
    struct ntl_error err = {0};
    ntl_buf_init(&c, 0);
    fill_sample(in, len);
    if (format == NTL_COMPRESS_XPRESS)
        gen_xpress(in, len, &c);
    else if (format == NTL_COMPRESS_LZNT1)
        gen_lznt1_stored(in, len, &c);
    else
        gen_xpress_huff_flat(in, len, &c);
    long n = ntl_decompress(format, c.data, c.len, out, len + 16, 0, &err);
    CHECK_EQ_INT(n, (long)len);
    CHECK(n == (long)len && !memcmp(in, out, len));
    /* Every truncation fails cleanly or yields a prefix. */
    for (size_t cut = 0; cut < c.len; cut += 1 + c.len / 50) {
        n = ntl_decompress(format, c.data, cut, out, len + 16, 0, &err);
        CHECK(n < 0 || (n <= (long)len && !memcmp(in, out, (size_t)n)));
    }
    /* A too small output is an error, never an overrun (ASan checks). */
    n = ntl_decompress(format, c.data, c.len, out, len / 2, 0, &err);
    CHECK(n < 0 || n == (long)len / 2);
    ntl_buf_free(&c);
    free(in);
    free(out);
}

static void test_lznt1_hand(void)
{
    /* One compressed chunk: flags 0x08, 'a' 'b' 'c', then a copy token
     * (offset 3 in the top 4 bits at position 3, length 9). */
    static const uint8_t in[] = {0x05, 0xB0, 0x08, 'a', 'b', 'c', 0x06, 0x20, 0x00, 0x00};
    uint8_t out[64];
    struct ntl_error err = {0};
    long n = ntl_lznt1_decompress(in, sizeof in, out, sizeof out, 0, &err);
    CHECK_EQ_INT(n, 12);
    CHECK(!memcmp(out, "abcabcabcabc", 12));
    n = ntl_lznt1_decompress(in, sizeof in, out, 11, 0, &err);
    CHECK_EQ_INT(n, NTL_ERR_LIMIT);
    uint8_t bad[sizeof in];
    memcpy(bad, in, sizeof in);
    bad[1] = 0xC0; /* signature 4 */
    n = ntl_lznt1_decompress(bad, sizeof bad, out, sizeof out, 50, &err);
    CHECK_EQ_INT(n, NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, 50);
    bad[1] = 0xB0;
    bad[0] = 0x20; /* chunk longer than the input */
    n = ntl_lznt1_decompress(bad, sizeof bad, out, sizeof out, 0, &err);
    CHECK_EQ_INT(n, NTL_ERR_TRUNCATED);
    memcpy(bad, in, sizeof in);
    bad[7] = 0x70; /* offset 8 at position 3 */
    n = ntl_lznt1_decompress(bad, sizeof bad, out, sizeof out, 0, &err);
    CHECK_EQ_INT(n, NTL_ERR_FORMAT);
}

static void test_huff_tables(void)
{
    uint8_t in[256 + 8];
    uint8_t out[16];
    struct ntl_error err = {0};
    memset(in, 0, sizeof in);
    CHECK_EQ_INT(ntl_xpress_huff_decompress(in, sizeof in, out, sizeof out, 0, &err), NTL_ERR_FORMAT);
    CHECK(strstr(err.message, "no symbol") != NULL);
    memset(in, 0x11, 256); /* 512 one-bit codes */
    CHECK_EQ_INT(ntl_xpress_huff_decompress(in, sizeof in, out, sizeof out, 0, &err), NTL_ERR_FORMAT);
    CHECK(strstr(err.message, "oversubscribe") != NULL);
    CHECK_EQ_INT(ntl_xpress_huff_decompress(in, 100, out, sizeof out, 0, &err), NTL_ERR_TRUNCATED);
    /* Only symbol 'A' has a code (1 bit, "0"): bits "1" match nothing. */
    memset(in, 0, sizeof in);
    in['A' / 2] = 0x01 << (('A' & 1) * 4);
    memset(in + 256, 0xff, 8);
    CHECK_EQ_INT(ntl_xpress_huff_decompress(in, sizeof in, out, sizeof out, 0, &err), NTL_ERR_FORMAT);
    memset(in + 256, 0x00, 8);
    CHECK_EQ_INT(ntl_xpress_huff_decompress(in, sizeof in, out, sizeof out, 0, &err), (long)sizeof out);
    CHECK(out[0] == 'A' && out[15] == 'A');
    CHECK_EQ_INT(ntl_compress_format_parse("xpress-huff"), 4);
    CHECK_EQ_INT(ntl_compress_format_parse("2"), 2);
    CHECK_EQ_INT(ntl_compress_format_parse("zip"), -1);
    CHECK_EQ_INT(ntl_decompress(9, in, 1, out, 1, 0, &err), NTL_ERR_UNSUPPORTED);
}

#ifdef _WIN32
typedef LONG(WINAPI *compress_fn)(USHORT, PUCHAR, ULONG, PUCHAR, ULONG, ULONG, PULONG, PVOID);
typedef LONG(WINAPI *workspace_fn)(USHORT, PULONG, PULONG);

/* ntdll's compressor (Wine's own code under Wine) against our decompressor. */
static void test_ntdll_peer(void)
{
    HMODULE nt = GetModuleHandleA("ntdll.dll");
    compress_fn compress = (compress_fn)(void (*)(void))GetProcAddress(nt, "RtlCompressBuffer");
    workspace_fn wsize = (workspace_fn)(void (*)(void))GetProcAddress(nt, "RtlGetCompressionWorkSpaceSize");
    CHECK(compress && wsize);
    if (!compress || !wsize)
        return;
    static const USHORT formats[] = {NTL_COMPRESS_LZNT1, NTL_COMPRESS_XPRESS, NTL_COMPRESS_XPRESS_HUFF};
    int tested = 0;
    for (size_t f = 0; f < 3; f++) {
        ULONG ws = 0, fws = 0;
        if (wsize(formats[f], &ws, &fws) != 0) {
            printf("ntdll: format %u unsupported, skipped\n", formats[f]);
            continue;
        }
        size_t len = 40000;
        uint8_t *in = malloc(len), *c = malloc(2 * len), *out = malloc(len), *work = malloc(ws + 1);
        ULONG clen = 0;
        fill_sample(in, len);
        /* Half of it plain text, which any LZ77 compressor shrinks. */
        for (size_t i = len / 2; i < len; i++)
            in[i] = "the quick brown fox jumps over the lazy dog "[i % 44];
        LONG st = compress(formats[f], in, (ULONG)len, c, (ULONG)(2 * len), 4096, &clen, work);
        if (st == 0) {
            struct ntl_error err = {0};
            long n = ntl_decompress(formats[f], c, clen, out, len, 0, &err);
            CHECK_EQ_INT(n, (long)len);
            CHECK(n == (long)len && !memcmp(in, out, len));
            printf("ntdll: format %u, %lu -> %lu bytes, decompressed\n", formats[f], (unsigned long)len,
                   (unsigned long)clen);
            tested++;
        } else {
            printf("ntdll: format %u: RtlCompressBuffer status 0x%08lx, skipped\n", formats[f],
                   (unsigned long)st);
        }
        free(in);
        free(c);
        free(out);
        free(work);
    }
    CHECK(tested >= 1); /* Wine has LZNT1 at least */
}
#endif

int main(void)
{
    test_xpress_spec();
    test_lznt1_hand();
    test_huff_tables();
    roundtrip(NTL_COMPRESS_XPRESS, 50000);
    roundtrip(NTL_COMPRESS_XPRESS, 100);
    roundtrip(NTL_COMPRESS_LZNT1, 20000);
    roundtrip(NTL_COMPRESS_XPRESS_HUFF, 30000);
#ifdef _WIN32
    test_ntdll_peer();
#endif
    return check_exit();
}
