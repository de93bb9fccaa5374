/* Unit tests of the performance-data core: the title database, the
 * PERF_DATA_BLOCK parser on every real answer in ../shared/data/hkpd (and
 * each of its quirks), blocks built by hand with the writer, the counter
 * formulas checked against values worked out by hand, and capture files.
 * Runs natively and under Wine. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ntlens/buf.h"
#include "ntlens/perf.h"
#include "ntlens/perf_build.h"
#include "ntlens/perf_capture.h"
#include "ntlens/perf_value.h"
#include "ntlens/reader.h"
#include "ntlens/source.h"

static struct ntl_buf load(const char *rel)
{
    struct ntl_buf b;
    struct ntl_error err;
    if (ntl_file_read(check_data_path(rel), 1 << 24, &b, &err) < 0) {
        fprintf(stderr, "cannot read %s: %s\n", check_data_path(rel), err.message);
        exit(1);
    }
    return b;
}

static bool contains(const char *s, const char *needle)
{
    return s && strstr(s, needle) != NULL;
}

/* ---------------- title database ---------------- */

static void test_titles_samba(void)
{
    struct ntl_buf names = load("hkpd/samba_Counter_009.bin");
    struct ntl_buf help = load("hkpd/samba_Explain_009.bin");
    struct ntl_perf_titles *t = ntl_perf_titles_new();
    struct ntl_error err;
    uint32_t idx = 0;

    /* REG_BINARY-typed bytes are the same MULTI_SZ: parsed as is */
    CHECK_EQ_INT(ntl_perf_titles_add(t, false, names.data, names.len, &err), 0);
    CHECK_EQ_INT(ntl_perf_titles_add(t, true, help.data, help.len, &err), 0);
    CHECK_EQ_U64(ntl_perf_titles_last_index(t), 16);   /* the (1, 16) pair */
    CHECK(ntl_perf_titles_name(t, 1) == NULL);         /* ... is not a name */
    CHECK_EQ_STR(ntl_perf_titles_name(t, 2), "Memory");
    CHECK_EQ_STR(ntl_perf_titles_name(t, 4), "Available Physical Kilobytes");
    CHECK_EQ_STR(ntl_perf_titles_name(t, 12), "Processor");
    CHECK_EQ_STR(ntl_perf_titles_name(t, 30), "Writes/sec");
    CHECK_EQ_INT(ntl_perf_titles_find(t, "mEmOrY", &idx), 0);
    CHECK_EQ_U64(idx, 2);
    CHECK_EQ_INT(ntl_perf_titles_find(t, "logical disk", &idx), 0);
    CHECK_EQ_U64(idx, 26);
    CHECK_EQ_INT(ntl_perf_titles_find(t, "No Such Object", &idx), NTL_ERR_NOT_FOUND);
    /* Explain 009: help under counter index + 1 */
    CHECK(ntl_perf_titles_help(t, 3) != NULL);
    CHECK(ntl_perf_titles_count(t, true) > 0);

    /* the fallback fills what Samba lacks and keeps what it has */
    CHECK(ntl_perf_titles_name(t, 230) == NULL);
    CHECK_EQ_INT(ntl_perf_titles_add_standard(t), 0);
    CHECK_EQ_STR(ntl_perf_titles_name(t, 230), "Process");
    CHECK_EQ_STR(ntl_perf_titles_name(t, 784), "ID Process");
    CHECK_EQ_STR(ntl_perf_titles_name(t, 1410), "Creating Process ID");
    CHECK_EQ_STR(ntl_perf_titles_name(t, 4), "Available Physical Kilobytes");
    CHECK(contains(ntl_perf_titles_help(t, 785), "unique identifier"));

    /* same name at several indices (Windows has "% Processor Time" at 6
     * for both Process and Processor, and duplicates elsewhere) */
    CHECK_EQ_INT(ntl_perf_titles_set(t, false, 5000, "% PROCESSOR TIME"), 0);
    CHECK_EQ_INT(ntl_perf_titles_set(t, false, 6, "% Processor Time"), 0);
    uint32_t all[4];
    CHECK_EQ_U64(ntl_perf_titles_find_all(t, "% processor time", all, 4), 2);
    CHECK_EQ_U64(all[0], 6);
    CHECK_EQ_U64(all[1], 5000);
    /* replacing a name unlinks the old one from the hash */
    CHECK_EQ_INT(ntl_perf_titles_set(t, false, 5000, "Renamed"), 0);
    CHECK_EQ_U64(ntl_perf_titles_find_all(t, "% processor time", all, 4), 1);
    CHECK_EQ_INT(ntl_perf_titles_find(t, "renamed", &idx), 0);
    CHECK_EQ_U64(idx, 5000);

    /* round trip through the encoder */
    struct ntl_buf enc;
    ntl_buf_init(&enc, 0);
    CHECK_EQ_INT(ntl_perf_titles_encode(t, false, &enc, &err), 0);
    struct ntl_perf_titles *t2 = ntl_perf_titles_new();
    CHECK_EQ_INT(ntl_perf_titles_add(t2, false, enc.data, enc.len, &err), 0);
    CHECK_EQ_U64(ntl_perf_titles_count(t2, false), ntl_perf_titles_count(t, false));
    CHECK_EQ_STR(ntl_perf_titles_name(t2, 26), "Logical Disk");
    CHECK_EQ_U64(ntl_perf_titles_last_index(t2), 5000);
    ntl_perf_titles_free(t2);
    ntl_buf_free(&enc);

    ntl_perf_titles_free(t);
    ntl_buf_free(&names);
    ntl_buf_free(&help);
}

static void test_titles_wine(void)
{
    struct ntl_buf names = load("hkpd/wine_Counter_009.bin");
    struct ntl_perf_titles *t = ntl_perf_titles_new();
    struct ntl_error err;
    uint32_t idx;
    CHECK_EQ_INT(ntl_perf_titles_add(t, false, names.data, names.len, &err), 0);
    CHECK_EQ_U64(ntl_perf_titles_last_index(t), 1847);
    CHECK_EQ_STR(ntl_perf_titles_name(t, 1846), "End Marker");
    CHECK_EQ_U64(ntl_perf_titles_count(t, false), 1);
    CHECK_EQ_INT(ntl_perf_titles_find(t, "END MARKER", &idx), 0);
    CHECK_EQ_U64(idx, 1846);
    ntl_perf_titles_free(t);
    ntl_buf_free(&names);
}

