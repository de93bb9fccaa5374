/* Reading parsed data from a source (ntlens/source_perf.h) over captures
 * built here: the title fallback policy (an import without titles shows
 * indices, not Windows' names for them), ps samples to the end of a
 * capture, counter paths expanded with either policy's names, the choice of
 * producer by spec, and which names are this machine. Runs natively and
 * under Wine. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ntlens/buf.h"
#include "ntlens/perf_build.h"
#include "ntlens/perf_capture.h"
#include "ntlens/perf_path.h"
#include "ntlens/source_perf.h"

/* Two processes, "a" (pid 4) and "b" (pid 8), with ID Process only. */
static void build_block(struct ntl_buf *out)
{
    static const struct ntl_perf_build_counter pc[] = {{784, 785, 0, 100, 0x00010000, 4}};
    struct ntl_perf_build_header h = {.perf_freq = 1, .default_object = -1,
                                      .system_name = "MACHINE1"};
    struct ntl_perf_build_object po = {230, 231, 100, 0, true, 0, 0, 0, pc, 1};
    struct ntl_perf_builder b;
    struct ntl_error err;
    ntl_buf_init(out, 0);
    CHECK_EQ_INT(ntl_perf_build_begin(&b, out, &h, &err), 0);
    CHECK_EQ_INT(ntl_perf_build_object(&b, &po, &err), 0);
    for (uint64_t pid = 4; pid <= 8; pid += 4) {
        struct ntl_perf_build_instance in = {pid == 4 ? "a" : "b", 0, 0, -1};
        uint64_t v[1] = {pid};
        CHECK_EQ_INT(ntl_perf_build_instance(&b, &in, v, &err), 0);
    }
    CHECK_EQ_INT(ntl_perf_build_end_object(&b, &err), 0);
    CHECK(ntl_perf_build_finish(&b, &err) > 0);
}

/* A "Counter 009" answer naming only 230: UTF-16LE "230\0Process\0\0". */
static void own_titles(struct ntl_buf *out)
{
    static const char text[] = "1\0001847\000230\0Process\0";
    ntl_buf_init(out, 0);
    for (size_t i = 0; i < sizeof text; i++) {
        uint8_t u[2] = {(uint8_t)text[i], 0};
        ntl_buf_append(out, u, 2);
    }
}

static struct ntl_source *open_capture(const char *path, bool with_titles)
{
    struct ntl_capture_writer *w = ntl_capture_writer_new("Samba import");
    struct ntl_buf blk, names;
    struct ntl_source *src = NULL;
    struct ntl_error err;
    build_block(&blk);
    own_titles(&names);
    CHECK_EQ_INT(ntl_capture_writer_snapshot(w, 0, "Global", blk.data, blk.len, &err), 0);
    CHECK_EQ_INT(ntl_capture_writer_snapshot(w, 0, "Global", blk.data, blk.len, &err), 0);
    if (with_titles)
        CHECK_EQ_INT(ntl_capture_writer_titles(w, false, 9, names.data, names.len, &err), 0);
    CHECK_EQ_INT(ntl_capture_writer_save(w, path, &err), 0);
    CHECK_EQ_INT(ntl_source_open(path, NULL, &src, &err), 0);
    ntl_capture_writer_free(w);
    ntl_buf_free(&blk);
    ntl_buf_free(&names);
    return src;
}

/* The names a path's expansion gives under a policy. */
static void expand_one(struct ntl_source *src, enum ntl_source_titles_fill fill,
                       const char *path, const char *want_first, long want_n)
{
    struct ntl_perf_titles *t = ntl_perf_titles_new();
    struct ntl_perf_block *b = NULL;
    struct ntl_perf_path p;
    struct ntl_perf_path_iter it;
    struct ntl_perf_path_match m;
    struct ntl_error err;
    struct ntl_buf raw;
    long n = 0;
    int r;
    ntl_buf_init(&raw, 0);
    CHECK_EQ_INT(ntl_source_load_titles(src, NTL_TITLES_COUNTER, 9, fill, t, NULL, &err), 0);
    CHECK_EQ_INT(ntl_source_snapshot(src, "Global", &raw, &b, &err), 0);
    CHECK_EQ_INT(ntl_perf_path_parse(path, &p, &err), 0);
    if (b) {
        ntl_perf_path_iter_begin(&it, &p, b, t);
        while ((r = ntl_perf_path_next(&it, "MACHINE1", &m, &err)) > 0)
            if (n++ == 0)
                CHECK_EQ_STR(m.path, want_first);
        CHECK_EQ_INT(r, 0);
        CHECK_EQ_INT(n, want_n);
        /* a path without an instance for an object that has them */
        CHECK_EQ_INT(ntl_perf_path_parse("\\230\\784", &p, &err), 0);
        ntl_perf_path_iter_begin(&it, &p, b, t);
        CHECK_EQ_INT(ntl_perf_path_next(&it, "MACHINE1", &m, &err), NTL_ERR_ARGUMENT);
        CHECK(strstr(err.message, "has instances") != NULL);
    }
    ntl_perf_block_free(b);
    ntl_buf_free(&raw);
    ntl_perf_titles_free(t);
}

