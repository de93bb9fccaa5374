/* Kernel (MOF) layouts in the 32-bit form, which no shared trace has:
 * payloads built here from the documented layouts; the 64-bit forms are
 * checked on the shared traces by tests/etl/test_etl_fields.py. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "ntlens/etl.h"
#include "ntlens/etl_fields.h"
#include "ntlens/reader.h"

static int decode(uint8_t group, uint8_t opcode, uint16_t version, const uint8_t *p, size_t n,
                  char *out, size_t size)
{
    struct ntl_etl_event ev = {.kind = NTL_ETL_KIND_SYSTEM, .group = group, .opcode = opcode,
                               .version = version, .payload = p, .payload_size = n};
    struct ntl_etl_mof d;
    struct ntl_etl_field f;
    struct ntl_error err = {0};
    size_t len = 0;
    int rc;
    out[0] = '\0';
    if (ntl_etl_mof_begin(&d, &ev) <= 0)
        return -100;
    while ((rc = ntl_etl_mof_next(&d, &f, &err)) > 0) {
        char v[200];
        ntl_etl_field_text(&f, v, sizeof v);
        if (f.item == NTL_ETL_ITEM_ARRAY_BEGIN)
            snprintf(v, sizeof v, "[%u", f.count);
        else if (f.item == NTL_ETL_ITEM_ARRAY_END)
            snprintf(v, sizeof v, "]");
        len += (size_t)snprintf(out + len, size - len, "%s%s=%s", len ? " " : "", f.name, v);
    }
    return rc;
}

static void test_process_v4_32(void)
{
    static const uint8_t p[] = {
        0x40, 0x30, 0x20, 0x80,        /* UniqueProcessKey */
        0x10, 0x02, 0, 0,              /* ProcessId 528 */
        4, 0, 0, 0,                    /* ParentId */
        1, 0, 0, 0,                    /* SessionId */
        0x03, 0x01, 0, 0,              /* ExitStatus 259 */
        0, 0x50, 0x1a, 0,              /* DirectoryTableBase */
        0, 0, 0, 0,                    /* Flags */
        0x88, 0x77, 0x66, 0x55, 0, 0, 0, 0, /* TOKEN_USER: Sid pointer, Attributes */
        1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0, /* S-1-5-18 */
        'a', '.', 'e', 'x', 'e', 0,
        'a', 0, ' ', 0, 'x', 0, 0, 0,  /* CommandLine */
        0, 0, 0, 0,                    /* PackageFullName, ApplicationId */
    };
    char out[1024];
    CHECK_EQ_INT(decode(0x03, 3, 4, p, sizeof p, out, sizeof out), 0);
    CHECK_EQ_STR(out, "UniqueProcessKey=0x80203040 ProcessId=528 ParentId=4 SessionId=1 "
                      "ExitStatus=259 DirectoryTableBase=0x001a5000 Flags=0x00000000 "
                      "UserSID=S-1-5-18 ImageFileName=a.exe CommandLine=a x PackageFullName= "
                      "ApplicationId=");
    /* A null SID is 4 bytes in either pointer size. */
    uint8_t q[sizeof p];
    memcpy(q, p, 28);
    memset(q + 28, 0, 4);
    memcpy(q + 32, p + 48, sizeof p - 48);
    CHECK_EQ_INT(decode(0x03, 3, 4, q, sizeof p - 16, out, sizeof out), 0);
    CHECK(strstr(out, "UserSID= ImageFileName=a.exe") != NULL);
    /* Cut inside the command line; one byte too many. */
    CHECK_EQ_INT(decode(0x03, 3, 4, p, sizeof p - 7, out, sizeof out), NTL_ERR_TRUNCATED);
    uint8_t r[sizeof p + 1];
    memcpy(r, p, sizeof p);
    r[sizeof p] = 0;
    CHECK_EQ_INT(decode(0x03, 3, 4, r, sizeof r, out, sizeof out), NTL_ERR_FORMAT);
}