static size_t u16s(uint8_t *out, const char *s)
{
    size_t n = 0;
    for (; *s; s++, n += 2) {
        out[n] = (uint8_t)(*s == '|' ? 0 : *s);
        out[n + 1] = 0;
    }
    return n;
}

static void test_titles_bad(void)
{
    uint8_t buf[256];
    struct ntl_error err;
    struct ntl_perf_titles *t = ntl_perf_titles_new();
    size_t n;

    n = u16s(buf, "1|10|2|System|");
    CHECK_EQ_INT(ntl_perf_titles_add(t, false, buf, n - 1, &err), NTL_ERR_FORMAT); /* odd */
    CHECK_EQ_INT(ntl_perf_titles_add(t, false, buf, 0, &err), NTL_ERR_FORMAT);     /* no pair */
    n = u16s(buf, "||");
    CHECK_EQ_INT(ntl_perf_titles_add(t, false, buf, n, &err), NTL_ERR_FORMAT);
    CHECK(contains(err.message, "no index/text pair"));
    n = u16s(buf, "2|System|x4|Memory|");
    CHECK_EQ_INT(ntl_perf_titles_add(t, false, buf, n, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, 18); /* the "x4" string: after 2+1 and 6+1 units */
    n = u16s(buf, "2|System|0|Zero|");
    CHECK_EQ_INT(ntl_perf_titles_add(t, false, buf, n, &err), NTL_ERR_FORMAT);
    n = u16s(buf, "2|System|4");
    CHECK_EQ_INT(ntl_perf_titles_add(t, false, buf, n, &err), NTL_ERR_TRUNCATED);
    /* an index out of proportion to the answer is refused, not allocated */
    n = u16s(buf, "4000000|Huge|");
    CHECK_EQ_INT(ntl_perf_titles_add(t, false, buf, n, &err), NTL_ERR_LIMIT);
    /* ... and never written: help texts allow an index their names alone
     * would not (the reader's bound counts every answer added). */
    struct ntl_perf_titles *sparse = ntl_perf_titles_new();
    static uint8_t help[80000];
    memset(help, 'x', sizeof help);
    memcpy(help, "3\0\0\0", 4);
    memset(help + sizeof help - 4, 0, 4);
    CHECK_EQ_INT(ntl_perf_titles_add(sparse, true, help, sizeof help, &err), 0);
    n = u16s(buf, "100000|Far|");
    CHECK_EQ_INT(ntl_perf_titles_add(sparse, false, buf, n, &err), 0);
    struct ntl_buf enc;
    ntl_buf_init(&enc, 1u << 20);
    CHECK_EQ_INT(ntl_perf_titles_encode(sparse, false, &enc, &err), NTL_ERR_LIMIT);
    CHECK_EQ_U64(enc.len, 0);
    CHECK_EQ_INT(ntl_perf_titles_encode(sparse, true, &enc, &err), 0); /* 80 KB: in proportion */
    ntl_buf_free(&enc);
    ntl_perf_titles_free(sparse);
    n = u16s(buf, "99999999999|Huge|");
    CHECK_EQ_INT(ntl_perf_titles_add(t, false, buf, n, &err), NTL_ERR_FORMAT);
    /* a last string without terminator is tolerated */
    n = u16s(buf, "2|System|4|Memory");
    CHECK_EQ_INT(ntl_perf_titles_add(t, false, buf, n, &err), 0);
    CHECK_EQ_STR(ntl_perf_titles_name(t, 4), "Memory");
    /* non-English and non-ASCII: case folding of Latin-1 letters */
    const char *de = "Prozessorzeit (%) \xc3\x84nderung";
    CHECK_EQ_INT(ntl_perf_titles_set(t, false, 6, de), 0);
    uint32_t idx;
    CHECK_EQ_INT(ntl_perf_titles_find(t, "PROZESSORZEIT (%) \xc3\xa4NDERUNG", &idx), 0);
    CHECK_EQ_U64(idx, 6);
    ntl_perf_titles_free(t);
}

/* ---------------- real blocks ---------------- */

static void test_samba_global(void)
{
    struct ntl_buf raw = load("hkpd/samba_Global.bin");
    struct ntl_perf_block *b;
    struct ntl_error err;
    CHECK_EQ_INT(ntl_perf_block_classify(raw.data, raw.len, NULL), NTL_PERF_ANSWER_OK);
    CHECK_EQ_INT(ntl_perf_block_parse(raw.data, raw.len, &b, &err), 0);
    if (!b)
        return;
    CHECK_EQ_U64(b->version, 1);
    CHECK_EQ_U64(b->header_length, 112);
    CHECK_EQ_U64(b->total_byte_length, 1128);
    CHECK_EQ_U64(b->size, 1240);
    CHECK_EQ_STR(b->system_name, "HKPDTEST");
    CHECK_EQ_U64(b->perf_time, 764);
    CHECK_EQ_U64(b->perf_freq, 100);
    CHECK_EQ_U64(b->perf_time_100ns, 71281);
    CHECK_EQ_U64(b->system_time.year, 2026);
    CHECK_EQ_U64(b->system_time.second, 55);
    /* each Samba quirk recognised on purpose */
    CHECK(b->quirks & NTL_PERF_QUIRK_TOTAL_EXCLUDES_HEADER);
    CHECK(b->quirks & NTL_PERF_QUIRK_WIDE_DWORD);
    CHECK(b->quirks & NTL_PERF_QUIRK_COUNTER_BLOCK_PADDING);
    CHECK_EQ_U64(b->nobjects, 4);

    const struct ntl_perf_object *mem = ntl_perf_block_find_object(b, 2);
    CHECK(mem != NULL);
    if (mem) {
        CHECK_EQ_U64(mem->file_offset, 0x70);
        CHECK_EQ_INT(mem->num_instances, NTL_PERF_NO_INSTANCES);
        CHECK_EQ_U64(mem->ninstances, 0);
        CHECK_EQ_U64(mem->ncounters, 4);
        CHECK_EQ_U64(mem->counters[0].name_index, 4);
        CHECK_EQ_U64(mem->counters[0].size, 8);
        CHECK_EQ_INT(mem->counters[0].default_scale, -6);
        CHECK_EQ_U64(mem->counters[0].detail_level, 100);
        CHECK_EQ_U64(ntl_perf_counter_u64(mem, 0, 0), 23671108);
        CHECK_EQ_U64(ntl_perf_counter_u64(mem, 2, 0), 24684084);
    }
    const struct ntl_perf_object *cpu = ntl_perf_block_find_object(b, 12);
    CHECK(cpu != NULL);
    if (cpu) {
        CHECK_EQ_U64(cpu->ninstances, 3);
        CHECK_EQ_STR(cpu->instances[0].name, "cpu0");
        CHECK_EQ_STR(cpu->instances[1].name, "cpu1");
        CHECK_EQ_STR(cpu->instances[2].name, "_Total");
        CHECK_EQ_U64(cpu->instances[0].file_offset, 0x258);
        CHECK_EQ_U64(cpu->instances[0].counters_size, 48);
        CHECK_EQ_INT(cpu->instances[0].unique_id, -1);
        CHECK(cpu->instances[0].parent == NULL);
        CHECK_EQ_U64(cpu->counters[0].type, NTL_PERF_100NSEC_TIMER);
        CHECK_EQ_U64(ntl_perf_counter_u64(cpu, 0, 0), 21358);
        CHECK_EQ_U64(ntl_perf_counter_u64(cpu, 0, 1), 24289);
        CHECK_EQ_U64(ntl_perf_counter_u64(cpu, 3, 0), 35625);
        CHECK(ntl_perf_counter_data(cpu, 4, 0) == NULL);
        CHECK(ntl_perf_counter_data(cpu, 0, 3) == NULL);
    }
    const struct ntl_perf_object *disk = ntl_perf_block_find_object(b, 26);
    CHECK(disk != NULL);
    if (disk) {
        CHECK_EQ_STR(disk->instances[0].name, "/");
        CHECK_EQ_U64(ntl_perf_counter_u64(disk, 0, 0), 236850);
        /* a DWORD sent in 8 bytes: the low half, as the type says */
        CHECK_EQ_U64(disk->counters[1].type, NTL_PERF_COUNTER_COUNTER);
        CHECK_EQ_U64(ntl_perf_counter_u64(disk, 1, 0), 0x00b593fa);
    }
    const struct ntl_perf_object *procs = ntl_perf_block_find_object(b, 22);
    CHECK(procs && ntl_perf_counter_u64(procs, 0, 0) == 120);
    CHECK(ntl_perf_block_find_object(b, 230) == NULL);
    ntl_perf_block_free(b);
    ntl_buf_free(&raw);
}

static void test_all_samba_answers(void)
{
    static const char *files[] = {"samba_2.bin", "samba_12.bin", "samba_230.bin",
                                  "samba_238.bin", "samba_2_12.bin", "samba_Global.bin"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "hkpd/%s", files[i]);
        struct ntl_buf raw = load(rel);
        struct ntl_perf_block *b = NULL;
        struct ntl_error err;
        CHECK_EQ_INT(ntl_perf_block_parse(raw.data, raw.len, &b, &err), 0);
        /* Samba ignores the object list and returns every object */
        CHECK(b && b->nobjects == 4);
        ntl_perf_block_free(b);
        ntl_buf_free(&raw);
    }
}

