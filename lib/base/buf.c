#include "ntlens/buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/reader.h"

void ntl_buf_init(struct ntl_buf *b, size_t limit)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->limit = limit ? limit : SIZE_MAX / 2;
}

void ntl_buf_free(struct ntl_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

int ntl_buf_reserve(struct ntl_buf *b, size_t n)
{
    size_t want, cap;
    uint8_t *p;

    if (n > b->limit - b->len || b->len > b->limit)
        return NTL_ERR_LIMIT;
    want = b->len + n;
    if (want <= b->cap)
        return NTL_OK;
    cap = b->cap ? b->cap : 256;
    while (cap < want)
        cap = cap > b->limit / 2 ? b->limit : cap * 2;
    p = realloc(b->data, cap);
    if (!p)
        return NTL_ERR_NOMEM;
    b->data = p;
    b->cap = cap;
    return NTL_OK;
}

int ntl_buf_append(struct ntl_buf *b, const void *p, size_t n)
{
    int rc = ntl_buf_reserve(b, n);
    if (rc < 0)
        return rc;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    return NTL_OK;
}

int ntl_buf_grow_zero(struct ntl_buf *b, size_t n, uint8_t **out)
{
    int rc = ntl_buf_reserve(b, n);
    if (rc < 0)
        return rc;
    if (n)
        memset(b->data + b->len, 0, n);
    if (out)
        *out = b->data + b->len;
    b->len += n;
    return NTL_OK;
}

int ntl_buf_put_u16(struct ntl_buf *b, uint16_t v)
{
    uint8_t t[2];
    ntl_put_le16(t, v);
    return ntl_buf_append(b, t, 2);
}

int ntl_buf_put_u32(struct ntl_buf *b, uint32_t v)
{
    uint8_t t[4];
    ntl_put_le32(t, v);
    return ntl_buf_append(b, t, 4);
}

int ntl_buf_put_u64(struct ntl_buf *b, uint64_t v)
{
    uint8_t t[8];
    ntl_put_le64(t, v);
    return ntl_buf_append(b, t, 8);
}

int ntl_buf_align(struct ntl_buf *b, size_t align)
{
    size_t pad = (align - (b->len & (align - 1))) & (align - 1);
    return ntl_buf_grow_zero(b, pad, NULL);
}

int ntl_file_read(const char *path, size_t limit, struct ntl_buf *out, struct ntl_error *err)
{
    FILE *f = fopen(path, "rb");
    uint8_t chunk[65536];
    size_t n;
    int rc = NTL_OK;

    ntl_buf_init(out, limit);
    if (!f)
        return ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET, "cannot open: %s",
                             strerror(errno));
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        rc = ntl_buf_append(out, chunk, n);
        if (rc == NTL_ERR_LIMIT) {
            rc = ntl_error_set(err, rc, NULL, NTL_NO_OFFSET, "the file is larger than %zu bytes",
                               out->limit);
            break;
        }
        if (rc < 0) {
            rc = ntl_error_set(err, rc, NULL, NTL_NO_OFFSET, "out of memory while reading the file");
            break;
        }
    }
    if (rc == NTL_OK && ferror(f))
        rc = ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET, "cannot read: %s",
                           strerror(errno));
    fclose(f);
    if (rc < 0)
        ntl_buf_free(out);
    return rc;
}

int ntl_file_write(const char *path, const void *data, size_t len, struct ntl_error *err)
{
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 8);
    FILE *f;
    int ok;

    if (!tmp)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp", 5);
    f = fopen(tmp, "wb");
    if (!f) {
        int rc = ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET, "cannot create %s: %s", tmp,
                               strerror(errno));
        free(tmp);
        return rc;
    }
    ok = fwrite(data, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
#ifdef _WIN32
    if (ok)
        remove(path); /* rename() does not replace an existing file on Windows */
#endif
    if (!ok || rename(tmp, path) != 0) {
        int rc = ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET, "cannot write %s: %s", path,
                               strerror(errno));
        remove(tmp);
        free(tmp);
        return rc;
    }
    free(tmp);
    return NTL_OK;
}
