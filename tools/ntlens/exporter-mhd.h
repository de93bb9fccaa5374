/* libmicrohttpd, loaded when the exporter starts (exporter-mhd-linux.c):
 * with GnuTLS and the eight libraries under it, linking it cost every
 * command about 1.1 ms of CPU and 170 page faults at start-up (`perf stat
 * -r 100` of an empty program linked with and without it), a third of
 * `ntlens --version` and 3% of `ntlens profile --etl` on net.4.5.2. */
#ifndef NTLENS_EXPORTER_MHD_H
#define NTLENS_EXPORTER_MHD_H

#include <microhttpd.h>

/* The libmicrohttpd functions exporter-http.c calls, by their names. */
struct exp_mhd {
    __typeof__(MHD_start_daemon) *start_daemon;
    __typeof__(MHD_stop_daemon) *stop_daemon;
    __typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
    __typeof__(MHD_add_response_header) *add_response_header;
    __typeof__(MHD_queue_response) *queue_response;
    __typeof__(MHD_destroy_response) *destroy_response;
    __typeof__(MHD_lookup_connection_value) *lookup_connection_value;
    __typeof__(MHD_get_connection_values) *get_connection_values;
};

/* The functions, loaded on the first call; NULL when the library or one of
 * them is missing, with what failed in msg. */
const struct exp_mhd *exp_mhd_load(char *msg, size_t size);

#endif
