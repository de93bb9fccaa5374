/* libFuzzer: ntl_ipt_next_batch over arbitrary bytes must give exactly what
 * ntl_ipt_next gives one packet at a time (packets, positions, statuses,
 * faults and error offsets), from the first PSB with resync after errors and
 * from offset 0, with batch sizes taken from the input. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/ipt_packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct ntl_ipt_packet out[64];
    struct ntl_ipt_decoder a, b;
    struct ntl_ipt_packet p;
    struct ntl_error ea, eb;
    for (int mode = 0; mode < 2; mode++) {
        ntl_ipt_decoder_init(&a, data, size, 7);
        ntl_ipt_decoder_init(&b, data, size, 7);
        if (mode == 0 && (ntl_ipt_sync_first(&a, &ea) < 0 || ntl_ipt_sync_first(&b, &eb) < 0))
            continue;
        size_t calls = 0;
        for (;;) {
            /* Batch sizes 1..64 from the input bytes, in turn. */
            size_t max = size ? (size_t)(data[calls % size] & 63) + 1 : 1;
            size_t before = a.pos;
            int ra = ntl_ipt_next_batch(&a, out, max, &ea);
            if (ra == 0 || ra > (int)max || ++calls > size + 1)
                abort();
            if (ra < 0) {
                int rb = ntl_ipt_next(&b, &p, &eb);
                if (rb != ra || a.pos != before || b.pos != before || a.fault != b.fault ||
                    (ra != NTL_ERR_EOF && (ea.offset != eb.offset || ea.status != eb.status ||
                                            strcmp(ea.message, eb.message) != 0)))
                    abort();
                if (ra == NTL_ERR_EOF || mode == 1 || ntl_ipt_resync(&a, &ea) < 0 ||
                    ntl_ipt_resync(&b, &eb) < 0)
                    break;
                continue;
            }
            for (int i = 0; i < ra; i++)
                if (ntl_ipt_next(&b, &p, &eb) != 0 || memcmp(&p, &out[i], sizeof p) != 0)
                    abort();
            if (a.pos != b.pos || a.fast_end != b.fast_end || a.bip_size != b.bip_size)
                abort();
        }
    }
    return 0;
}
