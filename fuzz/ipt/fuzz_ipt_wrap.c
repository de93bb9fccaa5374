/* libFuzzer: circular-buffer unwrapping. The first 4 bytes give the write
 * position; the rest is the buffer. The unwrapped trace must start with a
 * PSB, be no longer than the buffer, and be the buffer's bytes in ring
 * order; it is then decoded to the end. PSB search backwards is checked
 * against forwards. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/ipt_packet.h"
#include "ntlens/ipt_sync.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    size_t pos = (size_t)(data[0] | data[1] << 8 | data[2] << 16 | (uint32_t)data[3] << 24);
    const uint8_t *buf = data + 4;
    size_t n = size - 4;
    pos %= n + 2; /* now and then past the end */
    struct ntl_buf out;
    struct ntl_ipt_wrap w;
    struct ntl_error err;
    ntl_buf_init(&out, 0);
    int rc = ntl_ipt_unwrap(buf, n, pos, &out, &w, &err);
    if (pos > n) {
        if (rc != NTL_ERR_ARGUMENT)
            abort();
    } else if (rc == 0) {
        if (out.len > n || out.len < NTL_IPT_PSB_SIZE || !ntl_ipt_is_psb(out.data, out.len, 0) ||
            out.len != w.first_len + w.second_len || w.psb >= n)
            abort();
        for (size_t i = 0; i < out.len; i++)
            if (out.data[i] != buf[(w.psb + i) % n])
                abort();
        struct ntl_ipt_decoder d;
        struct ntl_ipt_packet p;
        ntl_ipt_decoder_init(&d, out.data, out.len, 0);
        for (size_t steps = 0; steps <= out.len; steps++) {
            int r = ntl_ipt_next(&d, &p, &err);
            if (r == 0)
                break;
            if (r < 0 && ntl_ipt_resync(&d, &err) < 0)
                break;
        }
    } else if (rc != NTL_ERR_NOT_FOUND) {
        abort();
    }
    ntl_buf_free(&out);

    /* Every PSB found walking backwards is found walking forwards. */
    size_t at = n, psb, fwd;
    while (ntl_ipt_sync_backward(buf, n, at, &psb) == 0) {
        if (psb >= at || ntl_ipt_sync_forward(buf, n, psb, &fwd) != 0 || fwd != psb)
            abort();
        at = psb;
    }
    return 0;
}