static void test_thread_image_32(void)
{
    uint8_t t[8 + 7 * 4 + 8];
    memset(t, 0, sizeof t);
    ntl_put_le32(t, 528);
    ntl_put_le32(t + 4, 700);
    ntl_put_le32(t + 8 + 5 * 4, 0x77001234); /* Win32StartAddr */
    t[8 + 7 * 4 + 4] = 8;                    /* BasePriority */
    char out[1024];
    CHECK_EQ_INT(decode(0x05, 1, 3, t, sizeof t, out, sizeof out), 0);
    CHECK(strstr(out, "ProcessId=528 TThreadId=700 ") == out);
    CHECK(strstr(out, "Win32StartAddr=0x77001234 TebBase=0x00000000 SubProcessTag=0x00000000 "
                      "BasePriority=8 PagePriority=0") != NULL);
    CHECK(strstr(out, "ThreadName") == NULL);

    uint8_t im[44 + 10]; /* 32-bit Image_Load v3: FileName at 44 */
    memset(im, 0, sizeof im);
    ntl_put_le32(im, 0x400000);
    ntl_put_le32(im + 4, 0x3000);
    ntl_put_le32(im + 8, 528);
    memcpy(im + 44, "a\0.\0d\0l\0l\0", 10);
    CHECK_EQ_INT(decode(0x14, 10, 3, im, sizeof im, out, sizeof out), NTL_ERR_TRUNCATED);
    uint8_t im2[sizeof im + 2];
    memcpy(im2, im, sizeof im);
    im2[sizeof im] = im2[sizeof im + 1] = 0;
    CHECK_EQ_INT(decode(0x14, 10, 3, im2, sizeof im2, out, sizeof out), 0);
    CHECK(strstr(out, "ImageBase=0x00400000 ImageSize=0x00003000 ProcessId=528 ") == out);
    CHECK(strstr(out, "FileName=a.dll") != NULL);
    /* No layout: an unknown version or opcode. */
    CHECK_EQ_INT(decode(0x14, 10, 9, im2, sizeof im2, out, sizeof out), -100);
    CHECK_EQ_INT(decode(0x14, 99, 3, im2, sizeof im2, out, sizeof out), -100);
}

/* ntl_etl_mof_skip_pointers: only right after a pointer array's
 * ARRAY_BEGIN; then the elements' start and size, and ARRAY_END next. */
static void test_skip_pointers(const uint8_t *st, size_t n)
{
    struct ntl_etl_event ev = {.kind = NTL_ETL_KIND_SYSTEM, .group = 0x18, .opcode = 32,
                               .version = 2, .payload = st, .payload_size = n};
    struct ntl_etl_mof d;
    struct ntl_etl_field f;
    struct ntl_error err = {0};
    const uint8_t *data = NULL;
    CHECK_EQ_INT(ntl_etl_mof_begin(&d, &ev), 1);
    CHECK_EQ_INT(ntl_etl_mof_skip_pointers(&d, &data), -1); /* nothing given yet */
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(ntl_etl_mof_next(&d, &f, &err), 1);
    CHECK_EQ_INT(ntl_etl_mof_skip_pointers(&d, &data), -1); /* after StackThread */
    CHECK_EQ_INT(ntl_etl_mof_next(&d, &f, &err), 1);
    CHECK_EQ_INT(f.item, NTL_ETL_ITEM_ARRAY_BEGIN);
    CHECK_EQ_INT(f.count, 3);
    CHECK_EQ_INT(ntl_etl_mof_skip_pointers(&d, &data), 4);
    CHECK(data == st + 16);
    CHECK_EQ_INT(ntl_etl_mof_next(&d, &f, &err), 1);
    CHECK_EQ_INT(f.item, NTL_ETL_ITEM_ARRAY_END);
    CHECK_EQ_INT(ntl_etl_mof_next(&d, &f, &err), 0);
    /* After an element was given, the array is no longer skipped. */
    CHECK_EQ_INT(ntl_etl_mof_begin(&d, &ev), 1);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(ntl_etl_mof_next(&d, &f, &err), 1);
    CHECK_EQ_INT(f.item, NTL_ETL_ITEM_VALUE);
    CHECK_EQ_INT(ntl_etl_mof_skip_pointers(&d, &data), -1);
    CHECK_EQ_INT(ntl_etl_mof_next(&d, &f, &err), 1);
    CHECK_EQ_INT((int)f.index, 1);
}

