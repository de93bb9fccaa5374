/* Writes generated .etl files for the CLI tests:
 *   etl_gen_tool ipt FILE      five Intel PT events (plain, wrapped, no PSB)
 *   etl_gen_tool images FILE   kernel and user image events, 32- and 64-bit
 *   etl_gen_tool corrupt FILE  three buffers, the middle one broken
 *   etl_gen_tool modules FILE  kernel image rundown plus an IPT event whose
 *                              TIP packets land in those modules (seed 002's
 *                              pipeline: etl images --map, etl ipt, ipt modules)
 *   etl_gen_tool classes32|classes64 FILE  the kernel classes no shared trace
 *                              has, in that pointer size (gen_classes.c)
 *   etl_gen_tool ring FILE TRACE.pt N   one IPT event whose 4 KiB << N circular
 *                                       buffer holds the end of a real trace,
 *                                       as if it had been recorded into it
 * The IPT traces are made of bytes 0x10..0x7f (so no stray PSB) with PSBs
 * placed where the test expects them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl_gen.h"
#include "ntlens/buf.h"
#include "ntlens/error.h"

#define START_FT 132500000000000000ull

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(0x10 + (seed >> 24) % 0x70);
    }
}

static void psb(uint8_t *p)
{
    for (int i = 0; i < 16; i += 2) {
        p[i] = 0x02;
        p[i + 1] = 0x82;
    }
}

static void gen_ipt_file(struct gen *g)
{
    static uint8_t t[5][8192];
    /* TraceCodeMode 2 (kernel), TimeMode 1, MTCFreq 3; BufferSize 0: 4 KiB. */
    uint64_t opt4k = 0x02000000ull | 0x10 | 0x300;
    uint64_t opt8k = opt4k | (1ull << 16);
    for (int i = 0; i < 5; i++)
        fill(t[i], sizeof t[i], (uint32_t)i + 1);
    psb(t[0]);
    psb(t[1] + 1500);
    psb(t[1] + 3000);
    psb(t[2] + 200);
    psb(t[4] + 6000);
    gen_init(g, 0x10000, 8, 0, 1000, 10000000, START_FT, 1, "WPR IPT", "C:\\ipt.etl");
    gen_next_buffer(g, 2);
    gen_ipt(g, false, 2000, 1990, 4, 100, opt4k, 300, t[0], 300);       /* plain */
    gen_ipt(g, true, 3000, 2990, 4, 101, opt4k, 1000, t[1], 4096);      /* wrapped */
    gen_next_buffer(g, 3);
    gen_ipt(g, false, 4000, 3990, 1234, 102, opt4k, 3500, t[2], 4096);  /* PSB before pos */
    gen_ipt(g, false, 5000, 4990, 1234, 103, opt4k, 10, t[3], 4096);    /* no PSB */
    gen_ipt(g, true, 6000, 5990, 8, 104, opt8k, 7000, t[4], 8192);      /* 8 KiB */
    gen_system(g, false, true, 2, 0x0524, 1, 1, 7000, NULL, 0, "cswitch!", 8);
    /* The same layout under a kernel hook id, for `etl ipt --hook 0x1f20`. */
    uint8_t k[32 + 64];
    memset(k, 0, sizeof k);
    k[8] = 77;                           /* Process */
    k[12] = 78;                          /* Thread */
    k[19] = 0x02;                        /* IptOption: TraceCodeMode 2 */
    k[24] = 64;                          /* TraceSize */
    k[28] = 64;                          /* TracePosition */
    memcpy(k + 32, t[0], 64);
    gen_perfinfo(g, true, 2, 0x1f20, 8000, NULL, 0, k, sizeof k);
    gen_finish(g);
}

static void gen_images_file(struct gen *g)
{
    gen_init(g, 0x4000, 8, 0, 1000, 10000000, START_FT, 1, "images", "C:\\images.etl");
    gen_image(g, false, false, true, 3, 1100, 0xfffff80312400000ull, 0x1046000, 0, 0x00a3b2c1,
              0x61234567, 0x140000000ull, "\\SystemRoot\\system32\\ntoskrnl.exe");
    gen_image(g, false, false, true, 3, 1200, 0xfffff80313000000ull, 0x9f000, 0, 0x000abcde,
              0x52345678, 0x1c0000000ull, "\\SystemRoot\\System32\\drivers\\tcpip.sys");
    gen_image(g, true, false, true, 10, 1300, 0x7ff7a0000000ull, 0x23000, 4242, 0x1111, 0x2222,
              0x140000000ull, "\\Device\\HarddiskVolume3\\Program Files\\App\\app.exe");
    gen_image(g, false, true, false, 10, 1400, 0x77100000, 0x100000, 4242, 0x3333, 0x4444,
              0x77100000, "\\Device\\HarddiskVolume3\\Windows\\SysWOW64\\ntdll.dll");
    gen_image(g, false, false, true, 2, 1500, 0x7ff7a0000000ull, 0x23000, 4242, 0x1111, 0x2222,
              0x140000000ull, "\\Device\\HarddiskVolume3\\Program Files\\App\\app.exe");
    gen_image(g, false, false, true, 4, 1600, 0xfffff80312400000ull, 0x1046000, 0, 0x00a3b2c1,
              0x61234567, 0x140000000ull, "\\SystemRoot\\system32\\ntoskrnl.exe");
    gen_finish(g);
}

