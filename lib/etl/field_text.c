/* Decoded field values as numbers or text, by in-type and out-type. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ntlens/etl_fields.h"
#include "ntlens/reader.h"
#include "ntlens/utf16.h"

static const char *const in_names[NTL_ETL_IN_COUNT] = {
    "NULL", "UNICODESTRING", "ANSISTRING", "INT8", "UINT8", "INT16", "UINT16", "INT32",
    "UINT32", "INT64", "UINT64", "FLOAT", "DOUBLE", "BOOL32", "BINARY", "GUID", "POINTER",
    "FILETIME", "SYSTEMTIME", "SID", "HEXINT32", "HEXINT64", "COUNTEDSTRING",
    "COUNTEDANSISTRING", "STRUCT", "COUNTEDBINARY",
};

const char *ntl_etl_intype_name(unsigned in_type)
{
    return in_type < NTL_ETL_IN_COUNT ? in_names[in_type] : NULL;
}

const char *ntl_etl_outtype_name(unsigned out_type)
{
    static const char *const names[] = {
        "NULL", "NOPRINT", "STRING", "BOOLEAN", "HEX", "PID", "TID", "PORT", "IPV4", "IPV6",
        "SOCKETADDRESS", "XML", "JSON", "WIN32ERROR", "NTSTATUS", "HRESULT", "FILETIME",
        "SIGNED", "UNSIGNED",
    };
    static const char *const high[] = {"UTF8", "PKCS7_WITH_TYPE_INFO", "CODE_POINTER",
                                       "DATETIME_UTC"};
    if (out_type < sizeof names / sizeof names[0])
        return names[out_type];
    if (out_type >= NTL_ETL_OUT_UTF8 && out_type <= NTL_ETL_OUT_DATETIME_UTC)
        return high[out_type - NTL_ETL_OUT_UTF8];
    return NULL;
}

/* The value as an unsigned integer of its own width (0 for non-integers). */
uint64_t ntl_etl_field_u64(const struct ntl_etl_field *f)
{
    if (f->item != NTL_ETL_ITEM_VALUE || f->custom)
        return 0;
    if (f->out_type == NTL_ETL_OUT_PORT && f->size == 2) /* network byte order */
        return (uint64_t)(f->data[0] << 8 | f->data[1]);
    switch (f->size) {
    case 1: return f->data[0];
    case 2: return ntl_le16(f->data);
    case 4: return ntl_le32(f->data);
    case 8: return ntl_le64(f->data);
    default: return 0;
    }
}

int64_t ntl_etl_field_i64(const struct ntl_etl_field *f)
{
    uint64_t v = ntl_etl_field_u64(f);
    switch (f->size) {
    case 1: return (int8_t)v;
    case 2: return (int16_t)v;
    case 4: return (int32_t)v;
    default: return (int64_t)v;
    }
}

double ntl_etl_field_f64(const struct ntl_etl_field *f)
{
    uint64_t v = ntl_etl_field_u64(f);
    if (f->in_type == NTL_ETL_IN_FLOAT && f->size == 4) {
        uint32_t u = (uint32_t)v;
        float x;
        memcpy(&x, &u, sizeof x);
        return x;
    }
    double x;
    memcpy(&x, &v, sizeof x);
    return x;
}

