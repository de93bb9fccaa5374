/* TraceLogging decoding: every field of every event of the shared
 * TraceLogging traces, then events built here for the in-types those traces
 * lack and for schemas that lie. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "ntlens/etl.h"
#include "ntlens/etl_fields.h"
#include "ntlens/reader.h"

/* The fields of one event as "name:INTYPE=text" joined by '|', with
 * "{"/"}" and "["/"]" for structs and arrays. */
static int fields_text(const struct ntl_etl_event *ev, char *out, size_t size, const char **evname,
                       const char **provider, struct ntl_error *err)
{
    struct ntl_etl_tl d;
    struct ntl_etl_field f;
    size_t n = 0;
    int rc = ntl_etl_tl_begin(&d, ev, err);
    out[0] = '\0';
    if (rc <= 0)
        return rc;
    *evname = d.event_name;
    *provider = d.provider_name;
    while ((rc = ntl_etl_tl_next(&d, &f, err)) > 0) {
        if (n >= size - 1)
            continue; /* decode to the end all the same: its status counts */
        char v[256];
        ntl_etl_field_text(&f, v, sizeof v);
        switch (f.item) {
        case NTL_ETL_ITEM_VALUE:
            n += (size_t)snprintf(out + n, size - n, "%s%s:%s=%s", n ? "|" : "", f.name,
                                  ntl_etl_intype_name(f.in_type), v);
            break;
        case NTL_ETL_ITEM_STRUCT_BEGIN: n += (size_t)snprintf(out + n, size - n, "|%s{", f.name); break;
        case NTL_ETL_ITEM_STRUCT_END: n += (size_t)snprintf(out + n, size - n, "|}"); break;
        case NTL_ETL_ITEM_ARRAY_BEGIN:
            n += (size_t)snprintf(out + n, size - n, "|%s[%u", f.name, f.count);
            break;
        case NTL_ETL_ITEM_ARRAY_END: n += (size_t)snprintf(out + n, size - n, "|]"); break;
        }
    }
    return rc < 0 ? rc : 1;
}

/* ---- the shared traces ---- */

static const char *const primitive_types[] = {
    "string_type:ANSISTRING=Mercury|boolean_type:UINT8=false|char_type:UINT8=M|"
    "int16_type:INT16=-51|int32_type:INT32=-102|uint16_type:UINT16=51|uint32_type:UINT32=102|"
    "int64_type:UINT64=18446744073709551412|uint64_type:UINT64=204|"
    "guid_type:GUID=0ad614c4-0ef4-4225-8013-f44f37cb0397|"
    "file_time_type:FILETIME=2021-09-09T14:59:35.7990000Z|"
    "system_time_type:SYSTEMTIME=2021-09-09T14:59:35.799",
    "string_type:ANSISTRING=Venus|boolean_type:UINT8=true|char_type:UINT8=V|"
    "int16_type:INT16=-95|int32_type:INT32=-190|uint16_type:UINT16=95|uint32_type:UINT32=190|"
    "int64_type:UINT64=18446744073709551236|uint64_type:UINT64=380|"
    "guid_type:GUID=e04ff801-9ea3-494f-a10e-8ef833e9099f|"
    "file_time_type:FILETIME=2021-09-09T14:59:36.2390000Z|"
    "system_time_type:SYSTEMTIME=2021-09-09T14:59:36.239",
    "string_type:ANSISTRING=Earth|boolean_type:UINT8=false|char_type:UINT8=E|"
    "int16_type:INT16=-65|int32_type:INT32=-130|uint16_type:UINT16=65|uint32_type:UINT32=130|"
    "int64_type:UINT64=18446744073709551356|uint64_type:UINT64=260|"
    "guid_type:GUID=c7a6c80e-f2a6-4220-ab98-d7c21a58f9fb|"
    "file_time_type:FILETIME=2021-09-09T14:59:36.6710000Z|"
    "system_time_type:SYSTEMTIME=2021-09-09T14:59:36.671",
    "string_type:ANSISTRING=Mars|boolean_type:UINT8=false|char_type:UINT8=M|"
    "int16_type:INT16=-29|int32_type:INT32=-58|uint16_type:UINT16=29|uint32_type:UINT32=58|"
    "int64_type:UINT64=18446744073709551500|uint64_type:UINT64=116|"
    "guid_type:GUID=0a922cee-67c1-4108-b39d-b132e47033c4|"
    "file_time_type:FILETIME=2021-09-09T14:59:37.0480000Z|"
    "system_time_type:SYSTEMTIME=2021-09-09T14:59:37.048",
    "string_type:ANSISTRING=Jupiter|boolean_type:UINT8=true|char_type:UINT8=J|"
    "int16_type:INT16=-69|int32_type:INT32=-138|uint16_type:UINT16=69|uint32_type:UINT32=138|"
    "int64_type:UINT64=18446744073709551340|uint64_type:UINT64=276|"
    "guid_type:GUID=bb11b97b-1110-4eb6-bc33-fd71219d322e|"
    "file_time_type:FILETIME=2021-09-09T14:59:37.4840000Z|"
    "system_time_type:SYSTEMTIME=2021-09-09T14:59:37.484",
};

