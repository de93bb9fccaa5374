/* The built-in provider's title database: Windows' English names for the
 * standard indices it fills, and help texts that say what each value means
 * on the host that produced it (docs/linux-provider.md maps each to /proc). */
#include <stdlib.h>

#include "ntlens/perf_build.h"
#include "provider.h"

struct lp_title {
    uint32_t index;
    const char *name;
    const char *help;
};

static const struct lp_title lp_title_table[] = {
    {LP_OBJ_SYSTEM, "System",
     "The System performance object consists of counters that apply to the computer as a "
     "whole rather than to one of its components."},
    {LP_OBJ_MEMORY, "Memory",
     "The Memory performance object consists of counters that describe the behavior of physical "
     "and virtual memory on the computer."},
    {LP_PCT_PROCESSOR_TIME, "% Processor Time",
     "% Processor Time is the percentage of elapsed time that the processor spends to execute a "
     "non-Idle thread. For a process or thread it is the percentage of elapsed time that all of "
     "its threads used the processor to execute instructions, in user and privileged mode."},
    {LP_AVAILABLE_BYTES, "Available Bytes",
     "Available Bytes is the amount of physical memory, in bytes, immediately available for "
     "allocation to a process or for system use (MemAvailable)."},
    {LP_COMMITTED_BYTES, "Committed Bytes",
     "Committed Bytes is the amount of committed virtual memory, in bytes (Committed_AS)."},
    {LP_PAGE_FAULTS_SEC, "Page Faults/sec",
     "Page Faults/sec is the average number of pages faulted per second, minor and major "
     "faults together. This counter displays the difference between the values observed in "
     "the last two samples, divided by the duration of the sample interval."},
    {LP_COMMIT_LIMIT, "Commit Limit",
     "Commit Limit is the amount of virtual memory, in bytes, that can be committed without "
     "having to extend the paging files (CommitLimit)."},
    {LP_PROCESSOR_QUEUE_LENGTH, "Processor Queue Length",
     "Processor Queue Length is the number of threads that are ready to run but are not "
     "running, because every processor is busy. This counter displays the last observed value "
     "only; it is not an average."},
    {LP_THREAD_STATE, "Thread State",
     "Thread State is the current state of the thread. It is 0 for Initialized, 1 for Ready, 2 "
     "for Running, 3 for Standby, 4 for Terminated, 5 for Wait, 6 for Transition, 7 for "
     "Unknown. A Running thread is using a processor or is runnable; a waiting thread is "
     "sleeping or stopped."},
    {LP_POOL_PAGED_BYTES, "Pool Paged Bytes",
     "Pool Paged Bytes is the size, in bytes, of kernel memory that can be reclaimed under "
     "memory pressure (reclaimable slab)."},
    {LP_POOL_NONPAGED_BYTES, "Pool Nonpaged Bytes",
     "Pool Nonpaged Bytes is the size, in bytes, of kernel memory that cannot be paged out or "
     "reclaimed: for the system, unreclaimable slab; for a process, its page tables."},
    {LP_CACHE_BYTES, "Cache Bytes",
     "Cache Bytes is the size, in bytes, of the file system cache (the page cache)."},
    {LP_PCT_USER_TIME, "% User Time",
     "% User Time is the percentage of elapsed time spent in user mode, including time at "
     "reduced priority (nice)."},
    {LP_PCT_PRIVILEGED_TIME, "% Privileged Time",
     "% Privileged Time is the percentage of elapsed time spent in privileged (kernel) mode "
     "executing system calls and kernel code on behalf of the process or thread."},
    {LP_CONTEXT_SWITCHES_SEC, "Context Switches/sec",
     "Context Switches/sec is the rate at which processors switch from one thread to another "
     "(for a thread: the rate at which it is switched onto a processor)."},
    {LP_INTERRUPTS_SEC, "Interrupts/sec",
     "Interrupts/sec is the average rate, in incidents per second, at which the processor "
     "received and serviced hardware interrupts."},
    {LP_VIRTUAL_BYTES_PEAK, "Virtual Bytes Peak",
     "Virtual Bytes Peak is the maximum size, in bytes, of virtual address space the process "
     "has used at any one time (VmPeak)."},
    {LP_VIRTUAL_BYTES, "Virtual Bytes",
     "Virtual Bytes is the current size, in bytes, of the virtual address space the process is "
     "using (VmSize)."},
    {LP_WORKING_SET_PEAK, "Working Set Peak",
     "Working Set Peak is the maximum size, in bytes, of the Working Set of this process at any "
     "point in time (VmHWM)."},
    {LP_WORKING_SET, "Working Set",
     "Working Set is the current size, in bytes, of the Working Set of this process: the pages "
     "it has resident in physical memory (VmRSS)."},
    {LP_PAGE_FILE_BYTES, "Page File Bytes",
     "Page File Bytes is the current amount of virtual memory, in bytes, that this process has "
     "reserved for use in the paging files; as on Windows, it equals Private Bytes."},
    {LP_PRIVATE_BYTES, "Private Bytes",
     "Private Bytes is the current size, in bytes, of memory that this process has allocated "
     "that cannot be shared with other processes: its anonymous resident pages plus what it "
     "has in swap (RssAnon + VmSwap)."},
    {LP_PROCESSES, "Processes",
     "Processes is the number of processes in the computer at the time of data collection."},
    {LP_THREADS, "Threads",
     "Threads is the number of threads in the computer at the time of data collection."},
    {LP_OBJ_PROCESS, "Process",
     "The Process performance object consists of counters that monitor running application "
     "program and system processes. All the threads in a process share the same address "
     "space and have access to the same data."},
    {LP_OBJ_THREAD, "Thread",
     "The Thread performance object consists of counters that measure aspects of thread "
     "behavior. A thread is the basic object that executes instructions on a processor. "
     "Thread instances are named by their number within their process."},
    {LP_OBJ_PROCESSOR, "Processor",
     "The Processor performance object consists of counters that measure aspects of processor "
     "activity. Each processor is an instance; _Total is their average."},
    {LP_THREAD_WAIT_REASON, "Thread Wait Reason",
     "Thread Wait Reason is only applicable when the thread is in the Wait state. It is 0 "
     "(Executive) for an uninterruptible sleep, 5 (Suspended) for a stopped thread and 6 "
     "(UserRequest) for an interruptible sleep."},
    {LP_SYSTEM_UP_TIME, "System Up Time",
     "System Up Time is the elapsed time (in seconds) that the computer has been running since "
     "it was last started."},
    {LP_THREAD_COUNT, "Thread Count",
     "The number of threads currently active in this process."},
    {LP_PRIORITY_BASE, "Priority Base",
     "The current base priority of this process or thread, on Windows' scale: 4 idle, 6 below "
     "normal, 8 normal, 10 above normal, 13 high (from the nice value), 16 to 31 for "
     "real-time scheduling."},
    {LP_ELAPSED_TIME, "Elapsed Time",
     "The total elapsed time, in seconds, that this process or thread has been running."},
    {LP_PRIORITY_CURRENT, "Priority Current",
     "The current dynamic priority of this thread, on the same scale as Priority Base."},
    {LP_PCT_DPC_TIME, "% DPC Time",
     "% DPC Time is the percentage of time that the processor spent handling deferred work "
     "(softirqs) during the sample interval."},
    {LP_PCT_INTERRUPT_TIME, "% Interrupt Time",
     "% Interrupt Time is the percentage of time the processor spent receiving and servicing "
     "hardware interrupts during the sample interval."},
    {LP_ID_PROCESS, "ID Process",
     "ID Process is the unique identifier of this process. ID Process numbers are reused, so "
     "they only identify a process for the lifetime of that process."},
    {LP_ID_THREAD, "ID Thread",
     "ID Thread is the unique identifier of this thread. ID Thread numbers are reused, so they "
     "only identify a thread for the lifetime of that thread."},
    {LP_HANDLE_COUNT, "Handle Count",
     "The total number of handles currently open by this process: its open file descriptors "
     "(0 when they cannot be counted)."},
    {LP_AVAILABLE_KBYTES, "Available KBytes",
     "Available KBytes is the amount of physical memory, in Kilobytes, immediately available "
     "for allocation to a process or for system use."},
    {LP_AVAILABLE_MBYTES, "Available MBytes",
     "Available MBytes is the amount of physical memory, in Megabytes, immediately available "
     "for allocation to a process or for system use."},
    {LP_CREATING_PROCESS_ID, "Creating Process ID",
     "The Creating Process ID value is the Process ID of the process that created the process "
     "(its parent)."},
    {LP_PCT_IDLE_TIME, "% Idle Time",
     "% Idle Time is the percentage of time the processor is idle during the sample interval."},
};

static int by_index(const void *a, const void *b)
{
    uint32_t x = ((const struct ntl_perf_title *)a)->index, y = ((const struct ntl_perf_title *)b)->index;
    return x < y ? -1 : x > y;
}

int lp_titles(int help, struct ntl_buf *out, struct ntl_error *err)
{
    enum { N = sizeof lp_title_table / sizeof lp_title_table[0] };
    struct ntl_perf_title t[N];

    for (size_t i = 0; i < N; i++) {
        t[i].index = lp_title_table[i].index + (help ? 1 : 0);
        t[i].text = help ? lp_title_table[i].help : lp_title_table[i].name;
    }
    qsort(t, N, sizeof t[0], by_index); /* Windows answers in increasing index order */
    return ntl_perf_build_titles(out, t, N, help ? 0 : LP_LAST_INDEX, err);
}
