/* Unit tests of lib/msrpc: DCE/RPC PDUs, NDR, winreg stubs, the RPC client
 * over an in-memory pipe replaying captured smbd answers, spec parsing, and
 * the Samba perfmon store records. Captured bytes come from a real smbd
 * (Samba 4.17, tests/msrpc/data/README). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ntlens/buf.h"
#include "ntlens/dcerpc.h"
#include "ntlens/msrpc.h"
#include "ntlens/ndr.h"
#include "ntlens/perf.h"
#include "ntlens/reader.h"
#include "ntlens/msrpc_source.h"
#include "ntlens/winreg.h"
#include "../../fuzz/msrpc/replay.h"
#include "../../lib/msrpc/smb-spec.h"

static struct ntl_buf load(const char *rel)
{
    struct ntl_buf b;
    struct ntl_error err;
    char path[4096];
    const char *root = getenv("NTLENS_SOURCE_ROOT");
    snprintf(path, sizeof path, "%s/tests/msrpc/data/%s", root ? root : ".", rel);
    ntl_buf_init(&b, 1u << 24);
    if (ntl_file_read(path, 1u << 24, &b, &err) < 0)
        fprintf(stderr, "cannot read %s\n", path);
    return b;
}

static void test_bind(void)
{
    struct ntl_buf b;
    struct ntl_error err;
    struct ntl_dcerpc_header h;

    ntl_buf_init(&b, 0);
    CHECK(ntl_dcerpc_build_bind(&b, 7, 4280, 4280, &ntl_winreg_syntax, &err) == 0);
    CHECK_EQ_U64(b.len, 72);
    CHECK(ntl_dcerpc_parse_header(b.data, b.len, &h, &err) == 0);
    CHECK_EQ_INT(h.ptype, NTL_DCERPC_BIND);
    CHECK_EQ_INT(h.frag_length, 72);
    CHECK_EQ_INT(h.call_id, 7);
    CHECK_EQ_INT(h.pfc_flags, 3);
    CHECK_EQ_INT(ntl_le16(b.data + 16), 4280);
    CHECK_EQ_INT(b.data[24], 1);                       /* one context */
    CHECK(!memcmp(b.data + 32, ntl_winreg_syntax.uuid, 16));
    CHECK_EQ_INT(ntl_le16(b.data + 48), 1);            /* winreg v1.0 */
    CHECK(!memcmp(b.data + 52, ntl_dcerpc_ndr_syntax.uuid, 16));
    CHECK_EQ_INT(ntl_le32(b.data + 68), 2);            /* NDR v2 */
    ntl_buf_free(&b);
}

/* A response PDU around stub bytes. */
static void put_response(struct ntl_buf *b, uint32_t call_id, uint8_t flags, const void *stub,
                         size_t n, uint32_t alloc_hint)
{
    uint8_t *p;
    ntl_buf_grow_zero(b, 24 + n, &p);
    p[0] = 5;
    p[2] = NTL_DCERPC_RESPONSE;
    p[3] = flags;
    p[4] = 0x10;
    ntl_put_le16(p + 8, (uint16_t)(24 + n));
    ntl_put_le32(p + 12, call_id);
    ntl_put_le32(p + 16, alloc_hint);
    memcpy(p + 24, stub, n);
}

/* The stream tracker finds a reply's end however the reads split it, stops
 * at that end, and refuses a frag_length shorter than a header. */
static void test_stream(void)
{
    static const uint8_t stub[40] = {1, 2, 3};
    struct ntl_dcerpc_stream st;
    struct ntl_buf b;
    size_t reply_len, off = 0;
    ntl_buf_init(&b, 0);
    put_response(&b, 3, NTL_DCERPC_PFC_FIRST_FRAG, stub, 40, 80);
    put_response(&b, 3, NTL_DCERPC_PFC_LAST_FRAG, stub, 40, 40);
    reply_len = b.len;
    put_response(&b, 4, NTL_DCERPC_PFC_FIRST_FRAG | NTL_DCERPC_PFC_LAST_FRAG, stub, 8, 8);
    ntl_dcerpc_stream_expect(&st);
    while (st.open) { /* three bytes a read, never past what it wants */
        size_t k = ntl_dcerpc_stream_want(&st) < 3 ? ntl_dcerpc_stream_want(&st) : 3;
        CHECK(ntl_dcerpc_stream_feed(&st, b.data + off, k) == (long)k);
        off += k;
    }
    CHECK(off == reply_len);
    CHECK(ntl_dcerpc_stream_want(&st) == 0);
    ntl_dcerpc_stream_expect(&st); /* the whole buffer in one read stops at the end */
    CHECK(ntl_dcerpc_stream_feed(&st, b.data, b.len) == (long)reply_len);
    b.data[8] = 15;
    b.data[9] = 0;
    ntl_dcerpc_stream_expect(&st);
    CHECK(ntl_dcerpc_stream_feed(&st, b.data, b.len) == -1);
    ntl_buf_free(&b);
}

