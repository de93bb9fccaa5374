/* The output writer every command prints through: table alignment, CSV and
 * TSV quoting, JSON typing, escaping and precision, sections, times. */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "out.h"

static FILE *sink;

static struct out *open_out(enum out_format fmt)
{
    sink = check_tmpfile();
    return out_new(sink, fmt);
}

/* Closes o and returns what it wrote. */
static char *written(struct out *o)
{
    static char buf[4096];
    size_t n;
    CHECK_EQ_INT(out_close(o), 0);
    rewind(sink);
    n = fread(buf, 1, sizeof buf - 1, sink);
    buf[n] = '\0';
    fclose(sink);
    return buf;
}

static struct out *sample(enum out_format fmt)
{
    struct out *o = open_out(fmt);
    out_column(o, "name", NULL, OUT_LEFT);
    out_column(o, "pid", NULL, OUT_RIGHT);
    out_column(o, "cpu_pct", "CPU %", OUT_RIGHT);
    out_column(o, "base", NULL, OUT_LEFT);
    out_str(o, "svchost");
    out_u64(o, 4);
    out_num(o, 0.18, 1);
    out_addr(o, 0xfffff802424ab000ull, 16);
    out_row_end(o);
    out_indent(o, 1);
    out_str(o, "a \"quoted\",\tname\n");
    out_u64(o, 18446744073709551615ull);
    out_null(o);
    out_row_end(o); /* the missing cell is null */
    return o;
}


/* Rows of JSON past the 64 KiB buffer, one cell larger than it (escaped
 * controls, 6 bytes each), and a second section after rows: the whole
 * text, rows held (out_hold_rows) or not. */
