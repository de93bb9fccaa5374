/* A trace with one event or more of each kernel class no shared trace
 * records (Registry, TcpIp v2, UdpIp Fail, ALPC, PageFault faults and
 * VirtualAlloc, ISR, SystemConfig CPU v2, Video, IRQ, PnP v2, FileIo's
 * operations, DiskIo v2 and its driver-delay events, WorkerThread, CompCS,
 * SampledProfileInterval v2, PageFault heap ranges, SplitIo, and the versions 0 and 1 of Registry, TcpIp,
 * UdpIp, ISR, DPC, Process, Thread, CSwitch, Image, FileIo names and
 * SystemConfig), their
 * payloads laid out field by field from Microsoft's class pages, in either
 * pointer size. Classes with a process id in the payload come in PERFINFO
 * headers, which carry none, so the tool must take it from the payload. */
#include <stdlib.h>
#include <string.h>

#include "etl_gen.h"

struct pb {
    uint8_t b[4096];
    size_t n;
    int psz;
};

static void le(struct pb *p, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p->b[p->n++] = (uint8_t)(v >> (8 * i));
}

static void be16(struct pb *p, unsigned v)
{
    p->b[p->n++] = (uint8_t)(v >> 8);
    p->b[p->n++] = (uint8_t)v;
}

static void ptr(struct pb *p, uint64_t v)
{
    le(p, v, (size_t)p->psz);
}

/* ASCII text as UTF-16, NUL-terminated, or padded with NULs to units. */
static void wstr(struct pb *p, const char *s, size_t units)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < (units ? units : n + 1); i++)
        le(p, i < n ? (uint8_t)s[i] : 0, 2);
}

static void ip_head(struct pb *p, uint32_t pid, bool v6)
{
    static const uint8_t a6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    le(p, pid, 4);
    le(p, 1460, 4);
    for (int i = 0; i < 2; i++) {
        if (v6) {
            memcpy(p->b + p->n, a6, 16);
            p->b[p->n + 15] = (uint8_t)(2 - i);
            p->n += 16;
        } else {
            le(p, i ? 0x0100000a : 0x0200000a, 4); /* 10.0.0.2, 10.0.0.1 */
        }
    }
    be16(p, 443);
    be16(p, 50000);
}

static void tcp_options(struct pb *p)
{
    le(p, 1460, 2); le(p, 1, 2); le(p, 0, 2); le(p, 1, 2); /* mss, sackopt, tsopt, wsopt */
    le(p, 65535, 4);
    le(p, (uint16_t)-1, 2); /* rcvwinscale -1 */
    le(p, 8, 2);
}

static void emit(struct gen *g, bool perfinfo, uint8_t group, uint8_t opcode, uint16_t version,
                 struct pb *p)
{
    static uint64_t ts = 1000;
    uint16_t hook = (uint16_t)(group << 8 | opcode);
    bool is64 = p->psz == 8;
    ts += 10;
    if (perfinfo)
        gen_perfinfo(g, is64, version, hook, ts, NULL, 0, p->b, p->n);
    else
        gen_system(g, false, is64, version, hook, 77, 500, ts, NULL, 0, p->b, p->n);
    p->n = 0;
}

static void network(struct gen *g, struct pb *p)
{
    ip_head(p, 1234, false); le(p, 100, 4); le(p, 130, 4); le(p, 7, 4); ptr(p, 0xabc0);
    emit(g, true, 0x06, 10, 2, p);                             /* SendIPV4 */
    ip_head(p, 1234, false); le(p, 8, 4); ptr(p, 0xabc0);
    emit(g, true, 0x06, 11, 2, p);                             /* RecvIPV4 */
    ip_head(p, 1234, false); tcp_options(p); le(p, 9, 4); ptr(p, 0xabc0);
    emit(g, true, 0x06, 12, 2, p);                             /* ConnectIPV4 */
    ip_head(p, 1235, true); le(p, 10, 4); ptr(p, 0xabc8);
    emit(g, true, 0x06, 29, 2, p);                             /* DisconnectIPV6 */
    ip_head(p, 1235, true); tcp_options(p); le(p, 11, 4); ptr(p, 0xabc8);
    emit(g, true, 0x06, 31, 2, p);                             /* AcceptIPV6 */
    le(p, 6, 2); le(p, 0x2740, 2);
    emit(g, false, 0x06, 17, 2, p);                            /* TcpIp Fail */
    le(p, 17, 2); le(p, 0x2741, 2);
    emit(g, false, 0x08, 17, 2, p);                            /* UdpIp Fail */
}

