/* The os collector (os.c), which ntl_prom_write_windows runs when asked:
 * its facts come from page->os and the block, not from one object. */
#ifndef NTLENS_PROM_OS_H
#define NTLENS_PROM_OS_H

#include "ntlens/prom.h"

int prom_write_os(const struct ntl_prom_page *pg, struct ntl_buf *out, struct ntl_error *err);

#endif