static void test_request_fragments(void)
{
    struct ntl_buf req, stub, out;
    struct ntl_error err;
    struct ntl_dcerpc_response r;
    size_t off = 0, total = 0;
    int nfrag = 0;
    uint8_t *s;

    ntl_buf_init(&req, 0);
    ntl_buf_init(&stub, 0);
    ntl_buf_grow_zero(&stub, 10000, &s);
    for (int i = 0; i < 10000; i++)
        s[i] = (uint8_t)(i * 7);
    CHECK(ntl_dcerpc_build_request(&req, 9, 17, 0, s, 10000, 4280, &err) == 0);
    /* Three fragments: 4256 + 4256 + 1488 stub bytes. */
    while (off < req.len) {
        struct ntl_dcerpc_header h;
        CHECK(ntl_dcerpc_parse_header(req.data + off, req.len - off, &h, &err) == 0);
        CHECK(h.frag_length <= 4280);
        CHECK_EQ_INT(h.call_id, 9);
        CHECK_EQ_INT(ntl_le32(req.data + off + 16), 10000 - total); /* alloc_hint */
        CHECK_EQ_INT(ntl_le16(req.data + off + 22), 17);            /* opnum */
        CHECK_EQ_INT(!!(h.pfc_flags & 1), nfrag == 0);
        CHECK_EQ_INT(!!(h.pfc_flags & 2), off + h.frag_length == req.len);
        CHECK(!memcmp(req.data + off + 24, s + total, h.frag_length - 24u));
        total += h.frag_length - 24u;
        off += h.frag_length;
        nfrag++;
    }
    CHECK_EQ_INT(nfrag, 3);
    CHECK_EQ_U64(total, 10000);

    /* Reassembly of a response in three fragments. */
    ntl_buf_init(&out, 1u << 20);
    req.len = 0;
    put_response(&req, 9, 1, s, 4000, 10000);
    put_response(&req, 9, 0, s + 4000, 4000, 6000);
    put_response(&req, 9, 2, s + 8000, 2000, 2000);
    ntl_dcerpc_response_init(&r, 9, &out);
    CHECK_EQ_INT(ntl_dcerpc_response_feed(&r, req.data, 4024, &err), 0);
    CHECK_EQ_INT(ntl_dcerpc_response_feed(&r, req.data + 4024, 4024, &err), 0);
    CHECK_EQ_INT(ntl_dcerpc_response_feed(&r, req.data + 8048, 2024, &err), 1);
    CHECK_EQ_U64(out.len, 10000);
    CHECK(!memcmp(out.data, s, 10000));

    /* A wrong call id, a missing first flag, and alloc_hint over the cap. */
    ntl_dcerpc_response_init(&r, 10, &out);
    CHECK_EQ_INT(ntl_dcerpc_response_feed(&r, req.data, 4024, &err), NTL_ERR_FORMAT);
    CHECK(strstr(err.message, "call_id 9, expected 10") != NULL);
    ntl_dcerpc_response_init(&r, 9, &out);
    CHECK_EQ_INT(ntl_dcerpc_response_feed(&r, req.data + 4024, 4024, &err), NTL_ERR_FORMAT);
    out.limit = 5000;
    ntl_dcerpc_response_init(&r, 9, &out);
    CHECK_EQ_INT(ntl_dcerpc_response_feed(&r, req.data, 4024, &err), NTL_ERR_LIMIT);
    /* A fragment whose frag_length disagrees with its size. */
    out.limit = 1u << 20;
    ntl_dcerpc_response_init(&r, 9, &out);
    CHECK_EQ_INT(ntl_dcerpc_response_feed(&r, req.data, 4000, &err), NTL_ERR_FORMAT);
    ntl_buf_free(&req);
    ntl_buf_free(&stub);
    ntl_buf_free(&out);
}