static void system_classes(struct gen *g, struct pb *p)
{
    le(p, (uint64_t)-5000, 8); le(p, 0xc0000034, 4); le(p, 0, 4); ptr(p, 0xffffc00012340000ull);
    wstr(p, "\\REGISTRY\\MACHINE\\SOFTWARE\\ntlens", 0);
    emit(g, false, 0x09, 11, 2, p);                            /* Registry Open */
    le(p, 0x1001, 4);
    emit(g, false, 0x1A, 33, 2, p);                            /* ALPC send */
    le(p, 1, 4);
    memcpy(p->b + p->n, "\\RPC Control\\ntlens", 20);
    p->n += 20;
    emit(g, false, 0x1A, 36, 2, p);                            /* ALPC wait for new message */
    le(p, 0x102, 4);
    emit(g, false, 0x1A, 37, 2, p);                            /* ALPC unwait */
    ptr(p, 0x7ff612340000ull); ptr(p, 0x7ff612341234ull);
    emit(g, false, 0x02, 10, 2, p);                            /* TransitionFault */
    ptr(p, 0x1f0000); ptr(p, 0x20000); le(p, 4321, 4); le(p, 0x3000, 4);
    emit(g, true, 0x02, 98, 2, p);                             /* VirtualAlloc */
    le(p, 123456789, 8); ptr(p, 0xfffff80312345678ull); le(p, 1, 1); le(p, 0x91, 1); le(p, 0, 2);
    emit(g, true, 0x0F, 67, 2, p);                             /* ISR */
}

static void config(struct gen *g, struct pb *p)
{
    le(p, 2400, 4); le(p, 4, 4); le(p, 8192, 4); le(p, 4096, 4); le(p, 65536, 4);
    wstr(p, "NTLENS-PC", 256); wstr(p, "WORKGROUP", 134); ptr(p, 1);
    emit(g, false, 0x0B, 10, 2, p);                            /* CPU v2 */
    le(p, 4096, 4); le(p, 1920, 4); le(p, 1080, 4); le(p, 32, 4); le(p, 60, 4);
    wstr(p, "Chip", 256); wstr(p, "DAC", 256); wstr(p, "Adapter", 256); wstr(p, "Bios", 256);
    wstr(p, "PCI\\VEN_1234", 256); le(p, 5, 4);
    emit(g, false, 0x0B, 14, 2, p);                            /* Video */
    le(p, 0xf, 8); le(p, 9, 4); le(p, 5, 4); wstr(p, "ACPI", 0);
    emit(g, false, 0x0B, 21, 2, p);                            /* IRQ */
    le(p, 8, 4); le(p, 5, 4); le(p, 0, 4); wstr(p, "ROOT\\X\\0", 0); wstr(p, "Thing", 0);
    wstr(p, "", 0);
    emit(g, false, 0x0B, 22, 2, p);                            /* PnP v2 */
}