/* A TIP-family packet with a full 64-bit IP (IPBytes 0b110). */
static size_t tip(uint8_t *p, uint8_t opcode, uint64_t ip)
{
    p[0] = (uint8_t)(opcode | 6u << 5);
    for (int i = 0; i < 8; i++)
        p[1 + i] = (uint8_t)(ip >> (8 * i));
    return 9;
}

static void gen_modules_file(struct gen *g)
{
    static const uint64_t nt = 0xfffff80312400000ull, tcpip = 0xfffff80313000000ull;
    uint8_t t[128];
    size_t n = 0;
    psb(t);
    n = 16;
    t[n++] = 0x02; /* PSBEND */
    t[n++] = 0x23;
    n += tip(t + n, 0x11, nt + 0x1000);      /* TIP.PGE */
    n += tip(t + n, 0x0D, tcpip + 0x20);     /* TIP */
    n += tip(t + n, 0x0D, nt + 0x2000);      /* TIP */
    n += tip(t + n, 0x0D, 0x1234);           /* TIP, in no module */
    n += tip(t + n, 0x01, nt + 0x3000);      /* TIP.PGD */
    gen_init(g, 0x4000, 8, 0, 1000, 10000000, START_FT, 1, "modules", "C:\\modules.etl");
    gen_image(g, false, false, true, 3, 1100, nt, 0x1046000, 0, 1, 2, 0x140000000ull,
              "\\SystemRoot\\system32\\ntoskrnl.exe");
    gen_image(g, false, false, true, 3, 1200, tcpip, 0x9f000, 0, 3, 4, 0x1c0000000ull,
              "\\SystemRoot\\System32\\drivers\\tcpip.sys");
    gen_image(g, true, false, true, 10, 1300, 0x7ff7a0000000ull, 0x23000, 4242, 5, 6,
              0x140000000ull, "\\Device\\HarddiskVolume3\\app.exe");
    gen_ipt(g, false, 2000, 1990, 4, 100, 0x02000000ull, (uint32_t)n, t, (uint32_t)n);
    gen_finish(g);
}

static void gen_corrupt_file(struct gen *g)
{
    gen_init(g, 0x1000, 8, 0, 1000, 10000000, START_FT, 1, "corrupt", "C:\\corrupt.etl");
    gen_next_buffer(g, 0);
    gen_system(g, false, true, 2, 0x0524, 1, 1, 2000, NULL, 0, "abcdefgh", 8);
    gen_next_buffer(g, 1);
    gen_system(g, false, true, 2, 0x0524, 2, 2, 3000, NULL, 0, "abcdefgh", 8);
    gen_finish(g);
    /* Buffer 1 (at 0x1000): its first event claims 0x800 bytes. */
    g->file.data[0x1000 + 0x48 + 4] = 0x00;
    g->file.data[0x1000 + 0x48 + 5] = 0x08;
}

/* Byte j of the trace sits at j % size of the ring; TracePosition is where
 * the next byte would go. */
static int gen_ring_file(struct gen *g, const char *trace_path, int code)
{
    struct ntl_buf tr;
    struct ntl_error err = {0};
    ntl_buf_init(&tr, 0);
    if (ntl_file_read(trace_path, 1u << 26, &tr, &err) < 0) {
        fprintf(stderr, "etl_gen_tool: %s\n", err.message);
        return -1;
    }
    size_t size = (size_t)4096 << code, len = tr.len;
    if (len < size) {
        fprintf(stderr, "etl_gen_tool: trace shorter than the ring\n");
        return -1;
    }
    static uint8_t ring[32768];
    for (size_t j = len - size; j < len; j++)
        ring[j % size] = tr.data[j];
    uint64_t option = 0x02000000ull | ((uint64_t)code << 16);
    gen_init(g, 0x10000, 8, 0, 1000, 10000000, START_FT, 1, "ring", "C:\\ring.etl");
    gen_ipt(g, false, 2000, 1990, 4, 100, option, (uint32_t)(len % size), ring, (uint32_t)size);
    gen_finish(g);
    ntl_buf_free(&tr);
    return 0;
}

int main(int argc, char **argv)
{
    struct gen g;
    struct ntl_error err = {0};
    if (argc == 5 && !strcmp(argv[1], "ring")) {
        int code = atoi(argv[4]);
        if (code < 0 || code > 3 || gen_ring_file(&g, argv[3], code) < 0)
            return 1;
        if (ntl_file_write(argv[2], g.file.data, g.file.len, &err) < 0)
            return 1;
        gen_free(&g);
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: etl_gen_tool ipt|images|corrupt|modules|classes32|classes64 FILE\n");
        return 2;
    }
    if (!strcmp(argv[1], "ipt"))
        gen_ipt_file(&g);
    else if (!strcmp(argv[1], "images"))
        gen_images_file(&g);
    else if (!strcmp(argv[1], "corrupt"))
        gen_corrupt_file(&g);
    else if (!strcmp(argv[1], "modules"))
        gen_modules_file(&g);
    else if (!strcmp(argv[1], "classes32") || !strcmp(argv[1], "classes64"))
        gen_classes_file(&g, argv[1][7] == '3' ? 4 : 8);
    else
        return 2;
    if (ntl_file_write(argv[2], g.file.data, g.file.len, &err) < 0) {
        fprintf(stderr, "etl_gen_tool: %s\n", err.message);
        return 1;
    }
    gen_free(&g);
    return 0;
}
