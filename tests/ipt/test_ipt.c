/* Unit tests for the Intel PT packet layer: every packet kind from hand-made
 * bytes (Intel SDM encodings), errors with offsets, resynchronisation, PSB
 * search, circular-buffer unwrapping, last-IP and time tracking. */
#include "check.h"

#include "ntlens/ipt_event.h"
#include "ntlens/ipt_modules.h"
#include "ntlens/ipt_packet.h"
#include "ntlens/ipt_sync.h"
#include "ntlens/ipt_time.h"

#define PSB 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82

static int decode_one(const uint8_t *b, size_t n, struct ntl_ipt_packet *p, struct ntl_error *err)
{
    struct ntl_ipt_decoder d;
    ntl_ipt_decoder_init(&d, b, n, 0);
    int rc = ntl_ipt_next(&d, p, err);
    if (rc == 1)
        CHECK_EQ_U64(ntl_ipt_offset(&d), p->size);
    return rc;
}

#define ONE(...)                                                              \
    do {                                                                      \
        static const uint8_t b_[] = {__VA_ARGS__};                            \
        rc = decode_one(b_, sizeof b_, &p, &err);                             \
        CHECK_EQ_INT(rc, 1);                                                  \
        CHECK_EQ_INT(p.size, sizeof b_);                                      \
    } while (0)

