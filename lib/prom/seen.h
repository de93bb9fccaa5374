/* A set of strings the writers have emitted on one page (family names,
 * family + label set), so hostile data never repeats either: the exposition
 * format forbids a second family of a name and Prometheus rejects a
 * repeated series. Open addressing, FNV-1a; grows by doubling. */
#ifndef NTLENS_PROM_SEEN_H
#define NTLENS_PROM_SEEN_H

#include <stdbool.h>
#include <stddef.h>

struct prom_seen {
    char **slots;
    size_t cap;   /* power of two, or 0 */
    size_t count;
};

void prom_seen_init(struct prom_seen *s);
void prom_seen_free(struct prom_seen *s);
/* Adds a + "\x1f" + b (b may be NULL). Returns 1 when added, 0 when it was
 * there already, NTL_ERR_NOMEM. */
int prom_seen_add(struct prom_seen *s, const char *a, const char *b);

#endif
