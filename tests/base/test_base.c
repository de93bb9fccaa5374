#include "check.h"

#include "ntlens/buf.h"
#include "ntlens/error.h"
#include "ntlens/reader.h"
#include "ntlens/utf16.h"

static void test_reader(void)
{
    const uint8_t bytes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    struct ntl_reader r, sub;
    uint32_t v32;
    uint64_t v64;
    uint8_t v8;

    ntl_reader_init(&r, bytes, sizeof bytes, 100);
    CHECK(ntl_reader_u32(&r, &v32));
    CHECK_EQ_U64(v32, 0x04030201);
    CHECK(ntl_reader_u32(&r, &v32));
    CHECK(!ntl_reader_u64(&r, &v64)); /* 2 bytes left */
    CHECK_EQ_U64(r.pos, 8);            /* failed read leaves position */
    CHECK_EQ_U64(ntl_reader_offset(&r), 108);
    CHECK(ntl_reader_u8(&r, &v8));
    CHECK_EQ_U64(v8, 9);
    CHECK(ntl_reader_sub(&r, 2, 4, &sub));
    CHECK_EQ_U64(sub.origin, 102);
    CHECK(!ntl_reader_sub(&r, 8, 3, &sub));
    CHECK(!ntl_reader_sub(&r, UINT64_MAX, 2, &sub));
    CHECK(!ntl_range_ok(10, 4, UINT64_MAX - 2));
    CHECK(ntl_range_ok(10, 10, 0));
}

/* ntl_utf16_unit_len reads four units at a time: its length against the
 * first 0 unit for every length, NUL position and alignment, between units
 * that have a zero byte (0x0100, 0x0001) and one that has none. */
static void test_utf16_unit_len(void)
{
    static const uint16_t fill[] = {0x0100, 0x0001, 0x8080, 0xffff, 0x0041};
    uint8_t buf[2 * 24 + 1];
    for (size_t f = 0; f < sizeof fill / sizeof fill[0]; f++)
        for (size_t nul = 0; nul <= 20; nul++)
            for (size_t max = 0; max <= 20; max++)
                for (size_t align = 0; align < 2; align++) {
                    uint8_t *s = buf + align;
                    for (size_t k = 0; k < 22; k++)
                        ntl_put_le16(s + 2 * k, k == nul ? 0 : fill[(f + k) % 5]);
                    CHECK_EQ_U64(ntl_utf16_unit_len(s, max), nul < max ? nul : max);
                }
}

static void test_utf16(void)
{
    /* "Aé€😀" then NUL: U+0041 U+00E9 U+20AC U+1F600 (D83D DE00) */
    const uint8_t s[] = {0x41, 0, 0xE9, 0, 0xAC, 0x20, 0x3D, 0xD8, 0x00, 0xDE, 0, 0, 0x42, 0};
    const uint8_t lone[] = {0x00, 0xD8, 0x41, 0x00};
    char out[32];
    uint8_t back[16];

    CHECK_EQ_U64(ntl_utf16_unit_len(s, 7), 5);
    CHECK_EQ_U64(ntl_utf16_to_utf8(s, 5, out, sizeof out), 10);
    CHECK_EQ_STR(out, "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
    CHECK_EQ_U64(ntl_utf16_to_utf8(s, 5, out, 4), 10); /* truncates, reports need */
    CHECK_EQ_STR(out, "A\xC3\xA9");
    ntl_utf16_to_utf8(lone, 2, out, sizeof out);
    CHECK_EQ_STR(out, "\xEF\xBF\xBD" "A");
    CHECK_EQ_U64(ntl_utf8_to_utf16("A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", back, 8), 5);
    CHECK(memcmp(back, s, 10) == 0);
    CHECK_EQ_U64(ntl_utf8_to_utf16("\xFF", back, 8), 1);
    CHECK_EQ_U64(ntl_le16(back), 0xFFFD);
}

static void test_buf_and_error(void)
{
    struct ntl_buf b;
    struct ntl_error err;
    char msg[300];

    ntl_buf_init(&b, 16);
    CHECK_EQ_INT(ntl_buf_put_u32(&b, 0x11223344), NTL_OK);
    CHECK_EQ_INT(ntl_buf_align(&b, 8), NTL_OK);
    CHECK_EQ_U64(b.len, 8);
    CHECK_EQ_INT(ntl_buf_put_u64(&b, 1), NTL_OK);
    CHECK_EQ_INT(ntl_buf_put_u16(&b, 1), NTL_ERR_LIMIT);
    CHECK_EQ_U64(b.len, 16);
    ntl_buf_free(&b);

    ntl_error_clear(&err);
    CHECK_EQ_INT(ntl_error_set(&err, NTL_ERR_FORMAT, "PERF_OBJECT_TYPE", 0x1a0,
                               "TotalByteLength %u", 0u), NTL_ERR_FORMAT);
    CHECK_EQ_STR(ntl_error_format(&err, msg, sizeof msg),
                 "PERF_OBJECT_TYPE at offset 0x1a0: TotalByteLength 0");
    ntl_error_prefix(&err, "snapshot %d", 3);
    CHECK_EQ_STR(ntl_error_format(&err, msg, sizeof msg),
                 "PERF_OBJECT_TYPE at offset 0x1a0: snapshot 3: TotalByteLength 0");
    CHECK(ntl_file_read("/nonexistent/ntlens", 100, &b, &err) == NTL_ERR_IO);
}

int main(void)
{
    test_reader();
    test_utf16();
    test_utf16_unit_len();
    test_buf_and_error();
    return check_exit();
}