static void test_packets(void)
{
    struct ntl_ipt_packet p;
    struct ntl_error err;
    int rc;

    ONE(0x00);
    CHECK_EQ_INT(p.type, NTL_IPT_PAD);
    CHECK_EQ_INT(p.count, 1);
    ONE(0x00, 0x00, 0x00);
    CHECK_EQ_INT(p.count, 3);
    ONE(PSB);
    CHECK_EQ_INT(p.type, NTL_IPT_PSB);
    ONE(0x02, 0x23);
    CHECK_EQ_INT(p.type, NTL_IPT_PSBEND);
    /* TNT-8 0b10110: stop bit 4, bits "011" oldest first. */
    ONE(0x16);
    CHECK_EQ_INT(p.type, NTL_IPT_TNT_8);
    CHECK_EQ_INT(p.count, 3);
    CHECK_EQ_U64(p.payload, 3);
    ONE(0xfe);
    CHECK_EQ_INT(p.count, 6);
    CHECK_EQ_U64(p.payload, 0x3f);
    /* TNT-64 with 47 bits. */
    ONE(0x02, 0xa3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
    CHECK_EQ_INT(p.type, NTL_IPT_TNT_64);
    CHECK_EQ_INT(p.count, 47);
    CHECK_EQ_U64(p.payload, 0x7fffffffffffull);
    /* IP packets, every compression. */
    ONE(0x0d);
    CHECK_EQ_INT(p.type, NTL_IPT_TIP);
    CHECK_EQ_INT(p.count, 0);
    ONE(0x31, 0x34, 0x12);
    CHECK_EQ_INT(p.type, NTL_IPT_TIP_PGE);
    CHECK_EQ_INT(p.count, 1);
    CHECK_EQ_U64(p.payload, 0x1234);
    ONE(0x41, 0x78, 0x56, 0x34, 0x12);
    CHECK_EQ_INT(p.type, NTL_IPT_TIP_PGD);
    CHECK_EQ_INT(p.count, 2);
    CHECK_EQ_U64(p.payload, 0x12345678);
    ONE(0x7d, 1, 2, 3, 4, 5, 0x80);
    CHECK_EQ_INT(p.type, NTL_IPT_FUP);
    CHECK_EQ_INT(p.count, 3);
    CHECK_EQ_U64(p.payload, 0x800504030201ull);
    ONE(0x8d, 1, 2, 3, 4, 5, 6);
    CHECK_EQ_INT(p.count, 4);
    ONE(0xcd, 1, 2, 3, 4, 5, 6, 7, 8);
    CHECK_EQ_INT(p.count, 6);
    CHECK_EQ_U64(p.payload, 0x0807060504030201ull);
    /* PIP: CR3 bits 51:5 in payload bits 47:1, NR in bit 0. */
    ONE(0x02, 0x43, 0x01, 0x0a, 0, 0, 0, 0);
    CHECK_EQ_INT(p.type, NTL_IPT_PIP);
    CHECK_EQ_U64(p.payload, 0xa000);
    CHECK_EQ_INT(p.flags, NTL_IPT_F_NR);
    ONE(0x99, 0x05);
    CHECK_EQ_INT(p.type, NTL_IPT_MODE_EXEC);
    CHECK_EQ_INT(p.flags, NTL_IPT_F_CSL | NTL_IPT_F_IF);
    ONE(0x99, 0x22);
    CHECK_EQ_INT(p.type, NTL_IPT_MODE_TSX);
    CHECK_EQ_INT(p.flags, NTL_IPT_F_ABRT);
    ONE(0x02, 0x83);
    CHECK_EQ_INT(p.type, NTL_IPT_STOP);
    ONE(0x02, 0x03, 0x21, 0x00);
    CHECK_EQ_INT(p.type, NTL_IPT_CBR);
    CHECK_EQ_U64(p.payload, 0x21);
    ONE(0x19, 1, 2, 3, 4, 5, 6, 7);
    CHECK_EQ_INT(p.type, NTL_IPT_TSC);
    CHECK_EQ_U64(p.payload, 0x07060504030201ull);
    ONE(0x59, 0xab);
    CHECK_EQ_INT(p.type, NTL_IPT_MTC);
    CHECK_EQ_U64(p.payload, 0xab);
    ONE(0x02, 0x73, 0x42, 0xc9, 0x00, 0x4c, 0x01);
    CHECK_EQ_INT(p.type, NTL_IPT_TMA);
    CHECK_EQ_U64(p.payload, 0xc942);
    CHECK_EQ_U64(p.aux, 0x14c);
    /* CYC: 5 bits, then 7 per extension byte. */
    ONE(0x0b);
    CHECK_EQ_INT(p.type, NTL_IPT_CYC);
    CHECK_EQ_U64(p.payload, 1);
    ONE(0xff, 0x03, 0x02);
    CHECK_EQ_U64(p.payload, 0x1f | (1u << 5) | (1u << 12));
    ONE(0x02, 0xc8, 0x99, 0x2e, 0x35, 0x00, 0x00);
    CHECK_EQ_INT(p.type, NTL_IPT_VMCS);
    CHECK_EQ_U64(p.payload, 0x352e99000ull);
    ONE(0x02, 0xf3);
    CHECK_EQ_INT(p.type, NTL_IPT_OVF);
    ONE(0x02, 0xc3, 0x88, 1, 2, 3, 4, 5, 6, 7, 8);
    CHECK_EQ_INT(p.type, NTL_IPT_MNT);
    CHECK_EQ_U64(p.payload, 0x0807060504030201ull);
    ONE(0x02, 0x92, 0xcd, 0xab, 0, 0);
    CHECK_EQ_INT(p.type, NTL_IPT_PTW);
    CHECK_EQ_U64(p.payload, 0xabcd);
    CHECK_EQ_INT(p.flags, NTL_IPT_F_IP);
    ONE(0x02, 0x32, 1, 2, 3, 4, 5, 6, 7, 8);
    CHECK_EQ_INT(p.count, 1);
    ONE(0x02, 0x22, 0x08, 0x5f);
    CHECK_EQ_INT(p.type, NTL_IPT_PWRE);
    CHECK_EQ_INT(p.flags, NTL_IPT_F_HW);
    CHECK_EQ_U64(p.aux, 0x5f);
    ONE(0x02, 0xa2, 0x55, 0x01, 0, 0, 0);
    CHECK_EQ_INT(p.type, NTL_IPT_PWRX);
    CHECK_EQ_U64(p.aux, 0x155);
    ONE(0x02, 0xe2);
    CHECK_EQ_INT(p.type, NTL_IPT_EXSTOP);
    CHECK_EQ_INT(p.flags, NTL_IPT_F_IP);
    ONE(0x02, 0xc2, 0x50, 0, 0, 0, 0x01, 0, 0, 0);
    CHECK_EQ_INT(p.type, NTL_IPT_MWAIT);
    CHECK_EQ_U64(p.payload, 0x50);
    CHECK_EQ_U64(p.aux, 1);
    ONE(0x02, 0x13, 0x8e, 0x2a);
    CHECK_EQ_INT(p.type, NTL_IPT_CFE);
    CHECK_EQ_U64(p.aux, 0x2a0e);
    CHECK_EQ_INT(p.flags, NTL_IPT_F_IP);
    ONE(0x02, 0x53, 0x01, 0xaa, 0x0b, 0xf0, 0, 0, 0, 0, 0);
    CHECK_EQ_INT(p.type, NTL_IPT_EVD);
    CHECK_EQ_U64(p.aux, 1);
    CHECK_EQ_U64(p.payload, 0xf00baa);
    ONE(0xd9, 0xc0, 0x1a, 0x03, 0x00);
    CHECK_EQ_INT(p.type, NTL_IPT_TRIG);
    CHECK_EQ_U64(p.aux, 0x31a);
    CHECK_EQ_INT(p.flags, NTL_IPT_F_IP | NTL_IPT_F_ICNTV);
    ONE(0xd9, 0x20, 0x03);
    CHECK_EQ_INT(p.flags, NTL_IPT_F_MULT);
    ONE(0x02, 0x33);
    CHECK_EQ_INT(p.type, NTL_IPT_BEP);
    ONE(0x02, 0xb3);
    CHECK_EQ_INT(p.flags, NTL_IPT_F_IP);

    /* BBP opens a block: a 0bxxxxx100 byte is then a BIP, not a TNT. */
    static const uint8_t block[] = {0x02, 0x63, 0x80, 0x0c, 1, 2, 3, 4, 0x02, 0x33, 0x0c};
    struct ntl_ipt_decoder d;
    ntl_ipt_decoder_init(&d, block, sizeof block, 0);
    CHECK_EQ_INT(ntl_ipt_next(&d, &p, &err), 1);
    CHECK_EQ_INT(p.type, NTL_IPT_BBP);
    CHECK_EQ_INT(ntl_ipt_next(&d, &p, &err), 1);
    CHECK_EQ_INT(p.type, NTL_IPT_BIP);
    CHECK_EQ_U64(p.aux, 1);
    CHECK_EQ_U64(p.payload, 0x04030201);
    CHECK_EQ_INT(ntl_ipt_next(&d, &p, &err), 1);
    CHECK_EQ_INT(p.type, NTL_IPT_BEP);
    CHECK_EQ_INT(ntl_ipt_next(&d, &p, &err), 1);
    CHECK_EQ_INT(p.type, NTL_IPT_TNT_8);
    ntl_error_clear(&err);
    CHECK_EQ_INT(ntl_ipt_next(&d, &p, &err), 0);
    CHECK_EQ_INT(err.status, 0); /* the end is not an error */
}

#define BAD(status, fault_, off, ...)                                          \
    do {                                                                      \
        static const uint8_t b_[] = {__VA_ARGS__};                            \
        struct ntl_ipt_decoder d_;                                            \
        ntl_ipt_decoder_init(&d_, b_, sizeof b_, 0x1000);                     \
        CHECK_EQ_INT(ntl_ipt_seek(&d_, (off)), 0);                            \
        ntl_error_clear(&err);                                                \
        CHECK_EQ_INT(ntl_ipt_next(&d_, &p, &err), status);                    \
        CHECK_EQ_INT(d_.fault, fault_);                                       \
        CHECK_EQ_U64(ntl_ipt_offset(&d_), off);                               \
        CHECK_EQ_U64(err.offset, 0x1000 + (off));                             \
    } while (0)

static void test_errors(void)
{
    struct ntl_ipt_packet p;
    struct ntl_error err;
    /* Truncated packets of every length class. */
    BAD(NTL_ERR_TRUNCATED, NTL_IPT_FAULT_EOS, 0, 0x02);
    BAD(NTL_ERR_TRUNCATED, NTL_IPT_FAULT_EOS, 1, 0x00, 0x19, 1, 2);
    BAD(NTL_ERR_TRUNCATED, NTL_IPT_FAULT_EOS, 0, 0xcd, 1, 2, 3);
    BAD(NTL_ERR_TRUNCATED, NTL_IPT_FAULT_EOS, 0, 0x02, 0x82, 0x02, 0x82);
    BAD(NTL_ERR_TRUNCATED, NTL_IPT_FAULT_EOS, 0, 0x07, 0x01);
    BAD(NTL_ERR_TRUNCATED, NTL_IPT_FAULT_EOS, 0, 0x02, 0xc3, 0x88, 1);
    BAD(NTL_ERR_TRUNCATED, NTL_IPT_FAULT_EOS, 0, 0xd9, 0x40, 0x1a, 0x00);
    /* Reserved encodings. */
    BAD(NTL_ERR_FORMAT, NTL_IPT_FAULT_BAD_OPC, 0, 0xc9);
    BAD(NTL_ERR_FORMAT, NTL_IPT_FAULT_BAD_OPC, 0, 0x02, 0x01);
    BAD(NTL_ERR_FORMAT, NTL_IPT_FAULT_BAD_PACKET, 0, 0xad, 1, 2, 3, 4, 5, 6, 7, 8);
    BAD(NTL_ERR_FORMAT, NTL_IPT_FAULT_BAD_PACKET, 0, 0xed, 1, 2, 3, 4, 5, 6, 7, 8);
    BAD(NTL_ERR_FORMAT, NTL_IPT_FAULT_BAD_PACKET, 0, 0x99, 0x40);
    BAD(NTL_ERR_FORMAT, NTL_IPT_FAULT_BAD_PACKET, 0, 0x02, 0x73, 1, 1, 1, 1, 0);
    BAD(NTL_ERR_FORMAT, NTL_IPT_FAULT_BAD_PACKET, 0, 0x02, 0x73, 1, 1, 0, 1, 0x40);
    BAD(NTL_ERR_FORMAT, NTL_IPT_FAULT_BAD_PACKET, 0, 0x02, 0xa3, 0, 0, 0, 0, 0, 0);
    BAD(NTL_ERR_FORMAT, NTL_IPT_FAULT_BAD_PACKET, 0, 0x02, 0x52, 1, 2, 3, 4, 5, 6, 7, 8);
    BAD(NTL_ERR_FORMAT, NTL_IPT_FAULT_BAD_PACKET, 0, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02,
        0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x83);
    /* A CYC longer than 64 bits of payload. */
    BAD(NTL_ERR_FORMAT, NTL_IPT_FAULT_BAD_PACKET, 0, 0x07, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0x01);
}

static void test_resync(void)
{
    /* ptdump-bad_opc-resync: pads, a PSB, a bad opcode, a PSB. */
    static const uint8_t t[] = {0, 0, 0, 0, 0, 0, 0, PSB, 0xc9, PSB, 0x02, 0x23};
    struct ntl_ipt_decoder d;
    struct ntl_ipt_packet p;
    struct ntl_error err;
    ntl_ipt_decoder_init(&d, t, sizeof t, 0);
    CHECK_EQ_INT(ntl_ipt_sync_first(&d, &err), 0);
    CHECK_EQ_U64(ntl_ipt_offset(&d), 7);
    CHECK_EQ_INT(ntl_ipt_next(&d, &p, &err), 1);
    CHECK_EQ_INT(p.type, NTL_IPT_PSB);
    CHECK_EQ_INT(ntl_ipt_next(&d, &p, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, 0x17);
    CHECK_EQ_INT(ntl_ipt_resync(&d, &err), 0);
    CHECK_EQ_U64(ntl_ipt_offset(&d), 0x18);
    CHECK_EQ_INT(ntl_ipt_next(&d, &p, &err), 1);
    CHECK_EQ_INT(ntl_ipt_next(&d, &p, &err), 1);
    CHECK_EQ_INT(p.type, NTL_IPT_PSBEND);
    CHECK_EQ_INT(ntl_ipt_next(&d, &p, &err), 0);
    CHECK_EQ_INT(ntl_ipt_resync(&d, &err), NTL_ERR_NOT_FOUND);

    /* No PSB at all. */
    static const uint8_t none[] = {0x02, 0x82, 0x02, 0x82, 0, 0, 0};
    ntl_ipt_decoder_init(&d, none, sizeof none, 0);
    CHECK_EQ_INT(ntl_ipt_sync_first(&d, &err), NTL_ERR_NOT_FOUND);

    /* A huge TNT run never stalls: every byte is one packet. */
    static uint8_t tnt[100000];
    memset(tnt, 0xaa, sizeof tnt);
    ntl_ipt_decoder_init(&d, tnt, sizeof tnt, 0);
    size_t n = 0;
    while (ntl_ipt_next(&d, &p, &err) > 0)
        n++;
    CHECK_EQ_U64(n, sizeof tnt);
}

static void test_sync(void)
{
    static const uint8_t t[] = {1, 2, PSB, 3, 4, 5, PSB, 6};
    size_t off;
    CHECK_EQ_INT(ntl_ipt_sync_forward(t, sizeof t, 0, &off), 0);
    CHECK_EQ_U64(off, 2);
    CHECK_EQ_INT(ntl_ipt_sync_forward(t, sizeof t, 3, &off), 0);
    CHECK_EQ_U64(off, 21);
    CHECK_EQ_INT(ntl_ipt_sync_forward(t, sizeof t, 22, &off), NTL_ERR_NOT_FOUND);
    CHECK_EQ_INT(ntl_ipt_sync_backward(t, sizeof t, sizeof t, &off), 0);
    CHECK_EQ_U64(off, 21);
    CHECK_EQ_INT(ntl_ipt_sync_backward(t, sizeof t, 21, &off), 0);
    CHECK_EQ_U64(off, 2);
    CHECK_EQ_INT(ntl_ipt_sync_backward(t, sizeof t, 2, &off), NTL_ERR_NOT_FOUND);
    CHECK(ntl_ipt_is_psb(t, sizeof t, 2));
    CHECK(!ntl_ipt_is_psb(t, sizeof t, 3));
}

/* Builds the circular buffer a tracer leaves when it wrote `lin` (a linear
 * trace) into `size` bytes, ending at write position pos. */
static void wrap_into(uint8_t *buf, size_t size, const uint8_t *lin, size_t n, size_t pos)
{
    for (size_t i = 0; i < n; i++)
        buf[(pos + size - n + i) % size] = lin[i];
}

static void test_unwrap(void)
{
    /* A linear trace: junk, PSB, payload. Write it into a 32-byte ring
     * whose write position is 10, for every rotation of the PSB. */
    uint8_t lin[40], buf[32];
    struct ntl_error err;
    for (size_t i = 0; i < sizeof lin; i++)
        lin[i] = (uint8_t)(0x10 + i); /* no 02 82 anywhere */
    static const uint8_t psb[] = {PSB};
    for (size_t shift = 0; shift < 16; shift++) {
        memcpy(lin + 8 + shift, psb, sizeof psb);
        for (size_t pos = 1; pos < sizeof buf; pos++) {
            memset(buf, 0xee, sizeof buf);
            wrap_into(buf, sizeof buf, lin + 8, sizeof buf, pos);
            struct ntl_buf out;
            struct ntl_ipt_wrap w;
            ntl_buf_init(&out, 0);
            CHECK_EQ_INT(ntl_ipt_unwrap(buf, sizeof buf, pos, &out, &w, &err), 0);
            /* The trace runs from the PSB to the newest byte. */
            CHECK_EQ_U64(out.len, sizeof buf - shift);
            CHECK(out.len >= 16 && memcmp(out.data, psb, 16) == 0);
            CHECK(memcmp(out.data, lin + 8 + shift, out.len) == 0);
            CHECK_EQ_U64(w.skipped, shift);
            ntl_buf_free(&out);
        }
        memcpy(lin + 8 + shift, (const uint8_t[16]){0}, 16);
        for (size_t i = 8 + shift; i < 24 + shift; i++)
            lin[i] = (uint8_t)(0x10 + i);
    }
    /* Not wrapped (pos 0 or size): from the first PSB to the end. */
    uint8_t flat[24] = {0x55, 0x56, PSB, 0x02, 0x23, 0x00, 0x00, 0x00, 0x00};
    struct ntl_ipt_wrap w;
    CHECK_EQ_INT(ntl_ipt_wrap_find(flat, sizeof flat, 0, &w, &err), 0);
    CHECK_EQ_U64(w.psb, 2);
    CHECK_EQ_U64(w.first_len, 22);
    CHECK_EQ_U64(w.second_len, 0);
    CHECK_EQ_INT(ntl_ipt_wrap_find(flat, sizeof flat, sizeof flat, &w, &err), 0);
    CHECK_EQ_U64(w.psb, 2);
    /* pos past the PSB: the search wraps around to it; the trace ends at pos. */
    CHECK_EQ_INT(ntl_ipt_wrap_find(flat, sizeof flat, 20, &w, &err), 0);
    CHECK_EQ_U64(w.psb, 2);
    CHECK_EQ_U64(w.first_len, 18);
    /* No PSB; bad position. */
    uint8_t junk[64];
    memset(junk, 0x11, sizeof junk);
    CHECK_EQ_INT(ntl_ipt_wrap_find(junk, sizeof junk, 5, &w, &err), NTL_ERR_NOT_FOUND);
    CHECK_EQ_INT(ntl_ipt_wrap_find(junk, sizeof junk, 65, &w, &err), NTL_ERR_ARGUMENT);
    CHECK_EQ_INT(ntl_ipt_wrap_find(junk, 0, 0, &w, &err), NTL_ERR_NOT_FOUND);
}

static void test_last_ip(void)
{
    struct ntl_ipt_last_ip l;
    uint64_t ip;
    ntl_ipt_last_ip_init(&l);
    CHECK_EQ_INT(ntl_ipt_last_ip_query(&l, &ip), NTL_IPT_NO_IP);
    /* Suppressed before any IP: suppressed, as ptdump prints it. */
    CHECK_EQ_INT(ntl_ipt_last_ip_update(&l, 0, 0), NTL_IPT_IP_SUPPRESSED);
    CHECK_EQ_INT(ntl_ipt_last_ip_query(&l, &ip), NTL_IPT_IP_SUPPRESSED);
    CHECK_EQ_INT(ntl_ipt_last_ip_update(&l, 6, 0x0a00ccccddddeeeeull), 0);
    CHECK_EQ_INT(ntl_ipt_last_ip_update(&l, 4, 0xffffeeeeffffull), 0);
    CHECK_EQ_INT(ntl_ipt_last_ip_query(&l, &ip), 0);
    CHECK_EQ_U64(ip, 0x0a00ffffeeeeffffull);
    CHECK_EQ_INT(ntl_ipt_last_ip_update(&l, 1, 0xdddd), 0);
    CHECK_EQ_INT(ntl_ipt_last_ip_query(&l, &ip), 0);
    CHECK_EQ_U64(ip, 0x0a00ffffeeeeddddull);
    CHECK_EQ_INT(ntl_ipt_last_ip_update(&l, 3, 0xffffddddeeeeull), 0);
    CHECK_EQ_INT(ntl_ipt_last_ip_query(&l, &ip), 0);
    CHECK_EQ_U64(ip, 0xffffffffddddeeeeull);
    CHECK_EQ_INT(ntl_ipt_last_ip_update(&l, 2, 0xeeeeffff), 0);
    CHECK_EQ_INT(ntl_ipt_last_ip_query(&l, &ip), 0);
    CHECK_EQ_U64(ip, 0xffffffffeeeeffffull);
    CHECK_EQ_INT(ntl_ipt_last_ip_update(&l, 0, 0), NTL_IPT_IP_SUPPRESSED);
    CHECK_EQ_INT(ntl_ipt_last_ip_query(&l, &ip), NTL_IPT_IP_SUPPRESSED);
    CHECK_EQ_U64(ip, 0);
    CHECK_EQ_INT(ntl_ipt_last_ip_update(&l, 5, 0), NTL_ERR_FORMAT);
    CHECK_EQ_STR(ntl_ipt_status_name(NTL_IPT_NO_IP), "no IP");
    CHECK_EQ_STR(ntl_ipt_status_name(NTL_IPT_IP_SUPPRESSED), "IP suppressed");
    CHECK_EQ_STR(ntl_ipt_status_name(NTL_ERR_FORMAT), ntl_status_name(NTL_ERR_FORMAT));
}

static void test_time(void)
{
    /* tsc-tma-mtc_infreq_wrap: mtc-freq 12, TSC:CTC 1:2. */
    struct ntl_ipt_time_config c = {.mtc_freq = 12, .cpuid_15_eax = 2, .cpuid_15_ebx = 1};
    struct ntl_ipt_time t;
    uint64_t tsc;
    ntl_ipt_time_init(&t);
    CHECK_EQ_INT(ntl_ipt_time_tsc(&t, &tsc), NTL_ERR_NOT_FOUND);
    CHECK_EQ_INT(ntl_ipt_time_tsc_pkt(&t, 0xa0018), 0);
    CHECK_EQ_INT(ntl_ipt_time_tma_pkt(&t, 0xf020, 8, &c), 0);
    CHECK_EQ_INT(ntl_ipt_time_tma_pkt(&t, 0xf020, 8, &c), NTL_ERR_UNSUPPORTED);
    CHECK_EQ_INT(ntl_ipt_time_mtc_pkt(&t, 0xa0, &c), 0);
    CHECK_EQ_INT(ntl_ipt_time_tsc(&t, &tsc), 0);
    CHECK_EQ_U64(tsc, 0xa0800);
    CHECK_EQ_INT(ntl_ipt_time_mtc_pkt(&t, 0xa1, &c), 0);
    CHECK_EQ_INT(ntl_ipt_time_tsc(&t, &tsc), 0);
    CHECK_EQ_U64(tsc, 0xa1000);
    /* No CTC ratio: a configuration error, not a crash. */
    struct ntl_ipt_time_config z = {.mtc_freq = 0};
    ntl_ipt_time_init(&t);
    CHECK_EQ_INT(ntl_ipt_time_tsc_pkt(&t, 0x1000), 0);
    CHECK_EQ_INT(ntl_ipt_time_tma_pkt(&t, 0x10, 0, &z), 0);
    CHECK_EQ_INT(ntl_ipt_time_mtc_pkt(&t, 0x12, &z), NTL_ERR_ARGUMENT);
    /* An MTC going backwards by more than one wrap is an error. */
    c.mtc_freq = 0;
    c.cpuid_15_eax = c.cpuid_15_ebx = 1;
    CHECK_EQ_INT(ntl_ipt_time_mtc_pkt(&t, 0x13, &c), 0);
    CHECK_EQ_INT(ntl_ipt_time_tsc(&t, &tsc), 0);
    CHECK_EQ_U64(tsc, 0x1001); /* the failed MTC moved the reference, not the time */

    /* Calibration from the nominal frequency: FCR = P1 / CBR. */
    struct ntl_ipt_tcal k;
    struct ntl_ipt_time_config n = {.nom_freq = 4};
    uint64_t fcr;
    ntl_ipt_tcal_init(&k);
    CHECK_EQ_INT(ntl_ipt_tcal_fcr(&k, &fcr), NTL_ERR_NOT_FOUND);
    CHECK_EQ_INT(ntl_ipt_tcal_cbr_pkt(&k, 2, true, &n), 0);
    CHECK_EQ_INT(ntl_ipt_tcal_fcr(&k, &fcr), 0);
    CHECK_EQ_U64(fcr, 2u << NTL_IPT_FCR_SHIFT);
    CHECK_EQ_INT(ntl_ipt_tcal_cbr_pkt(&k, 0, true, &n), NTL_ERR_FORMAT);

    struct ntl_ipt_cpu cpu;
    struct ntl_ipt_errata e;
    CHECK(ntl_ipt_cpu_parse("6/78", &cpu));
    CHECK_EQ_INT(ntl_ipt_cpu_errata(&cpu, &e), 0);
    CHECK(e.skl168);
    CHECK(ntl_ipt_cpu_parse("6/94/3", &cpu));
    CHECK_EQ_INT(cpu.stepping, 3);
    CHECK(ntl_ipt_cpu_parse("0/0", &cpu));
    CHECK_EQ_INT(ntl_ipt_cpu_errata(&cpu, &e), NTL_ERR_UNSUPPORTED);
    CHECK(!ntl_ipt_cpu_parse("6", &cpu));
    CHECK(!ntl_ipt_cpu_parse("6/x", &cpu));
    CHECK(!ntl_ipt_cpu_parse("6/1/2/3", &cpu));
}

static size_t compare_paths(const uint8_t *buf, size_t size, size_t *packets, size_t *errors);

/* The inline fast path and the slow path decode every byte sequence the
 * same way: random bytes with PSBs sprinkled in, packet by packet. */
static void test_fast_equals_slow(void)
{
    static uint8_t buf[1 << 16];
    static const uint8_t psb[] = {PSB};
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof buf; i++) {
        x = x * 1103515245u + 12345u;
        uint8_t b = (uint8_t)(x >> 16);
        /* Bias towards the common packets so long runs decode. */
        buf[i] = (x >> 8) % 3 == 0 ? 0 : (x >> 8) % 3 == 1 ? (uint8_t)(b | 0x80) & 0xfe : b;
    }
    for (size_t i = 0; i + 16 < sizeof buf; i += 512)
        memcpy(buf + i, psb, 16);
    size_t packets = 0, errors = 0;
    CHECK_EQ_U64(compare_paths(buf, sizeof buf, &packets, &errors), 0);
    CHECK(packets > 2000);
    CHECK(errors > 0);

    /* And a real recording (kAFL, 16 KB). */
    struct ntl_buf rec;
    struct ntl_error err;
    if (ntl_file_read(check_data_path("ipt/real/kafl-unzip/trace.pt"), 1 << 24, &rec, &err) == 0) {
        packets = errors = 0;
        CHECK_EQ_U64(compare_paths(rec.data, rec.len, &packets, &errors), 0);
        CHECK_EQ_U64(packets, 12497);
        CHECK_EQ_U64(errors, 0);
    } else {
        CHECK(!"shared data: kafl-unzip/trace.pt");
    }
    ntl_buf_free(&rec);
}

/* Mismatches between ntl_ipt_next and ntl_ipt_next_slow over buf. */
static size_t compare_paths(const uint8_t *buf, size_t size, size_t *packets, size_t *errors)
{
    struct ntl_ipt_decoder a, b;
    struct ntl_ipt_packet pa, pb;
    struct ntl_error err;
    ntl_ipt_decoder_init(&a, buf, size, 0);
    ntl_ipt_decoder_init(&b, buf, size, 0);
    size_t mismatches = 0;
    for (;;) {
        int ra = ntl_ipt_next(&a, &pa, &err);
        int rb = ntl_ipt_next_slow(&b, &pb, &err);
        if (ra != rb || ntl_ipt_offset(&a) != ntl_ipt_offset(&b) ||
            (ra > 0 && (pa.type != pb.type || pa.size != pb.size || pa.count != pb.count ||
                         pa.flags != pb.flags || pa.aux != pb.aux || pa.payload != pb.payload)))
            mismatches++;
        if (ra == 0 || ra != rb)
            break;
        if (ra < 0) {
            (*errors)++;
            if (ntl_ipt_resync(&a, &err) < 0 || ntl_ipt_resync(&b, &err) < 0)
                break;
            continue;
        }
        *packets += pa.type == NTL_IPT_PAD ? pa.count : 1;
    }
    return mismatches;
}

static void test_targets(void)
{
    /* PSB, FUP full, PSBEND, TIP update-16, TNT, PAD run, TIP.PGD suppressed,
     * TIP.PGE sext-48, TIP update-32, another PSB, TIP update-16 (the last IP
     * was reset: 0x1234), then a bad opcode and a PSB. */
    static const uint8_t t[] = {
        PSB, 0xdd, 0x00, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x23,
        0x2d, 0x34, 0x12, 0x06, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
        0x71, 0x00, 0x20, 0x00, 0x00, 0x00, 0x80, 0x4d, 0x78, 0x56, 0x34, 0x12,
        PSB, 0x2d, 0x34, 0x12, 0xc9, PSB, 0x2d, 0x34, 0x12,
    };
    struct ntl_ipt_targets tg;
    struct ntl_error err;
    ntl_ipt_targets_init(&tg, 0);
    CHECK_EQ_INT(ntl_ipt_targets_scan(&tg, t, sizeof t, &err), 0);
    CHECK_EQ_U64(tg.total, 6);
    CHECK_EQ_U64(tg.suppressed, 1);
    CHECK_EQ_U64(tg.psbs, 3);
    CHECK_EQ_U64(tg.errors, 1);
    CHECK_EQ_U64(tg.by_type[0], 4);
    CHECK_EQ_U64(tg.by_type[1], 1);
    CHECK_EQ_U64(tg.by_type[2], 1);
    CHECK_EQ_U64(tg.by_type[3], 1);
    struct ntl_ipt_target *v;
    size_t n;
    CHECK_EQ_INT(ntl_ipt_targets_sorted(&tg, &v, &n, &err), 0);
    CHECK_EQ_U64(n, 5);
    if (n == 5) {
        CHECK_EQ_U64(v[0].ip, 0x1234);
        CHECK_EQ_U64(v[0].count, 2);
        CHECK_EQ_U64(v[1].ip, 0x401000);
        CHECK_EQ_U64(v[2].ip, 0x401234);
        CHECK_EQ_U64(v[3].ip, 0xffff800000002000ull);
        CHECK_EQ_U64(v[4].ip, 0xffff800012345678ull);
    }
    free(v);
    ntl_ipt_targets_free(&tg);

    /* The table bound is enforced. */
    ntl_ipt_targets_init(&tg, 2);
    CHECK_EQ_INT(ntl_ipt_targets_scan(&tg, t, sizeof t, &err), NTL_ERR_LIMIT);
    ntl_ipt_targets_free(&tg);
    /* No PSB. */
    ntl_ipt_targets_init(&tg, 0);
    CHECK_EQ_INT(ntl_ipt_targets_scan(&tg, t + 1, 20, &err), NTL_ERR_NOT_FOUND);
    ntl_ipt_targets_free(&tg);
}

/* Targets by the event layer's last-IP reconstruction, resynchronising
 * after errors as the quick analysis does. */
static void decoder_targets(const uint8_t *buf, size_t size, uint64_t *total, uint64_t *sum)
{
    struct ntl_ipt_config c = {.buf = buf, .size = size};
    struct ntl_ipt_evd d;
    struct ntl_ipt_event ev;
    struct ntl_error err;
    *total = *sum = 0;
    ntl_ipt_evd_init(&d, &c);
    if (ntl_ipt_evd_sync_first(&d, &err) < 0)
        return;
    for (;;) {
        int rc = ntl_ipt_evd_next(&d, &ev, &err);
        if (rc == 0)
            break;
        if (rc < 0) {
            if (rc == NTL_ERR_TRUNCATED || ntl_ipt_evd_resync(&d, &err) < 0)
                break;
            continue;
        }
        if (ev.flags & NTL_IPT_EV_IP) {
            (*total)++;
            *sum += ev.ip;
        }
    }
}

/* The quick analysis reads 64-byte blocks at a time; a generated trace of
 * valid packets puts IP packets at every offset within and across blocks,
 * with PSB+ headers, timing packets and BBP blocks (whose BIPs look like
 * TNT-8 and must not be skipped as such). It and the real recordings must
 * give the targets the packet decoder gives. */
static void test_targets_match_decoder(void)
{
    static uint8_t buf[1 << 16];
    static const uint8_t psb[] = {PSB, 0x02, 0x23};
    static const uint8_t ipc_of[] = {0, 1, 2, 3, 4, 6};
    static const uint8_t ip_op[] = {0x0d, 0x11, 0x01, 0x1d};
    uint32_t x = 777;
    size_t n = 0;
#define RND() (x = x * 1103515245u + 12345u, x >> 16)
    while (n + 64 < sizeof buf) {
        unsigned r = RND() % 100;
        if (r < 30) {
            for (unsigned k = 1 + RND() % 12; k-- > 0;)
                buf[n++] = 0;
        } else if (r < 60) {
            buf[n++] = (uint8_t)((RND() | 0x04) & 0xfe);
        } else if (r < 90) {
            unsigned ipc = ipc_of[RND() % 6];
            buf[n++] = (uint8_t)(ipc << 5 | ip_op[RND() % 4]);
            for (int k = ntl_ipt_ipc_bytes(ipc); k-- > 0;)
                buf[n++] = (uint8_t)RND();
        } else if (r < 93) {
            memcpy(buf + n, psb, sizeof psb);
            n += sizeof psb;
        } else if (r < 96) {
            static const uint8_t timing[] = {0x19, 1, 2, 3, 4, 5, 6, 7, 0x59, 0x42, 0x0b};
            memcpy(buf + n, timing, sizeof timing);
            n += sizeof timing;
        } else {
            unsigned sz = RND() % 2 ? 4 : 8;
            buf[n++] = 0x02;
            buf[n++] = 0x63;
            buf[n++] = (uint8_t)(sz == 4 ? 0x80 : 0);
            for (unsigned k = 1 + RND() % 3; k-- > 0;) {
                buf[n++] = (uint8_t)(k << 3 | 4);
                for (unsigned i = 0; i < sz; i++)
                    buf[n++] = (uint8_t)RND();
            }
            buf[n++] = 0x02;
            buf[n++] = 0x33;
        }
    }
#undef RND
    const uint8_t *traces[] = {buf, NULL, NULL};
    size_t sizes[] = {n, 0, 0};
    struct ntl_buf rec[2];
    struct ntl_error err;
    static const char *const names[] = {"ipt/real/kafl-foo/trace.pt", "ipt/real/kafl-mruby/trace.pt"};
    for (int i = 0; i < 2; i++) {
        if (ntl_file_read(check_data_path(names[i]), 1 << 24, &rec[i], &err) == 0) {
            traces[i + 1] = rec[i].data;
            sizes[i + 1] = rec[i].len;
        } else {
            CHECK(!"shared data: kafl recordings");
        }
    }
    for (int i = 0; i < 3; i++) {
        if (!traces[i])
            continue;
        uint64_t want_total, want_sum, sum = 0;
        decoder_targets(traces[i], sizes[i], &want_total, &want_sum);
        struct ntl_ipt_targets tg;
        ntl_ipt_targets_init(&tg, 0);
        CHECK_EQ_INT(ntl_ipt_targets_scan(&tg, traces[i], sizes[i], &err), 0);
        for (size_t j = 0; j < tg.cap; j++)
            sum += tg.slots[j].ip * tg.slots[j].count;
        CHECK(want_total > 1000);
        CHECK_EQ_U64(tg.total, want_total);
        CHECK_EQ_U64(sum, want_sum);
        CHECK_EQ_U64(tg.errors, 0);
        ntl_ipt_targets_free(&tg);
    }
    for (int i = 0; i < 2; i++)
        if (traces[i + 1])
            ntl_buf_free(&rec[i]);
}

static void test_module_map(void)
{
    static const char text[] =
        "# base size name\n"
        "fffff80312000000 1046000 \\SystemRoot\\system32\\ntoskrnl.exe\n"
        "\n"
        "  0x7ff6a0000000  0x2000   C:\\Program Files\\app.exe   # comment\n"
        "0x7ff6a0001000 0x100 nested.dll\r\n";
    struct ntl_ipt_module_map map;
    struct ntl_error err;
    CHECK_EQ_INT(ntl_ipt_module_map_parse(text, sizeof text - 1, &map, &err), 0);
    CHECK_EQ_U64(map.n, 3);
    if (map.n == 3) {
        CHECK_EQ_STR(map.mods[0].name, "C:\\Program Files\\app.exe");
        CHECK_EQ_STR(map.mods[1].name, "nested.dll");
        CHECK_EQ_STR(map.mods[2].name, "\\SystemRoot\\system32\\ntoskrnl.exe");
    }
    CHECK_EQ_INT(ntl_ipt_module_map_find(&map, 0x7ff6a0000000ull), 0);
    CHECK_EQ_INT(ntl_ipt_module_map_find(&map, 0x7ff6a0001010ull), 1);
    CHECK_EQ_INT(ntl_ipt_module_map_find(&map, 0x7ff6a0001100ull), 0);
    CHECK_EQ_INT(ntl_ipt_module_map_find(&map, 0x7ff6a0002000ull), -1);
    CHECK_EQ_INT(ntl_ipt_module_map_find(&map, 0xfffff80312000000ull + 0x1045fff), 2);
    CHECK_EQ_INT(ntl_ipt_module_map_find(&map, 0xfffff80312000000ull + 0x1046000), -1);
    CHECK_EQ_INT(ntl_ipt_module_map_find(&map, 0), -1);
    ntl_ipt_module_map_free(&map);

    static const char *const bad[] = {
        "1000 10\n", "xyz 10 a\n", "1000 10x a\n", "1000 0 empty\n",
        "ffffffffffffff00 200 wraps\n", "11112222333344445 10 long\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ntl_error_clear(&err);
        CHECK_EQ_INT(ntl_ipt_module_map_parse(bad[i], strlen(bad[i]), &map, &err), NTL_ERR_FORMAT);
        CHECK(strstr(err.message, "line 1") != NULL);
    }
    static const char nul[] = "1000 10 a\0b\n";
    CHECK_EQ_INT(ntl_ipt_module_map_parse(nul, sizeof nul - 1, &map, &err), NTL_ERR_FORMAT);
    static const char second[] = "1000 10 a\n2000 x b\n";
    CHECK_EQ_INT(ntl_ipt_module_map_parse(second, sizeof second - 1, &map, &err), NTL_ERR_FORMAT);
    CHECK_EQ_U64(err.offset, 10);
}

int main(void)
{
    test_fast_equals_slow();
    test_targets();
    test_targets_match_decoder();
    test_module_map();
    test_packets();
    test_errors();
    test_resync();
    test_sync();
    test_unwrap();
    test_last_ip();
    test_time();
    return check_exit();
}
