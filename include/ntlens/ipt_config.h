/* Intel PT decoder configuration, shared by every layer (libipt's pt_config
 * is the model): the trace buffer and where it sits in the user's input, the
 * CPU's timing parameters and errata, and what the layers above packets
 * track. The packet decoder uses the buffer; the event decoder
 * (ipt_event.h) all of it, and so will the flow decoder above it. */
#ifndef NTLENS_IPT_CONFIG_H
#define NTLENS_IPT_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "ntlens/ipt_packet.h"
#include "ntlens/ipt_time.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Flags in ntl_ipt_config.flags. */
#define NTL_IPT_CFG_TIME 0x01             /* track time and CYC calibration */
#define NTL_IPT_CFG_NO_TCAL 0x02          /* do not calibrate CYC (ptdump --no-tcal) */
#define NTL_IPT_CFG_KEEP_TCAL_ON_OVF 0x04 /* an OVF keeps the calibration */
#define NTL_IPT_CFG_NO_CYC 0x08           /* CYC packets do not count for time */

struct ntl_ipt_config {
    const uint8_t *buf;  /* the trace; the caller keeps it alive */
    size_t size;
    uint64_t origin;     /* offset of buf[0] in the user's input, for errors */
    struct ntl_ipt_time_config time;
    unsigned flags;      /* NTL_IPT_CFG_* */
};

/* A packet decoder over the configuration's buffer (ntl_ipt_decoder_init). */
static inline void ntl_ipt_decoder_init_config(struct ntl_ipt_decoder *d,
                                               const struct ntl_ipt_config *c)
{
    ntl_ipt_decoder_init(d, c->buf, c->size, c->origin);
}

#ifdef __cplusplus
}
#endif
#endif