static void test_stack_udp_32(void)
{
    uint8_t st[16 + 3 * 4 + 1];
    char out[1024];
    memset(st, 0, sizeof st);
    ntl_put_le32(st + 8, 528);
    ntl_put_le32(st + 12, 700);
    for (int i = 0; i < 3; i++)
        ntl_put_le32(st + 16 + 4 * i, 0x401000u + (unsigned)i);
    CHECK_EQ_INT(decode(0x18, 32, 2, st, sizeof st - 1, out, sizeof out), 0);
    CHECK_EQ_STR(out, "EventTimeStamp=0 StackProcess=528 StackThread=700 Stack=[3 "
                      "Stack=0x00401000 Stack=0x00401001 Stack=0x00401002 Stack=]");
    CHECK_EQ_INT(decode(0x18, 32, 2, st, sizeof st, out, sizeof out), NTL_ERR_FORMAT);
    test_skip_pointers(st, sizeof st - 1);

    static const uint8_t udp[] = {4, 0, 0, 0, 201, 0, 0, 0, 10, 128, 3, 255, 10, 128, 0, 55,
                                  0, 138, 0, 139, 0, 0, 0, 0, 0, 0, 0, 0};
    CHECK_EQ_INT(decode(0x08, 11, 2, udp, sizeof udp, out, sizeof out), 0);
    CHECK_EQ_STR(out, "PID=4 size=201 daddr=10.128.3.255 saddr=10.128.0.55 dport=138 sport=139 "
                      "seqnum=0 connid=0");
}

/* CSwitch, ReadyThread, SysCallEnter/Exit and DPC, from the documented
 * layouts (no shared trace records them). */
static void test_scheduler_32(void)
{
    static const uint8_t cs[] = {
        0x10, 0, 0, 0, 0x20, 0, 0, 0,  /* NewThreadId 16, OldThreadId 32 */
        9, 8, 1, 0, 6, 1, 5, 0xff,     /* priorities 9 and 8, C1, spare, Executive, UserMode, Waiting, -1 */
        100, 0, 0, 0, 0, 0, 0, 0,      /* NewThreadWaitTime 100, Reserved */
    };
    static const uint8_t ready[] = {0x30, 0, 0, 0, 2, 0xfe, 1, 0};
    static const uint8_t enter[] = {0x78, 0x56, 0x34, 0x12}, exit_[] = {0x22, 0, 0, 0xc0};
    static const uint8_t dpc[] = {1, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x10, 0x40, 0x80};
    char out[1024];
    CHECK_EQ_INT(decode(0x05, 36, 2, cs, sizeof cs, out, sizeof out), 0);
    CHECK_EQ_STR(out, "NewThreadId=16 OldThreadId=32 NewThreadPriority=9 OldThreadPriority=8 "
                      "PreviousCState=1 SpareByte=0 OldThreadWaitReason=6 OldThreadWaitMode=1 "
                      "OldThreadState=5 OldThreadWaitIdealProcessor=-1 NewThreadWaitTime=100 "
                      "Reserved=0");
    CHECK_EQ_INT(decode(0x05, 50, 2, ready, sizeof ready, out, sizeof out), 0);
    CHECK_EQ_STR(out, "TThreadId=48 AdjustReason=2 AdjustIncrement=-2 Flag=1 Reserved=0");
    CHECK_EQ_INT(decode(0x0F, 51, 2, enter, sizeof enter, out, sizeof out), 0);
    CHECK_EQ_STR(out, "SysCallAddress=0x12345678");
    CHECK_EQ_INT(decode(0x0F, 52, 2, exit_, sizeof exit_, out, sizeof out), 0);
    CHECK_EQ_STR(out, "SysCallNtStatus=0xc0000022");
    for (uint8_t op = 66; op <= 69; op++) {
        if (op == 67)
            continue; /* ISR: its own layout (test_etl_cli's generated classes) */
        CHECK_EQ_INT(decode(0x0F, op, 2, dpc, sizeof dpc, out, sizeof out), 0);
        CHECK_EQ_STR(out, "InitialTime=1 Routine=0x80401000");
    }
    CHECK_EQ_INT(decode(0x05, 36, 2, cs, sizeof cs - 1, out, sizeof out), NTL_ERR_TRUNCATED);
}

