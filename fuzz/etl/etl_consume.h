/* What the ETL harnesses do with an open trace: read every event (skipping
 * bad buffers while the reader can go on) and decode each as every command
 * would (images, IPT, extended data, kernel MOF and TraceLogging fields). */
#ifndef FUZZ_ETL_CONSUME_H
#define FUZZ_ETL_CONSUME_H

#include "ntlens/etl.h"

void fuzz_etl_consume(struct ntl_etl *t);

#endif
