/* A process's threads, states and wait reasons from one system snapshot:
 * NtQuerySystemInformation(SystemProcessInformation) has them all in one
 * call, where Toolhelp32 has no state and GetThreadTimes needs a handle. */
#include <windows.h>
#include <winternl.h>
#include <stdlib.h>
#include <string.h>

#include "win32.h"

#define SNAPSHOT_MAX (256u << 20)

/* Grows the buffer until the whole snapshot fits. */
static int snapshot(uint8_t **buf, ULONG *size, struct ntl_error *err)
{
    ULONG cap = 1u << 18;
    for (;;) {
        uint8_t *b = malloc(cap);
        if (!b)
            return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
        ULONG need = 0;
        NTSTATUS st = NtQuerySystemInformation(SystemProcessInformation, b, cap, &need);
        if (st >= 0) {
            *buf = b;
            *size = need && need < cap ? need : cap;
            return 0;
        }
        free(b);
        if ((uint32_t)st != 0xC0000004u || cap >= SNAPSHOT_MAX) /* INFO_LENGTH_MISMATCH */
            return ntl_error_set(err, NTL_ERR_SYSTEM, NULL, NTL_NO_OFFSET,
                                 "NtQuerySystemInformation(SystemProcessInformation): "
                                 "NTSTATUS 0x%08lx", (unsigned long)st);
        cap = need > cap && need < SNAPSHOT_MAX ? need + (1u << 16) : cap * 2;
    }
}

static int by_tid(const void *a, const void *b)
{
    uint32_t x = ((const struct win_thread *)a)->tid, y = ((const struct win_thread *)b)->tid;
    return (x > y) - (x < y);
}

/* Copies the threads of the entry at off, which must lie inside size. */
static int take(const uint8_t *buf, size_t size, size_t off, struct win_process *out,
                struct ntl_error *err)
{
    const SYSTEM_PROCESS_INFORMATION *pi = (const void *)(buf + off);
    size_t room = (size - off - sizeof(*pi)) / sizeof(SYSTEM_THREAD_INFORMATION);
    size_t n = pi->NumberOfThreads < room ? pi->NumberOfThreads : room;
    const SYSTEM_THREAD_INFORMATION *ti = (const void *)(pi + 1);
    out->threads = calloc(n ? n : 1, sizeof(*out->threads));
    if (!out->threads)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    for (size_t i = 0; i < n; i++) {
        /* Reserved1 is KernelTime, UserTime, CreateTime in 100 ns units. */
        out->threads[i] = (struct win_thread){
            .tid = (uint32_t)(uintptr_t)ti[i].ClientId.UniqueThread,
            .state = ti[i].ThreadState, .wait_reason = ti[i].WaitReason,
            .kernel_ns = (uint64_t)ti[i].Reserved1[0].QuadPart * 100,
            .user_ns = (uint64_t)ti[i].Reserved1[1].QuadPart * 100,
        };
    }
    out->nthreads = n;
    qsort(out->threads, n, sizeof(*out->threads), by_tid);
    const UNICODE_STRING *u = &pi->ImageName;
    if (u->Buffer && u->Length)
        WideCharToMultiByte(CP_UTF8, 0, u->Buffer, u->Length / 2, out->name,
                            sizeof(out->name) - 1, NULL, NULL);
    return 0;
}

int win_process_snapshot(uint32_t pid, struct win_process *out, struct ntl_error *err)
{
    memset(out, 0, sizeof(*out));
    uint8_t *buf = NULL;
    ULONG size = 0;
    int rc = snapshot(&buf, &size, err);
    if (rc < 0)
        return rc;
    /* Entries chain by NextEntryOffset; each must fit before it is read. */
    size_t off = 0;
    rc = ntl_error_set(err, NTL_ERR_NOT_FOUND, NULL, NTL_NO_OFFSET, "no process %u", pid);
    while (off <= size && size - off >= sizeof(SYSTEM_PROCESS_INFORMATION)) {
        const SYSTEM_PROCESS_INFORMATION *pi = (const void *)(buf + off);
        if ((uint32_t)(uintptr_t)pi->UniqueProcessId == pid) {
            ntl_error_clear(err);
            rc = take(buf, size, off, out, err);
            break;
        }
        if (pi->NextEntryOffset == 0)
            break;
        off += pi->NextEntryOffset;
    }
    free(buf);
    return rc;
}

void win_process_free(struct win_process *p)
{
    free(p->threads);
    p->threads = NULL;
    p->nthreads = 0;
}

const char *win_thread_state_name(uint32_t state)
{
    static const char *const names[] = {
        "Initialized", "Ready", "Running", "Standby", "Terminated", "Waiting",
        "Transition", "DeferredReady", "GateWait", "WaitingForProcessInSwap",
    };
    return state < sizeof(names) / sizeof(*names) ? names[state] : "";
}

const char *win_wait_reason_name(uint32_t reason)
{
    static const char *const names[] = {
        "Executive", "FreePage", "PageIn", "PoolAllocation", "DelayExecution",
        "Suspended", "UserRequest", "WrExecutive", "WrFreePage", "WrPageIn",
        "WrPoolAllocation", "WrDelayExecution", "WrSuspended", "WrUserRequest",
        "WrEventPair", "WrQueue", "WrLpcReceive", "WrLpcReply", "WrVirtualMemory",
        "WrPageOut", "WrRendezvous", "WrKeyedEvent", "WrTerminated", "WrProcessInSwap",
        "WrCpuRateControl", "WrCalloutStack", "WrKernel", "WrResource", "WrPushLock",
        "WrMutex", "WrQuantumEnd", "WrDispatchInt", "WrPreempted", "WrYieldExecution",
        "WrFastMutex", "WrGuardedMutex", "WrRundown", "WrAlertByThreadId",
        "WrDeferredPreempt", "WrPhysicalFault",
    };
    return reason < sizeof(names) / sizeof(*names) ? names[reason] : "";
}
