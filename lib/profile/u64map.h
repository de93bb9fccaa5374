/* A map from 64-bit keys to 64-bit values (open addressing, linear
 * probing), for the profile's processes, threads and spaces. Key
 * UINT64_MAX is reserved as the empty slot. A key and its value share a
 * slot, so a lookup in a table larger than the cache costs one miss. */
#ifndef NTLENS_PROFILE_U64MAP_H
#define NTLENS_PROFILE_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map_slot {
    uint64_t key, val;
};

struct u64map {
    struct u64map_slot *slots;
    size_t cap;    /* a power of two, or 0 */
    size_t count;
    size_t limit;  /* most entries allowed */
};

#define U64MAP_EMPTY UINT64_MAX

void u64map_init(struct u64map *m, size_t limit);
void u64map_free(struct u64map *m);
/* The value slot for key, inserted as 0 when new. NULL when out of memory
 * or at the limit (*limited tells which). */
uint64_t *u64map_slot(struct u64map *m, uint64_t key, int *limited);
/* The value of key, or NULL when absent. */
const uint64_t *u64map_get(const struct u64map *m, uint64_t key);

#endif