static void test_fault(void)
{
    uint8_t f[32] = {5, 0, 3, 3, 0x10, 0, 0, 0, 32, 0, 0, 0, 4, 0, 0, 0};
    struct ntl_buf out;
    struct ntl_error err;
    struct ntl_dcerpc_response r;

    ntl_put_le32(f + 24, 0x1c010002);
    ntl_buf_init(&out, 0);
    ntl_dcerpc_response_init(&r, 4, &out);
    CHECK_EQ_INT(ntl_dcerpc_response_feed(&r, f, sizeof f, &err), NTL_ERR_REMOTE);
    CHECK_EQ_U64(r.fault_status, 0x1c010002);
    CHECK(strstr(err.message, "nca_s_op_rng_error") != NULL);
    CHECK_EQ_STR(ntl_dcerpc_fault_name(0x6f7), "nca_s_fault_ndr (RPC_X_BAD_STUB_DATA)");
    CHECK(ntl_dcerpc_fault_name(0x12345678) == NULL);
    /* Big-endian drep and a bad version are refused. */
    f[4] = 0x00;
    ntl_dcerpc_response_init(&r, 4, &out);
    CHECK_EQ_INT(ntl_dcerpc_response_feed(&r, f, sizeof f, &err), NTL_ERR_UNSUPPORTED);
    f[4] = 0x10;
    f[0] = 4;
    CHECK_EQ_INT(ntl_dcerpc_parse_header(f, sizeof f, &(struct ntl_dcerpc_header){0}, &err),
                 NTL_ERR_FORMAT);
    ntl_buf_free(&out);
}

static void test_query_value_stub(void)
{
    struct ntl_winreg_handle h;
    struct ntl_buf b;
    struct ntl_error err;

    memset(h.bytes, 0xab, sizeof h.bytes);
    ntl_buf_init(&b, 0);
    CHECK(ntl_winreg_build_query_value(&b, &h, "Global", 65536, &err) == 0);
    /* handle(20) | Length 14, MaximumLength 14, ptr | max 7, off 0, act 7,
     * "Global\0" (14) pad(2) | lpType ptr, 0 | lpData ptr, max 65536, off 0,
     * actual 0 | lpcbData ptr, 65536 | lpcbLen ptr, 0 */
    CHECK_EQ_U64(b.len, 20 + 8 + 12 + 16 + 8 + 16 + 8 + 8);
    CHECK_EQ_INT(ntl_le16(b.data + 20), 14);
    CHECK_EQ_INT(ntl_le16(b.data + 22), 14);
    CHECK(ntl_le32(b.data + 24) != 0);
    CHECK_EQ_INT(ntl_le32(b.data + 28), 7);
    CHECK_EQ_INT(ntl_le32(b.data + 32), 0);
    CHECK_EQ_INT(ntl_le32(b.data + 36), 7);
    CHECK_EQ_INT(ntl_le16(b.data + 40), 'G');
    CHECK_EQ_INT(ntl_le16(b.data + 52), 0);
    CHECK(ntl_le32(b.data + 56) != 0);                /* lpType */
    CHECK(ntl_le32(b.data + 64) != 0);                /* lpData */
    CHECK_EQ_INT(ntl_le32(b.data + 68), 65536);       /* max_count */
    CHECK_EQ_INT(ntl_le32(b.data + 72), 0);           /* offset */
    CHECK_EQ_INT(ntl_le32(b.data + 76), 0);           /* actual_count */
    CHECK_EQ_INT(ntl_le32(b.data + 84), 65536);       /* lpcbData */
    CHECK_EQ_INT(ntl_le32(b.data + 92), 0);           /* lpcbLen */
    ntl_buf_free(&b);
}

static void test_query_value_reply(void)
{
    /* lpType=3, lpData {max 16, off 0, act 5, "abcde"}, lpcbData=5, lpcbLen=5, OK */
    uint8_t s[] = {1, 0, 2, 0, 3, 0, 0, 0, 2, 0, 2, 0, 16, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0,
                   'a', 'b', 'c', 'd', 'e', 0, 0, 0, 3, 0, 2, 0, 5, 0, 0, 0, 4, 0, 2, 0,
                   5, 0, 0, 0, 0, 0, 0, 0};
    struct ntl_winreg_value v;
    struct ntl_error err;

    CHECK(ntl_winreg_parse_query_value_reply(s, sizeof s, &v, &err) == 0);
    CHECK_EQ_INT(v.type, 3);
    CHECK_EQ_INT(v.data_len, 5);
    CHECK(v.data && !memcmp(v.data, "abcde", 5));
    CHECK_EQ_INT(v.cb_data, 5);
    CHECK_EQ_INT(v.werror, 0);
    /* actual_count beyond max_count, then beyond the stub. */
    s[20] = 17;
    CHECK_EQ_INT(ntl_winreg_parse_query_value_reply(s, sizeof s, &v, &err), NTL_ERR_FORMAT);
    s[12] = 200;
    s[20] = 100;
    CHECK_EQ_INT(ntl_winreg_parse_query_value_reply(s, sizeof s, &v, &err), NTL_ERR_TRUNCATED);
    /* Every truncation of the stub fails cleanly. */
    s[12] = 16;
    s[20] = 5;
    for (size_t n = 0; n < sizeof s; n++)
        CHECK(ntl_winreg_parse_query_value_reply(s, n, &v, &err) < 0);
}

