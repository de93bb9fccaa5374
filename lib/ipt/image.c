/* Memory images: non-overlapping sections sorted by address, each a copy of
 * the caller's bytes, found by binary search. */
#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/buf.h"
#include "ntlens/ipt_image.h"

struct section {
    uint64_t addr;
    size_t size;
    uint8_t *bytes;
};

struct ntl_ipt_image {
    struct section *sec;
    size_t n, cap;
    size_t total;
};

int ntl_ipt_image_new(struct ntl_ipt_image **img, struct ntl_error *err)
{
    *img = calloc(1, sizeof **img);
    if (!*img)
        return ntl_error_set(err, NTL_ERR_NOMEM, "image", 0, "out of memory");
    return 0;
}

void ntl_ipt_image_free(struct ntl_ipt_image *img)
{
    if (!img)
        return;
    for (size_t i = 0; i < img->n; i++)
        free(img->sec[i].bytes);
    free(img->sec);
    free(img);
}

/* Index of the first section whose end lies above addr (n if none). */
static size_t first_above(const struct ntl_ipt_image *img, uint64_t addr)
{
    size_t lo = 0, hi = img->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct section *s = &img->sec[mid];
        if (s->addr + s->size <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int ntl_ipt_image_add(struct ntl_ipt_image *img, const uint8_t *bytes, size_t size,
                      uint64_t addr, struct ntl_error *err)
{
    if (size == 0 || addr + size < addr)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "image", 0,
                             "a section of %zu bytes cannot lie at 0x%" PRIx64, size, addr);
    if (size > NTL_IPT_MAX_IMAGE - img->total)
        return ntl_error_set(err, NTL_ERR_LIMIT, "image", 0, "the image exceeds %zu bytes",
                             (size_t)NTL_IPT_MAX_IMAGE);
    size_t at = first_above(img, addr);
    if (at < img->n && img->sec[at].addr < addr + size)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "image", 0,
                             "[0x%" PRIx64 ", 0x%" PRIx64 ") overlaps [0x%" PRIx64 ", 0x%" PRIx64 ")",
                             addr, addr + size, img->sec[at].addr,
                             img->sec[at].addr + img->sec[at].size);
    if (img->n == img->cap) {
        size_t cap = img->cap ? img->cap * 2 : 16;
        struct section *s = realloc(img->sec, cap * sizeof *s);
        if (!s)
            return ntl_error_set(err, NTL_ERR_NOMEM, "image", 0, "out of memory");
        img->sec = s;
        img->cap = cap;
    }
    uint8_t *copy = malloc(size);
    if (!copy)
        return ntl_error_set(err, NTL_ERR_NOMEM, "image", 0, "out of memory");
    memcpy(copy, bytes, size);
    memmove(&img->sec[at + 1], &img->sec[at], (img->n - at) * sizeof *img->sec);
    img->sec[at] = (struct section){ addr, size, copy };
    img->n++;
    img->total += size;
    return 0;
}

int ntl_ipt_image_add_file(struct ntl_ipt_image *img, const char *path, uint64_t addr,
                           struct ntl_error *err)
{
    struct ntl_buf b;
    ntl_buf_init(&b, NTL_IPT_MAX_IMAGE);
    int rc = ntl_file_read(path, NTL_IPT_MAX_IMAGE, &b, err);
    if (rc >= 0)
        rc = ntl_ipt_image_add(img, b.data, b.len, addr, err);
    ntl_buf_free(&b);
    if (rc < 0)
        ntl_error_prefix(err, "%s", path);
    return rc < 0 ? rc : 0;
}

/* The address of a page file's name, "7ffff7800000.bin"; false for others. */
static bool page_addr(const char *name, uint64_t *addr)
{
    size_t len = strlen(name);
    if (len < 5 || len > 20 || strcmp(name + len - 4, ".bin") != 0)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len - 4; i++) {
        char c = name[i];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                   : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
        if (d == 16)
            return false;
        v = v << 4 | d;
    }
    *addr = v;
    return true;
}

int ntl_ipt_image_add_pages(struct ntl_ipt_image *img, const char *dir, struct ntl_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return ntl_error_set(err, NTL_ERR_IO, "image", 0, "%s: cannot read the folder", dir);
    int added = 0, rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t addr;
        if (!page_addr(e->d_name, &addr))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        rc = ntl_ipt_image_add_file(img, path, addr, err);
        if (rc < 0)
            break;
        added++;
    }
    closedir(d);
    return rc < 0 ? rc : added;
}

int ntl_ipt_image_read(uint8_t *buf, size_t size, uint64_t addr, void *ctx)
{
    const struct ntl_ipt_image *img = ctx;
    size_t at = first_above(img, addr);
    if (at == img->n || img->sec[at].addr > addr)
        return NTL_ERR_NOT_FOUND;
    const struct section *s = &img->sec[at];
    size_t off = (size_t)(addr - s->addr);
    size_t n = s->size - off < size ? s->size - off : size;
    memcpy(buf, s->bytes + off, n);
    return (int)n;
}

size_t ntl_ipt_image_sections(const struct ntl_ipt_image *img)
{
    return img->n;
}
