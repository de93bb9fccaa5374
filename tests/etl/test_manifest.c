/* Manifest decoding on a manifest written here (every construct the reader
 * takes: tasks and opcodes, value and bitmap maps with string-table
 * messages, lengths and counts from other fields, counted structs, nested
 * structs) and on manifests and payloads that lie; the same manifest
 * compiled (WEVT_TEMPLATE). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ntlens/buf.h"
#include "ntlens/etl.h"
#include "ntlens/etl_fields.h"
#include "ntlens/etl_manifest.h"
#include "ntlens/reader.h"

static const char manifest[] =
    "<?xml version=\"1.0\"?>\n"
    "<instrumentationManifest xmlns=\"http://schemas.microsoft.com/win/2004/08/events\">\n"
    "<instrumentation><events>\n"
    "<!-- a comment with <tags> in it -->\n"
    "<provider name=\"Test-Provider\" guid=\"{11111111-2222-3333-4444-555555555555}\" symbol=\"P\">\n"
    " <tasks><task name=\"Work\" value=\"1\"><opcodes><opcode name=\"Step\" value=\"10\"/></opcodes></task></tasks>\n"
    " <maps>\n"
    "  <valueMap name=\"Color\"><map value=\"0\" message=\"$(string.red)\"/><map value=\"1\" message=\"Green &amp; &#x42;lue\"/></valueMap>\n"
    "  <bitMap name=\"Flags\"><map value=\"0x1\" message=\"A\"/><map value=\"0x4\" message=\"C\"/></bitMap>\n"
    " </maps>\n"
    " <templates>\n"
    "  <template tid=\"T1\">\n"
    "   <data name=\"Size\" inType=\"win:UInt16\"/>\n"
    "   <data name=\"Blob\" inType=\"win:Binary\" length=\"Size\"/>\n"
    "   <data name=\"Name\" inType=\"win:UnicodeString\"/>\n"
    "   <data name=\"Color\" inType=\"win:UInt8\" map=\"Color\"/>\n"
    "   <data name=\"Flags\" inType=\"win:UInt32\" map=\"Flags\"/>\n"
    "   <data name=\"Count\" inType=\"win:UInt32\"/>\n"
    "   <struct name=\"Items\" count=\"Count\">\n"
    "    <data name=\"Id\" inType=\"win:Int32\"/>\n"
    "    <struct name=\"Inner\"><data name=\"P\" inType=\"win:Pointer\"/></struct>\n"
    "   </struct>\n"
    "   <data name=\"Pair\" inType=\"win:HexInt32\" count=\"2\"/>\n"
    "   <data name=\"Tag\" inType=\"win:AnsiString\" length=\"3\"/>\n"
    "   <UserData><T1 xmlns=\"x\"><Size>%1</Size></T1></UserData>\n"
    "  </template>\n"
    " </templates>\n"
    " <events>\n"
    "  <event value=\"7\" version=\"1\" template=\"T1\" task=\"Work\" opcode=\"Step\" symbol=\"E7\"/>\n"
    "  <event value=\"8\" version=\"0\" task=\"Work\" opcode=\"win:Start\"/>\n"
    "  <event value=\"9\" symbol=\"NoTask\"/>\n"
    " </events>\n"
    "</provider>\n"
    "</events></instrumentation>\n"
    "<localization><resources culture=\"en-US\"><stringTable>\n"
    " <string id=\"red\" value=\"Red\"/>\n"
    "</stringTable></resources></localization>\n"
    "</instrumentationManifest>\n";

/* A payload for T1 (64-bit pointers): 2 blob bytes, "hi", color 1, flags 5,
 * two items, a pair, "abc". */
static size_t payload_t1(uint8_t *p)
{
    size_t n = 0;
    ntl_put_le16(p + n, 2), n += 2;
    p[n++] = 0xde, p[n++] = 0xad;
    memcpy(p + n, "h\0i\0\0\0", 6), n += 6;
    p[n++] = 1;
    ntl_put_le32(p + n, 5), n += 4;
    ntl_put_le32(p + n, 2), n += 4;
    for (int i = 0; i < 2; i++) {
        ntl_put_le32(p + n, (uint32_t)-(i + 1)), n += 4;
        ntl_put_le64(p + n, 0x1000u + (unsigned)i), n += 8;
    }
    ntl_put_le32(p + n, 0xa), n += 4;
    ntl_put_le32(p + n, 0xb), n += 4;
    memcpy(p + n, "abc", 3), n += 3;
    return n;
}