static void test_specs(void)
{
    struct ntl_smb_spec s;
    struct ntl_error err;
    char d[256];

    CHECK(ntl_smb_spec_parse("smb://CORP;admin@host.example:4455", &s, &err) == 0);
    CHECK_EQ_STR(s.domain, "CORP");
    CHECK_EQ_STR(s.user, "admin");
    CHECK_EQ_STR(s.host, "host.example");
    CHECK_EQ_INT(s.port, 4455);
    ntl_smb_spec_describe(&s, s.user, s.domain, d, sizeof d);
    CHECK_EQ_STR(d, "smb://CORP;admin@host.example:4455");
    CHECK(ntl_smb_spec_parse("smb://a%40b@[::1]:445/", &s, &err) == 0);
    CHECK_EQ_STR(s.user, "a@b");
    CHECK_EQ_STR(s.host, "::1");
    CHECK_EQ_INT(s.port, 445);
    CHECK(ntl_smb_spec_parse("\\\\FILESRV", &s, &err) == 0);
    CHECK_EQ_STR(s.host, "FILESRV");
    CHECK_EQ_INT(s.port, 0);
    CHECK(ntl_smb_spec_parse("smb://user:secret@host", &s, &err) == NTL_ERR_ARGUMENT);
    CHECK(strstr(err.message, "secret") == NULL);
    CHECK(ntl_smb_spec_parse("smb://host:0", &s, &err) == NTL_ERR_ARGUMENT);
    CHECK(ntl_smb_spec_parse("smb://host:99999", &s, &err) == NTL_ERR_ARGUMENT);
    CHECK(ntl_smb_spec_parse("smb://host/share", &s, &err) == NTL_ERR_ARGUMENT);
    CHECK(ntl_smb_spec_parse("smb://", &s, &err) == NTL_ERR_ARGUMENT);
    CHECK(ntl_smb_spec_parse("smb://u@", &s, &err) == NTL_ERR_ARGUMENT);
    CHECK(ntl_smb_spec_parse("smb://%zz@h", &s, &err) == NTL_ERR_ARGUMENT);
    CHECK(ntl_smb_spec_parse("\\\\host\\c$", &s, &err) == NTL_ERR_ARGUMENT);
}

/* The client against a recorded smbd session (msrpc-fetch --record --opnum
 * 200 -s 512 HOST Global "Counter 009" "Explain 009"): the same calls must
 * consume exactly the recorded answers. */
static void test_replay(struct ntl_buf *global)
{
    struct ntl_buf rec = load("smbd-hkpd-session.bin"), out, value;
    struct replay_pipe pipe = {rec.data, rec.len, 0, 0};
    struct ntl_rpc_client c;
    struct ntl_winreg_handle h;
    struct ntl_error err;
    struct ntl_perf_block *b = NULL;
    struct ntl_perf_titles *t = ntl_perf_titles_new();
    uint32_t fault = 0, idx = 0;
    const char *names[] = {"Global", "Counter 009", "Explain 009"};

    ntl_error_clear(&err);
    ntl_rpc_client_init(&c, &replay_ops, &pipe, 0);
    ntl_buf_init(&out, 1u << 20);
    ntl_buf_init(&value, 1u << 24);
    CHECK(rec.len > 60000);
    CHECK_EQ_INT(ntl_rpc_bind(&c, &ntl_winreg_syntax, &err), 0);
    CHECK_EQ_INT(c.max_xmit, 4280);
    CHECK_EQ_INT(ntl_winreg_open_hkpd(&c, &h, &err), 0);
    CHECK_EQ_INT(ntl_rpc_call(&c, 200, "", 0, &out, &fault, &err), NTL_ERR_REMOTE);
    CHECK_EQ_U64(fault, 0x1c010002);
    CHECK(strstr(err.message, "nca_s_op_rng_error") != NULL);
    for (int i = 0; i < 3; i++) {
        struct ntl_winreg_fetch f = {.initial_size = 512, .max_size = 64u << 20};
        CHECK_EQ_INT(ntl_winreg_fetch_value(&c, &h, names[i],
                                            i ? NTL_WINREG_VALUE_PLAIN : NTL_WINREG_VALUE_PERF_DATA,
                                            &f, &value, &err), 0);
        /* Samba answers 512 bytes with a cut-off block (Global) or with no
         * bytes (titles): one retry each. */
        CHECK_EQ_INT(f.attempts, 2);
        CHECK_EQ_INT(f.type, 3);
        if (i == 0) {
            CHECK_EQ_INT(ntl_perf_block_parse(value.data, value.len, &b, &err), 0);
            CHECK(b && ntl_perf_block_find_object(b, NTL_PERF_IDX_PROCESS) != NULL);
            ntl_buf_append(global, value.data, value.len);
        } else {
            CHECK_EQ_INT(ntl_perf_titles_add(t, i == 2, value.data, value.len, &err), 0);
        }
    }
    CHECK_EQ_INT(ntl_perf_titles_find(t, "ID Process", &idx), 0);
    CHECK_EQ_INT(idx, NTL_PERF_IDX_ID_PROCESS);
    CHECK_EQ_INT(ntl_winreg_close_key(&c, &h, &err), 0);
    CHECK_EQ_U64(pipe.pos, rec.len); /* every recorded byte consumed, no more */
    ntl_perf_block_free(b);
    ntl_perf_titles_free(t);
    ntl_rpc_client_free(&c);
    ntl_buf_free(&out);
    ntl_buf_free(&value);
    ntl_buf_free(&rec);
}

