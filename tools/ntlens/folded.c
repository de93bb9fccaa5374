/* Folded stacks: collect lines, sort them, merge equal neighbours. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"

struct folded_line {
    char *line;
    uint64_t weight;
};

struct folded_set {
    struct folded_line *v;
    size_t n, cap;
};

size_t folded_append(char *line, size_t len, const char *frame)
{
    if (len && len + 1 < FOLDED_LINE_MAX)
        line[len++] = ';';
    for (; *frame && len + 1 < FOLDED_LINE_MAX; frame++)
        line[len++] = *frame == ';' || *frame == ' ' ? '_' : *frame;
    line[len] = 0;
    return len;
}

struct folded_set *folded_new(void)
{
    return calloc(1, sizeof(struct folded_set));
}

int folded_add(struct folded_set *s, const char *line, uint64_t weight)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        struct folded_line *grown = realloc(s->v, cap * sizeof(*grown));
        if (!grown)
            return -1;
        s->v = grown;
        s->cap = cap;
    }
    if (!(s->v[s->n].line = strdup(line)))
        return -1;
    s->v[s->n++].weight = weight;
    return 0;
}

static int by_line(const void *a, const void *b)
{
    return strcmp(((const struct folded_line *)a)->line, ((const struct folded_line *)b)->line);
}

int folded_write(struct folded_set *s, FILE *f)
{
    if (s->n)
        qsort(s->v, s->n, sizeof(*s->v), by_line);
    for (size_t i = 0; i < s->n; i++) {
        uint64_t w = s->v[i].weight;
        while (i + 1 < s->n && !strcmp(s->v[i].line, s->v[i + 1].line))
            w += s->v[++i].weight;
        fprintf(f, "%s %" PRIu64 "\n", s->v[i].line, w);
    }
    return fflush(f) != 0 || ferror(f) ? -1 : 0;
}

void folded_free(struct folded_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].line);
    free(s->v);
    free(s);
}