/* The Windows XP/2003 versions (0 and 1) of Registry, TcpIp, UdpIp, ISR, DPC. */
static void old_versions(struct gen *g, struct pb *p)
{
    ptr(p, 0xc0000034); ptr(p, 0x8123); le(p, 42, 8); le(p, 3, 4); wstr(p, "\\REGISTRY\\USER", 0);
    emit(g, false, 0x09, 11, 1, p);                            /* Registry v1 Open */
    le(p, 0x0200000a, 4); le(p, 0x0100000a, 4); be16(p, 80); be16(p, 1025); le(p, 512, 4);
    le(p, 1236, 4);
    emit(g, true, 0x06, 10, 0, p);                             /* TcpIp v0 Send */
    ip_head(p, 1237, false); le(p, 1, 4); le(p, 2, 4); le(p, 0x55, 4); le(p, 12, 4);
    emit(g, true, 0x06, 10, 1, p);                             /* TcpIp v1 Send */
    ip_head(p, 1237, false); le(p, 0x55, 4); le(p, 13, 4);
    emit(g, true, 0x06, 20, 1, p);                             /* TcpIp v1 FullACK */
    ip_head(p, 1237, false); tcp_options(p); le(p, 0x55, 4); le(p, 14, 4);
    emit(g, true, 0x06, 15, 1, p);                             /* TcpIp v1 Accept */
    le(p, 6, 4);
    emit(g, false, 0x06, 17, 1, p);                            /* TcpIp v1 Fail */
    ptr(p, 0x8888); le(p, 0x0100000a, 4); be16(p, 53); le(p, 40, 2); le(p, 0x0200000a, 4);
    be16(p, 5353); le(p, 32, 2);
    emit(g, false, 0x08, 11, 0, p);                            /* UdpIp v0 Recv */
    ip_head(p, 1238, false);
    emit(g, true, 0x08, 10, 1, p);                             /* UdpIp v1 Send */
    le(p, 99, 8); ptr(p, 0x80501234); le(p, 1, 4);
    emit(g, false, 0x0F, 67, 1, p);                            /* ISR v1 */
    le(p, 98, 8); ptr(p, 0x80505678);
    emit(g, false, 0x0F, 69, 1, p);                            /* TimerDPC v1 */
}

/* A WmiSid: TOKEN_USER (Sid pointer, Attributes: two pointers' worth) and S-1-5-18. */
static void wmisid(struct pb *p)
{
    static const uint8_t sid[] = {1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0};
    ptr(p, 0x1234);
    ptr(p, 0);
    memcpy(p->b + p->n, sid, sizeof sid);
    p->n += sizeof sid;
}

/* Process v2 and v3 and Thread v2 (Vista, 7): the shared traces have v4/v5 and v3. */
static void process_thread(struct gen *g, struct pb *p)
{
    ptr(p, 0x85a00000); le(p, 600, 4); le(p, 4, 4); le(p, 0, 4); le(p, 0, 4); wmisid(p);
    memcpy(p->b + p->n, "smss.exe", 9);
    p->n += 9;
    /* A command line with a tab, quotes and a non-ASCII unit (U+00E9): the
     * JSON's string path after its ASCII fast path gave up. */
    wstr(p, "\\SystemRoot\\System32\\smss.exe \"caf\xe9\"\t-x", 0);
    emit(g, true, 0x03, 3, 2, p);                              /* Process v2 DCStart */
    ptr(p, 0x85b00000); le(p, 700, 4); le(p, 600, 4); le(p, 1, 4); le(p, 259, 4);
    ptr(p, 0x1ab000); le(p, 0, 4);
    memcpy(p->b + p->n, "csrss.exe", 10);
    p->n += 10;
    wstr(p, "csrss", 0);
    emit(g, true, 0x03, 1, 3, p);                              /* Process v3 Start, no SID */
    le(p, 700, 4); le(p, 704, 4);
    for (uint64_t i = 1; i <= 7; i++)
        ptr(p, 0x1000 * i);
    le(p, 0, 4);
    emit(g, false, 0x05, 1, 2, p);                             /* Thread v2 Start */
}

/* FileIo_Create, _SimpleOp, _ReadWrite, _Info, _DirEnum, _OpEnd (v2: TTID
 * pointer-sized) and the v0/v1 Name events. */
