/* The renderer every command prints through: table alignment, CSV quoting,
 * JSON typing and escaping. */
#include "check.h"

#include "output.h"

static char *render(const struct out_table *t, enum out_format fmt)
{
    static char buf[4096];
    FILE *f = tmpfile();
    size_t n;

    out_table_render(t, f, fmt);
    rewind(f);
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static struct out_table *sample_table(void)
{
    struct out_table *t = out_table_new();
    out_table_column(t, "name", "Name", OUT_LEFT);
    out_table_column(t, "pid", "Pid", OUT_RIGHT);
    out_table_column(t, "cpu", "CPU %", OUT_RIGHT);
    out_table_str(t, "svchost");
    out_table_u64(t, 4);
    out_table_num(t, 12.345, 1);
    out_table_row_end(t);
    out_table_indent(t, 1);
    out_table_str(t, "a \"quoted\", name\n");
    out_table_u64(t, 1234);
    out_table_null(t);
    out_table_row_end(t);
    return t;
}

int main(void)
{
    struct out_table *t = sample_table();
    enum out_format fmt;
    char dur[32];

    CHECK_EQ_U64(out_table_rows(t), 2);
    CHECK_EQ_STR(render(t, OUT_CSV),
                 "name,pid,cpu\n"
                 "svchost,4,12.3\n"
                 "\"a \"\"quoted\"\", name\n\",1234,\n");
    CHECK_EQ_STR(render(t, OUT_JSON),
                 "[\n"
                 "{\"name\":\"svchost\",\"pid\":4,\"cpu\":12.345000000000001},\n"
                 "{\"name\":\"a \\\"quoted\\\", name\\n\",\"pid\":1234,\"cpu\":null}\n"
                 "]\n");
    out_table_free(t);

    t = out_table_new();
    out_table_column(t, "name", "Name", OUT_LEFT);
    out_table_column(t, "pid", "Pid", OUT_RIGHT);
    out_table_str(t, "init");
    out_table_u64(t, 1);
    out_table_row_end(t);
    out_table_indent(t, 1);
    out_table_str(t, "sshd");
    out_table_u64(t, 812);
    out_table_row_end(t);
    CHECK_EQ_STR(render(t, OUT_TABLE),
                 "Name   Pid\n"
                 "init     1\n"
                 "  sshd 812\n");
    out_table_free(t);

    t = out_table_new();
    out_table_column(t, "x", NULL, OUT_LEFT);
    CHECK_EQ_STR(render(t, OUT_JSON), "[]\n");
    out_table_free(t);

    CHECK(out_format_parse("csv", &fmt) && fmt == OUT_CSV);
    CHECK(!out_format_parse("xml", &fmt));
    CHECK_EQ_STR(out_format_duration(dur, sizeof dur, 36612345678ull), "1:01:01.234");
    return check_exit();
}