/* Samba's recorded bind_ack with fragment sizes below what C706 requires
 * every peer to take: refused at bind, naming the field and its offset. */
static void test_bind_ack_small(void)
{
    static const struct {
        size_t at;
        const char *field;
    } cases[] = {{16, "max_xmit_frag 20 "}, {18, "max_recv_frag 20 "}};
    for (size_t i = 0; i < 2; i++) {
        struct ntl_buf rec = load("smbd-hkpd-session.bin");
        struct replay_pipe pipe = {rec.data, rec.len, 0, 0};
        struct ntl_rpc_client c;
        struct ntl_error err;
        CHECK(rec.len > 20 && rec.data[2] == NTL_DCERPC_BIND_ACK);
        ntl_put_le16(rec.data + cases[i].at, 20);
        ntl_rpc_client_init(&c, &replay_ops, &pipe, 0);
        CHECK_EQ_INT(ntl_rpc_bind(&c, &ntl_winreg_syntax, &err), NTL_ERR_FORMAT);
        CHECK_EQ_U64(err.offset, cases[i].at);
        CHECK(strstr(err.message, cases[i].field) && strstr(err.message, "1432"));
        ntl_rpc_client_free(&c);
        ntl_buf_free(&rec);
    }
}

/* Every prefix of a recorded session makes the client fail cleanly. */
static void test_replay_truncated(void)
{
    struct ntl_buf rec = load("smbd-perflib-session.bin"), value;
    size_t ok = 0;

    ntl_buf_init(&value, 1u << 20);
    for (size_t n = 0; n <= rec.len; n++) {
        struct replay_pipe pipe = {rec.data, n, 0, 0};
        struct ntl_rpc_client c;
        struct ntl_winreg_handle hklm, key;
        struct ntl_winreg_fetch f = {.initial_size = 100};
        struct ntl_error err;
        int rc;
        ntl_rpc_client_init(&c, &replay_ops, &pipe, 0);
        rc = ntl_rpc_bind(&c, &ntl_winreg_syntax, &err);
        if (rc >= 0)
            rc = ntl_winreg_open_hklm(&c, &hklm, &err);
        if (rc >= 0)
            rc = ntl_winreg_open_key(&c, &hklm, "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib",
                                     &key, &err);
        if (rc >= 0)
            rc = ntl_winreg_fetch_value(&c, &key, "Last Counter", NTL_WINREG_VALUE_PLAIN, &f,
                                        &value, &err);
        if (rc >= 0) {
            CHECK_EQ_INT(f.type, 4); /* REG_DWORD */
            CHECK_EQ_U64(value.len, 4);
            ok++;
        } else {
            CHECK(rc == NTL_ERR_EOF || rc == NTL_ERR_TRUNCATED || rc == NTL_ERR_FORMAT);
        }
        ntl_rpc_client_free(&c);
    }
    CHECK(ok > 0 && ok < rec.len);
    ntl_buf_free(&value);
    ntl_buf_free(&rec);
}

struct record {
    int db;
    char key[64];
    uint8_t value[2048];
    size_t len;
};

struct records {
    struct record *r;
    size_t n, cap;
};