static void file_io(struct gen *g, struct pb *p)
{
    ptr(p, 0x9000); ptr(p, 704); ptr(p, 0x7000); le(p, 0x01000060, 4); le(p, 0x80, 4);
    le(p, 7, 4); wstr(p, "\\Device\\HarddiskVolume2\\ntlens.txt", 0);
    emit(g, false, 0x04, 64, 2, p);                            /* Create */
    ptr(p, 0x9008); ptr(p, 704); ptr(p, 0x7000); ptr(p, 0x6000);
    emit(g, false, 0x04, 66, 2, p);                            /* Close */
    le(p, 1ull << 33, 8); ptr(p, 0x9010); ptr(p, 704); ptr(p, 0x7000); ptr(p, 0x6000);
    le(p, 512, 4); le(p, 0x60900, 4);
    emit(g, false, 0x04, 67, 2, p);                            /* Read */
    ptr(p, 0x9018); ptr(p, 704); ptr(p, 0x7000); ptr(p, 0x6000); ptr(p, 0x88); le(p, 10, 4);
    emit(g, false, 0x04, 71, 2, p);                            /* Rename */
    ptr(p, 0x9020); ptr(p, 704); ptr(p, 0x7000); ptr(p, 0x6000); le(p, 616, 4); le(p, 37, 4);
    le(p, 0, 4); wstr(p, "*.dll", 0);
    emit(g, false, 0x04, 72, 2, p);                            /* DirEnum */
    ptr(p, 0x9020); ptr(p, 0x200); le(p, 0xc0000034, 4);
    emit(g, false, 0x04, 76, 2, p);                            /* OperationEnd */
    ptr(p, 0x7008); wstr(p, "\\Device\\HarddiskVolume1\\boot.ini", 0);
    emit(g, false, 0x04, 32, 1, p);                            /* v1 FileCreate */
    ptr(p, 0x7010); wstr(p, "\\Device\\Floppy0", 0);
    emit(g, false, 0x04, 0, 0, p);                             /* v0 Name */
}

/* DiskIo v2, the driver-delay events, WorkerThread, SampledProfileInterval,
 * CompCS, the PageFault heap-range events and ImageLoadBacked, SplitIo. */
static void disk_and_more(struct gen *g, struct pb *p)
{
    le(p, 0, 4); le(p, 0x60043, 4); le(p, 4096, 4); le(p, 0, 4); le(p, 1ull << 35, 8);
    ptr(p, 0x7000); ptr(p, 0x9100); le(p, 12345, 8);
    emit(g, false, 0x01, 10, 2, p);                            /* DiskIo v2 Read */
    ptr(p, 0x9100);
    emit(g, false, 0x01, 12, 2, p);                            /* DiskIo v2 ReadInit */
    le(p, 1, 4); le(p, 0x60000, 4); le(p, 777, 8); ptr(p, 0x9108);
    emit(g, false, 0x01, 14, 2, p);                            /* DiskIo v2 FlushBuffers */
    le(p, 3, 4); le(p, 0, 4); ptr(p, 0x80401000); ptr(p, 0x7000); ptr(p, 0x9110); le(p, 42, 4);
    emit(g, false, 0x01, 34, 2, p);                            /* DrvMjFnCall */
    ptr(p, 0x9110); le(p, 42, 4);
    emit(g, false, 0x01, 53, 2, p);                            /* DrvComplReqRet */
    le(p, 708, 4); le(p, 555, 8); ptr(p, 0x80402000);
    emit(g, false, 0x05, 57, 2, p);                            /* WorkerThread */
    le(p, 0, 4); le(p, 5000, 4); le(p, 10000, 4);
    emit(g, false, 0x0F, 72, 2, p);                            /* SetInterval v2 */
    emit(g, false, 0x05, 37, 2, p);                            /* CompCS, no payload */
    ptr(p, 0x4a0000); le(p, 2, 4); le(p, 1240, 4); le(p, 3, 4);
    emit(g, false, 0x02, 100, 2, p);                           /* HRRundown */
    ptr(p, 0x4a0000); ptr(p, 0x10000); le(p, 0x1002, 4);
    emit(g, false, 0x02, 101, 2, p);                           /* HRCreate */
    ptr(p, 0x4a0000); ptr(p, 0x4b0000); ptr(p, 0x8000);
    emit(g, false, 0x02, 103, 2, p);                           /* HRRelease */
    ptr(p, 0x7000); le(p, 0x20, 4); le(p, 0x100, 2); le(p, 1, 2);
    emit(g, false, 0x02, 105, 2, p);                           /* ImageLoadBacked */
    ptr(p, 0x9200); ptr(p, 0x9208);
    emit(g, false, 0x1B, 32, 2, p);                            /* SplitIo VolMgr */
}

