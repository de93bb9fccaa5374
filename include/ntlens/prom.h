/* Prometheus text exposition (format 0.0.4) from parsed performance data.
 *
 * Layers (each usable on its own):
 *   text     - families and samples with names validated and label values
 *              escaped, so no string a server sends can break a page;
 *   generic  - any object and counter of a block as metrics: names from the
 *              object and counter names (sanitised), PDH's raw counter types
 *              as counters or gauges, units scaled to seconds and bytes,
 *              instances as a label (same-named ones kept apart by "#N");
 *   windows  - windows_exporter's metric names, labels and units for its
 *              cpu, memory, logical_disk, physical_disk, net, process,
 *              system and os collectors, so its dashboards work unchanged.
 *
 * Writers append to a caller's ntl_buf; its limit bounds a page (hitting it
 * is NTL_ERR_LIMIT, and the buffer then holds a truncated page the caller
 * must not serve). A family is written once per page: the writers keep its
 * samples together and never repeat a name or a label set. */
#ifndef NTLENS_PROM_H
#define NTLENS_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/buf.h"
#include "ntlens/error.h"
#include "ntlens/perf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Text
 * ------------------------------------------------------------------------ */

enum ntl_prom_type {
    NTL_PROM_GAUGE,
    NTL_PROM_COUNTER,
    NTL_PROM_UNTYPED,
};

struct ntl_prom_label {
    const char *name;   /* [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" */
    const char *value;  /* any bytes; escaped (\\, \", \n) when written */
};

/* True when name is a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*). */
bool ntl_prom_name_valid(const char *name);
/* True when name is a valid label name that is not reserved ("__..."). */
bool ntl_prom_label_name_valid(const char *name);

/* Turns free text into a metric-name fragment: ASCII letters lowercased,
 * digits kept, every other run of bytes one '_', none leading or trailing
 * ("% Disk Read Time" -> "disk_read_time"). Writes at most size bytes with a
 * NUL (size > 0) and returns the length the whole fragment needs, like
 * snprintf. */
size_t ntl_prom_sanitize(const char *text, char *buf, size_t size);

/* Appends "# HELP name help" (help escaped: \\ and \n; NULL or "" writes
 * none) and "# TYPE name type". Returns 0; NTL_ERR_ARGUMENT for an invalid
 * name; NTL_ERR_LIMIT or NTL_ERR_NOMEM from the buffer (err set for all). */
int ntl_prom_family(struct ntl_buf *out, const char *name, const char *help,
                    enum ntl_prom_type type, struct ntl_error *err);

/* Appends one sample "name{a="v",...} value" (no braces without labels).
 * Values print with the fewest digits that read back exactly; NaN and infinities as "NaN",
 * "+Inf", "-Inf". Returns 0; NTL_ERR_ARGUMENT for an invalid metric or label
 * name; NTL_ERR_LIMIT or NTL_ERR_NOMEM from the buffer (err set for all). */
int ntl_prom_sample(struct ntl_buf *out, const char *name, const struct ntl_prom_label *labels,
                    size_t nlabels, double value, struct ntl_error *err);

/* ------------------------------------------------------------------------
 * Performance data
 * ------------------------------------------------------------------------ */

/* What windows_exporter's os collector reads from the registry, as text
 * (numbers in decimal); NULL where the host did not say. Values come from
 * HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion (product ...
 * install_time), HKLM\SYSTEM\CurrentControlSet\Services\Tcpip\Parameters
 * (hostname, domain) and ...\Control\TimeZoneInformation (timezone). */
struct ntl_prom_os_facts {
    const char *product;           /* ProductName */
    const char *installation_type; /* InstallationType */
    const char *major, *minor;     /* CurrentMajor/MinorVersionNumber */
    const char *build;             /* CurrentBuildNumber */
    const char *revision;          /* UBR */
    const char *install_time;      /* InstallDate (Unix seconds) */
    const char *hostname, *domain; /* Hostname, Domain (DNS) */
    const char *timezone;          /* TimeZoneKeyName */
};

/* One page's data. `labels` are constant labels every sample carries (the
 * exporter's "host" for /metrics of several sources, for example); NULL for
 * none. `keep`, when set, chooses the instances written: a sample of an
 * object with instances is written only when keep(keep_arg, object, instance)
 * is true (a module's instance regex). */
struct ntl_prom_page {
    const struct ntl_perf_block *block;
    const struct ntl_perf_titles *titles; /* names of the block's indices */
    const struct ntl_prom_label *labels;  /* added to every sample */
    size_t nlabels;
    bool (*keep)(void *keep_arg, const struct ntl_perf_object *object,
                 const struct ntl_perf_instance *instance);
    void *keep_arg;
    const struct ntl_prom_os_facts *os;   /* the os collector's facts; NULL: none */
};

