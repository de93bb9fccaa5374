/* Address spaces by CR3: a default image and one image per CR3, kept sorted
 * by CR3 and found by binary search; reading tries the current space's own
 * image first, then the default. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/ipt_image.h"

/* CR3's low 12 bits are the PCID (or flags), not where the tables are. */
#define CR3_MASK (~(uint64_t)0xfff)

struct space {
    uint64_t cr3;
    struct ntl_ipt_image *img;
};

struct ntl_ipt_spaces {
    struct ntl_ipt_image *deflt;
    struct space *v;
    size_t n, cap;
    struct ntl_ipt_image *cur; /* the current space's own image, or NULL */
};

int ntl_ipt_spaces_new(struct ntl_ipt_spaces **s, struct ntl_error *err)
{
    if (!(*s = calloc(1, sizeof **s)))
        return ntl_error_set(err, NTL_ERR_NOMEM, "address spaces", 0, "out of memory");
    int rc = ntl_ipt_image_new(&(*s)->deflt, err);
    if (rc < 0) {
        free(*s);
        *s = NULL;
    }
    return rc;
}

void ntl_ipt_spaces_free(struct ntl_ipt_spaces *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        ntl_ipt_image_free(s->v[i].img);
    free(s->v);
    ntl_ipt_image_free(s->deflt);
    free(s);
}

struct ntl_ipt_image *ntl_ipt_spaces_default(struct ntl_ipt_spaces *s)
{
    return s->deflt;
}

/* Index of the first space whose CR3 is not below cr3. */
static size_t lower_bound(const struct ntl_ipt_spaces *s, uint64_t cr3)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->v[mid].cr3 < cr3)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int ntl_ipt_spaces_image(struct ntl_ipt_spaces *s, uint64_t cr3, struct ntl_ipt_image **img,
                         struct ntl_error *err)
{
    cr3 &= CR3_MASK;
    size_t i = lower_bound(s, cr3);
    if (i < s->n && s->v[i].cr3 == cr3) {
        *img = s->v[i].img;
        return 0;
    }
    if (s->n == NTL_IPT_MAX_SPACES)
        return ntl_error_set(err, NTL_ERR_LIMIT, "address spaces", 0,
                             "more than %d address spaces", NTL_IPT_MAX_SPACES);
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        struct space *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return ntl_error_set(err, NTL_ERR_NOMEM, "address spaces", 0, "out of memory");
        s->v = v;
        s->cap = cap;
    }
    int rc = ntl_ipt_image_new(img, err);
    if (rc < 0)
        return rc;
    memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof *s->v);
    s->v[i].cr3 = cr3;
    s->v[i].img = *img;
    s->n++;
    return 0;
}

bool ntl_ipt_spaces_switch(struct ntl_ipt_spaces *s, uint64_t cr3)
{
    cr3 &= CR3_MASK;
    size_t i = lower_bound(s, cr3);
    struct ntl_ipt_image *img = i < s->n && s->v[i].cr3 == cr3 ? s->v[i].img : NULL;
    bool changed = img != s->cur;
    s->cur = img;
    return changed;
}

int ntl_ipt_spaces_read(uint8_t *buf, size_t size, uint64_t addr, void *ctx)
{
    struct ntl_ipt_spaces *s = ctx;
    if (s->cur) {
        int rc = ntl_ipt_image_read(buf, size, addr, s->cur);
        if (rc != NTL_ERR_NOT_FOUND)
            return rc;
    }
    return ntl_ipt_image_read(buf, size, addr, s->deflt);
}

size_t ntl_ipt_spaces_count(const struct ntl_ipt_spaces *s)
{
    return s->n;
}
