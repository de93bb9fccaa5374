/* Writes a kernel trace (.etl) for `ipt flow --etl` tests: image loads of
 * the given modules (as the kernel logs them at boot), then one Intel PT
 * event (ETW's ProcessorTrace) carrying the trace file's bytes; with WRAP
 * K > 0 the trace is padded with PAD packets to a full 4 KiB ring buffer
 * and rotated so that its next write position is K, as a wrapped ring is
 * logged. The event is process 4's; an image of another process names its
 * pid. Built on tests/etl's byte-by-byte generator.
 *     mkipt_etl OUT.etl TRACE.pt WRAP [NAME,BASE,SIZE[,PID]]... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../etl/etl_gen.h"
#include "ntlens/buf.h"

#define RING 4096

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
    for (int i = 4; i < argc; i++) {
        char *name = argv[i], *base = strchr(name, ','), *size = base ? strchr(base + 1, ',') : NULL;
        if (!size)
            return 2;
        *base++ = *size++ = '\0';
        char *pid = strchr(size, ',');
        gen_image(&g, false, false, true, 10, ts++, strtoull(base, NULL, 0),
                  strtoull(size, NULL, 0), pid ? (uint32_t)strtoul(pid + 1, NULL, 0) : 0, 0, 0,
                  0x140000000, name);
    }
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
