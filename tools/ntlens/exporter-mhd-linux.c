/* libmicrohttpd through dlopen, so that only `ntlens exporter` loads it
 * (see exporter-mhd.h). */
#include "exporter-mhd.h"

#include <pthread.h>
#include <stddef.h>

#include "ntlens/dl.h"

static struct exp_mhd api;
static const struct exp_mhd *loaded;
static struct ntl_error failure;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Each field's symbol name and place in the table, in one list so that a
 * function added to the table cannot be left unresolved. */
#define FN(field) {"MHD_" #field, offsetof(struct exp_mhd, field)}
static const struct ntl_dl_function functions[] = {
    FN(start_daemon), FN(stop_daemon), FN(create_response_from_buffer),
    FN(add_response_header), FN(queue_response), FN(destroy_response),
    FN(lookup_connection_value), FN(get_connection_values),
};

static void load(void)
{
    if (ntl_dl_load("libmicrohttpd.so.12", false, functions,
                    sizeof functions / sizeof functions[0], &api, &failure) == 0)
        loaded = &api;
}

const struct exp_mhd *exp_mhd_load(char *msg, size_t size)
{
    pthread_once(&once, load);
    if (!loaded)
        ntl_error_format(&failure, msg, size);
    return loaded;
}