enum ntl_etl_value_class ntl_etl_field_class(const struct ntl_etl_field *f)
{
    if (f->item != NTL_ETL_ITEM_VALUE || f->custom)
        return NTL_ETL_VALUE_TEXT;
    switch (f->out_type) {
    case NTL_ETL_OUT_HEX: case NTL_ETL_OUT_STRING: case NTL_ETL_OUT_IPV4:
    case NTL_ETL_OUT_WIN32ERROR: case NTL_ETL_OUT_NTSTATUS: case NTL_ETL_OUT_HRESULT:
    case NTL_ETL_OUT_CODE_POINTER: case NTL_ETL_OUT_FILETIME: case NTL_ETL_OUT_DATETIME_UTC:
        return NTL_ETL_VALUE_TEXT;
    case NTL_ETL_OUT_BOOLEAN:
        return f->size <= 4 ? NTL_ETL_VALUE_BOOL : NTL_ETL_VALUE_TEXT;
    default:
        break;
    }
    switch (f->in_type) {
    case NTL_ETL_IN_INT8: case NTL_ETL_IN_INT16: case NTL_ETL_IN_INT32: case NTL_ETL_IN_INT64:
        return f->out_type == NTL_ETL_OUT_UNSIGNED ? NTL_ETL_VALUE_UNSIGNED : NTL_ETL_VALUE_SIGNED;
    case NTL_ETL_IN_UINT8: case NTL_ETL_IN_UINT16: case NTL_ETL_IN_UINT32: case NTL_ETL_IN_UINT64:
        return f->out_type == NTL_ETL_OUT_SIGNED ? NTL_ETL_VALUE_SIGNED : NTL_ETL_VALUE_UNSIGNED;
    case NTL_ETL_IN_FLOAT: case NTL_ETL_IN_DOUBLE:
        return NTL_ETL_VALUE_FLOAT;
    case NTL_ETL_IN_POINTER: /* a pointer-sized count */
        return f->out_type == NTL_ETL_OUT_UNSIGNED ? NTL_ETL_VALUE_UNSIGNED : NTL_ETL_VALUE_TEXT;
    case NTL_ETL_IN_BOOL32:
        return NTL_ETL_VALUE_BOOL;
    default:
        return NTL_ETL_VALUE_TEXT;
    }
}

char *ntl_sid_format(const uint8_t *sid, size_t size, char *buf, size_t bufsize)
{
    if (size < 8 || sid[0] != 1 || size != 8 + 4u * sid[1] || bufsize < 16)
        return NULL;
    uint64_t auth = 0;
    for (int i = 2; i < 8; i++)
        auth = auth << 8 | sid[i];
    size_t n = (size_t)snprintf(buf, bufsize, "S-1-%" PRIu64, auth);
    for (unsigned i = 0; i < sid[1] && n < bufsize; i++)
        n += (size_t)snprintf(buf + n, bufsize - n, "-%" PRIu32, ntl_le32(sid + 8 + 4 * i));
    return n < bufsize ? buf : NULL;
}

static size_t hex_text(const uint8_t *p, size_t n, char *buf, size_t size)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n && 2 * i + 2 < size; i++) {
        buf[2 * i] = digits[p[i] >> 4];
        buf[2 * i + 1] = digits[p[i] & 15];
        buf[2 * i + 2] = '\0';
    }
    if (size && !n)
        buf[0] = '\0';
    return 2 * n;
}

/* An 8-bit string: its bytes as they are (UTF-8 or ANSI), NULs cut. */
static size_t ansi_text(const uint8_t *p, size_t n, char *buf, size_t size)
{
    const uint8_t *nul = memchr(p, 0, n);
    if (nul)
        n = (size_t)(nul - p);
    if (size) {
        size_t k = n < size - 1 ? n : size - 1;
        memcpy(buf, p, k);
        buf[k] = '\0';
    }
    return n;
}

static size_t systemtime_text(const uint8_t *p, char *buf, size_t size)
{
    return (size_t)snprintf(buf, size, "%04u-%02u-%02uT%02u:%02u:%02u.%03u", ntl_le16(p),
                            ntl_le16(p + 2), ntl_le16(p + 6), ntl_le16(p + 8), ntl_le16(p + 10),
                            ntl_le16(p + 12), ntl_le16(p + 14));
}

/* s (n bytes) into buf as snprintf would: truncated, NUL-terminated; returns n. */
static size_t copy_text(const char *s, size_t n, char *buf, size_t size)
{
    if (size) {
        size_t m = n < size - 1 ? n : size - 1;
        memcpy(buf, s, m);
        buf[m] = '\0';
    }
    return n;
}

/* An IPv6 address as snprintf's "%x" a group joined by ':' (no "::")
 * writes it, without snprintf: TcpIp's IPv6 events carry two, and nine
 * snprintf calls each were 1.4% of `etl events` on net.4.5.2.x64.etl. */
static size_t ipv6_text(const uint8_t *p, char *buf, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    char tmp[40];
    size_t n = 0;
    for (int i = 0; i < 16; i += 2) {
        unsigned g = (unsigned)(p[i] << 8 | p[i + 1]);
        int shift = 12;
        while (shift > 0 && !(g >> shift))
            shift -= 4;
        if (i)
            tmp[n++] = ':';
        for (; shift >= 0; shift -= 4)
            tmp[n++] = hex[(g >> shift) & 15];
    }
    return copy_text(tmp, n, buf, size);
}

