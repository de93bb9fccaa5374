/* typeperf's counter paths and the matching rules (ntlens/perf_path.h):
 * parsing, wildcards, instance selection with #N and parents, expansion
 * against a block, --lang and --detail values. Runs natively and under Wine. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "ntlens/buf.h"
#include "ntlens/perf.h"
#include "ntlens/perf_build.h"
#include "ntlens/perf_path.h"

static void test_paths(void)
{
    struct ntl_perf_path p;
    struct ntl_error err;
    CHECK(ntl_perf_path_parse("\\Processor(_Total)\\% Processor Time", &p, &err) == 0);
    CHECK_EQ_STR(p.machine, "");
    CHECK_EQ_STR(p.object, "Processor");
    CHECK(p.has_instance);
    CHECK_EQ_STR(p.instance, "_Total");
    CHECK_EQ_STR(p.counter, "% Processor Time");

    CHECK(ntl_perf_path_parse("\\\\SRV01\\Memory\\Available Bytes", &p, &err) == 0);
    CHECK_EQ_STR(p.machine, "SRV01");
    CHECK_EQ_STR(p.object, "Memory");
    CHECK(!p.has_instance);

    /* instance names with parentheses and slashes */
    CHECK(ntl_perf_path_parse("\\Process(chrome (2))\\ID Process", &p, &err) == 0);
    CHECK_EQ_STR(p.instance, "chrome (2)");
    CHECK(ntl_perf_path_parse("\\Thread(explorer/12#1)\\ID Thread", &p, &err) == 0);
    CHECK_EQ_STR(p.instance, "explorer/12#1");
    CHECK(ntl_perf_path_parse("\\230(*)\\784", &p, &err) == 0);
    CHECK_EQ_STR(p.object, "230");
    CHECK_EQ_STR(p.counter, "784");

    CHECK(ntl_perf_path_parse("Processor\\x", &p, &err) == NTL_ERR_ARGUMENT);
    CHECK(ntl_perf_path_parse("\\Processor", &p, &err) == NTL_ERR_ARGUMENT);
    CHECK(ntl_perf_path_parse("\\Processor\\", &p, &err) == NTL_ERR_ARGUMENT);
    CHECK(ntl_perf_path_parse("\\(x)\\y", &p, &err) == NTL_ERR_ARGUMENT);
    CHECK(ntl_perf_path_parse("\\Processor(x\\y", &p, &err) == NTL_ERR_ARGUMENT);
    CHECK(ntl_perf_path_parse("\\\\\\Memory\\x", &p, &err) == NTL_ERR_ARGUMENT);
    char longp[600];
    memset(longp, 'a', sizeof longp);
    longp[0] = '\\';
    memcpy(longp + 590, "\\counter", 9);
    CHECK(ntl_perf_path_parse(longp, &p, &err) == NTL_ERR_ARGUMENT);
}

static void test_globs(void)
{
    CHECK(ntl_perf_glob("*", ""));
    CHECK(ntl_perf_glob("*", "anything"));
    CHECK(ntl_perf_glob("svc*", "SVCHOST"));
    CHECK(ntl_perf_glob("% * time", "% Processor Time"));
    CHECK(ntl_perf_glob("?pu0", "cpu0"));
    CHECK(!ntl_perf_glob("?pu0", "pu0"));
    CHECK(!ntl_perf_glob("a*b", "aXbY"));
    CHECK(ntl_perf_glob("a*b*c", "aXbYbZc"));
    /* many stars on a long string stay fast (single-star backtracking) */
    char s[4096];
    memset(s, 'a', sizeof s - 1);
    s[sizeof s - 1] = '\0';
    CHECK(!ntl_perf_glob("*a*a*a*a*a*a*a*a*a*b", s));
    CHECK(ntl_perf_has_wildcard("a*") && ntl_perf_has_wildcard("a?") && !ntl_perf_has_wildcard("abc"));
    CHECK(ntl_perf_spec_matches("230", 230, "Process"));
    CHECK(!ntl_perf_spec_matches("230", 232, "Thread"));
    CHECK(ntl_perf_spec_matches("proc*", 230, "Process"));
    CHECK(!ntl_perf_spec_matches("proc*", 230, NULL));
}

