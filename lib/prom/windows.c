/* windows_exporter's collectors (cpu, memory, logical_disk, physical_disk,
 * net, process, system; os is in os.c) from a block: its metric names, labels and units,
 * taken from its collector docs and sources (internal/collector/<name>/),
 * so its public Grafana dashboards work unchanged. Like windows_exporter we
 * read raw values: 100 ns timers become seconds, Megabytes bytes, and the
 * "_Total" instances are left out. */
#include "ntlens/prom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/perf_value.h"
#include "os.h"
#include "seen.h"

enum conv {
    C_RAW,      /* the value */
    C_100NS,    /* 100 ns units to seconds */
    C_MB,       /* megabytes to bytes */
    C_BASE_MB,  /* the base (the next definition), megabytes to bytes */
    C_FILETIME, /* a start time in 100 ns since 1601 to a Unix timestamp */
    C_TICKS,    /* system ticks to seconds (PerfFreq) */
};

struct row {
    unsigned collector;
    const char *counter;
    const char *metric;
    enum ntl_prom_type type;
    enum conv conv;
    const char *key, *value; /* an extra label (mode="idle"), or NULL */
    const char *help;
};

#define G NTL_PROM_GAUGE
#define C NTL_PROM_COUNTER
static const struct row rows[] = {
    {NTL_PROM_CPU, "% C1 Time", "windows_cpu_cstate_seconds_total", C, C_100NS, "state", "c1",
     "Time spent in low-power idle state."},
    {NTL_PROM_CPU, "% C2 Time", "windows_cpu_cstate_seconds_total", C, C_100NS, "state", "c2", 0},
    {NTL_PROM_CPU, "% C3 Time", "windows_cpu_cstate_seconds_total", C, C_100NS, "state", "c3", 0},
    {NTL_PROM_CPU, "% Idle Time", "windows_cpu_time_total", C, C_100NS, "mode", "idle",
     "Time that processor spent in different modes (dpc, idle, interrupt, privileged, user)"},
    {NTL_PROM_CPU, "% Interrupt Time", "windows_cpu_time_total", C, C_100NS, "mode", "interrupt", 0},
    {NTL_PROM_CPU, "% DPC Time", "windows_cpu_time_total", C, C_100NS, "mode", "dpc", 0},
    {NTL_PROM_CPU, "% Privileged Time", "windows_cpu_time_total", C, C_100NS, "mode", "privileged", 0},
    {NTL_PROM_CPU, "% User Time", "windows_cpu_time_total", C, C_100NS, "mode", "user", 0},
    {NTL_PROM_CPU, "Interrupts/sec", "windows_cpu_interrupts_total", C, C_RAW, 0, 0,
     "Total number of received and serviced hardware interrupts"},
    {NTL_PROM_CPU, "DPCs Queued/sec", "windows_cpu_dpcs_total", C, C_RAW, 0, 0,
     "Total number of received and serviced deferred procedure calls (DPCs)"},
    {NTL_PROM_CPU, "Clock Interrupts/sec", "windows_cpu_clock_interrupts_total", C, C_RAW, 0, 0,
     "Total number of received and serviced clock tick interrupts"},
    {NTL_PROM_CPU, "Idle Break Events/sec", "windows_cpu_idle_break_events_total", C, C_RAW, 0, 0,
     "Total number of time processor was woken from idle"},
    {NTL_PROM_CPU, "Parking Status", "windows_cpu_parking_status", G, C_RAW, 0, 0,
     "Parking Status represents whether a processor is parked or not"},
    {NTL_PROM_CPU, "Processor Frequency", "windows_cpu_core_frequency_mhz", G, C_RAW, 0, 0,
     "Core frequency in megahertz"},

    {NTL_PROM_MEMORY, "Available Bytes", "windows_memory_available_bytes", G, C_RAW, 0, 0,
     "The amount of physical memory immediately available for allocation to a process or for "
     "system use."},
    {NTL_PROM_MEMORY, "Cache Bytes", "windows_memory_cache_bytes", G, C_RAW, 0, 0,
     "Number of bytes currently being used by the file system cache"},
    {NTL_PROM_MEMORY, "Cache Bytes Peak", "windows_memory_cache_bytes_peak", G, C_RAW, 0, 0,
     "Maximum number of CacheBytes after the system was last restarted"},
    {NTL_PROM_MEMORY, "Cache Faults/sec", "windows_memory_cache_faults_total", C, C_RAW, 0, 0,
     "Number of faults which occur when a page sought in the file system cache is not found"},
    {NTL_PROM_MEMORY, "Commit Limit", "windows_memory_commit_limit", G, C_RAW, 0, 0,
     "Amount of virtual memory, in bytes, that can be committed without having to extend the "
     "paging file(s)"},
    {NTL_PROM_MEMORY, "Committed Bytes", "windows_memory_committed_bytes", G, C_RAW, 0, 0,
     "Amount of committed virtual memory, in bytes"},
    {NTL_PROM_MEMORY, "Demand Zero Faults/sec", "windows_memory_demand_zero_faults_total", C, C_RAW,
     0, 0, "The number of zeroed pages required to satisfy faults."},
    {NTL_PROM_MEMORY, "Free & Zero Page List Bytes", "windows_memory_free_and_zero_page_list_bytes",
     G, C_RAW, 0, 0, "Free & Zero Page List Bytes"},
    {NTL_PROM_MEMORY, "Free System Page Table Entries",
     "windows_memory_free_system_page_table_entries", G, C_RAW, 0, 0,
     "Number of page table entries not being used by the system"},
    {NTL_PROM_MEMORY, "Modified Page List Bytes", "windows_memory_modified_page_list_bytes", G,
     C_RAW, 0, 0, "Modified Page List Bytes"},
    {NTL_PROM_MEMORY, "Page Faults/sec", "windows_memory_page_faults_total", C, C_RAW, 0, 0,
     "Overall rate at which faulted pages are handled by the processor"},
    {NTL_PROM_MEMORY, "Page Reads/sec", "windows_memory_swap_page_reads_total", C, C_RAW, 0, 0,
     "Number of disk page reads (a single read operation reading several pages is still only "
     "counted once)"},
    {NTL_PROM_MEMORY, "Pages Input/sec", "windows_memory_swap_pages_read_total", C, C_RAW, 0, 0,
     "Number of pages read across all page reads"},
    {NTL_PROM_MEMORY, "Pages Output/sec", "windows_memory_swap_pages_written_total", C, C_RAW, 0, 0,
     "Number of pages written across all page writes"},
    {NTL_PROM_MEMORY, "Pages/sec", "windows_memory_swap_page_operations_total", C, C_RAW, 0, 0,
     "Total number of swap page read and writes (PagesPersec)"},
    {NTL_PROM_MEMORY, "Page Writes/sec", "windows_memory_swap_page_writes_total", C, C_RAW, 0, 0,
     "Number of disk page writes (a single write operation writing several pages is still only "
     "counted once)"},
    {NTL_PROM_MEMORY, "Pool Nonpaged Allocs", "windows_memory_pool_nonpaged_allocs_total", C, C_RAW,
     0, 0, "The number of calls to allocate space in the nonpaged pool."},
    {NTL_PROM_MEMORY, "Pool Nonpaged Bytes", "windows_memory_pool_nonpaged_bytes", G, C_RAW, 0, 0,
     "Number of bytes in the non-paged pool"},
    {NTL_PROM_MEMORY, "Pool Paged Allocs", "windows_memory_pool_paged_allocs_total", C, C_RAW, 0, 0,
     "Number of calls to allocate space in the paged pool"},
    {NTL_PROM_MEMORY, "Pool Paged Bytes", "windows_memory_pool_paged_bytes", G, C_RAW, 0, 0,
     "Number of bytes in the paged pool"},
    {NTL_PROM_MEMORY, "Pool Paged Resident Bytes", "windows_memory_pool_paged_resident_bytes", G,
     C_RAW, 0, 0, "Pool Paged Resident Bytes"},
    {NTL_PROM_MEMORY, "Standby Cache Core Bytes", "windows_memory_standby_cache_core_bytes", G,
     C_RAW, 0, 0, "Standby Cache Core Bytes"},
    {NTL_PROM_MEMORY, "Standby Cache Normal Priority Bytes",
     "windows_memory_standby_cache_normal_priority_bytes", G, C_RAW, 0, 0,
     "Standby Cache Normal Priority Bytes"},
    {NTL_PROM_MEMORY, "Standby Cache Reserve Bytes", "windows_memory_standby_cache_reserve_bytes",
     G, C_RAW, 0, 0, "Standby Cache Reserve Bytes"},
    {NTL_PROM_MEMORY, "System Cache Resident Bytes", "windows_memory_system_cache_resident_bytes",
     G, C_RAW, 0, 0, "System Cache Resident Bytes"},
    {NTL_PROM_MEMORY, "System Code Resident Bytes", "windows_memory_system_code_resident_bytes", G,
     C_RAW, 0, 0, "System Code Resident Bytes"},
    {NTL_PROM_MEMORY, "System Code Total Bytes", "windows_memory_system_code_total_bytes", G, C_RAW,
     0, 0, "System Code Total Bytes"},
    {NTL_PROM_MEMORY, "System Driver Resident Bytes",
     "windows_memory_system_driver_resident_bytes", G, C_RAW, 0, 0, "System Driver Resident Bytes"},
    {NTL_PROM_MEMORY, "System Driver Total Bytes", "windows_memory_system_driver_total_bytes", G,
     C_RAW, 0, 0, "System Driver Total Bytes"},
    {NTL_PROM_MEMORY, "Transition Faults/sec", "windows_memory_transition_faults_total", C, C_RAW,
     0, 0, "Transition Faults"},
    {NTL_PROM_MEMORY, "Transition Pages RePurposed/sec",
     "windows_memory_transition_pages_repurposed_total", C, C_RAW, 0, 0,
     "Transition Pages RePurposed"},
    {NTL_PROM_MEMORY, "Write Copies/sec", "windows_memory_write_copies_total", C, C_RAW, 0, 0,
     "The number of page faults caused by attempting to write that were satisfied by copying the "
     "page from elsewhere in physical memory"},

#define DISK(bit, prefix)                                                                          \
    {bit, "Current Disk Queue Length", prefix "requests_queued", G, C_RAW, 0, 0,                   \
     "The number of requests queued to the disk"},                                                 \
    {bit, "Disk Read Bytes/sec", prefix "read_bytes_total", C, C_RAW, 0, 0,                         \
     "The number of bytes transferred from the disk during read operations"},                     \
    {bit, "Disk Reads/sec", prefix "reads_total", C, C_RAW, 0, 0,                                  \
     "The number of read operations on the disk"},                                                 \
    {bit, "Disk Write Bytes/sec", prefix "write_bytes_total", C, C_RAW, 0, 0,                       \
     "The number of bytes transferred to the disk during write operations"},                      \
    {bit, "Disk Writes/sec", prefix "writes_total", C, C_RAW, 0, 0,                                \
     "The number of write operations on the disk"},                                                \
    {bit, "% Disk Read Time", prefix "read_seconds_total", C, C_100NS, 0, 0,                       \
     "Seconds that the disk was busy servicing read requests"},                                    \
    {bit, "% Disk Write Time", prefix "write_seconds_total", C, C_100NS, 0, 0,                     \
     "Seconds that the disk was busy servicing write requests"},                                   \
    {bit, "% Idle Time", prefix "idle_seconds_total", C, C_100NS, 0, 0,                            \
     "Seconds that the disk was idle"},                                                            \
    {bit, "Split IO/Sec", prefix "split_ios_total", C, C_RAW, 0, 0,                                \
     "The number of I/Os to the disk were split into multiple I/Os"}
    DISK(NTL_PROM_LOGICAL_DISK, "windows_logical_disk_"),
    {NTL_PROM_LOGICAL_DISK, "Avg. Disk Read Queue Length",
     "windows_logical_disk_avg_read_requests_queued", G, C_100NS, 0, 0,
     "Average number of read requests that were queued for the selected disk during the sample "
     "interval"},
    {NTL_PROM_LOGICAL_DISK, "Avg. Disk Write Queue Length",
     "windows_logical_disk_avg_write_requests_queued", G, C_100NS, 0, 0,
     "Average number of write requests that were queued for the selected disk during the sample "
     "interval"},
    {NTL_PROM_LOGICAL_DISK, "Free Megabytes", "windows_logical_disk_free_bytes", G, C_MB, 0, 0,
     "Free space in bytes"},
    {NTL_PROM_LOGICAL_DISK, "% Free Space", "windows_logical_disk_size_bytes", G, C_BASE_MB, 0, 0,
     "Total space in bytes"},
    {NTL_PROM_LOGICAL_DISK, "Avg. Disk sec/Read", "windows_logical_disk_read_latency_seconds_total",
     C, C_TICKS, 0, 0, "Shows the average time, in seconds, of a read operation from the disk"},
    {NTL_PROM_LOGICAL_DISK, "Avg. Disk sec/Write",
     "windows_logical_disk_write_latency_seconds_total", C, C_TICKS, 0, 0,
     "Shows the average time, in seconds, of a write operation to the disk"},
    {NTL_PROM_LOGICAL_DISK, "Avg. Disk sec/Transfer",
     "windows_logical_disk_read_write_latency_seconds_total", C, C_TICKS, 0, 0,
     "Shows the time, in seconds, of the average disk transfer"},
    DISK(NTL_PROM_PHYSICAL_DISK, "windows_physical_disk_"),
    {NTL_PROM_PHYSICAL_DISK, "Avg. Disk sec/Read",
     "windows_physical_disk_read_latency_seconds_total", C, C_TICKS, 0, 0,
     "The average time, in seconds, of a read operation from the disk"},
    {NTL_PROM_PHYSICAL_DISK, "Avg. Disk sec/Write",
     "windows_physical_disk_write_latency_seconds_total", C, C_TICKS, 0, 0,
     "The average time, in seconds, of a write operation to the disk"},
    {NTL_PROM_PHYSICAL_DISK, "Avg. Disk sec/Transfer",
     "windows_physical_disk_read_write_latency_seconds_total", C, C_TICKS, 0, 0,
     "The time, in seconds, of the average disk transfer"},

    {NTL_PROM_NET, "Bytes Received/sec", "windows_net_bytes_received_total", C, C_RAW, 0, 0,
     "Total bytes received by interface"},
    {NTL_PROM_NET, "Bytes Sent/sec", "windows_net_bytes_sent_total", C, C_RAW, 0, 0,
     "Total bytes transmitted by interface"},
    {NTL_PROM_NET, "Bytes Total/sec", "windows_net_bytes_total", C, C_RAW, 0, 0,
     "Total bytes received and transmitted by interface"},
    {NTL_PROM_NET, "Output Queue Length", "windows_net_output_queue_length_packets", G, C_RAW, 0,
     0, "Length of the output packet queue (in packets)"},
    {NTL_PROM_NET, "Packets Outbound Discarded", "windows_net_packets_outbound_discarded_total", C,
     C_RAW, 0, 0, "Total outbound packets that were chosen to be discarded"},
    {NTL_PROM_NET, "Packets Outbound Errors", "windows_net_packets_outbound_errors_total", C,
     C_RAW, 0, 0, "Total packets that could not be transmitted due to errors"},
    {NTL_PROM_NET, "Packets Received Discarded", "windows_net_packets_received_discarded_total", C,
     C_RAW, 0, 0, "Total inbound packets that were chosen to be discarded"},
    {NTL_PROM_NET, "Packets Received Errors", "windows_net_packets_received_errors_total", C,
     C_RAW, 0, 0, "Total packets that could not be received due to errors"},
    {NTL_PROM_NET, "Packets Received/sec", "windows_net_packets_received_total", C, C_RAW, 0, 0,
     "Total packets received by interface"},
    {NTL_PROM_NET, "Packets Received Unknown", "windows_net_packets_received_unknown_total", C,
     C_RAW, 0, 0, "Total packets received by interface that were discarded because of an unknown "
                  "or unsupported protocol"},
    {NTL_PROM_NET, "Packets/sec", "windows_net_packets_total", C, C_RAW, 0, 0,
     "Total packets received and transmitted by interface"},
    {NTL_PROM_NET, "Packets Sent/sec", "windows_net_packets_sent_total", C, C_RAW, 0, 0,
     "Total packets transmitted by interface"},
    {NTL_PROM_NET, "Current Bandwidth", "windows_net_current_bandwidth_bytes", G, C_RAW, 0, 0,
     "Estimate of the interface's current bandwidth in bytes per second"},

    {NTL_PROM_PROCESS, "Elapsed Time", "windows_process_start_time_seconds_timestamp", G,
     C_FILETIME, 0, 0, "Time of process start."},
    {NTL_PROM_PROCESS, "% Privileged Time", "windows_process_cpu_time_total", C, C_100NS, "mode",
     "privileged", "Returns elapsed time that all of the threads of this process used the "
                   "processor to execute instructions by mode (privileged, user)."},
    {NTL_PROM_PROCESS, "% User Time", "windows_process_cpu_time_total", C, C_100NS, "mode",
     "user", 0},
    {NTL_PROM_PROCESS, "Handle Count", "windows_process_handles", G, C_RAW, 0, 0,
     "Total number of handles the process has open."},
    {NTL_PROM_PROCESS, "IO Other Bytes/sec", "windows_process_io_bytes_total", C, C_RAW, "mode",
     "other", "Bytes issued to I/O operations in different modes (read, write, other)."},
    {NTL_PROM_PROCESS, "IO Read Bytes/sec", "windows_process_io_bytes_total", C, C_RAW, "mode",
     "read", 0},
    {NTL_PROM_PROCESS, "IO Write Bytes/sec", "windows_process_io_bytes_total", C, C_RAW, "mode",
     "write", 0},
    {NTL_PROM_PROCESS, "IO Other Operations/sec", "windows_process_io_operations_total", C, C_RAW,
     "mode", "other", "I/O operations issued in different modes (read, write, other)."},
    {NTL_PROM_PROCESS, "IO Read Operations/sec", "windows_process_io_operations_total", C, C_RAW,
     "mode", "read", 0},
    {NTL_PROM_PROCESS, "IO Write Operations/sec", "windows_process_io_operations_total", C, C_RAW,
     "mode", "write", 0},
    {NTL_PROM_PROCESS, "Page Faults/sec", "windows_process_page_faults_total", C, C_RAW, 0, 0,
     "Page faults by the threads executing in this process."},
    {NTL_PROM_PROCESS, "Page File Bytes", "windows_process_page_file_bytes", G, C_RAW, 0, 0,
     "Current number of bytes this process has used in the paging file(s)."},
    {NTL_PROM_PROCESS, "Pool Nonpaged Bytes", "windows_process_pool_bytes", G, C_RAW, "pool",
     "nonpaged", "Pool Bytes is the last observed number of bytes in the paged or nonpaged pool."},
    {NTL_PROM_PROCESS, "Pool Paged Bytes", "windows_process_pool_bytes", G, C_RAW, "pool", "paged",
     0},
    {NTL_PROM_PROCESS, "Priority Base", "windows_process_priority_base", G, C_RAW, 0, 0,
     "Current base priority of this process."},
    {NTL_PROM_PROCESS, "Private Bytes", "windows_process_private_bytes", G, C_RAW, 0, 0,
     "Current number of bytes this process has allocated that cannot be shared with other "
     "processes."},
    {NTL_PROM_PROCESS, "Thread Count", "windows_process_threads", G, C_RAW, 0, 0,
     "Number of threads currently active in this process."},
    {NTL_PROM_PROCESS, "Virtual Bytes", "windows_process_virtual_bytes", G, C_RAW, 0, 0,
     "Current size, in bytes, of the virtual address space that the process is using."},
    {NTL_PROM_PROCESS, "Working Set - Private", "windows_process_working_set_private_bytes", G,
     C_RAW, 0, 0, "Size of the working set, in bytes, that is use for this process only and not "
                  "shared nor shareable by other processes."},
    {NTL_PROM_PROCESS, "Working Set Peak", "windows_process_working_set_peak_bytes", G, C_RAW, 0,
     0, "Maximum size, in bytes, of the Working Set of the process at any point in time."},
    {NTL_PROM_PROCESS, "Working Set", "windows_process_working_set_bytes", G, C_RAW, 0, 0,
     "Maximum number of bytes in the working set of this process at any point in time."},

    {NTL_PROM_SYSTEM, "Context Switches/sec", "windows_system_context_switches_total", C, C_RAW,
     0, 0, "Total number of context switches (WMI source: PerfOS_System.ContextSwitchesPersec)"},
    {NTL_PROM_SYSTEM, "Exception Dispatches/sec", "windows_system_exception_dispatches_total", C,
     C_RAW, 0, 0, "Total number of exceptions dispatched"},
    {NTL_PROM_SYSTEM, "Processes", "windows_system_processes", G, C_RAW, 0, 0,
     "Current number of processes"},
    {NTL_PROM_SYSTEM, "Processor Queue Length", "windows_system_processor_queue_length", G, C_RAW,
     0, 0, "Length of processor queue"},
    {NTL_PROM_SYSTEM, "System Calls/sec", "windows_system_system_calls_total", C, C_RAW, 0, 0,
     "Total number of system calls"},
    {NTL_PROM_SYSTEM, "Threads", "windows_system_threads", G, C_RAW, 0, 0,
     "Current number of threads"},
    {NTL_PROM_SYSTEM, "System Up Time", "windows_system_boot_time_timestamp", G, C_FILETIME, 0, 0,
     "Unix timestamp of system boot time"},
};
#undef G
#undef C