static void test_truncated_answers(void)
{
    struct ntl_error err;
    struct ntl_perf_block *b;
    size_t needed;

    struct ntl_buf zero = load("hkpd/samba_Global_truncated_buf1240.bin");
    CHECK_EQ_INT(ntl_perf_block_classify(zero.data, zero.len, &needed),
                 NTL_PERF_ANSWER_ZERO_FILLED);
    CHECK_EQ_INT(ntl_perf_block_parse(zero.data, zero.len, &b, &err), NTL_ERR_TRUNCATED);
    CHECK(b == NULL);
    CHECK_EQ_STR(err.structure, "PERF_DATA_BLOCK");
    CHECK_EQ_U64(err.offset, 112);
    CHECK(contains(err.message, "zero"));
    CHECK(contains(err.message, "larger"));
    ntl_buf_free(&zero);

    struct ntl_buf small = load("hkpd/samba_2_truncated_buf512.bin");
    CHECK_EQ_INT(ntl_perf_block_classify(small.data, small.len, &needed), NTL_PERF_ANSWER_SHORT);
    CHECK_EQ_U64(needed, 1240); /* Samba's header-less total plus the header */
    CHECK_EQ_INT(ntl_perf_block_parse(small.data, small.len, &b, &err), NTL_ERR_TRUNCATED);
    ntl_buf_free(&small);

    /* every prefix of a real answer fails cleanly */
    struct ntl_buf raw = load("hkpd/samba_Global.bin");
    int failures = 0;
    for (size_t n = 0; n < raw.len; n++) {
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, raw.data, n);
        int rc = ntl_perf_block_parse(copy, n, &b, &err);
        if (rc >= 0) {
            failures++;
            ntl_perf_block_free(b);
        } else if (rc != NTL_ERR_TRUNCATED && rc != NTL_ERR_FORMAT) {
            failures++;
        }
        free(copy);
    }
    CHECK_EQ_INT(failures, 0);
    CHECK_EQ_INT(ntl_perf_block_classify(raw.data, 40, NULL), NTL_PERF_ANSWER_INVALID);
    ntl_buf_free(&raw);
}