static void test_options(void)
{
    unsigned lang;
    uint32_t level;
    CHECK(ntl_perf_parse_lang("009", &lang) && lang == 9);
    CHECK(ntl_perf_parse_lang("0x409", &lang) && lang == 0x409);
    CHECK(ntl_perf_parse_lang("00C", &lang) && lang == 12);
    CHECK(!ntl_perf_parse_lang("", &lang) && !ntl_perf_parse_lang("0", &lang) &&
          !ntl_perf_parse_lang("xyz", &lang) && !ntl_perf_parse_lang("10000", &lang));
    CHECK(ntl_perf_parse_detail("novice", &level) && level == 100);
    CHECK(ntl_perf_parse_detail("WIZARD", &level) && level == 400);
    CHECK(ntl_perf_parse_detail("250", &level) && level == 300);
    CHECK(!ntl_perf_parse_detail("0", &level) && !ntl_perf_parse_detail("401", &level) &&
          !ntl_perf_parse_detail("guru", &level));
    CHECK_EQ_STR(ntl_perf_detail_name(200), "advanced");
}

/* Instances from a real block built with the writer: two "svchost"
 * processes, each with a thread "0". */
static void test_instances(void)
{
    static const struct ntl_perf_build_counter pc[] = {{784, 785, 0, 100, 0x00010000, 4}};
    static const char *procs[] = {"svchost", "svchost", "System"};
    struct ntl_buf out;
    struct ntl_perf_builder b;
    struct ntl_error err;
    struct ntl_perf_build_header h = {.perf_freq = 1, .default_object = -1};
    struct ntl_perf_build_object po = {230, 231, 100, 0, true, 0, 0, 0, pc, 1};
    struct ntl_perf_build_object to = {232, 233, 100, 0, true, 0, 0, 0, pc, 1};
    uint64_t v[1] = {0};
    ntl_buf_init(&out, 0);
    CHECK_EQ_INT(ntl_perf_build_begin(&b, &out, &h, &err), 0);
    CHECK_EQ_INT(ntl_perf_build_object(&b, &po, &err), 0);
    for (uint32_t i = 0; i < 3; i++) {
        struct ntl_perf_build_instance in = {procs[i], 0, 0, -1};
        CHECK_EQ_INT(ntl_perf_build_instance(&b, &in, v, &err), 0);
    }
    CHECK_EQ_INT(ntl_perf_build_end_object(&b, &err), 0);
    CHECK_EQ_INT(ntl_perf_build_object(&b, &to, &err), 0);
    for (uint32_t i = 0; i < 3; i++) {
        struct ntl_perf_build_instance in = {"0", 230, i, -1};
        CHECK_EQ_INT(ntl_perf_build_instance(&b, &in, v, &err), 0);
    }
    CHECK_EQ_INT(ntl_perf_build_end_object(&b, &err), 0);
    CHECK(ntl_perf_build_finish(&b, &err) > 0);

    struct ntl_perf_block *blk;
    CHECK_EQ_INT(ntl_perf_block_parse(out.data, out.len, &blk, &err), 0);
    if (!blk)
        return;
    const struct ntl_perf_object *p = ntl_perf_block_find_object(blk, 230);
    const struct ntl_perf_object *t = ntl_perf_block_find_object(blk, 232);
    CHECK(ntl_perf_instance_matches("svchost", &p->instances[0]));
    CHECK(ntl_perf_instance_matches("svchost#0", &p->instances[0]));
    CHECK(!ntl_perf_instance_matches("svchost", &p->instances[1]));
    CHECK(ntl_perf_instance_matches("svchost#1", &p->instances[1]));
    CHECK(ntl_perf_instance_matches("SVCHOST#1", &p->instances[1]));
    CHECK(ntl_perf_instance_matches("svc*", &p->instances[1]));
    CHECK(ntl_perf_instance_matches("*", &p->instances[2]));
    /* threads: "parent/name#N" with a slash, "name#N" without */
    CHECK(ntl_perf_instance_matches("svchost/0", &t->instances[0]));
    CHECK(!ntl_perf_instance_matches("svchost/0", &t->instances[1]));
    CHECK(ntl_perf_instance_matches("svchost/0#1", &t->instances[1]));
    CHECK(ntl_perf_instance_matches("system/0", &t->instances[2]));
    CHECK(ntl_perf_instance_matches("svchost/*", &t->instances[1]));
    CHECK(!ntl_perf_instance_matches("svchost/*", &t->instances[2]));
    CHECK(ntl_perf_instance_matches("0", &t->instances[0]));
    CHECK(ntl_perf_instance_matches("0#1", &t->instances[1]));
    ntl_perf_block_free(blk);
    ntl_buf_free(&out);
}

int main(void)
{
    test_paths();
    test_globs();
    test_options();
    test_instances();
    return check_exit();
}
