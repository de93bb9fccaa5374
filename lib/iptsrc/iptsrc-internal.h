/* lib/iptsrc's shared helpers: what an ETW trace says was there at a
 * moment (modules, processes), from the events about each thing. */
#ifndef NTLENS_IPTSRC_INTERNAL_H
#define NTLENS_IPTSRC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"
#include "ntlens/etl_images.h"

/* What an event says about a thing: it appears (Load, Start, DCStart),
 * it is still there at the trace's end (DCEnd), it goes (Unload, End). */
enum iptsrc_life { IPTSRC_APPEARS, IPTSRC_STILL, IPTSRC_GONE };

/* The thing (key), when and what, of event i of a list. */
struct iptsrc_life_event {
    uint64_t key_a, key_b, ts;
    enum iptsrc_life life;
};
typedef void (*iptsrc_life_fn)(const void *list, size_t i, struct iptsrc_life_event *e);

/* For each event of the n in list (file order), into present[i]: whether
 * it is the one telling its thing's state at time `at` and that state is
 * "there": the last event about the thing at or before `at`, if that is
 * no GONE; or, when none is, the first after it, if that says the thing
 * was there before (STILL, GONE: a trace whose start rundown is missing).
 * Returns 0, or NTL_ERR_NOMEM (err set). */
int iptsrc_present(const void *list, size_t n, uint64_t at, iptsrc_life_fn get, bool *present,
                   struct ntl_error *err);

/* iptsrc_present over a trace's image events (key: process, or the
 * kernel, and base). */
int iptsrc_images_present(const struct ntl_etl_image *imgs, size_t n, uint64_t at, bool *present,
                          struct ntl_error *err);

#endif