static int collect(void *ctx, enum ntl_samba_db db, const char *key, const void *value,
                   size_t len, struct ntl_error *err)
{
    struct records *rs = ctx;
    (void)err;
    if (rs->n == rs->cap) {
        struct record *grown = realloc(rs->r, (rs->cap ? rs->cap * 2 : 256) * sizeof *rs->r);
        if (!grown)
            return NTL_ERR_NOMEM;
        rs->r = grown;
        rs->cap = rs->cap ? rs->cap * 2 : 256;
    }
    rs->r[rs->n].db = db;
    snprintf(rs->r[rs->n].key, sizeof rs->r[rs->n].key, "%s", key);
    rs->r[rs->n].len = len < 2048 ? len : 2048;
    memcpy(rs->r[rs->n].value, value, rs->r[rs->n].len);
    rs->n++;
    return NTL_OK;
}

static const struct record *find(const struct records *rs, int db, const char *key)
{
    for (size_t i = 0; i < rs->n; i++)
        if (rs->r[i].db == db && !strcmp(rs->r[i].key, key))
            return &rs->r[i];
    return NULL;
}

static long num(const struct record *r)
{
    char buf[64] = "";
    if (!r)
        return -1;
    memcpy(buf, r->value, r->len < 63 ? r->len : 63);
    return atol(buf);
}

/* The store records for a real block obey what reg_perfcount.c needs. */
static void test_samba_records(const struct ntl_buf *global)
{
    struct records rs = {0};
    struct ntl_samba_perfmon_stats st;
    struct ntl_perf_block *b = NULL;
    struct ntl_error err;
    const struct record *r;
    long base;

    CHECK_EQ_INT(ntl_perf_block_parse(global->data, global->len, &b, &err), 0);
    if (!b)
        return;
    CHECK_EQ_INT(ntl_samba_perfmon_records(b, NULL, collect, &rs, &st, &err), 0);
    base = num(find(&rs, NTL_SAMBA_NAMES_DB, "1"));
    CHECK(base * 2 == (long)st.last_index);
    CHECK(find(&rs, NTL_SAMBA_NAMES_DB, "0PerfFreq") != NULL);
    CHECK(find(&rs, NTL_SAMBA_DATA_DB, "0PerfTime") != NULL);
    CHECK(find(&rs, NTL_SAMBA_DATA_DB, "0PerfTime100nSec") != NULL);
    /* Process keeps 230 and ID Process 784; the instance count matches. */
    r = find(&rs, NTL_SAMBA_NAMES_DB, "230rel");
    CHECK(r && r->len == 1 && r->value[0] == 'p');
    r = find(&rs, NTL_SAMBA_NAMES_DB, "784rel");
    CHECK(r && r->len >= 6 && !memcmp(r->value, "c[230", 5));
    CHECK_EQ_INT(num(find(&rs, NTL_SAMBA_NAMES_DB, "230inst")),
                 ntl_perf_block_find_object(b, 230)->ninstances);
    /* Every counter's parents have lower indices and are objects; every
     * instance record holds 8 bytes per counter of its object. */
    for (size_t i = 0; i < rs.n; i++) {
        const struct record *x = &rs.r[i];
        size_t kl = strlen(x->key);
        if (x->db == NTL_SAMBA_NAMES_DB && kl > 3 && !strcmp(x->key + kl - 3, "rel") &&
            x->value[0] == 'c') {
            long self = atol(x->key);
            const char *q = (const char *)x->value + 2;
            while (*q && *q != ']') {
                char key[32];
                long parent = atol(q);
                CHECK(parent > 0 && parent < self);
                snprintf(key, sizeof key, "%ldrel", parent);
                r = find(&rs, NTL_SAMBA_NAMES_DB, key);
                CHECK(r && r->value[0] == 'p');
                q += strcspn(q, ",]");
                if (*q == ',')
                    q++;
            }
            CHECK(self % 2 == 0 && self <= (long)st.last_index);
        }
    }
    {
        /* Process: count its counters by rel records naming 230. */
        size_t counters = 0;
        for (size_t i = 0; i < rs.n; i++) {
            const struct record *x = &rs.r[i];
            size_t kl = strlen(x->key);
            if (x->db == NTL_SAMBA_NAMES_DB && kl > 3 && !strcmp(x->key + kl - 3, "rel") &&
                x->value[0] == 'c' && (strstr((const char *)x->value, "[230") ||
                                       strstr((const char *)x->value, ",230")))
                counters++;
        }
        r = find(&rs, NTL_SAMBA_DATA_DB, "230i0");
        CHECK(r && r->len == 8 * counters);
    }
    CHECK_EQ_INT(st.objects, b->nobjects);
    free(rs.r);
    ntl_perf_block_free(b);
}

/* A QueryValue reply stub: lpType 3, lpData with n bytes of `fill`,
 * lpcbData = needed, lpcbLen = n, werror. */
