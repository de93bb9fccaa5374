/* libmicrohttpd through dlopen, so that only `ntlens exporter` loads it
 * (see exporter-mhd.h). */
#include "exporter-mhd.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define SONAME "libmicrohttpd.so.12"

static struct exp_mhd api;
static const struct exp_mhd *loaded;
static char failure[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Each field's symbol name and place in the table, in one list so that a
 * function added to the table cannot be left unresolved. */
#define FN(field) {"MHD_" #field, offsetof(struct exp_mhd, field)}
static const struct {
    const char *name;
    size_t at;
} functions[] = {
    FN(start_daemon), FN(stop_daemon), FN(create_response_from_buffer),
    FN(add_response_header), FN(queue_response), FN(destroy_response),
    FN(lookup_connection_value), FN(get_connection_values),
};

static void load(void)
{
    void *h = dlopen(SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(failure, sizeof failure, "cannot load %s: %s", SONAME, dlerror());
        return;
    }
    for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++) {
        void *f = dlsym(h, functions[i].name);
        if (!f) {
            snprintf(failure, sizeof failure, "%s has no %s", SONAME, functions[i].name);
            dlclose(h);
            return;
        }
        /* POSIX guarantees a function pointer survives the trip through
         * void * (dlsym's contract). */
        memcpy((char *)&api + functions[i].at, &f, sizeof f);
    }
    loaded = &api;
}

const struct exp_mhd *exp_mhd_load(char *msg, size_t size)
{
    pthread_once(&once, load);
    if (!loaded)
        snprintf(msg, size, "%s", failure);
    return loaded;
}