static struct ntl_etl_event event(uint16_t id, uint16_t version, const uint8_t *p, size_t n)
{
    struct ntl_etl_event ev = {.kind = NTL_ETL_KIND_EVENT, .has_guid = true, .is64 = true};
    ntl_guid_parse("11111111-2222-3333-4444-555555555555", &ev.guid);
    ev.event_id = id;
    ev.version = version;
    ev.payload = p;
    ev.payload_size = n;
    return ev;
}

/* The items as "name=text" ('{' '}' '[' ']' for structs and arrays), '|'-joined. */
static int decode(const struct ntl_etl_manifest *m, const struct ntl_etl_event *ev, char *out,
                  size_t size, struct ntl_error *err)
{
    struct ntl_etl_mf *d = ntl_etl_mf_new();
    struct ntl_etl_field f;
    size_t n = 0;
    int rc = ntl_etl_mf_begin(d, m, ev, err);
    out[0] = '\0';
    while (rc > 0 && (rc = ntl_etl_mf_next(d, &f, err)) > 0 && n < size) {
        char v[128];
        ntl_etl_field_text(&f, v, sizeof v);
        if (f.item == NTL_ETL_ITEM_VALUE)
            n += (size_t)snprintf(out + n, size - n, "|%s=%s", f.name, f.map_text ? f.map_text : v);
        else
            n += (size_t)snprintf(out + n, size - n, "|%s%s", f.name,
                                  f.item == NTL_ETL_ITEM_STRUCT_BEGIN ? "{" : f.item == NTL_ETL_ITEM_STRUCT_END ? "}"
                                  : f.item == NTL_ETL_ITEM_ARRAY_BEGIN ? "[" : "]");
    }
    ntl_etl_mf_free(d);
    return rc;
}

static void test_decode(const struct ntl_etl_manifest *m)
{
    uint8_t p[256];
    char out[1024];
    struct ntl_error err = {0};
    struct ntl_etl_mf *d = ntl_etl_mf_new();
    size_t n = payload_t1(p);
    struct ntl_etl_event ev = event(7, 1, p, n);

    CHECK_EQ_INT(decode(m, &ev, out, sizeof out, &err), 0);
    CHECK_EQ_STR(out, "|Size=2|Blob=dead|Name=hi|Color=Green & Blue|Flags=A|C|Count=2"
                      "|Items[|Items{|Id=-1|Inner{|P=0x0000000000001000|Inner}|Items}"
                      "|Items{|Id=-2|Inner{|P=0x0000000000001001|Inner}|Items}|Items]"
                      "|Pair[|Pair=0x0000000a|Pair=0x0000000b|Pair]|Tag=abc");
    CHECK_EQ_INT(ntl_etl_mf_begin(d, m, &ev, &err), 1);
    CHECK_EQ_STR(ntl_etl_mf_event_name(d), "Work/Step");
    CHECK_EQ_STR(ntl_etl_mf_provider_name(d), "Test-Provider");
    ev = event(8, 0, NULL, 0);
    CHECK_EQ_INT(ntl_etl_mf_begin(d, m, &ev, &err), 1);
    CHECK_EQ_STR(ntl_etl_mf_event_name(d), "Work/Start");
    ev = event(9, 0, NULL, 0);
    CHECK_EQ_INT(ntl_etl_mf_begin(d, m, &ev, &err), 1);
    CHECK_EQ_STR(ntl_etl_mf_event_name(d), "NoTask");
    ev = event(7, 2, p, n); /* a version the manifest lacks */
    CHECK_EQ_INT(ntl_etl_mf_begin(d, m, &ev, &err), 0);
    ntl_etl_mf_free(d);

    /* The value map's string-table message; 0 matches no bitmap bit. */
    p[10] = 0;
    ntl_put_le32(p + 11, 0);
    ev = event(7, 1, p, n);
    CHECK_EQ_INT(decode(m, &ev, out, sizeof out, &err), 0);
    CHECK(strstr(out, "|Color=Red|Flags=0|") != NULL);
}

