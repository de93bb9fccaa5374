/* windows_exporter's os collector (internal/collector/os/ and, for the
 * metrics it later moved elsewhere, its releases up to 0.29): the facts it
 * reads from the registry come in ntl_prom_os_facts, the rest from the
 * block's Memory and System objects and its SystemTime. Only metrics whose
 * value the host gave are written: nothing stands in for a missing one. */
#include "ntlens/prom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/perf_value.h"
#include "os.h"

/* page labels plus up to seven of the metric's own */
struct os_labels {
    struct ntl_prom_label l[32];
    size_t n;
};

static int one(const struct ntl_prom_page *pg, const char *name, const char *help,
               const struct ntl_prom_label *own, size_t nown, double v, struct ntl_buf *out,
               struct ntl_error *err)
{
    struct os_labels ls;
    int rc;
    if (pg->nlabels + nown > sizeof ls.l / sizeof ls.l[0])
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "metrics page", NTL_NO_OFFSET,
                             "%zu page labels is too many", pg->nlabels);
    ls.n = 0;
    for (size_t i = 0; i < pg->nlabels; i++)
        ls.l[ls.n++] = pg->labels[i];
    for (size_t i = 0; i < nown; i++)
        ls.l[ls.n++] = own[i];
    if ((rc = ntl_prom_family(out, name, help, NTL_PROM_GAUGE, err)) < 0)
        return rc;
    return ntl_prom_sample(out, name, ls.l, ls.n, v, err);
}

/* The raw value of a counter of a single-instance object, by their names. */
static bool counter(const struct ntl_prom_page *pg, const char *object, const char *name,
                    double *v)
{
    const struct ntl_perf_block *b = pg->block;
    for (size_t i = 0; b && i < b->nobjects; i++) {
        const struct ntl_perf_object *o = &b->objects[i];
        const char *on = ntl_perf_titles_name(pg->titles, o->name_index);
        if (!on || strcmp(on, object) != 0 || !o->counters_block)
            continue;
        for (size_t c = 0; c < o->ncounters; c++) {
            const char *cn = ntl_perf_titles_name(pg->titles, o->counters[c].name_index);
            struct ntl_perf_raw r;
            if (cn && strcmp(cn, name) == 0 && ntl_perf_raw_get(b, o, c, 0, &r, NULL) == 0) {
                *v = (double)r.value;
                return true;
            }
        }
    }
    return false;
}

/* SYSTEMTIME (UTC) to Unix seconds; false for a time that is not one. */
static bool unix_time(const struct ntl_perf_systemtime *t, double *v)
{
    if (t->year < 1601 || t->month < 1 || t->month > 12 || t->day < 1 || t->day > 31 ||
        t->hour > 23 || t->minute > 59 || t->second > 60 || t->milliseconds > 999)
        return false;
    /* days from 1970-01-01 (the civil-from-days inverse, years from March) */
    long y = (long)t->year - (t->month <= 2);
    long era = y / 400, yoe = y - era * 400;
    long mp = (long)(t->month + 9) % 12;
    long doy = (153 * mp + 2) / 5 + (long)t->day - 1;
    long days = era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
    *v = (double)days * 86400.0 + t->hour * 3600.0 + t->minute * 60.0 + t->second;
    return true;
}

static int write_info(const struct ntl_prom_page *pg, const struct ntl_prom_os_facts *f,
                      struct ntl_buf *out, struct ntl_error *err)
{
    char product[512], version[128];
    if (!f->product || !f->major || !f->minor || !f->build)
        return 0;
    snprintf(product, sizeof product, "%s", f->product);
    /* Windows 11 keeps "Windows 10" in ProductName; windows_exporter
     * renames it from build 22000 (21H2) on, and so do we. */
    char *ten = strstr(product, " 10 ");
    if (ten && strtoul(f->build, NULL, 10) >= 22000)
        ten[2] = '1';
    snprintf(version, sizeof version, "%s.%s.%s", f->major, f->minor, f->build);
    struct ntl_prom_label l[] = {
        {"product", product},
        {"version", version},
        {"major_version", f->major},
        {"minor_version", f->minor},
        {"build_number", f->build},
        {"revision", f->revision ? f->revision : "0"},
        {"installation_type", f->installation_type ? f->installation_type : ""},
    };
    return one(pg, "windows_os_info",
               "Contains full product name & version in labels. Note that the "
               "\"major_version\" for Windows 11 is \"10\"; a build number greater than 22000 "
               "represents Windows 11.",
               l, sizeof l / sizeof l[0], 1, out, err);
}

static int write_facts(const struct ntl_prom_page *pg, struct ntl_buf *out,
                       struct ntl_error *err)
{
    const struct ntl_prom_os_facts *f = pg->os;
    char fqdn[600];
    int rc;
    if (!f)
        return 0;
    if ((rc = write_info(pg, f, out, err)) < 0)
        return rc;
    if (f->hostname) {
        const char *domain = f->domain ? f->domain : "";
        snprintf(fqdn, sizeof fqdn, "%s%s%s", f->hostname, domain[0] ? "." : "", domain);
        struct ntl_prom_label l[] = {{"domain", domain}, {"fqdn", fqdn},
                                     {"hostname", f->hostname}};
        if ((rc = one(pg, "windows_os_hostname",
                      "Labelled system hostname information as provided by ComputerSystem."
                      "DNSHostName and ComputerSystem.Domain", l, 3, 1, out, err)) < 0)
            return rc;
    }
    if (f->install_time &&
        (rc = one(pg, "windows_os_install_time_timestamp_seconds",
                  "Unix timestamp of OS installation time", NULL, 0,
                  strtod(f->install_time, NULL), out, err)) < 0)
        return rc;
    if (f->timezone) {
        struct ntl_prom_label l = {"timezone", f->timezone};
        if ((rc = one(pg, "windows_os_timezone", "Current timezone as reported by the "
                      "operating system.", &l, 1, 1, out, err)) < 0)
            return rc;
    }
    return 0;
}

int prom_write_os(const struct ntl_prom_page *pg, struct ntl_buf *out, struct ntl_error *err)
{
    double v, limit, committed;
    int rc;
    if ((rc = write_facts(pg, out, err)) < 0)
        return rc;
    if (pg->block && unix_time(&pg->block->system_time, &v) &&
        (rc = one(pg, "windows_os_time", "Current time as reported by the operating system, "
                  "in Unix time.", NULL, 0, v, out, err)) < 0)
        return rc;
    if (counter(pg, "Memory", "Available Bytes", &v) &&
        (rc = one(pg, "windows_os_physical_memory_free_bytes",
                  "Bytes of physical memory currently unused and available", NULL, 0, v, out,
                  err)) < 0)
        return rc;
    if (counter(pg, "Memory", "Commit Limit", &limit)) {
        if ((rc = one(pg, "windows_os_virtual_memory_bytes", "Bytes of virtual memory", NULL,
                      0, limit, out, err)) < 0)
            return rc;
        if (counter(pg, "Memory", "Committed Bytes", &committed) &&
            (rc = one(pg, "windows_os_virtual_memory_free_bytes",
                      "Bytes of virtual memory currently unused and available", NULL, 0,
                      limit - committed, out, err)) < 0)
            return rc;
    }
    if (counter(pg, "System", "Processes", &v) &&
        (rc = one(pg, "windows_os_processes", "Number of process contexts currently loaded or "
                  "running on the operating system", NULL, 0, v, out, err)) < 0)
        return rc;
    return 0;
}