static char *long_json(bool hold, size_t *len)
{
    static char big[40000];
    struct out *o = open_out(OUT_JSON);
    char *text;
    memset(big, '\x01', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    if (hold)
        out_hold_rows(o);
    out_section(o, "first");
    out_column(o, "n", NULL, OUT_RIGHT);
    out_column(o, "text", NULL, OUT_LEFT);
    for (uint64_t i = 0; i < 3000; i++) {
        out_u64(o, i);
        out_str(o, i == 1500 ? big : "a \"row\" of text");
        out_row_end(o);
    }
    out_section(o, "second");
    out_column(o, "t", NULL, OUT_LEFT);
    out_filetime(o, 132404188206236167ull);
    out_row_end(o);
    CHECK_EQ_INT(out_close(o), 0);
    *len = (size_t)ftell(sink);
    rewind(sink);
    text = malloc(*len + 1);
    CHECK_EQ_U64(fread(text, 1, *len, sink), *len);
    fclose(sink);
    return text;
}

static void test_held_rows(void)
{
    size_t n1, n2;
    char *plain = long_json(false, &n1), *held = long_json(true, &n2);
    CHECK_EQ_U64(n1, n2);
    CHECK(n1 > 300000 && !memcmp(plain, held, n1));
    CHECK(strstr(plain, "\"n\":1500,\"text\":\"\\u0001\\u0001") != NULL);
    CHECK(strstr(plain, "\n],\"second\":[\n{\"t\":\"20") != NULL);
    free(plain);
    free(held);
}

/* A FILE that cannot be written (opened for reading): its error shows once
 * held rows reach it, as ferror tells it, and closing fails. */
static void test_file_error(void)
{
    const char *name = "test_out_readonly.tmp";
    FILE *f = fopen(name, "wb");
    CHECK(f != NULL);
    fclose(f);
    CHECK((f = fopen(name, "rb")) != NULL);
    struct out *o = out_new(f, OUT_JSONL);
    out_hold_rows(o);
    out_column(o, "n", NULL, OUT_RIGHT);
    out_u64(o, 1);
    CHECK_EQ_INT(out_row_end(o), 0);
    CHECK(!out_file_error(o)); /* the row waits in the writer */
    uint64_t i = 0;
    for (; i < 100000 && !out_file_error(o); i++) {
        out_u64(o, i);
        out_row_end(o);
    }
    CHECK(i > 1000 && i < 100000 && ferror(f));
    CHECK(out_file_error(o));
    CHECK_EQ_INT(out_close(o), -1);
    fclose(f);
    remove(name);
}

int main(void)
{
    char buf[64];
    struct out *o;

    CHECK_EQ_STR(written(sample(OUT_CSV)),
                 "name,pid,cpu_pct,base\n"
                 "svchost,4,0.2,0xfffff802424ab000\n"
                 "\"a \"\"quoted\"\",\tname\n\",18446744073709551615,,\n");
    CHECK_EQ_STR(written(sample(OUT_TSV)),
                 "name\tpid\tcpu_pct\tbase\n"
                 "svchost\t4\t0.2\t0xfffff802424ab000\n"
                 "a \"quoted\", name \t18446744073709551615\t\t\n");
    /* Addresses are strings, integers exact, floats as few digits as round-trip needs. */
    CHECK_EQ_STR(written(sample(OUT_JSON)),
                 "[\n"
                 "{\"name\":\"svchost\",\"pid\":4,\"cpu_pct\":0.18,\"base\":\"0xfffff802424ab000\"},\n"
                 "{\"name\":\"a \\\"quoted\\\",\\tname\\n\",\"pid\":18446744073709551615,"
                 "\"cpu_pct\":null,\"base\":null}\n"
                 "]\n");
    CHECK_EQ_STR(written(sample(OUT_JSONL)),
                 "{\"name\":\"svchost\",\"pid\":4,\"cpu_pct\":0.18,\"base\":\"0xfffff802424ab000\"}\n"
                 "{\"name\":\"a \\\"quoted\\\",\\tname\\n\",\"pid\":18446744073709551615,"
                 "\"cpu_pct\":null,\"base\":null}\n");

    /* Title Case headings from keys; indentation; right alignment. */
    o = open_out(OUT_TABLE);
    out_column(o, "name", NULL, OUT_LEFT);
    out_column(o, "elapsed_time", NULL, OUT_RIGHT);
    out_str(o, "init");
    out_duration(o, 36612345678ull);
    out_row_end(o);
    out_indent(o, 1);
    out_str(o, "sshd");
    out_duration(o, 0);
    out_row_end(o);
    CHECK_EQ_STR(written(o), "Name   Elapsed Time\n"
                             "init    1:01:01.234\n"
                             "  sshd  0:00:00.000\n");

    /* A refreshing view: CSV's header once, the table's per frame. */
    o = open_out(OUT_CSV);
    out_column(o, "n", NULL, OUT_LEFT);
    for (int frame = 0; frame < 2; frame++) {
        out_i64(o, frame);
        out_row_end(o);
        out_flush(o);
    }
    CHECK_EQ_STR(written(o), "n\n0\n1\n");
    o = open_out(OUT_TABLE);
    out_column(o, "n", NULL, OUT_LEFT);
    for (int frame = 0; frame < 2; frame++) {
        out_i64(o, -frame);
        out_row_end(o);
        out_flush(o);
    }
    CHECK_EQ_STR(written(o), "N\n0\nN\n-1\n");

    /* Streaming table rows with fixed widths. */
    o = open_out(OUT_TABLE);
    out_column(o, "a", NULL, OUT_LEFT);
    out_column_width(o, 4);
    out_column(o, "b", NULL, OUT_RIGHT);
    out_column_width(o, 3);
    out_str(o, "x");
    out_u64(o, 7);
    out_row_end(o);
    CHECK_EQ_STR(written(o), "A      B\nx      7\n");

    /* Sections: one JSON document; CSV refuses a second table. */
    o = open_out(OUT_JSON);
    CHECK_EQ_INT(out_section(o, "processes"), 0);
    out_column(o, "pid", NULL, OUT_RIGHT);
    out_u64(o, 1);
    out_row_end(o);
    CHECK_EQ_INT(out_section(o, "threads"), 0);
    out_column(o, "tid", NULL, OUT_RIGHT);
    CHECK_EQ_STR(written(o), "{\"processes\":[\n{\"pid\":1}\n],\"threads\":[]}\n");
    o = open_out(OUT_CSV);
    CHECK_EQ_INT(out_section(o, "processes"), 0);
    CHECK_EQ_INT(out_section(o, "threads"), -1);
    written(o);
    o = open_out(OUT_JSON);
    out_column(o, "x", NULL, OUT_LEFT);
    CHECK_EQ_STR(written(o), "[]\n");

    /* Times: ISO 8601 UTC, FILETIME's 100 ns digits, before 1970 and after 2038. */
    CHECK_EQ_STR(out_format_time(buf, sizeof buf, 0, 0, 0), "1970-01-01T00:00:00Z");
    CHECK_EQ_STR(out_format_time(buf, sizeof buf, 4102444800ll, 1234567, 7), "2100-01-01T00:00:00.1234567Z");
    CHECK_EQ_STR(out_format_time(buf, sizeof buf, -1, 5, 1), "1969-12-31T23:59:59.5Z");
    o = open_out(OUT_CSV);
    out_column(o, "t", NULL, OUT_LEFT);
    out_filetime(o, 132223104000000001ull); /* 2020-01-01T00:00:00 + 100 ns */
    out_row_end(o);
    out_filetime(o, 0);
    out_row_end(o);
    CHECK_EQ_STR(written(o), "t\n2020-01-01T00:00:00.0000001Z\n\n");

    CHECK_EQ_STR(out_format_double(buf, sizeof buf, 0.1 + 0.2), "0.30000000000000004");
    CHECK_EQ_STR(out_format_double(buf, sizeof buf, 0.18), "0.18");
    CHECK_EQ_STR(out_format_double(buf, sizeof buf, 1e300), "1e+300");
    CHECK_EQ_STR(out_format_double(buf, sizeof buf, 120), "120");
    CHECK_EQ_STR(out_format_double(buf, sizeof buf, -0.00012), "-0.00012");
    CHECK_EQ_STR(out_format_double(buf, sizeof buf, 1.5e-5), "1.5e-05");
    CHECK_EQ_STR(out_format_double(buf, sizeof buf, 1e16), "1e+16");
    CHECK_EQ_STR(out_format_double(buf, sizeof buf, 123456789012345.6), "123456789012345.6");
    test_held_rows();
    test_file_error();
    return check_exit();
}