/* Each collector's object(s), in the order tried, and its instance label. */
static const struct collector {
    unsigned bit;
    const char *name;
    const char *objects[2];
    const char *label;
} collectors[] = {
    {NTL_PROM_CPU, "cpu", {"Processor Information", "Processor"}, "core"},
    {NTL_PROM_MEMORY, "memory", {"Memory", NULL}, NULL},
    {NTL_PROM_LOGICAL_DISK, "logical_disk", {"LogicalDisk", NULL}, "volume"},
    {NTL_PROM_PHYSICAL_DISK, "physical_disk", {"PhysicalDisk", NULL}, "disk"},
    {NTL_PROM_NET, "net", {"Network Interface", NULL}, "nic"},
    {NTL_PROM_PROCESS, "process", {"Process", NULL}, "process"},
    {NTL_PROM_SYSTEM, "system", {"System", NULL}, NULL},
    {NTL_PROM_OS, "os", {NULL, NULL}, NULL}, /* os.c */
};
#define NCOLLECTORS (sizeof collectors / sizeof collectors[0])

int ntl_prom_collector_parse(const char *name, unsigned *collector)
{
    for (size_t i = 0; i < NCOLLECTORS; i++)
        if (strcmp(collectors[i].name, name) == 0) {
            *collector = collectors[i].bit;
            return 0;
        }
    return NTL_ERR_NOT_FOUND;
}