/* Integers in decimal or as 0x and `digits` hex digits, without printf,
 * whose general machinery costs more than the rest of a field. */
static size_t integer_text(uint64_t v, bool negative, int hex_digits, char *buf, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    char tmp[24], *s = tmp + sizeof tmp;
    int n = 0;
    if (hex_digits) {
        do
            *--s = hex[v & 15], n++;
        while ((v >>= 4) || n < hex_digits);
        *--s = 'x';
        *--s = '0';
    } else {
        do
            *--s = (char)('0' + v % 10);
        while (v /= 10);
        if (negative)
            *--s = '-';
    }
    return copy_text(s, (size_t)(tmp + sizeof tmp - s), buf, size);
}

static size_t number_text(const struct ntl_etl_field *f, char *buf, size_t size)
{
    uint64_t v = ntl_etl_field_u64(f);
    int64_t i;
    if (f->out_type == NTL_ETL_OUT_IPV4 && f->size == 4)
        return (size_t)snprintf(buf, size, "%u.%u.%u.%u", f->data[0], f->data[1], f->data[2],
                                f->data[3]);
    switch (ntl_etl_field_class(f)) {
    case NTL_ETL_VALUE_SIGNED:
        i = ntl_etl_field_i64(f);
        return integer_text(i < 0 ? 0 - (uint64_t)i : (uint64_t)i, i < 0, 0, buf, size);
    case NTL_ETL_VALUE_UNSIGNED: return integer_text(v, false, 0, buf, size);
    case NTL_ETL_VALUE_FLOAT: return (size_t)snprintf(buf, size, "%.17g", ntl_etl_field_f64(f));
    case NTL_ETL_VALUE_BOOL: return (size_t)snprintf(buf, size, "%s", v ? "true" : "false");
    default: break;
    }
    if (f->out_type == NTL_ETL_OUT_STRING && f->size <= 2) /* a CHAR or WCHAR */
        return f->size == 1 ? ansi_text(f->data, 1, buf, size) : ntl_utf16_to_utf8(f->data, 1, buf, size);
    return f->size <= 8 ? integer_text(v, false, (int)(2 * f->size), buf, size)
                        : (size_t)snprintf(buf, size, "0x%0*" PRIx64, (int)(2 * f->size), v);
}

size_t ntl_etl_field_text(const struct ntl_etl_field *f, char *buf, size_t size)
{
    char tmp[200];
    uint64_t v;
    if (size)
        buf[0] = '\0';
    if (f->item != NTL_ETL_ITEM_VALUE)
        return 0;
    if (f->custom)
        return hex_text(f->data, f->size, buf, size);
    switch (f->in_type) {
    case NTL_ETL_IN_NULL:
        return 0;
    case NTL_ETL_IN_UNICODESTRING: case NTL_ETL_IN_COUNTEDSTRING:
        return ntl_utf16_to_utf8(f->data, f->size / 2, buf, size);
    case NTL_ETL_IN_ANSISTRING: case NTL_ETL_IN_COUNTEDANSISTRING:
        return ansi_text(f->data, f->size, buf, size);
    case NTL_ETL_IN_BINARY: case NTL_ETL_IN_COUNTEDBINARY:
        if (f->out_type == NTL_ETL_OUT_IPV6 && f->size == 16)
            return ipv6_text(f->data, buf, size);
        return hex_text(f->data, f->size, buf, size);
    case NTL_ETL_IN_GUID:
        return (size_t)snprintf(buf, size, "%s",
                                ntl_guid_format((const struct ntl_guid *)f->data, tmp, sizeof tmp));
    case NTL_ETL_IN_FILETIME:
        v = ntl_le64(f->data);
        return (size_t)snprintf(buf, size, "%s", ntl_filetime_format(v, tmp, sizeof tmp));
    case NTL_ETL_IN_SYSTEMTIME:
        return systemtime_text(f->data, buf, size);
    case NTL_ETL_IN_SID:
        if (!ntl_sid_format(f->data, f->size, tmp, sizeof tmp))
            return hex_text(f->data, f->size, buf, size);
        return (size_t)snprintf(buf, size, "%s", tmp);
    default:
        return number_text(f, buf, size);
    }
}