static const char *const self_describing[] = {
    "|a{|b:UNICODESTRING=Hello|c:UNICODESTRING=World!|}",
};

static void check_trace(const char *file, const char *provider, const char *event,
                        const char *const *want, size_t n_want)
{
    struct ntl_etl *t;
    struct ntl_error err = {0};
    struct ntl_etl_event ev;
    size_t seen = 0;
    int rc;
    CHECK_EQ_INT(ntl_etl_open_file(check_data_path(file), NULL, &t, &err), 0);
    if (err.status)
        return;
    while ((rc = ntl_etl_next(t, &ev, &err)) > 0) {
        char text[2048];
        const char *name = NULL, *prov = NULL;
        rc = fields_text(&ev, text, sizeof text, &name, &prov, &err);
        CHECK(rc >= 0);
        if (rc <= 0)
            continue;
        CHECK(seen < n_want);
        if (seen < n_want)
            CHECK_EQ_STR(text, want[seen]);
        CHECK_EQ_STR(name, event);
        CHECK_EQ_STR(prov ? prov : "", provider);
        seen++;
    }
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_U64(seen, n_want);
    ntl_etl_close(t);
}

/* ---- events built here ---- */

struct built {
    uint8_t ext[512];
    uint8_t payload[512];
    struct ntl_etl_event ev;
};

/* One SCHEMA_TL item holding meta (its UINT16 size prepended), then traits. */
static void build(struct built *b, const void *meta, size_t meta_n, const void *pay, size_t pay_n)
{
    static const uint8_t traits[] = {9, 0, 'm', 'y', 'p', 'r', 'o', 'v', 0, 0};
    size_t item = (8 + 2 + meta_n + 7) & ~(size_t)7;
    memset(b, 0, sizeof *b);
    ntl_put_le16(b->ext + 2, NTL_ETL_EXT_EVENT_SCHEMA_TL);
    ntl_put_le16(b->ext + 4, 1);
    ntl_put_le16(b->ext + 6, (uint16_t)(2 + meta_n));
    ntl_put_le16(b->ext + 8, (uint16_t)(2 + meta_n));
    memcpy(b->ext + 10, meta, meta_n);
    ntl_put_le16(b->ext + item + 2, NTL_ETL_EXT_PROV_TRAITS);
    ntl_put_le16(b->ext + item + 6, sizeof traits);
    memcpy(b->ext + item + 8, traits, sizeof traits);
    memcpy(b->payload, pay, pay_n);
    b->ev.kind = NTL_ETL_KIND_EVENT;
    b->ev.is64 = true;
    b->ev.ext = b->ext;
    b->ev.ext_size = item + 8 + sizeof traits;
    b->ev.payload = b->payload;
    b->ev.payload_size = pay_n;
}

#define M(s) s, sizeof(s) - 1