static void test_bad_payloads(const struct ntl_etl_manifest *m)
{
    uint8_t p[256];
    char out[1024];
    struct ntl_error err = {0};
    size_t n = payload_t1(p);
    struct ntl_etl_event ev = event(7, 1, p, n - 1); /* cut inside Tag */
    CHECK_EQ_INT(decode(m, &ev, out, sizeof out, &err), NTL_ERR_TRUNCATED);
    CHECK(strstr(err.message, "field 'Tag'") && strstr(err.message, "payload offset 51"));
    CHECK(strstr(out, "|Pair]") != NULL); /* what came before decoded */

    ev = event(7, 1, p, n + 1); /* a byte left over */
    p[n] = 0;
    CHECK_EQ_INT(decode(m, &ev, out, sizeof out, &err), NTL_ERR_FORMAT);
    CHECK(strstr(err.message, "left after the last field") != NULL);

    ntl_put_le32(p + 15, 0xffffffffu); /* a count no payload can hold */
    ev = event(7, 1, p, n);
    CHECK_EQ_INT(decode(m, &ev, out, sizeof out, &err), NTL_ERR_LIMIT);
    CHECK(strstr(err.message, "field 'Items'") != NULL);

    ntl_put_le16(p, 0xffff); /* a length past the end */
    ev = event(7, 1, p, n);
    CHECK_EQ_INT(decode(m, &ev, out, sizeof out, &err), NTL_ERR_TRUNCATED);
    CHECK(strstr(err.message, "field 'Blob'") != NULL);

    memset(p, 'x', 64); /* a string without its NUL */
    ntl_put_le16(p, 0);
    ev = event(7, 1, p, 64);
    CHECK_EQ_INT(decode(m, &ev, out, sizeof out, &err), NTL_ERR_FORMAT);
    CHECK(strstr(err.message, "without its NUL") != NULL);
}

/* A manifest that must not load: status and a word of its message. */
static void bad_manifest(const char *xml, int status, const char *says)
{
    struct ntl_etl_manifest *m = NULL;
    struct ntl_error err = {0};
    int rc = ntl_etl_manifest_parse(xml, strlen(xml), &m, &err);
    CHECK_EQ_INT(rc, status);
    CHECK(m == NULL);
    if (!strstr(err.message, says))
        fprintf(stderr, "message '%s' lacks '%s'\n", err.message, says);
    CHECK(strstr(err.message, says) != NULL);
}

#define P "<provider name=\"P\" guid=\"{11111111-2222-3333-4444-555555555555}\">"

static void test_bad_manifests(void)
{
    char deep[2048] = P "<templates><template tid=\"T\">";
    bad_manifest("<a><b></a>", NTL_ERR_FORMAT, "does not match");
    bad_manifest("<a>\n<b x=\"1></b></a>", NTL_ERR_TRUNCATED, "line 2");
    bad_manifest("<a><!-- never closed", NTL_ERR_TRUNCATED, "comment");
    bad_manifest("<a></a>", NTL_ERR_FORMAT, "no <provider>");
    bad_manifest(P "<templates><template tid=\"T\"><data name=\"x\" inType=\"win:Nope\"/></template>"
                 "</templates></provider>", NTL_ERR_UNSUPPORTED, "unknown inType win:Nope");
    bad_manifest(P "<events><event value=\"1\" template=\"Missing\"/></events></provider>",
                 NTL_ERR_FORMAT, "template 'Missing' is not defined");
    bad_manifest(P "<templates><template tid=\"T\"><data name=\"b\" inType=\"win:Binary\" length=\"n\"/>"
                 "<data name=\"n\" inType=\"win:UInt8\"/></template></templates></provider>",
                 NTL_ERR_FORMAT, "length field 'n' is not defined");
    bad_manifest(P "<templates><template tid=\"T\"><data name=\"x\" inType=\"win:UInt8\" map=\"M\"/>"
                 "</template></templates></provider>", NTL_ERR_FORMAT, "map 'M' is not defined");
    bad_manifest(P "<maps><valueMap name=\"M\"><map value=\"1\" message=\"&bogus;\"/></valueMap></maps></provider>",
                 NTL_ERR_FORMAT, "character reference");
    bad_manifest("<provider name=\"P\" guid=\"nope\"></provider>", NTL_ERR_FORMAT, "bad guid");
    for (int i = 0; i < 8; i++)
        strcat(deep, "<struct name=\"s\">");
    bad_manifest(deep, NTL_ERR_LIMIT, "nest deeper");
}

/* The manifest above compiled by wevt_writer.py into the WEVT_TEMPLATE
 * fuzz seed (a UINT16 length, the blob, a UINT16 length, the message
 * table): decoded as the XML is, and every prefix and every byte changed
 * refused or read without a crash. */
