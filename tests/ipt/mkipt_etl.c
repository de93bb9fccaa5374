/* Writes a kernel trace (.etl) for `ipt flow --etl` tests: image loads of
 * the given modules (as the kernel logs them at boot), then one Intel PT
 * event (ETW's ProcessorTrace) carrying the trace file's bytes; with WRAP
 * K > 0 the trace is padded with PAD packets to a full 4 KiB ring buffer
 * and rotated so that its next write position is K, as a wrapped ring is
 * logged. The event is process 4's; an image of another process names its
 * pid, an opcode other than Load (10) follows it (2: Unload). proc:PID,CR3
 * writes a Process DCStart (version 3) giving the process's CR3; ipt[:PID]
 * puts the IPT event there (of process PID) instead of after the rest,
 * and later events get later times. Built on tests/etl's byte-by-byte
 * generator.
 *     mkipt_etl OUT.etl TRACE.pt WRAP
 *               [NAME,BASE,SIZE[,PID[,OPCODE]] | proc:PID,CR3 | ipt[:PID]]... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../etl/etl_gen.h"
#include "ntlens/buf.h"

#define RING 4096

/* NAME,BASE,SIZE[,PID[,OPCODE]]: an Image event. */
static int image_event(struct gen *g, uint64_t ts, char *arg)
{
    char *base = strchr(arg, ','), *size = base ? strchr(base + 1, ',') : NULL;
    if (!size)
        return -1;
    *base++ = *size++ = '\0';
    char *pid = strchr(size, ','), *op = pid ? strchr(pid + 1, ',') : NULL;
    gen_image(g, false, false, true, op ? (uint8_t)strtoul(op + 1, NULL, 0) : 10, ts,
              strtoull(base, NULL, 0), strtoull(size, NULL, 0),
              pid ? (uint32_t)strtoul(pid + 1, NULL, 0) : 0, 0, 0, 0x140000000, arg);
    return 0;
}

/* A Process DCStart, version 3 (64-bit): UniqueProcessKey, ProcessId,
 * ParentId, SessionId, ExitStatus, DirectoryTableBase, a null UserSID,
 * ImageFileName (ANSI), CommandLine (UTF-16). */
static void process_event(struct gen *g, uint64_t ts, uint32_t pid, uint64_t cr3)
{
    uint8_t p[64] = {0};
    uint64_t key = 0xffffa00000000000ull + pid;
    memcpy(p, &key, 8);
    memcpy(p + 8, &pid, 4);
    memcpy(p + 24, &cr3, 8);
    memcpy(p + 36, "app.exe", 8); /* after the 4-byte null SID */
    /* CommandLine: L"a" and its NUL. */
    p[44] = 'a';
    gen_system(g, false, true, 3, 0x0303, 8, pid, ts, NULL, 0, p, 48);
}

int main(int argc, char **argv)
{
    struct gen g;
    struct ntl_error err = {0};
    struct ntl_buf pt;
    static uint8_t ring[RING];
    uint64_t ts = 1000;

    if (argc < 4)
        return 2;
    ntl_buf_init(&pt, RING);
    if (ntl_file_read(argv[2], RING, &pt, &err) < 0) {
        fprintf(stderr, "mkipt_etl: %s\n", err.message);
        return 1;
    }
    unsigned long wrap = strtoul(argv[3], NULL, 0);
    const uint8_t *trace = pt.data;
    uint32_t size = (uint32_t)pt.len, pos = size;
    uint64_t option = 0; /* BufferSize 0: a 4 KiB ring */
    if (wrap) {
        /* The linear trace is the ring from K on, then its start. */
        uint8_t lin[RING] = {0};
        memcpy(lin, pt.data, pt.len);
        memcpy(ring + wrap, lin, RING - wrap);
        memcpy(ring, lin + RING - wrap, wrap);
        trace = ring;
        size = RING;
        pos = (uint32_t)wrap;
    }
    gen_init(&g, 0x10000, 8, 0x10001, 0, 10000000, 133000000000000000ull, 1, "NT Kernel Logger",
             "kernel.etl");
    bool ipt_done = false;
    for (int i = 4; i < argc; i++) {
        if (!strncmp(argv[i], "ipt", 3)) {
            uint32_t pid = argv[i][3] == ':' ? (uint32_t)strtoul(argv[i] + 4, NULL, 0) : 4;
            gen_ipt(&g, false, ts, ts - 1, pid, 8, option, pos, trace, size);
            ts++;
            ipt_done = true;
        } else if (!strncmp(argv[i], "proc:", 5)) {
            char *end;
            uint32_t pid = (uint32_t)strtoul(argv[i] + 5, &end, 0);
            if (*end != ',')
                return 2;
            process_event(&g, ts++, pid, strtoull(end + 1, NULL, 0));
        } else if (image_event(&g, ts++, argv[i]) < 0) {
            return 2;
        }
    }
    if (!ipt_done)
        gen_ipt(&g, false, ts, ts - 1, 4, 8, option, pos, trace, size);
    gen_finish(&g);
    if (ntl_file_write(argv[1], g.file.data, g.file.len, &err) < 0) {
        fprintf(stderr, "mkipt_etl: %s\n", err.message);
        return 1;
    }
    gen_free(&g);
    ntl_buf_free(&pt);
    return 0;
}