static void test_every_intype(void)
{
    /* ev\0 then fields: name\0 intype [outtype [tag...]] [ccount] */
    static const char meta[] =
        "\0ev\0"
        "w\0\x01" "n\0\x00" "i8\0\x03" "f\0\x0b" "d\0\x0c" "b\0\x0d" "bin\0\x0e"
        "p\0\x10" "s\0\x13" "h\0\x14" "h64\0\x15" "cs\0\x16" "ca\0\x17" "cb\0\x19"
        "ip\0\x88\x08" "port\0\x86\x07" "hx\0\x88\x84\x81\x01" "arr\0\x46" "cc\0\x23\x02\x00"
        "st\0\x98\x02" "x\0\x04" "y\0\x44" "sa\0\xd8\x01" "z\0\x03";
    static const uint8_t pay[] = {
        'h', 0, 'i', 0, 0, 0,                    /* w */
        0xfe,                                    /* i8 -2 */
        0, 0, 0xc0, 0x3f,                        /* f 1.5 */
        0, 0, 0, 0, 0, 0, 0x04, 0xc0,            /* d -2.5 */
        1, 0, 0, 0,                              /* b */
        2, 0, 0xab, 0xcd,                        /* bin */
        1, 2, 3, 4, 5, 6, 7, 8,                  /* p */
        1, 2, 0, 0, 0, 0, 0, 5, 32, 0, 0, 0, 0x20, 2, 0, 0, /* S-1-5-32-544 */
        0xef, 0xbe, 0xad, 0xde,                  /* h */
        1, 0, 0, 0, 0, 0, 0, 0,                  /* h64 */
        4, 0, 'o', 0, 'k', 0,                    /* cs */
        2, 0, 'a', 'b',                          /* ca */
        1, 0, 0xff,                              /* cb */
        10, 0, 0, 1,                             /* ip */
        0x01, 0xbb,                              /* port 443 */
        7, 0, 0, 0,                              /* hx */
        2, 0, 5, 0, 6, 0,                        /* arr: 2 x UINT16 */
        9, 8,                                    /* cc: 2 x INT8 */
        3, 1, 0, 4,                              /* st { x, y[1] } */
        2, 0, 7, 8,                              /* sa: 2 x { z } */
    };
    struct built b;
    char text[2048];
    const char *name = NULL, *prov = NULL;
    struct ntl_error err = {0};
    build(&b, M(meta), pay, sizeof pay);
    CHECK_EQ_INT(fields_text(&b.ev, text, sizeof text, &name, &prov, &err), 1);
    CHECK_EQ_STR(err.message, "");
    CHECK_EQ_STR(name, "ev");
    CHECK_EQ_STR(prov, "myprov");
    CHECK_EQ_STR(text, "w:UNICODESTRING=hi|n:NULL=|i8:INT8=-2|f:FLOAT=1.5|d:DOUBLE=-2.5|"
                       "b:BOOL32=true|bin:BINARY=abcd|p:POINTER=0x0807060504030201|"
                       "s:SID=S-1-5-32-544|h:HEXINT32=0xdeadbeef|h64:HEXINT64=0x0000000000000001|"
                       "cs:COUNTEDSTRING=ok|ca:COUNTEDANSISTRING=ab|cb:COUNTEDBINARY=ff|"
                       "ip:UINT32=10.0.0.1|port:UINT16=443|hx:UINT32=0x00000007"
                       "|arr[2|arr:UINT16=5|arr:UINT16=6|]|cc[2|cc:INT8=9|cc:INT8=8|]"
                       "|st{|x:UINT8=3|y[1|y:UINT8=4|]|}|sa[2|sa{|z:INT8=7|}|sa{|z:INT8=8|}|]");
}

/* IPv6 addresses as "%x" groups would print them: no leading zeros, a
 * zero group as "0", no "::"; cut as snprintf cuts, the full length returned. */
