/* The os collector's registry facts of one target: read over the target's
 * own winreg connection when it connects (they change with an update or a
 * reboot, which also drops the connection), so a scrape still costs one
 * round trip. */
#include <stdio.h>
#include <string.h>

#include "exporter.h"
#include "ntlens/msrpc_source.h"
#include "ntlens/utf16.h"

#define REG_SZ 1
#define REG_EXPAND_SZ 2
#define REG_DWORD 4

#define CURRENT_VERSION "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion"
#define TCPIP "SYSTEM\\CurrentControlSet\\Services\\Tcpip\\Parameters"
#define TIMEZONE "SYSTEM\\CurrentControlSet\\Control\\TimeZoneInformation"

enum slot { PRODUCT, TYPE, MAJOR, MINOR, BUILD, UBR, INSTALL, VERSION, HOST, DOMAIN, ZONE };

static const struct {
    const char *key, *value;
    enum slot slot;
} wanted[] = {
    {CURRENT_VERSION, "ProductName", PRODUCT},
    {CURRENT_VERSION, "InstallationType", TYPE},
    {CURRENT_VERSION, "CurrentMajorVersionNumber", MAJOR},
    {CURRENT_VERSION, "CurrentMinorVersionNumber", MINOR},
    {CURRENT_VERSION, "CurrentBuildNumber", BUILD},
    {CURRENT_VERSION, "UBR", UBR},
    {CURRENT_VERSION, "InstallDate", INSTALL},
    {CURRENT_VERSION, "CurrentVersion", VERSION},
    {TCPIP, "Hostname", HOST},
    {TCPIP, "Domain", DOMAIN},
    {TIMEZONE, "TimeZoneKeyName", ZONE},
};
#define NWANTED (sizeof wanted / sizeof wanted[0])
#define MAX_VALUE 4096

/* A string (trimmed, as windows_exporter trims ProductName) or a DWORD as
 * text; false for another type or no value. */
static bool as_text(const struct ntl_msrpc_reg_value *v, char *dst, size_t size)
{
    const uint8_t *d = v->data.data;
    if ((v->type == REG_SZ || v->type == REG_EXPAND_SZ) && d) {
        size_t units = ntl_utf16_unit_len(d, v->data.len / 2), n, skip;
        ntl_utf16_to_utf8(d, units, dst, size);
        for (n = strlen(dst); n && strchr(" \t\r\n", dst[n - 1]); n--)
            dst[n - 1] = '\0';
        skip = strspn(dst, " \t\r\n");
        memmove(dst, dst + skip, n - skip + 1);
        return true;
    }
    if (v->type == REG_DWORD && v->data.len == 4) {
        snprintf(dst, size, "%lu", (unsigned long)((uint32_t)d[0] | (uint32_t)d[1] << 8 |
                                                   (uint32_t)d[2] << 16 |
                                                   (uint32_t)d[3] << 24));
        return true;
    }
    return false;
}

/* Reads one key's wanted values into os. A key the host lacks, or keeps
 * from this user, leaves its facts unknown; other failures fail. */
static int read_key(struct ntl_source *src, const char *key, struct exp_os *os,
                    bool *known, struct ntl_error *err)
{
    struct ntl_msrpc_reg_value v[NWANTED];
    size_t n = 0;
    int rc;
    for (size_t i = 0; i < NWANTED; i++)
        if (!strcmp(wanted[i].key, key)) {
            v[n].name = wanted[i].value;
            ntl_buf_init(&v[n++].data, MAX_VALUE);
        }
    rc = ntl_msrpc_smb_read_key(src, key, v, n, err);
    for (size_t i = 0, k = 0; i < NWANTED; i++)
        if (!strcmp(wanted[i].key, key)) {
            enum slot s = wanted[i].slot;
            known[s] = rc == 0 && as_text(&v[k], os->text[s], sizeof os->text[s]);
            ntl_buf_free(&v[k++].data);
        }
    if (rc == NTL_ERR_NOT_FOUND || rc == NTL_ERR_ACCESS)
        return 0;
    return rc;
}

int exp_os_read(struct ntl_source *src, struct exp_os *os, struct ntl_error *err)
{
    static const char *const keys[] = {CURRENT_VERSION, TCPIP, TIMEZONE};
    bool known[ZONE + 1] = {0};
    int rc;
    memset(os, 0, sizeof *os);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if ((rc = read_key(src, keys[i], os, known, err)) < 0)
            return rc;
    /* Before Windows 10 the version numbers are CurrentVersion's "6.1" */
    if (!known[MAJOR] && known[VERSION] &&
        sscanf(os->text[VERSION], "%15[0-9].%15[0-9]", os->text[MAJOR], os->text[MINOR]) == 2)
        known[MAJOR] = known[MINOR] = true;
    struct ntl_prom_os_facts *f = &os->facts;
    const char **slots[] = {
        [PRODUCT] = &f->product, [TYPE] = &f->installation_type, [MAJOR] = &f->major,
        [MINOR] = &f->minor,     [BUILD] = &f->build,            [UBR] = &f->revision,
        [INSTALL] = &f->install_time, [HOST] = &f->hostname,     [DOMAIN] = &f->domain,
        [ZONE] = &f->timezone,
    };
    for (size_t s = 0; s <= ZONE; s++)
        if (slots[s] && known[s])
            *slots[s] = os->text[s];
    return 0;
}