static void test_wevt(void)
{
    struct ntl_buf b = {0};
    struct ntl_error err = {0};
    struct ntl_etl_manifest *w = NULL;
    char path[4096], out[1024], g[40];
    uint8_t p[256];
    const char *root = getenv("NTLENS_SOURCE_ROOT");
    snprintf(path, sizeof path, "%s/fuzz/corpus/wevt/every-construct", root ? root : ".");
    CHECK_EQ_INT(ntl_file_read(path, 1 << 20, &b, &err), 0);
    if (b.len < 4)
        return;
    size_t len = ntl_le16(b.data), mlen = len + 4 <= b.len ? ntl_le16(b.data + 2 + len) : 0;
    CHECK(len + 4 + mlen <= b.len);
    const uint8_t *blob = b.data + 2, *msgs = b.data + 4 + len;
    CHECK_EQ_INT(ntl_etl_manifest_parse_wevt(blob, len, msgs, mlen, &w, &err), 0);
    if (w) {
        struct ntl_etl_event ev = event(7, 1, p, payload_t1(p));
        struct ntl_etl_mf *d = ntl_etl_mf_new();
        CHECK_EQ_INT(decode(w, &ev, out, sizeof out, &err), 0);
        CHECK_EQ_STR(out, "|Size=2|Blob=dead|Name=hi|Color=Green & Blue|Flags=A|C|Count=2"
                          "|Items[|Items{|Id=-1|Inner{|P=0x0000000000001000|Inner}|Items}"
                          "|Items{|Id=-2|Inner{|P=0x0000000000001001|Inner}|Items}|Items]"
                          "|Pair[|Pair=0x0000000a|Pair=0x0000000b|Pair]|Tag=abc");
        CHECK_EQ_INT(ntl_etl_mf_begin(d, w, &ev, &err), 1);
        CHECK_EQ_STR(ntl_etl_mf_event_name(d), "Work/Step");
        CHECK_EQ_STR(ntl_etl_mf_provider_name(d), "Test-Provider");
        ev = event(8, 0, NULL, 0);
        CHECK_EQ_INT(ntl_etl_mf_begin(d, w, &ev, &err), 1);
        CHECK_EQ_STR(ntl_etl_mf_event_name(d), "Work/Start");
        CHECK_EQ_INT(ntl_etl_manifest_events(w), 3);
        ntl_etl_mf_free(d);
        ntl_etl_manifest_free(w);
    }
    /* Without the message table: named by GUID, values unnamed. */
    CHECK_EQ_INT(ntl_etl_manifest_parse_wevt(blob, len, NULL, 0, &w, &err), 0);
    if (w) {
        struct ntl_etl_event ev = event(7, 1, p, payload_t1(p));
        CHECK_EQ_STR(ntl_etl_manifest_provider_name(w, &ev.guid),
                     ntl_guid_format(&ev.guid, g, sizeof g));
        CHECK_EQ_INT(decode(w, &ev, out, sizeof out, &err), 0);
        CHECK(strstr(out, "|Color=1|Flags=5|") != NULL);
        ntl_etl_manifest_free(w);
    }
    int whole = 0;
    for (size_t n = 0; n < len; n++) {
        int rc = ntl_etl_manifest_parse_wevt(blob, n, msgs, mlen, &w, &err);
        if (rc == 0)
            ntl_etl_manifest_free(w), whole++;
    }
    CHECK(whole < 8); /* the strings come last: only their 8-byte padding may go */
    uint8_t *copy = malloc(len);
    for (size_t i = 0; copy && i < len; i++) {
        memcpy(copy, blob, len);
        copy[i] ^= 0xff;
        if (ntl_etl_manifest_parse_wevt(copy, len, msgs, mlen, &w, &err) == 0)
            ntl_etl_manifest_free(w);
    }
    free(copy);
    ntl_buf_free(&b);
}

int main(void)
{
    struct ntl_etl_manifest *m = NULL;
    struct ntl_error err = {0};
    int rc = ntl_etl_manifest_parse(manifest, sizeof manifest - 1, &m, &err);
    CHECK_EQ_INT(rc, 0);
    if (rc < 0) {
        fprintf(stderr, "%s\n", err.message);
        return check_exit();
    }
    struct ntl_guid g;
    ntl_guid_parse("11111111-2222-3333-4444-555555555555", &g);
    CHECK_EQ_STR(ntl_etl_manifest_provider_name(m, &g), "Test-Provider");
    CHECK_EQ_INT(ntl_etl_manifest_events(m), 3);
    test_decode(m);
    test_bad_payloads(m);
    test_bad_manifests();
    test_wevt();
    ntl_etl_manifest_free(m);
    return check_exit();
}
