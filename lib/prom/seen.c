#include "seen.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/error.h"

void prom_seen_init(struct prom_seen *s)
{
    memset(s, 0, sizeof *s);
}

void prom_seen_free(struct prom_seen *s)
{
    for (size_t i = 0; i < s->cap; i++)
        free(s->slots[i]);
    free(s->slots);
    prom_seen_init(s);
}

static uint64_t hash(const char *k)
{
    uint64_t h = 1469598103934665603ull;
    for (; *k; k++)
        h = (h ^ (unsigned char)*k) * 1099511628211ull;
    return h;
}

static char **slot(char **slots, size_t cap, const char *k)
{
    size_t i = (size_t)hash(k) & (cap - 1);
    while (slots[i] && strcmp(slots[i], k) != 0)
        i = (i + 1) & (cap - 1);
    return &slots[i];
}

static int grow(struct prom_seen *s)
{
    size_t cap = s->cap ? s->cap * 2 : 64;
    char **slots = calloc(cap, sizeof *slots);
    if (!slots)
        return NTL_ERR_NOMEM;
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i])
            *slot(slots, cap, s->slots[i]) = s->slots[i];
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
    return 0;
}

int prom_seen_add(struct prom_seen *s, const char *a, const char *b)
{
    size_t na = strlen(a), nb = b ? strlen(b) : 0;
    char *k = malloc(na + nb + 2);
    if (!k)
        return NTL_ERR_NOMEM;
    memcpy(k, a, na);
    k[na] = '\x1f';
    memcpy(k + na + 1, b ? b : "", nb + 1);
    if ((s->count + 1) * 2 > s->cap && grow(s) < 0) {
        free(k);
        return NTL_ERR_NOMEM;
    }
    char **p = slot(s->slots, s->cap, k);
    if (*p) {
        free(k);
        return 0;
    }
    *p = k;
    s->count++;
    return 1;
}