/* Generic mapping. Names are "<prefix>_<object>_<counter><unit>", object
 * and counter sanitised, "% " and "/sec" dropped from counter names, and
 * <unit> by PDH's raw type:
 *   raw counts (RAWCOUNT, ...)            gauge    ""        the value
 *   rates (COUNTER_COUNTER, BULK_COUNT,
 *     SAMPLE_COUNTER, DELTA)              counter  "_total"  events so far
 *   timers (TIMER, 100NSEC, OBJ_TIME,
 *     PRECISION, MULTI)                   counter  "_seconds_total"
 *   inverse timers (*_INV)                counter  "_inverse_seconds_total"
 *                                                   (the time not busy)
 *   queue lengths (*QUEUELEN*)            counter  "_seconds_total"
 *                                                   (length x time; its rate
 *                                                   is the average length)
 *   RAW_FRACTION, LARGE_RAW_FRACTION      gauge    "_ratio"  value / base
 *   SAMPLE_FRACTION, AVERAGE_BULK         counter  "_total" plus "_base_total"
 *   AVERAGE_TIMER                         counter  "_seconds_total" plus
 *                                                   "_base_total"
 *   ELAPSED_TIME                          gauge    "_seconds" since start
 * Counter names with "KBytes", "MBytes" or "Megabytes" are scaled to bytes
 * and named "bytes". Bases, text, NODATA, histograms and unknown types are
 * left out. Objects with instances label each sample instance="<parent>/
 * <name>#N" (ntl_perf_instance_path_name), as label `instance_label`. A name
 * that two counters would share gets "_<counter index>" appended; a label set
 * an instance repeats (hostile data) is written once. */
struct ntl_prom_generic {
    const char *prefix;          /* NULL: "windows_perf" */
    const char *instance_label;  /* NULL: "perf_instance" */
    uint32_t detail;             /* PERF_DETAIL_* shown; 0: NTL_PERF_DETAIL_WIZARD */
    const uint32_t *objects;     /* object name indices to write; NULL: all */
    size_t nobjects;
};

/* Writes every counter the options select. Returns 0; NTL_ERR_ARGUMENT for an
 * invalid prefix or label name; NTL_ERR_LIMIT or NTL_ERR_NOMEM (err set). */
int ntl_prom_write_generic(const struct ntl_prom_page *page, const struct ntl_prom_generic *opt,
                           struct ntl_buf *out, struct ntl_error *err);

/* windows_exporter's collectors. */
enum ntl_prom_collector {
    NTL_PROM_CPU = 1u << 0,
    NTL_PROM_MEMORY = 1u << 1,
    NTL_PROM_LOGICAL_DISK = 1u << 2,
    NTL_PROM_PHYSICAL_DISK = 1u << 3,
    NTL_PROM_NET = 1u << 4,
    NTL_PROM_PROCESS = 1u << 5,
    NTL_PROM_SYSTEM = 1u << 6,
    NTL_PROM_OS = 1u << 7,
    NTL_PROM_ALL = (1u << 8) - 1,
};

/* The collector named "cpu", "memory", ..., as windows_exporter names it;
 * NTL_ERR_NOT_FOUND (err untouched) for another name. */
int ntl_prom_collector_parse(const char *name, unsigned *collector);
/* "cpu", ... for one collector bit; NULL otherwise. */
const char *ntl_prom_collector_name(unsigned collector);

/* Writes the metrics of the chosen collectors (a mask of enum
 * ntl_prom_collector) that the block's objects carry, with windows_exporter's
 * names, labels and units: counters as totals (100 ns timers in seconds),
 * "_Total" instances left out, processes labelled process and process_id.
 * Objects or counters the block lacks are left out (a Linux or Samba source
 * has no PhysicalDisk).
 *
 * The os collector writes what is really known: windows_os_info (when the
 * facts give product, major, minor and build; revision "0" without UBR, as
 * windows_exporter does, and "Windows 10" renamed "Windows 11" from build
 * 22000 on, as it does), windows_os_hostname, windows_os_timezone,
 * windows_os_install_time_timestamp_seconds from page->os; and from the
 * block windows_exporter's older os metrics: windows_os_time (the block's
 * SystemTime), windows_os_physical_memory_free_bytes (Memory\Available
 * Bytes), windows_os_virtual_memory_bytes (Memory\Commit Limit),
 * windows_os_virtual_memory_free_bytes (Commit Limit - Committed Bytes),
 * windows_os_processes (System\Processes). The others have no remote source
 * (docs/exporter.md). Returns 0; NTL_ERR_ARGUMENT for an invalid page
 * label name; NTL_ERR_LIMIT or NTL_ERR_NOMEM (err set for all). */
int ntl_prom_write_windows(const struct ntl_prom_page *page, unsigned collectors,
                           struct ntl_buf *out, struct ntl_error *err);

#ifdef __cplusplus
}
#endif
#endif