/* The Windows 2000-2003 versions of Process, Thread, CSwitch, Image, SystemConfig. */
static void old_system(struct gen *g, struct pb *p)
{
    ptr(p, 8); ptr(p, 4); le(p, 0, 4); memcpy(p->b + p->n, "smss.exe", 9); p->n += 9;
    emit(g, false, 0x03, 1, 0, p);                             /* Process v0 Start */
    ptr(p, 0x3c000); le(p, 400, 4); le(p, 8, 4); le(p, 0, 4); le(p, 0, 4); le(p, 0, 4);
    memcpy(p->b + p->n, "winlogon.exe", 13); p->n += 13;
    emit(g, false, 0x03, 3, 1, p);                             /* Process v1 DCStart */
    le(p, 404, 4); le(p, 400, 4);
    emit(g, false, 0x05, 2, 0, p);                             /* Thread v0 End */
    le(p, 400, 4); le(p, 408, 4);
    for (uint64_t i = 1; i <= 6; i++)
        ptr(p, 0x2000 * i);
    le(p, (uint8_t)-1, 1);
    emit(g, false, 0x05, 1, 1, p);                             /* Thread v1 Start */
    le(p, 400, 4); le(p, 408, 4);
    emit(g, false, 0x05, 4, 1, p);                             /* Thread v1 DCEnd */
    le(p, 408, 4); le(p, 0, 4); le(p, 9, 1); le(p, 0, 1); le(p, 6, 1); le(p, (uint8_t)-2, 1);
    le(p, 5, 1); le(p, 1, 1); le(p, 5, 1); le(p, 0, 1); le(p, 0x1234, 4);
    emit(g, false, 0x05, 36, 1, p);                            /* CSwitch v1 */
    ptr(p, 0x77f50000); le(p, 0xa7000, 4); wstr(p, "\\WINDOWS\\system32\\ntdll.dll", 0);
    emit(g, false, 0x14, 10, 0, p);                            /* Image v0 Load */
    ptr(p, 0x7c800000); ptr(p, 0xf6000); le(p, 400, 4); wstr(p, "kernel32.dll", 0);
    emit(g, false, 0x14, 10, 1, p);                            /* Image v1 Load */
    le(p, 2000, 4); le(p, 1, 4); le(p, 512, 4); le(p, 4096, 4); le(p, 65536, 4);
    wstr(p, "XP-PC", 256); wstr(p, "MSHOME", 132); ptr(p, 0);
    emit(g, false, 0x0B, 10, 1, p);                            /* CPU v1 */
    wstr(p, "Intel PRO/100", 256); le(p, 2, 4); le(p, 6, 4); wstr(p, "abcdef", 8); le(p, 0, 4);
    for (int i = 0; i < 10; i++)
        le(p, i == 0 ? 0x0200a8c0 : 0, 4);
    le(p, 0, 4);
    emit(g, false, 0x0B, 13, 0, p);                            /* NIC v0 */
    wstr(p, "Dhcp", 34); wstr(p, "DHCP Client", 256); wstr(p, "svchost.exe", 34); le(p, 900, 4);
    emit(g, false, 0x0B, 15, 1, p);                            /* Services v1 */
    le(p, 0x3f, 8); le(p, 1, 4); le(p, 5, 4); wstr(p, "i8042", 0);
    emit(g, false, 0x0B, 21, 0, p);                            /* IRQ v0 */
}

void gen_classes_file(struct gen *g, int pointer_size)
{
    struct pb *p = calloc(1, sizeof *p);
    gen_init(g, 0x10000, pointer_size, 0, 1000, 10000000, 132500000000000000ull, 1, "classes",
             "C:\\classes.etl");
    p->psz = pointer_size;
    network(g, p);
    system_classes(g, p);
    config(g, p);
    old_versions(g, p);
    process_thread(g, p);
    file_io(g, p);
    disk_and_more(g, p);
    old_system(g, p);
    gen_finish(g);
    free(p);
}