static void put_qv_reply(struct ntl_buf *pdus, uint32_t call_id, uint32_t n, uint8_t fill,
                         uint32_t needed, uint32_t werror)
{
    struct ntl_buf stub;
    uint8_t *d;
    ntl_buf_init(&stub, 0);
    ntl_buf_put_u32(&stub, 0x20000);
    ntl_buf_put_u32(&stub, 3);
    ntl_buf_put_u32(&stub, 0x20004);
    ntl_buf_put_u32(&stub, n + 16);
    ntl_buf_put_u32(&stub, 0);
    ntl_buf_put_u32(&stub, n);
    ntl_buf_grow_zero(&stub, n, &d);
    memset(d, fill, n);
    ntl_buf_align(&stub, 4);
    ntl_buf_put_u32(&stub, 0x20008);
    ntl_buf_put_u32(&stub, needed);
    ntl_buf_put_u32(&stub, 0x2000c);
    ntl_buf_put_u32(&stub, n);
    ntl_buf_put_u32(&stub, werror);
    put_response(pdus, call_id, 3, stub.data, stub.len, (uint32_t)stub.len);
    ntl_buf_free(&stub);
}

/* Windows' way: ERROR_MORE_DATA with the size needed in lpcbData (no
 * Windows host can run here, so these answers are built by hand). */
static void test_more_data(void)
{
    struct ntl_buf pdus, value;
    struct ntl_winreg_handle h = {{0}};
    struct ntl_error err;
    uint32_t id = 1;

    ntl_buf_init(&pdus, 0);
    ntl_buf_init(&value, 1u << 20);
    put_qv_reply(&pdus, id++, 0, 0, 100000, NTL_WERR_MORE_DATA);
    put_qv_reply(&pdus, id++, 3000, 'x', 3000, NTL_WERR_OK);
    {
        struct replay_pipe pipe = {pdus.data, pdus.len, 0, 0};
        struct ntl_rpc_client c;
        struct ntl_winreg_fetch f = {.initial_size = 4096, .max_size = 1u << 20};
        ntl_rpc_client_init(&c, &replay_ops, &pipe, 0);
        c.bound = true;
        CHECK_EQ_INT(ntl_winreg_fetch_value(&c, &h, "Counter 009", NTL_WINREG_VALUE_PLAIN, &f,
                                            &value, &err), 0);
        CHECK_EQ_INT(f.attempts, 2);
        CHECK(f.last_size >= 100000);
        CHECK_EQ_U64(value.len, 3000);
        CHECK_EQ_INT(value.data[2999], 'x');
        ntl_rpc_client_free(&c);
    }
    /* Always ERROR_MORE_DATA: doubling stops at the cap. */
    pdus.len = 0;
    for (id = 1; id <= 20; id++)
        put_qv_reply(&pdus, id, 0, 0, 0, NTL_WERR_MORE_DATA);
    {
        struct replay_pipe pipe = {pdus.data, pdus.len, 0, 0};
        struct ntl_rpc_client c;
        struct ntl_winreg_fetch f = {.initial_size = 4096, .max_size = 65536};
        ntl_rpc_client_init(&c, &replay_ops, &pipe, 0);
        c.bound = true;
        CHECK_EQ_INT(ntl_winreg_fetch_value(&c, &h, "Global", NTL_WINREG_VALUE_PERF_DATA, &f,
                                            &value, &err), NTL_ERR_LIMIT);
        CHECK_EQ_INT(f.attempts, 5); /* 4 KiB, 8, 16, 32, 64 KiB */
        CHECK(strstr(err.message, "does not fit in 65536 bytes") != NULL);
        ntl_rpc_client_free(&c);
    }
    /* Access denied on QueryValue names the cause. */
    pdus.len = 0;
    put_qv_reply(&pdus, 1, 0, 0, 0, NTL_WERR_ACCESS_DENIED);
    {
        struct replay_pipe pipe = {pdus.data, pdus.len, 0, 0};
        struct ntl_rpc_client c;
        struct ntl_winreg_fetch f = {0};
        ntl_rpc_client_init(&c, &replay_ops, &pipe, 0);
        c.bound = true;
        CHECK_EQ_INT(ntl_winreg_fetch_value(&c, &h, "Global", NTL_WINREG_VALUE_PERF_DATA, &f,
                                            &value, &err), NTL_ERR_ACCESS);
        CHECK(strstr(err.message, "administrator") != NULL);
        ntl_rpc_client_free(&c);
    }
    ntl_buf_free(&pdus);
    ntl_buf_free(&value);
}