static void test_bad_blocks(void)
{
    struct ntl_buf raw = load("hkpd/samba_Global.bin");
    struct ntl_error err;
    struct ntl_perf_block *b;
    uint8_t *p = malloc(raw.len + 88);

    /* no "PERF" */
    memcpy(p, raw.data, raw.len);
    p[0] = 'X';
    CHECK_EQ_INT(ntl_perf_block_parse(p, raw.len, &b, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, 0);
    CHECK(contains(err.message, "PERF"));
    /* block TotalByteLength 0 */
    memcpy(p, raw.data, raw.len);
    ntl_put_le32(p + 20, 0);
    CHECK_EQ_INT(ntl_perf_block_parse(p, raw.len, &b, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, 20);
    /* an object's TotalByteLength 0 (would loop forever if trusted) */
    memcpy(p, raw.data, raw.len);
    ntl_put_le32(p + 0x178, 0);
    CHECK_EQ_INT(ntl_perf_block_parse(p, raw.len, &b, &err), NTL_ERR_FORMAT);
    CHECK_EQ_STR(err.structure, "PERF_OBJECT_TYPE");
    CHECK_EQ_U64(err.offset, 0x178);
    CHECK(contains(err.message, "TotalByteLength 0"));
    /* an object length pointing outside the block */
    memcpy(p, raw.data, raw.len);
    ntl_put_le32(p + 0x178, 0x10000);
    CHECK_EQ_INT(ntl_perf_block_parse(p, raw.len, &b, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, 0x178);
    /* a counter beyond its counter block */
    memcpy(p, raw.data, raw.len);
    ntl_put_le32(p + 0x70 + 64 + 36, 64); /* Memory counter 0: CounterOffset 64 */
    CHECK_EQ_INT(ntl_perf_block_parse(p, raw.len, &b, &err), NTL_ERR_FORMAT);
    CHECK_EQ_STR(err.structure, "PERF_COUNTER_BLOCK");
    CHECK_EQ_U64(err.offset, 0x70 + 224);
    /* a name without room for itself */
    memcpy(p, raw.data, raw.len);
    ntl_put_le32(p + 0x258 + 20, 400); /* cpu0 NameLength */
    CHECK_EQ_INT(ntl_perf_block_parse(p, raw.len, &b, &err), NTL_ERR_FORMAT);
    CHECK_EQ_STR(err.structure, "PERF_INSTANCE_DEFINITION");
    CHECK_EQ_U64(err.offset, 0x258 + 16);
    /* NumInstances that cannot fit */
    memcpy(p, raw.data, raw.len);
    ntl_put_le32(p + 0x178 + 40, 0x7fffffff);
    CHECK_EQ_INT(ntl_perf_block_parse(p, raw.len, &b, &err), NTL_ERR_FORMAT);
    /* NumObjectTypes larger than what is there */
    memcpy(p, raw.data, raw.len);
    ntl_put_le32(p + 28, 5);
    CHECK_EQ_INT(ntl_perf_block_parse(p, raw.len, &b, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, 1240);

    /* Wine 8.0's misplaced provider data: the objects 88 bytes past
     * HeaderLength, zeros where the first object should be */
    memcpy(p, raw.data, 112);
    memset(p + 112, 0, 88);
    memcpy(p + 112 + 88, raw.data + 112, raw.len - 112);
    CHECK_EQ_INT(ntl_perf_block_parse(p, raw.len, &b, &err), NTL_ERR_FORMAT);
    CHECK_EQ_STR(err.structure, "PERF_OBJECT_TYPE");
    CHECK_EQ_U64(err.offset, 112);
    CHECK(contains(err.message, "Wine"));
    free(p);
    ntl_buf_free(&raw);
}

/* Deterministic mutations of a real answer: every single byte set to a few
 * values; the parser and value code must never crash (ASan catches reads). */
static void test_mutations(void)
{
    struct ntl_buf raw = load("hkpd/samba_Global.bin");
    uint8_t *p = malloc(raw.len);
    static const uint8_t vals[] = {0x00, 0x01, 0x07, 0x80, 0xff};
    size_t parsed = 0;
    for (size_t i = 0; i < raw.len; i++) {
        for (size_t v = 0; v < sizeof vals; v++) {
            struct ntl_perf_block *b;
            struct ntl_error err;
            memcpy(p, raw.data, raw.len);
            p[i] = vals[v];
            if (ntl_perf_block_parse(p, raw.len, &b, &err) < 0)
                continue;
            parsed++;
            for (size_t o = 0; o < b->nobjects; o++) {
                const struct ntl_perf_object *obj = &b->objects[o];
                size_t ni = obj->counters_block ? 1 : obj->ninstances;
                for (size_t c = 0; c < obj->ncounters; c++)
                    for (size_t in = 0; in < ni; in++) {
                        struct ntl_perf_raw r;
                        double val;
                        if (ntl_perf_raw_get(b, obj, c, in, &r, &err) == 0)
                            ntl_perf_value_compute(&r, &r, &val);
                    }
            }
            ntl_perf_block_free(b);
        }
    }
    CHECK(parsed > 0);
    free(p);
    ntl_buf_free(&raw);
}

/* ---------------- counter values from two real samples ---------------- */

static double value_of(const struct ntl_perf_block *b0, const struct ntl_perf_block *b1,
                       uint32_t obj, size_t counter, size_t instance, int *status)
{
    const struct ntl_perf_object *o0 = ntl_perf_block_find_object(b0, obj);
    const struct ntl_perf_object *o1 = ntl_perf_block_find_object(b1, obj);
    struct ntl_perf_raw r0, r1;
    struct ntl_error err;
    double v = -1;
    if (!o0 || !o1 || ntl_perf_raw_get(b0, o0, counter, instance, &r0, &err) < 0 ||
        ntl_perf_raw_get(b1, o1, counter, instance, &r1, &err) < 0) {
        *status = -1;
        return v;
    }
    *status = ntl_perf_value_compute(&r1, &r0, &v);
    return v;
}

static void test_values_samba(void)
{
    /* samba_Global.bin and samba_230.bin were taken one second apart:
     * PerfTime 764 -> 765 (PerfFreq 100), PerfTime100nSec 71281 -> 71377. */
    struct ntl_buf a = load("hkpd/samba_Global.bin"), c = load("hkpd/samba_230.bin");
    struct ntl_perf_block *b0, *b1;
    struct ntl_error err;
    int st;
    CHECK_EQ_INT(ntl_perf_block_parse(a.data, a.len, &b0, &err), 0);
    CHECK_EQ_INT(ntl_perf_block_parse(c.data, c.len, &b1, &err), 0);

    /* Logical Disk "/" Writes/sec, PERF_COUNTER_COUNTER, (N1-N0)/((D1-D0)/F):
     * N0 = 0x00b593fa = 11899898 at 0x4c0, N1 = 0x00b5a52a = 11904298;
     * (11904298 - 11899898) / ((765 - 764) / 100) = 4400 / 0.01 = 440000 */
    CHECK_NEAR(value_of(b0, b1, 26, 1, 0, &st), 440000.0, 1e-6);
    CHECK_EQ_INT(st, NTL_PERF_VALUE_OK);
    /* Processor cpu0 % User, PERF_100NSEC_TIMER, 100*(N1-N0)/(D1-D0):
     * N 21358 -> 21445 at 0x288, D 71281 -> 71377: 100 * 87 / 96 = 90.625 */
    CHECK_NEAR(value_of(b0, b1, 12, 0, 0, &st), 90.625, 1e-9);
    CHECK_EQ_INT(st, NTL_PERF_VALUE_OK);
    /* cpu1: 24289 -> 24344: 100 * 55 / 96 = 57.291666... */
    CHECK_NEAR(value_of(b0, b1, 12, 0, 1, &st), 5500.0 / 96.0, 1e-9);
    /* cpu0 % System: no change: 0 */
    CHECK_NEAR(value_of(b0, b1, 12, 1, 0, &st), 0.0, 0);
    CHECK_EQ_INT(st, NTL_PERF_VALUE_OK);
    /* Memory Available Physical Kilobytes, PERF_COUNTER_RAWCOUNT: N1 */
    CHECK_NEAR(value_of(b0, b1, 2, 0, 0, &st), 23667204.0, 0);
    /* Processes Process Count: 120 -> 122, raw: 122 */
    CHECK_NEAR(value_of(b0, b1, 22, 0, 0, &st), 122.0, 0);
    /* Samba's "% Nice CPU Utilization" type 0x40510500 is not in WinPerf.h */
    value_of(b0, b1, 12, 2, 0, &st);
    CHECK_EQ_INT(st, NTL_PERF_VALUE_UNKNOWN_TYPE);
    /* backwards in time: PDH refuses a negative delta */
    value_of(b1, b0, 12, 0, 0, &st);
    CHECK_EQ_INT(st, NTL_PERF_VALUE_NEGATIVE);
    /* a rate from one sample has no value yet */
    struct ntl_perf_raw r;
    double v;
    CHECK_EQ_INT(ntl_perf_raw_get(b1, ntl_perf_block_find_object(b1, 26), 1, 0, &r, &err), 0);
    CHECK_EQ_INT(ntl_perf_value_compute(&r, NULL, &v), NTL_PERF_VALUE_NEEDS_TWO);
    /* the same sample twice: no time passed */
    CHECK_EQ_INT(ntl_perf_value_compute(&r, &r, &v), NTL_PERF_VALUE_ZERO_DELTA);

    ntl_perf_block_free(b0);
    ntl_perf_block_free(b1);
    ntl_buf_free(&a);
    ntl_buf_free(&c);
}

/* ---------------- hand-built blocks ---------------- */

/* One object per formula family, values chosen so each result is easy to
 * work out by hand. */
static const struct ntl_perf_build_counter test_counters[] = {
    {10, 11, 0, 100, NTL_PERF_COUNTER_RAWCOUNT, 4},
    {12, 13, 0, 100, NTL_PERF_COUNTER_COUNTER, 4},
    {14, 15, 0, 100, NTL_PERF_COUNTER_BULK_COUNT, 8},
    {16, 17, 0, 200, NTL_PERF_COUNTER_TIMER, 8},
    {18, 19, 0, 200, NTL_PERF_COUNTER_TIMER_INV, 8},
    {20, 21, 0, 200, NTL_PERF_100NSEC_TIMER, 8},
    {22, 23, 0, 200, NTL_PERF_100NSEC_TIMER_INV, 8},
    {24, 25, 0, 300, NTL_PERF_RAW_FRACTION, 4},
    {26, 27, 0, 300, NTL_PERF_RAW_BASE, 4},
    {28, 29, 0, 300, NTL_PERF_SAMPLE_FRACTION, 4},
    {30, 31, 0, 300, NTL_PERF_SAMPLE_BASE, 4},
    {32, 33, 0, 300, NTL_PERF_AVERAGE_TIMER, 4},
    {34, 35, 0, 300, NTL_PERF_AVERAGE_BASE, 4},
    {36, 37, 0, 300, NTL_PERF_AVERAGE_BULK, 8},
    {38, 39, 0, 300, NTL_PERF_AVERAGE_BASE, 4},
    {40, 41, 0, 400, NTL_PERF_COUNTER_MULTI_TIMER, 8},
    {42, 43, 0, 400, NTL_PERF_COUNTER_MULTI_BASE, 8},
    {44, 45, 0, 400, NTL_PERF_100NSEC_MULTI_TIMER_INV, 8},
    {46, 47, 0, 400, NTL_PERF_COUNTER_MULTI_BASE, 8},
    {48, 49, 0, 100, NTL_PERF_ELAPSED_TIME, 8},
    {50, 51, 0, 100, NTL_PERF_COUNTER_QUEUELEN_TYPE, 4},
    {52, 53, 0, 100, NTL_PERF_COUNTER_DELTA, 4},
    {54, 55, 0, 100, NTL_PERF_PRECISION_100NS_TIMER, 8},
    {56, 57, 0, 100, NTL_PERF_COUNTER_LARGE_RAWCOUNT, 8},
    {58, 59, 0, 100, NTL_PERF_OBJ_TIME_TIMER, 8},
    {60, 61, -3, 100, NTL_PERF_COUNTER_LARGE_RAWCOUNT_HEX, 8},
};
#define NTEST (sizeof test_counters / sizeof test_counters[0])

static int build_sample(struct ntl_buf *out, int64_t perf_time, int64_t t100, int64_t obj_time,
                        int64_t obj_freq, const uint64_t *values)
{
    struct ntl_perf_builder bld;
    struct ntl_error err;
    struct ntl_perf_build_header h = {
        .system_time = {2026, 11, 0, 22, 3, 0, 0, 0},
        .perf_time = perf_time,
        .perf_freq = 1000000,
        .perf_time_100ns = t100,
        .system_name = "HANDMADE",
        .default_object = -1,
    };
    struct ntl_perf_build_object o = {
        .name_index = 2, .help_index = 3, .detail_level = 100, .default_counter = 0,
        .has_instances = false, .perf_time = obj_time, .perf_freq = obj_freq,
        .counters = test_counters, .num_counters = NTEST,
    };
    int rc;
    if ((rc = ntl_perf_build_begin(&bld, out, &h, &err)) < 0 ||
        (rc = ntl_perf_build_object(&bld, &o, &err)) < 0 ||
        (rc = ntl_perf_build_counters(&bld, values, &err)) < 0 ||
        (rc = ntl_perf_build_end_object(&bld, &err)) < 0 ||
        (rc = ntl_perf_build_finish(&bld, &err)) < 0)
        fprintf(stderr, "build: %s\n", err.message);
    return rc;
}

static void test_values_formulas(void)
{
    /* sample 0 at PerfTime 1,000,000 ticks (F = 1,000,000/s), 100ns 0;
     * sample 1 two seconds later: PerfTime 3,000,000, 100ns 20,000,000. */
    static const uint64_t v0[NTEST] = {
        7, 1000, 5000000000ull, 0, 0, 0, 0, 1, 4, 10, 100, 0, 0, 0, 0,
        0, 4, 0, 2, 0, 0, 50, 0, 1, 0, 0xabc};
    static const uint64_t v1[NTEST] = {
        9, 3000, 5000600000ull, 1000000, 500000, 5000000, 15000000, 3, 4, 40, 200, 4000000, 8,
        1000, 10, 4000000, 4, 10000000, 2, 70000000, 500000, 80, 5000000, 1ull << 40, 10000000,
        0xabc};
    struct ntl_buf b0, b1;
    ntl_buf_init(&b0, 0);
    ntl_buf_init(&b1, 0);
    CHECK(build_sample(&b0, 1000000, 0, 100000000, 10000000, v0) > 0);
    CHECK(build_sample(&b1, 3000000, 20000000, 120000000, 10000000, v1) > 0);
    struct ntl_perf_block *k0, *k1;
    struct ntl_error err;
    CHECK_EQ_INT(ntl_perf_block_parse(b0.data, b0.len, &k0, &err), 0);
    CHECK_EQ_INT(ntl_perf_block_parse(b1.data, b1.len, &k1, &err), 0);
    CHECK_EQ_U64(k1->quirks, 0); /* a Windows-shaped block has no quirk */
    int st;
    double expect[NTEST] = {
        9,                          /* RAWCOUNT: N1 */
        1000,                       /* COUNTER: 2000 / (2000000/1e6) */
        300000,                     /* BULK: 600000 / 2 s */
        50,                         /* TIMER: 100 * 1e6 / 2e6 */
        75,                         /* TIMER_INV: 100 * (1 - 0.5e6 / 2e6) */
        25,                         /* 100NSEC_TIMER: 100 * 5e6 / 2e7 */
        25,                         /* 100NSEC_TIMER_INV: 100 * (1 - 1.5e7 / 2e7) */
        75,                         /* RAW_FRACTION: 100 * 3 / 4 */
        -1,                         /* RAW_BASE: hidden */
        30,                         /* SAMPLE_FRACTION: 100 * 30 / 100 */
        -1,
        0.5,                        /* AVERAGE_TIMER: (4e6 / 1e6) / 8 */
        -1,
        100,                        /* AVERAGE_BULK: 1000 / 10 */
        -1,
        5e7,                        /* MULTI_TIMER: 100 * (4e6 / (2e6 / 1e6)) / 4, Microsoft's
                                       formula divides the tick delta by the frequency */
        -1,
        150,                        /* 100NSEC_MULTI_TIMER_INV: 100 * (2 - 1e7 / 2e7) */
        -1,
        5,                          /* ELAPSED: (120000000 - 70000000) / 1e7 */
        0.25,                       /* QUEUELEN: 500000 / 2000000 */
        30,                         /* DELTA: 80 - 50 */
        50,                         /* PRECISION_100NS: 100 * 5e6 / (1<<40 - 1)... see below */
        (double)(1ull << 40),       /* LARGE_RAWCOUNT */
        50,                         /* OBJ_TIME_TIMER: 100 * 1e7 / 2e7 */
        0xabc,                      /* LARGE_RAWCOUNT_HEX */
    };
    /* PRECISION_100NS_TIMER takes its time from the next counter (here the
     * LARGE_RAWCOUNT: 1 -> 2^40) */
    expect[22] = 100.0 * 5000000.0 / (double)((1ull << 40) - 1);
    for (size_t i = 0; i < NTEST; i++) {
        double v = value_of(k0, k1, 2, i, 0, &st);
        if (expect[i] < 0) {
            CHECK_EQ_INT(st, NTL_PERF_VALUE_HIDDEN);
            continue;
        }
        if (st != NTL_PERF_VALUE_OK || fabs(v - expect[i]) > 1e-9 * fabs(expect[i]) + 1e-12)
            fprintf(stderr, "counter %zu (%s): status %d value %.17g, expected %.17g\n", i,
                    ntl_perf_type_name(test_counters[i].type), st, v, expect[i]);
        CHECK_EQ_INT(st, NTL_PERF_VALUE_OK);
        CHECK_NEAR(v, expect[i], 1e-9 * fabs(expect[i]) + 1e-12);
    }
    /* one-sample values need no earlier sample */
    const struct ntl_perf_object *o = ntl_perf_block_find_object(k1, 2);
    struct ntl_perf_raw r;
    double v;
    CHECK_EQ_INT(ntl_perf_raw_get(k1, o, 19, 0, &r, &err), 0);
    CHECK_EQ_INT(ntl_perf_value_compute(&r, NULL, &v), NTL_PERF_VALUE_OK);
    CHECK_NEAR(v, 5.0, 1e-12);
    /* an object without a clock (Samba's): elapsed time against the block's
     * PerfTime100nSec, 20000000 here */
    {
        struct ntl_buf bz;
        struct ntl_perf_block *kz;
        ntl_buf_init(&bz, 0);
        CHECK(build_sample(&bz, 3000000, 20000000, 0, 0, v0) > 0);
        CHECK_EQ_INT(ntl_perf_block_parse(bz.data, bz.len, &kz, &err), 0);
        const struct ntl_perf_object *oz = ntl_perf_block_find_object(kz, 2);
        CHECK_EQ_INT(ntl_perf_raw_get(kz, oz, 19, 0, &r, &err), 0);
        CHECK_EQ_INT(ntl_perf_value_compute(&r, NULL, &v), NTL_PERF_VALUE_OK);
        CHECK_NEAR(v, 2.0, 1e-12); /* (20000000 - 0) / 1e7 */
        ntl_perf_block_free(kz);
        ntl_buf_free(&bz);
    }
    /* the scale is reported, not applied */
    CHECK_EQ_INT(o->counters[25].default_scale, -3);
    CHECK_NEAR(ntl_perf_scale(-3), 0.001, 1e-15);
    CHECK_NEAR(ntl_perf_scale(2), 100, 0);
    /* a fraction whose base is missing is refused at the definition */
    o = ntl_perf_block_find_object(k0, 2);
    ntl_perf_block_free(k0);
    ntl_perf_block_free(k1);
    ntl_buf_free(&b0);
    ntl_buf_free(&b1);
}

static void test_types(void)
{
    char buf[32];
    uint32_t t;
    CHECK_EQ_STR(ntl_perf_type_name(0x10410400), "PERF_COUNTER_COUNTER");
    CHECK_EQ_STR(ntl_perf_type_name(0x30240500), "PERF_ELAPSED_TIME");
    CHECK(ntl_perf_type_name(0x40510500) == NULL);
    CHECK_EQ_STR(ntl_perf_type_format(0x40510500, buf, sizeof buf), "0x40510500");
    CHECK(ntl_perf_type_parse("counter_counter", &t) && t == NTL_PERF_COUNTER_COUNTER);
    CHECK(ntl_perf_type_parse("PERF_100NSEC_TIMER", &t) && t == NTL_PERF_100NSEC_TIMER);
    CHECK(!ntl_perf_type_parse("PERF_NOTHING", &t));
    CHECK(ntl_perf_type_is_base(NTL_PERF_AVERAGE_BASE));
    CHECK(ntl_perf_type_needs_base(NTL_PERF_RAW_FRACTION));
    CHECK(!ntl_perf_type_needs_base(NTL_PERF_COUNTER_COUNTER));
    CHECK(ntl_perf_type_needs_two_samples(NTL_PERF_AVERAGE_BULK));
    CHECK(ntl_perf_type_needs_two_samples(NTL_PERF_COUNTER_COUNTER));
    CHECK(!ntl_perf_type_needs_two_samples(NTL_PERF_ELAPSED_TIME));
    CHECK(!ntl_perf_type_needs_two_samples(NTL_PERF_RAW_FRACTION));
    CHECK(ntl_perf_type_is_hidden(NTL_PERF_COUNTER_TEXT));
    CHECK(ntl_perf_type_is_hidden(NTL_PERF_COUNTER_NODATA));
}

/* ---------------- instances: "#N" and parents ---------------- */

static void test_instances(void)
{
    static const struct ntl_perf_build_counter pc[] = {
        {784, 785, 0, 100, NTL_PERF_COUNTER_RAWCOUNT, 4},
    };
    static const struct ntl_perf_build_counter tc[] = {
        {804, 805, 0, 100, NTL_PERF_COUNTER_RAWCOUNT, 4},
        {784, 785, 0, 100, NTL_PERF_COUNTER_RAWCOUNT, 4},
    };
    static const char *procs[] = {"svchost", "System", "svchost", "svchost", "Idle"};
    struct ntl_buf out;
    struct ntl_perf_builder bld;
    struct ntl_error err;
    struct ntl_perf_build_header h = {.perf_freq = 1, .system_name = "X", .default_object = 230};
    struct ntl_perf_build_object thr = {.name_index = 232, .help_index = 233, .detail_level = 200,
                                        .default_counter = -1, .has_instances = true,
                                        .counters = tc, .num_counters = 2};
    struct ntl_perf_build_object pro = {.name_index = 230, .help_index = 231, .detail_level = 100,
                                        .default_counter = 0, .has_instances = true,
                                        .counters = pc, .num_counters = 1};
    ntl_buf_init(&out, 0);
    CHECK_EQ_INT(ntl_perf_build_begin(&bld, &out, &h, &err), 0);
    /* threads before their processes: parents resolve regardless of order */
    CHECK_EQ_INT(ntl_perf_build_object(&bld, &thr, &err), 0);
    for (uint32_t p = 0; p < 5; p++)
        for (uint32_t t = 0; t < 2; t++) {
            char name[8];
            snprintf(name, sizeof name, "%u", t);
            struct ntl_perf_build_instance in = {name, 230, p, -1};
            uint64_t vals[2] = {100 * p + t, 4 * p};
            CHECK_EQ_INT(ntl_perf_build_instance(&bld, &in, vals, &err), 0);
        }
    CHECK_EQ_INT(ntl_perf_build_end_object(&bld, &err), 0);
    CHECK_EQ_INT(ntl_perf_build_object(&bld, &pro, &err), 0);
    for (uint32_t p = 0; p < 5; p++) {
        struct ntl_perf_build_instance in = {procs[p], 0, 0, -1};
        uint64_t vals[1] = {4 * p};
        CHECK_EQ_INT(ntl_perf_build_instance(&bld, &in, vals, &err), 0);
    }
    CHECK_EQ_INT(ntl_perf_build_end_object(&bld, &err), 0);
    CHECK(ntl_perf_build_finish(&bld, &err) > 0);

    struct ntl_perf_block *b;
    CHECK_EQ_INT(ntl_perf_block_parse(out.data, out.len, &b, &err), 0);
    if (!b)
        return;
    const struct ntl_perf_object *po = ntl_perf_block_find_object(b, 230);
    const struct ntl_perf_object *to = ntl_perf_block_find_object(b, 232);
    char name[64];
    CHECK_EQ_U64(po->instances[0].dup_index, 0);
    CHECK_EQ_U64(po->instances[2].dup_index, 1);
    CHECK_EQ_U64(po->instances[3].dup_index, 2);
    CHECK_EQ_U64(po->instances[4].dup_index, 0);
    ntl_perf_instance_path_name(&po->instances[3], name, sizeof name);
    CHECK_EQ_STR(name, "svchost#2");
    ntl_perf_instance_path_name(&po->instances[1], name, sizeof name);
    CHECK_EQ_STR(name, "System");
    /* threads: "parent/name#N" by parent name, as PDH shows them */
    CHECK(to->instances[0].parent == &po->instances[0]);
    CHECK(to->instances[9].parent == &po->instances[4]);
    ntl_perf_instance_path_name(&to->instances[0], name, sizeof name);
    CHECK_EQ_STR(name, "svchost/0");
    ntl_perf_instance_path_name(&to->instances[4], name, sizeof name);
    CHECK_EQ_STR(name, "svchost/0#1");
    ntl_perf_instance_path_name(&to->instances[7], name, sizeof name);
    CHECK_EQ_STR(name, "svchost/1#2");
    ntl_perf_instance_path_name(&to->instances[2], name, sizeof name);
    CHECK_EQ_STR(name, "System/0");
    CHECK_EQ_U64(ntl_perf_counter_u64(to, 0, 7), 301);
    CHECK_EQ_U64(to->detail_level, 200);
    CHECK(ntl_perf_detail_visible(po->detail_level, NTL_PERF_DETAIL_NOVICE));
    CHECK(!ntl_perf_detail_visible(to->detail_level, NTL_PERF_DETAIL_NOVICE));
    CHECK_EQ_INT(ntl_perf_object_find_counter(to, 784), 1);
    CHECK_EQ_INT(ntl_perf_object_find_counter(to, 9999), -1);
    ntl_perf_block_free(b);

    /* a parent index out of range stays unresolved, not an error */
    size_t first_thread = 0;
    for (size_t off = 0; off + 4 <= out.len; off++)
        if (ntl_le32(out.data + off) == 230 && ntl_le32(out.data + off + 4) == 0 &&
            ntl_le32(out.data + off - 4) >= 24) {
            first_thread = off;
            break;
        }
    CHECK(first_thread > 0);
    ntl_put_le32(out.data + first_thread + 4, 99);
    CHECK_EQ_INT(ntl_perf_block_parse(out.data, out.len, &b, &err), 0);
    if (b) {
        to = ntl_perf_block_find_object(b, 232);
        CHECK(to->instances[0].parent == NULL);
        ntl_perf_block_free(b);
    }
    ntl_buf_free(&out);
}

/* ---------------- capture files ---------------- */

static void test_capture(void)
{
    struct ntl_buf g = load("hkpd/samba_Global.bin"), c = load("hkpd/samba_230.bin");
    struct ntl_buf names = load("hkpd/samba_Counter_009.bin");
    struct ntl_error err;
    struct ntl_capture_writer *w = ntl_capture_writer_new("smb://test@hkpd");
    CHECK(w != NULL);
    CHECK_EQ_INT(ntl_capture_writer_titles(w, false, 9, names.data, names.len, &err), 0);
    CHECK_EQ_INT(ntl_capture_writer_snapshot(w, 1000, "Global", g.data, g.len, &err), 0);
    CHECK_EQ_INT(ntl_capture_writer_snapshot(w, 2000, "230", c.data, c.len, &err), 0);
    CHECK_EQ_U64(ntl_capture_writer_count(w), 2);

    const struct ntl_buf *bytes = ntl_capture_writer_bytes(w);
    struct ntl_capture *cap;
    CHECK_EQ_INT(ntl_capture_parse(bytes->data, bytes->len, &cap, &err), 0);
    if (cap) {
        CHECK_EQ_STR(ntl_capture_description(cap), "smb://test@hkpd");
        CHECK_EQ_U64(ntl_capture_snapshot_count(cap), 2);
        const struct ntl_capture_snapshot *s = ntl_capture_snapshot(cap, 1);
        CHECK_EQ_U64(s->unix_ns, 2000);
        CHECK_EQ_STR(s->query, "230");
        CHECK(s->size == c.len && !memcmp(s->block, c.data, c.len));
        CHECK(ntl_capture_snapshot(cap, 2) == NULL);
        const struct ntl_capture_titles *t = ntl_capture_find_titles(cap, false, 9);
        CHECK(t && t->size == names.len && !memcmp(t->data, names.data, names.len));
        CHECK(ntl_capture_find_titles(cap, true, 9) == NULL);
        ntl_capture_free(cap);
    }
    /* every prefix is refused or parses a prefix of the snapshots; never crashes */
    int bad = 0;
    for (size_t n = 0; n < bytes->len; n++) {
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, bytes->data, n);
        int rc = ntl_capture_parse(copy, n, &cap, &err);
        if (rc == 0) {
            if (ntl_capture_snapshot_count(cap) > 2)
                bad++;
            ntl_capture_free(cap);
        } else if (rc != NTL_ERR_TRUNCATED && rc != NTL_ERR_FORMAT) {
            bad++;
        }
        free(copy);
    }
    CHECK_EQ_INT(bad, 0);
    /* the wrong magic */
    CHECK_EQ_INT(ntl_capture_parse(g.data, g.len, &cap, &err), NTL_ERR_FORMAT);
    CHECK_EQ_STR(err.structure, "capture header");

    /* as a source */
    char path[256];
    const char *tmp = getenv("TEMP") ? getenv("TEMP") : getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/ntlens-test-perf-%d.ntlcap", tmp ? tmp : "/tmp",
             (int)(uintptr_t)&path % 100000);
    CHECK_EQ_INT(ntl_capture_writer_save(w, path, &err), 0);
    struct ntl_source *src;
    CHECK_EQ_INT(ntl_source_open(path, NULL, &src, &err), 0);
    if (src) {
        struct ntl_buf blk;
        ntl_buf_init(&blk, 0);
        CHECK_EQ_U64(ntl_source_snapshot_count(src), 2);
        CHECK(!ntl_source_is_live(src));
        CHECK(contains(ntl_source_describe(src), "smb://test@hkpd"));
        CHECK_EQ_INT(ntl_source_query(src, "Global", &blk, &err), 0);
        CHECK(blk.len == g.len && !memcmp(blk.data, g.data, g.len));
        CHECK_EQ_INT(ntl_source_query(src, "Global", &blk, &err), 0);
        CHECK(blk.len == c.len && !memcmp(blk.data, c.data, c.len));
        CHECK_EQ_INT(ntl_source_query(src, "Global", &blk, &err), NTL_ERR_EOF);
        CHECK_EQ_INT(ntl_source_titles(src, NTL_TITLES_COUNTER, 9, &blk, &err), 0);
        CHECK_EQ_U64(blk.len, names.len);
        CHECK_EQ_INT(ntl_source_titles(src, NTL_TITLES_HELP, 9, &blk, &err), NTL_ERR_NOT_FOUND);
        ntl_buf_free(&blk);
        ntl_source_close(src);
    }
    remove(path);
    CHECK(ntl_source_open(path, NULL, &src, &err) < 0);
    ntl_capture_writer_free(w);
    ntl_buf_free(&g);
    ntl_buf_free(&c);
    ntl_buf_free(&names);
}

int main(void)
{
    test_titles_samba();
    test_titles_wine();
    test_titles_bad();
    test_samba_global();
    test_all_samba_answers();
    test_truncated_answers();
    test_bad_blocks();
    test_mutations();
    test_values_samba();
    test_values_formulas();
    test_types();
    test_instances();
    test_capture();
    return check_exit();
}
