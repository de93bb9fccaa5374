/* The built-in provider's fixed vocabulary: Windows' standard object and
 * counter indices, and the title database (names and help texts) it serves
 * as "Counter 009" / "Help 009". Internal to lib/source. */
#ifndef NTLENS_SOURCE_PROVIDER_H
#define NTLENS_SOURCE_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/error.h"

/* Object indices. */
enum {
    LP_OBJ_SYSTEM = 2,
    LP_OBJ_MEMORY = 4,
    LP_OBJ_PROCESS = 230,
    LP_OBJ_THREAD = 232,
    LP_OBJ_PROCESSOR = 238,
};

/* Counter indices (help index = name index + 1). */
enum {
    LP_PCT_PROCESSOR_TIME = 6,
    LP_AVAILABLE_BYTES = 24,
    LP_COMMITTED_BYTES = 26,
    LP_PAGE_FAULTS_SEC = 28,
    LP_COMMIT_LIMIT = 30,
    LP_PROCESSOR_QUEUE_LENGTH = 44,
    LP_THREAD_STATE = 46,
    LP_POOL_PAGED_BYTES = 56,
    LP_POOL_NONPAGED_BYTES = 58,
    LP_CACHE_BYTES = 68,
    LP_PCT_USER_TIME = 142,
    LP_PCT_PRIVILEGED_TIME = 144,
    LP_CONTEXT_SWITCHES_SEC = 146,
    LP_INTERRUPTS_SEC = 148,
    LP_VIRTUAL_BYTES_PEAK = 172,
    LP_VIRTUAL_BYTES = 174,
    LP_WORKING_SET_PEAK = 178,
    LP_WORKING_SET = 180,
    LP_PAGE_FILE_BYTES = 184,
    LP_PRIVATE_BYTES = 186,
    LP_PROCESSES = 248,
    LP_THREADS = 250,
    LP_THREAD_WAIT_REASON = 336,
    LP_SYSTEM_UP_TIME = 674,
    LP_THREAD_COUNT = 680,
    LP_PRIORITY_BASE = 682,
    LP_ELAPSED_TIME = 684,
    LP_PRIORITY_CURRENT = 694,
    LP_PCT_DPC_TIME = 696,
    LP_PCT_INTERRUPT_TIME = 698,
    LP_ID_PROCESS = 784,
    LP_ID_THREAD = 804,
    LP_HANDLE_COUNT = 952,
    LP_AVAILABLE_KBYTES = 1380,
    LP_AVAILABLE_MBYTES = 1382,
    LP_CREATING_PROCESS_ID = 1410,
    LP_PCT_IDLE_TIME = 1746,
};

/* Counter types used (WinPerf.h). */
#define LP_PERF_COUNTER_COUNTER 0x10410400u
#define LP_PERF_COUNTER_RAWCOUNT 0x00010000u
#define LP_PERF_COUNTER_LARGE_RAWCOUNT 0x00010100u
#define LP_PERF_100NSEC_TIMER 0x20510500u
#define LP_PERF_100NSEC_TIMER_INV 0x21510500u
#define LP_PERF_ELAPSED_TIME 0x30240500u

/* The highest index the title database names (its first "1" pair). */
#define LP_LAST_INDEX 1747u

/* Appends the provider's "Counter 009" (names) or "Help 009" answer. */
int lp_titles(int help, struct ntl_buf *out, struct ntl_error *err);

#endif
