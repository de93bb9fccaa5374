/* PSB search and circular-buffer unwrapping (ntlens/ipt_sync.h). */
#include <string.h>

#include "ntlens/ipt_sync.h"

static const uint8_t psb_pattern[NTL_IPT_PSB_SIZE] = {
    0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
    0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
};

bool ntl_ipt_is_psb(const uint8_t *buf, size_t size, size_t off)
{
    return off <= size && size - off >= NTL_IPT_PSB_SIZE &&
           memcmp(buf + off, psb_pattern, NTL_IPT_PSB_SIZE) == 0;
}

int ntl_ipt_sync_forward(const uint8_t *buf, size_t size, size_t from, size_t *psb)
{
    while (from < size && size - from >= NTL_IPT_PSB_SIZE) {
        const uint8_t *p = memchr(buf + from, 0x02, size - from - (NTL_IPT_PSB_SIZE - 1));
        if (!p)
            break;
        size_t off = (size_t)(p - buf);
        if (memcmp(p, psb_pattern, NTL_IPT_PSB_SIZE) == 0) {
            *psb = off;
            return NTL_OK;
        }
        from = off + 1;
    }
    return NTL_ERR_NOT_FOUND;
}

int ntl_ipt_sync_backward(const uint8_t *buf, size_t size, size_t before, size_t *psb)
{
    if (before > size)
        before = size;
    if (size < NTL_IPT_PSB_SIZE)
        return NTL_ERR_NOT_FOUND;
    /* Candidates are offsets < before whose PSB fits in the buffer. */
    size_t off = before;
    if (off > size - NTL_IPT_PSB_SIZE + 1)
        off = size - NTL_IPT_PSB_SIZE + 1;
    while (off > 0) {
        off--;
        if (buf[off] == 0x02 && memcmp(buf + off, psb_pattern, NTL_IPT_PSB_SIZE) == 0) {
            /* A longer run of 02 82 holds several overlapping matches: the
             * PSB is the one the run ends with, which is this first hit. */
            *psb = off;
            return NTL_OK;
        }
    }
    return NTL_ERR_NOT_FOUND;
}

/* True when a PSB starts at circular offset off of a buffer of size bytes. */
static bool is_psb_circular(const uint8_t *buf, size_t size, size_t off)
{
    for (size_t i = 0; i < NTL_IPT_PSB_SIZE; i++) {
        size_t j = off + i;
        if (j >= size)
            j -= size;
        if (buf[j] != psb_pattern[i])
            return false;
    }
    return true;
}

int ntl_ipt_wrap_find(const uint8_t *buf, size_t size, size_t pos, struct ntl_ipt_wrap *wrap,
                      struct ntl_error *err)
{
    if (pos > size)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "IPT buffer", NTL_NO_OFFSET,
                             "write position %zu is past the end of the %zu-byte buffer", pos,
                             size);
    if (pos == size)
        pos = 0;
    memset(wrap, 0, sizeof *wrap);
    size_t found = SIZE_MAX, off;
    /* The oldest bytes are at pos: search pos..end, then PSBs straddling the
     * end (their tail must lie before pos, in newer data), then 0..pos. */
    if (ntl_ipt_sync_forward(buf, size, pos, &off) == NTL_OK) {
        found = off;
    } else if (pos > 0) {
        size_t start = size > NTL_IPT_PSB_SIZE - 1 ? size - (NTL_IPT_PSB_SIZE - 1) : 0;
        if (start < pos)
            start = pos;
        for (off = start; off < size && found == SIZE_MAX; off++)
            if (off + NTL_IPT_PSB_SIZE - size <= pos && is_psb_circular(buf, size, off))
                found = off;
        if (found == SIZE_MAX && ntl_ipt_sync_forward(buf, pos, 0, &off) == NTL_OK)
            found = off;
    }
    if (found == SIZE_MAX)
        return ntl_error_set(err, NTL_ERR_NOT_FOUND, "IPT buffer", pos,
                             "no PSB in the %zu-byte circular buffer", size);
    wrap->psb = found;
    wrap->first_off = found;
    if (pos == 0) {
        wrap->first_len = size - found;
        wrap->skipped = found;
    } else if (found >= pos) {
        wrap->first_len = size - found;
        wrap->second_len = pos;
        wrap->skipped = found - pos;
    } else {
        /* Found after wrapping to the start: the trace ends at pos. */
        wrap->first_len = pos - found;
        wrap->skipped = size - pos + found;
    }
    return NTL_OK;
}

int ntl_ipt_unwrap(const uint8_t *buf, size_t size, size_t pos, struct ntl_buf *out,
                   struct ntl_ipt_wrap *info, struct ntl_error *err)
{
    struct ntl_ipt_wrap w;
    int rc = ntl_ipt_wrap_find(buf, size, pos, &w, err);
    if (rc < 0)
        return rc;
    rc = ntl_buf_reserve(out, w.first_len + w.second_len);
    if (rc < 0)
        return ntl_error_set(err, rc, "IPT buffer", NTL_NO_OFFSET,
                             "cannot hold the %zu-byte unwrapped trace", w.first_len + w.second_len);
    if (ntl_buf_append(out, buf + w.first_off, w.first_len) < 0 ||
        ntl_buf_append(out, buf, w.second_len) < 0)
        return ntl_error_set(err, NTL_ERR_NOMEM, "IPT buffer", NTL_NO_OFFSET, "out of memory");
    if (info)
        *info = w;
    return NTL_OK;
}