/* Names from every part of the opcode table (found by binary search). */
static void test_opcode_names(void)
{
    static const struct { uint8_t group, opcode; const char *name; } names[] = {
        {0x00, 0, "Header"}, {0x00, 32, "EndExtension"}, {0x01, 15, "FlushInit"},
        {0x02, 99, "VirtualFree"}, {0x03, 39, "Defunct"}, {0x04, 77, "DirNotify"},
        {0x05, 72, "SetName"}, {0x06, 15, "Accept"}, {0x08, 10, "Send"}, {0x09, 27, "Close"},
        {0x0B, 10, "CPU"}, {0x0B, 23, "IDEChannel"}, {0x0F, 46, "SampleProf"},
        {0x0F, 74, "CollectionEnd"}, {0x14, 33, "KernelBase"}, {0x18, 32, "Stack"},
        {0x18, 38, "StackKeyUser"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        CHECK_EQ_STR(ntl_etl_opcode_name(names[i].group, names[i].opcode), names[i].name);
    CHECK(ntl_etl_opcode_name(0x00, 1) == NULL);
    CHECK(ntl_etl_opcode_name(0xff, 255) == NULL);
}

/* Fixed-size char16 arrays, a trailing string list, and what cuts them. */
static void test_config_bounds(void)
{
    uint8_t cpu[20 + 512 + 268 + 4];
    char out[2048];
    memset(cpu, 0, sizeof cpu);
    memcpy(cpu + 20, "P\0C\0", 4);
    for (size_t i = 0; i < 134; i++) /* a DomainName without its NUL: all 134 units */
        cpu[532 + 2 * i] = 'd';
    CHECK_EQ_INT(decode(0x0B, 10, 2, cpu, sizeof cpu, out, sizeof out), 0);
    CHECK(strstr(out, "ComputerName=PC DomainName=dddd") != NULL);
    CHECK(strstr(out, "HyperThreadingFlag=0x00000000") != NULL);
    CHECK_EQ_INT(decode(0x0B, 10, 2, cpu, sizeof cpu - 5, out, sizeof out), NTL_ERR_TRUNCATED);
    CHECK_EQ_INT(decode(0x0B, 10, 2, cpu, 300, out, sizeof out), NTL_ERR_TRUNCATED);

    uint8_t pnp[24 + 5 * 2 + 6];
    memset(pnp, 0, sizeof pnp);
    ntl_put_le32(pnp + 20, 1); /* LowerFilterCount */
    memcpy(pnp + 34, "f\0s\0", 4);
    CHECK_EQ_INT(decode(0x0B, 22, 4, pnp, sizeof pnp - 2, out, sizeof out), NTL_ERR_FORMAT);
    CHECK_EQ_INT(decode(0x0B, 22, 4, pnp, sizeof pnp, out, sizeof out), 0);
    CHECK(strstr(out, "ServiceName= Filters=[1 Filters=fs Filters=]") != NULL);
}

/* winmeta.xml's names, which need no manifest. */
static void test_standard_names(void)
{
    CHECK_EQ_STR(ntl_etl_level_name(2), "win:Error");
    CHECK_EQ_STR(ntl_etl_level_name(5), "win:Verbose");
    CHECK(ntl_etl_level_name(6) == NULL);
    CHECK_EQ_INT(ntl_etl_level_parse("informational"), 4);
    CHECK_EQ_INT(ntl_etl_level_parse("win:Critical"), 1);
    CHECK_EQ_INT(ntl_etl_level_parse("Loud"), -1);
    CHECK_EQ_STR(ntl_etl_keyword_name((uint64_t)1 << 48), "win:ResponseTime");
    CHECK_EQ_STR(ntl_etl_keyword_name((uint64_t)1 << 55), "win:EventlogClassic");
    CHECK(ntl_etl_keyword_name(1) == NULL && ntl_etl_keyword_name(3ull << 48) == NULL);
    CHECK(ntl_etl_keyword_parse("AuditFailure") == (uint64_t)1 << 52);
    CHECK(ntl_etl_keyword_parse("win:nope") == 0);
}

int main(void)
{
    test_config_bounds();
    test_standard_names();
    test_stack_udp_32();
    test_scheduler_32();
    test_opcode_names();
    test_process_v4_32();
    test_thread_image_32();
    return check_exit();
}