static void test_titles_policy(const char *path)
{
    struct ntl_source *src = open_capture(path, false);
    struct ntl_perf_titles *own = ntl_perf_titles_new(), *std = ntl_perf_titles_new();
    struct ntl_error err;
    bool missing = false;
    char buf[16];
    if (!src)
        return;
    /* an import without titles: nothing is named unless asked */
    CHECK_EQ_INT(ntl_source_load_titles(src, NTL_TITLES_COUNTER, 9, NTL_SOURCE_TITLES_OWN, own,
                                        &missing, &err), 0);
    CHECK(missing);
    CHECK(ntl_perf_titles_name(own, 784) == NULL);
    CHECK_EQ_STR(ntl_perf_name(own, 784, buf, sizeof buf), "784");
    CHECK_EQ_INT(ntl_source_load_titles(src, NTL_TITLES_COUNTER, 9,
                                        NTL_SOURCE_TITLES_STANDARD, std, &missing, &err), 0);
    CHECK(missing);
    CHECK_EQ_STR(ntl_perf_name(std, 784, buf, sizeof buf), "ID Process");
    expand_one(src, NTL_SOURCE_TITLES_OWN, "\\230(*)\\784", "\\\\MACHINE1\\230(a)\\784", 2);
    ntl_source_close(src);
    ntl_perf_titles_free(own);
    ntl_perf_titles_free(std);

    /* with the source's own database: its names, and only those */
    src = open_capture(path, true);
    own = ntl_perf_titles_new();
    CHECK_EQ_INT(ntl_source_load_titles(src, NTL_TITLES_COUNTER, 9, NTL_SOURCE_TITLES_OWN, own,
                                        &missing, &err), 0);
    CHECK(!missing);
    CHECK_EQ_STR(ntl_perf_titles_name(own, 230), "Process");
    CHECK(ntl_perf_titles_name(own, 784) == NULL);
    expand_one(src, NTL_SOURCE_TITLES_OWN, "\\Process(b)\\784", "\\\\MACHINE1\\Process(b)\\784",
               1);
    ntl_source_close(src);
    src = open_capture(path, true);
    expand_one(src, NTL_SOURCE_TITLES_STANDARD, "\\Process(*)\\ID Process",
               "\\\\MACHINE1\\Process(a)\\ID Process", 2);
    ntl_source_close(src);
    ntl_perf_titles_free(own);
    remove(path);
}

static void test_ps_take(const char *path)
{
    struct ntl_source *src = open_capture(path, false);
    struct ntl_perf_titles *t = NULL;
    struct ntl_perf_ps_indices ix;
    struct ntl_perf_ps_sample s0, s1, s2;
    struct ntl_error err;
    if (!src)
        return;
    CHECK_EQ_INT(ntl_source_ps_titles(src, &t, &ix, &err), 0);
    CHECK_EQ_INT(ntl_source_ps_take(src, &ix, true, true, &s0, &err), 0);
    CHECK_EQ_INT(ntl_source_ps_take(src, &ix, true, true, &s1, &err), 0);
    CHECK_EQ_U64(s1.nprocs, 2);
    CHECK_EQ_STR(s1.host, "MACHINE1");
    CHECK(!s1.have_threads);
    if (s1.nprocs == 2) {
        CHECK_EQ_STR(s1.procs[1].name, "b");
        CHECK_EQ_U64(s1.procs[1].v[NTL_PERF_PS_PID], 8);
        CHECK(s1.procs[1].have & (1u << NTL_PERF_PS_PID));
        CHECK(!(s1.procs[1].have & (1u << NTL_PERF_PS_WS)));
    }
    /* the end of the capture is NTL_ERR_EOF, not an empty sample */
    CHECK_EQ_INT(ntl_source_ps_take(src, &ix, true, true, &s2, &err), NTL_ERR_EOF);
    ntl_perf_ps_sample_free(&s0);
    ntl_perf_ps_sample_free(&s1);
    ntl_perf_ps_sample_free(&s2);
    ntl_perf_titles_free(t);
    ntl_source_close(src);
    remove(path);
}

static void test_specs(void)
{
    struct ntl_source *src = (struct ntl_source *)&src;
    struct ntl_error err;
    char host[256];
    /* lib/source does not open remote specs: lib/msrpc does */
    CHECK_EQ_INT(ntl_source_open("smb://user@host", NULL, &src, &err), NTL_ERR_UNSUPPORTED);
    CHECK(src == NULL);
    CHECK(ntl_source_spec_is_remote("\\\\host") && ntl_source_spec_is_remote("smb://h"));
    CHECK(!ntl_source_spec_is_remote("local") && !ntl_source_spec_is_remote("a.ntlcap"));

    CHECK(ntl_source_is_this_machine("") && ntl_source_is_this_machine("."));
    CHECK(ntl_source_is_this_machine("LocalHost"));
    CHECK(!ntl_source_is_this_machine("no-such-host.invalid"));
    CHECK_EQ_INT(ntl_source_local_hostname(host, sizeof host, &err), 0);
    CHECK(host[0] != '\0');
    CHECK(ntl_source_is_this_machine(host));
    for (char *c = host; *c; c++)
        *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
    CHECK(ntl_source_is_this_machine(host));
    strncat(host, ".example.org", sizeof host - strlen(host) - 1);
    CHECK(ntl_source_is_this_machine(host));
    host[0] = host[0] == 'x' ? 'y' : 'x';
    CHECK(!ntl_source_is_this_machine(host));
}

int main(void)
{
    char path[256];
    const char *tmp = getenv("TEMP") ? getenv("TEMP") : getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/ntlens-test-read-%d.ntlcap", tmp ? tmp : "/tmp",
             (int)(uintptr_t)&path % 100000);
    test_titles_policy(path);
    test_ps_take(path);
    test_specs();
    return check_exit();
}