static void test_ipv6(void)
{
    static const uint8_t a[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
                                  0, 0x0f, 0xff, 0, 0x10, 0x00, 0xab, 0xcd};
    static const uint8_t ff[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    struct ntl_etl_field f = {.item = NTL_ETL_ITEM_VALUE, .in_type = NTL_ETL_IN_BINARY,
                              .out_type = NTL_ETL_OUT_IPV6, .size = 16, .data = a};
    char buf[64];
    CHECK_EQ_INT(ntl_etl_field_text(&f, buf, sizeof buf), 29);
    CHECK_EQ_STR(buf, "2001:db8:0:0:f:ff00:1000:abcd");
    CHECK_EQ_INT(ntl_etl_field_text(&f, buf, 10), 29);
    CHECK_EQ_STR(buf, "2001:db8:");
    f.data = ff;
    CHECK_EQ_INT(ntl_etl_field_text(&f, buf, sizeof buf), 39);
    CHECK_EQ_STR(buf, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
    uint8_t z[16] = {0};
    f.data = z;
    ntl_etl_field_text(&f, buf, sizeof buf);
    CHECK_EQ_STR(buf, "0:0:0:0:0:0:0:0");
}

static int decode_status(const void *meta, size_t meta_n, const void *pay, size_t pay_n)
{
    struct built b;
    char text[4096];
    const char *name, *prov;
    struct ntl_error err = {0};
    build(&b, meta, meta_n, pay, pay_n);
    int rc = fields_text(&b.ev, text, sizeof text, &name, &prov, &err);
    CHECK(rc >= 0 || err.status == rc);
    return rc;
}

static void test_lies(void)
{
    /* A value past the payload, a count past it, bytes left after the last field. */
    CHECK_EQ_INT(decode_status(M("\0e\0a\0\x08"), "\1\2", 2), NTL_ERR_TRUNCATED);
    CHECK_EQ_INT(decode_status(M("\0e\0a\0\x01"), "a\0b\0", 4), NTL_ERR_TRUNCATED);
    CHECK_EQ_INT(decode_status(M("\0e\0a\0\x44"), "\xff", 1), NTL_ERR_TRUNCATED);
    CHECK_EQ_INT(decode_status(M("\0e\0a\0\x0e"), "\x09\0\1", 3), NTL_ERR_TRUNCATED);
    CHECK_EQ_INT(decode_status(M("\0e\0a\0\x04"), "\1\2", 2), NTL_ERR_FORMAT);
    /* An unknown in-type, a schema that ends inside a field, a struct whose
     * members are missing, a bad tag. */
    CHECK_EQ_INT(decode_status(M("\0e\0a\0\x1f"), "", 0), NTL_ERR_FORMAT);
    CHECK_EQ_INT(decode_status(M("\0e\0a\0\x23\x05"), "", 0), NTL_ERR_TRUNCATED);
    CHECK_EQ_INT(decode_status(M("\0e\0s\0\x98\x03" "a\0\x04"), "\1", 1), NTL_ERR_TRUNCATED);
    CHECK_EQ_INT(decode_status(M("\0e\0a\0\x84\x80\x80\x80\x80\x80"), "\1", 1), NTL_ERR_FORMAT);
    /* Structs nested without end. */
    char deep[256];
    size_t n = 0;
    deep[n++] = 0, deep[n++] = 'e', deep[n++] = 0;
    for (int i = 0; i < 40; i++)
        deep[n++] = 's', deep[n++] = 0, deep[n++] = (char)0x98, deep[n++] = 1;
    deep[n++] = 'a', deep[n++] = 0, deep[n++] = 4;
    CHECK_EQ_INT(decode_status(deep, n, "\1", 1), NTL_ERR_LIMIT);
    /* 65535 x 65535 empty structs cost no payload: bounded by the item cap. */
    CHECK_EQ_INT(decode_status(M("\0e\0o\0\xb8\x01\xff\xff" "i\0\xb8\x01\xff\xff" "z\0\x00"), "", 0),
                 NTL_ERR_LIMIT);
    /* The schema's own size larger than its item. */
    struct built b;
    struct ntl_etl_tl d;
    struct ntl_error err = {0};
    build(&b, M("\0e\0"), "", 0);
    ntl_put_le16(b.ext + 8, 200);
    CHECK_EQ_INT(ntl_etl_tl_begin(&d, &b.ev, &err), NTL_ERR_FORMAT);
    /* No schema item: not a TraceLogging event. */
    b.ev.ext = NULL;
    CHECK_EQ_INT(ntl_etl_tl_begin(&d, &b.ev, &err), 0);
}

int main(void)
{
    check_trace("etl/primitive-types.etl", "solar_system", "PrimitiveTypesTest", primitive_types,
                sizeof primitive_types / sizeof primitive_types[0]);
    check_trace("etl/SelfDescribingSingleEvent.etl", "MySource", "TestEvent", self_describing,
                sizeof self_describing / sizeof self_describing[0]);
    test_every_intype();
    test_lies();
    test_ipv6();
    return check_exit();
}