/* Opening remote sources that cannot work fails cleanly on every platform
 * (Linux: libsmbclient; Windows and Wine: the named-pipe transport), and the
 * password never shows. */
static void test_source_errors(void)
{
    struct ntl_source_options opt = {.user = "someone", .password = "pw-Secret-42",
                                     .connect_timeout_ms = 2000};
    struct ntl_source *s = NULL;
    struct ntl_error err;
    char text[512];

    CHECK_EQ_INT(ntl_msrpc_source_open("smb://u:pw@host", &opt, &s, &err), NTL_ERR_ARGUMENT);
    CHECK(s == NULL);
    /* a spec without a host is refused before any connection or password */
    CHECK_EQ_INT(ntl_msrpc_source_check_spec("smb://", &err), NTL_ERR_ARGUMENT);
    CHECK(strstr(err.message, "no host") != NULL);
    CHECK_EQ_INT(ntl_msrpc_source_check_spec("smb://user@", &err), NTL_ERR_ARGUMENT);
    CHECK(strstr(err.message, "no host") != NULL);
    CHECK_EQ_INT(ntl_msrpc_source_check_spec("smb://CORP;admin@srv:4455", &err), 0);
    /* and specs that are not remote go to lib/source */
    CHECK(ntl_msrpc_source_open("/no/such/capture.ntlcap", &opt, &s, &err) < 0);
    CHECK(s == NULL && strstr(err.message, "cannot open") != NULL); /* the caller names the file */
    CHECK_EQ_INT(ntl_msrpc_source_open("\\\\no-such-host.invalid", &opt, &s, &err), NTL_ERR_CONNECT);
    CHECK(s == NULL);
    ntl_error_format(&err, text, sizeof text);
    CHECK(strstr(text, "no-such-host.invalid") != NULL);
    CHECK(strstr(text, "pw-Secret-42") == NULL);
    /* Port 1 on loopback: refused on Linux; Windows only speaks port 445. */
    CHECK(ntl_msrpc_source_open("smb://u@127.0.0.1:1", &opt, &s, &err) < 0);
    CHECK(s == NULL);
    CHECK(err.status == NTL_ERR_CONNECT || err.status == NTL_ERR_UNSUPPORTED);
    CHECK(strstr(err.message, "pw-Secret-42") == NULL);
}

/* A block Samba itself served (shared data, filled by Samba's example
 * daemon) already obeys reg_perfcount.c's order: it maps onto the store
 * with every index kept. */
static void test_samba_records_roundtrip(void)
{
    struct ntl_buf raw;
    struct records rs = {0};
    struct ntl_samba_perfmon_stats st;
    struct ntl_perf_block *b = NULL;
    struct ntl_error err;

    ntl_buf_init(&raw, 1u << 20);
    if (ntl_file_read(check_data_path("hkpd/samba_Global.bin"), 1u << 20, &raw, &err) < 0) {
        CHECK(!"hkpd/samba_Global.bin is readable");
        return;
    }
    CHECK_EQ_INT(ntl_perf_block_parse(raw.data, raw.len, &b, &err), 0);
    if (b) {
        CHECK_EQ_INT(ntl_samba_perfmon_records(b, NULL, collect, &rs, &st, &err), 0);
        CHECK_EQ_INT(st.moved_indices, 0);
        CHECK_EQ_INT(st.objects, 4);
        for (size_t i = 0; i < b->nobjects; i++) {
            char key[32];
            const struct record *r;
            snprintf(key, sizeof key, "%urel", b->objects[i].name_index);
            r = find(&rs, NTL_SAMBA_NAMES_DB, key);
            CHECK(r && r->value[0] == 'p');
            for (size_t c = 0; c < b->objects[i].ncounters; c++) {
                snprintf(key, sizeof key, "%utype", b->objects[i].counters[c].name_index);
                CHECK_EQ_INT(num(find(&rs, NTL_SAMBA_NAMES_DB, key)),
                             (long)b->objects[i].counters[c].type);
            }
        }
    }
    free(rs.r);
    ntl_perf_block_free(b);
    ntl_buf_free(&raw);
}

int main(void)
{
    test_bind();
    test_request_fragments();
    test_stream();
    test_fault();
    test_query_value_stub();
    test_query_value_reply();
    test_specs();
    test_source_errors();
    test_more_data();
    {
        struct ntl_buf global;
        ntl_buf_init(&global, 0);
        test_replay(&global);
        test_replay_truncated();
        test_bind_ack_small();
        if (global.len)
            test_samba_records(&global);
        test_samba_records_roundtrip();
        ntl_buf_free(&global);
    }
    return check_exit();
}