const char *ntl_prom_collector_name(unsigned collector)
{
    for (size_t i = 0; i < NCOLLECTORS; i++)
        if (collectors[i].bit == collector)
            return collectors[i].name;
    return NULL;
}

static bool same(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static const struct ntl_perf_object *find_object(const struct ntl_prom_page *pg,
                                                 const struct collector *col)
{
    const struct ntl_perf_block *b = pg->block;
    for (size_t k = 0; k < 2 && col->objects[k]; k++)
        for (size_t i = 0; i < b->nobjects; i++)
            if (same(ntl_perf_titles_name(pg->titles, b->objects[i].name_index),
                     col->objects[k]))
                return &b->objects[i];
    return NULL;
}

static int find_counter(const struct ntl_prom_page *pg, const struct ntl_perf_object *o,
                        const char *name)
{
    for (size_t c = 0; c < o->ncounters; c++)
        if (same(ntl_perf_titles_name(pg->titles, o->counters[c].name_index), name))
            return (int)c;
    return -1;
}

static bool convert(const struct ntl_perf_raw *r, enum conv conv, double *v)
{
    switch (conv) {
    case C_RAW:
        *v = (double)r->value;
        return true;
    case C_100NS:
        *v = (double)r->value * 1e-7;
        return true;
    case C_MB:
        *v = (double)r->value * 1048576.0;
        return true;
    case C_BASE_MB:
        *v = (double)r->base * 1048576.0;
        return true;
    case C_FILETIME:
        /* 11644473600: seconds from 1601 to 1970 */
        *v = (double)r->value / (double)r->object_freq - 11644473600.0;
        return r->object_freq > 0;
    case C_TICKS:
        *v = (double)r->value / (double)r->perf_freq;
        return r->perf_freq > 0;
    }
    return false;
}

/* One instance's labels: the page's, the instance (process adds its id),
 * the row's mode/state. False for instances windows_exporter leaves out. */
struct labels {
    struct ntl_prom_label *l;
    size_t n;
    struct prom_seen seen; /* metric + label values written (hostile repeats) */
    char name[512], pid[24];
};

static bool instance_labels(const struct ntl_prom_page *pg, const struct collector *col,
                            const struct ntl_perf_object *o, size_t i, int pid_counter,
                            struct labels *ls)
{
    ls->n = pg->nlabels;
    if (!col->label)
        return true;
    /* An object these series need instances of, sent without (a hostile
     * or broken server): no series rather than a read past its instances. */
    if (i >= o->ninstances)
        return false;
    const struct ntl_perf_instance *in = &o->instances[i];
    if (strstr(in->name, "_Total") || (pg->keep && !pg->keep(pg->keep_arg, o, in)))
        return false;
    snprintf(ls->name, sizeof ls->name, "%s", in->name);
    if (col->bit == NTL_PROM_PHYSICAL_DISK)
        ls->name[strcspn(ls->name, " ")] = '\0'; /* "0 C:" is disk="0" */
    ls->l[ls->n++] = (struct ntl_prom_label){col->label, ls->name};
    if (col->bit == NTL_PROM_PROCESS) {
        if (pid_counter < 0)
            return false;
        snprintf(ls->pid, sizeof ls->pid, "%llu",
                 (unsigned long long)ntl_perf_counter_u64(o, (size_t)pid_counter, i));
        ls->l[ls->n++] = (struct ntl_prom_label){"process_id", ls->pid};
    } else if (in->dup_index) {
        /* same-named instances stay distinct series, as PDH names them */
        size_t n = strlen(ls->name);
        snprintf(ls->name + n, sizeof ls->name - n, "#%u", in->dup_index);
    }
    return true;
}

/* 1 when this series is new on the page, 0 when written already. */
static int seen_series(struct labels *ls, const char *metric, struct ntl_error *err)
{
    char key[1200];
    size_t n = 0;
    key[0] = '\0';
    for (size_t i = 0; i < ls->n && n < sizeof key; i++)
        n += (size_t)snprintf(key + n, sizeof key - n, "%s\x1f", ls->l[i].value);
    int rc = prom_seen_add(&ls->seen, metric, key);
    if (rc < 0)
        return ntl_error_set(err, rc, "metrics page", NTL_NO_OFFSET, "out of memory");
    return rc;
}

static int write_row(const struct ntl_prom_page *pg, const struct collector *col,
                     const struct ntl_perf_object *o, const struct row *r, int pid_counter,
                     struct labels *ls, struct ntl_buf *out, struct ntl_error *err)
{
    int c = find_counter(pg, o, r->counter);
    size_t ni = o->counters_block ? 1 : o->ninstances;
    if (c < 0)
        return 0;
    for (size_t i = 0; i < ni; i++) {
        struct ntl_perf_raw raw;
        double v;
        int rc;
        if (!instance_labels(pg, col, o, i, pid_counter, ls) ||
            ntl_perf_raw_get(pg->block, o, (size_t)c, i, &raw, NULL) < 0 ||
            !convert(&raw, r->conv, &v))
            continue;
        if (r->key)
            ls->l[ls->n++] = (struct ntl_prom_label){r->key, r->value};
        if ((rc = seen_series(ls, r->metric, err)) <= 0) {
            if (rc < 0)
                return rc;
            continue;
        }
        if ((rc = ntl_prom_sample(out, r->metric, ls->l, ls->n, v, err)) < 0)
            return rc;
    }
    return 0;
}

/* Rows of one metric are adjacent in the table: the family header is
 * written before the first row whose metric differs from the previous. */
static int write_collector(const struct ntl_prom_page *pg, const struct collector *col,
                           struct labels *ls, struct ntl_buf *out, struct ntl_error *err)
{
    const struct ntl_perf_object *o = find_object(pg, col);
    const char *last = NULL;
    if (!o)
        return 0;
    int pid = find_counter(pg, o, "ID Process");
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        const struct row *r = &rows[k];
        int rc;
        if (r->collector != col->bit || find_counter(pg, o, r->counter) < 0)
            continue;
        if (!same(last, r->metric) &&
            (rc = ntl_prom_family(out, r->metric, r->help, r->type, err)) < 0)
            return rc;
        last = r->metric;
        if ((rc = write_row(pg, col, o, r, pid, ls, out, err)) < 0)
            return rc;
    }
    return 0;
}

int ntl_prom_write_windows(const struct ntl_prom_page *page, unsigned collectors_mask,
                           struct ntl_buf *out, struct ntl_error *err)
{
    struct labels ls;
    int rc = 0;
    ls.l = malloc((page->nlabels + 3) * sizeof *ls.l);
    if (!ls.l)
        return ntl_error_set(err, NTL_ERR_NOMEM, "metrics page", NTL_NO_OFFSET, "out of memory");
    if (page->nlabels)
        memcpy(ls.l, page->labels, page->nlabels * sizeof *ls.l);
    prom_seen_init(&ls.seen);
    for (size_t i = 0; i < NCOLLECTORS && rc >= 0; i++)
        if (collectors_mask & collectors[i].bit)
            rc = collectors[i].bit == NTL_PROM_OS ? prom_write_os(page, out, err)
                                                  : write_collector(page, &collectors[i], &ls,
                                                                    out, err);
    prom_seen_free(&ls.seen);
    free(ls.l);
    return rc;
}
