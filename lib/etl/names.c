/* GUIDs, FILETIMEs and the names of kernel event groups and opcodes. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ntlens/etl.h"
#include "ntlens/reader.h"

char *ntl_guid_format(const struct ntl_guid *g, char *buf, size_t size)
{
    /* Text order of the stored bytes (Data1..Data3 little-endian); by hand,
     * as every event of a trace formats its provider's GUID. */
    static const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
    static const char hex[] = "0123456789abcdef";
    char text[37];
    size_t n = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            text[n++] = '-';
        text[n++] = hex[g->b[order[i]] >> 4];
        text[n++] = hex[g->b[order[i]] & 15];
    }
    text[n] = '\0';
    if (size) { /* truncated like snprintf */
        n = n < size - 1 ? n : size - 1;
        memcpy(buf, text, n);
        buf[n] = '\0';
    }
    return buf;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

bool ntl_guid_parse(const char *s, struct ntl_guid *g)
{
    /* Digits in text order; Data1..Data3 are stored little-endian. */
    static const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
    uint8_t text[16];
    size_t n = 0, len = strlen(s);
    if (len == 38 && s[0] == '{' && s[37] == '}') {
        s++;
        len = 36;
    }
    if (len != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-')
        return false;
    for (size_t i = 0; i < 36;) {
        if (s[i] == '-') {
            i++;
            continue;
        }
        int hi = hexval((unsigned char)s[i]), lo = hexval((unsigned char)s[i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        text[n++] = (uint8_t)(hi << 4 | lo);
        i += 2;
    }
    for (int i = 0; i < 16; i++)
        g->b[order[i]] = text[i];
    return true;
}

bool ntl_guid_equal(const struct ntl_guid *a, const struct ntl_guid *b)
{
    return memcmp(a->b, b->b, 16) == 0;
}

char *ntl_filetime_format(uint64_t ft, char *buf, size_t size)
{
    /* Days since 1601-01-01 to a civil date (proleptic Gregorian). */
    uint64_t secs = ft / 10000000u;
    unsigned frac = (unsigned)(ft % 10000000u);
    int64_t days = (int64_t)(secs / 86400u);
    unsigned sod = (unsigned)(secs % 86400u);
    /* Days since 0000-03-01, then the civil_from_days algorithm (400-year eras). */
    int64_t d = days - 134774 /* 1601-01-01 .. 1970-01-01 */ + 719468;
    int64_t era = (d >= 0 ? d : d - 146096) / 146097;
    unsigned doe = (unsigned)(d - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = (int64_t)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    unsigned dd = doy - (153 * mp + 2) / 5 + 1;
    unsigned mm = mp < 10 ? mp + 3 : mp - 9;
    if (mm <= 2)
        y++;
    snprintf(buf, size, "%04" PRId64 "-%02u-%02uT%02u:%02u:%02u.%07uZ", y, mm, dd, sod / 3600,
             sod / 60 % 60, sod % 60, frac);
    return buf;
}

static const char *const groups[] = {
    "EventTrace", "DiskIo", "PageFault", "Process", "FileIo", "Thread", "TcpIp", "Job",
    "UdpIp", "Registry", "DbgPrint", "Config", "Spare1", "Wnf", "Pool", "PerfInfo",
    "Heap", "Object", "Power", "Modbound", "Image", "Dpc", "CcWs", "CritSec",
    "StackWalk", "Ums", "Alpc", "SplitIo", "ThreadPool", "Hypervisor", "HypervisorX",
};

const char *ntl_etl_group_name(uint8_t group)
{
    return group < sizeof groups / sizeof groups[0] ? groups[group] : NULL;
}

int ntl_etl_group_parse(const char *s)
{
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
        if (!strcasecmp(s, groups[i]))
            return (int)i;
    char *end;
    unsigned long v = strtoul(s, &end, 0);
    if (*s && !*end && v <= 255)
        return (int)v;
    return -1;
}

struct opname {
    uint8_t group, opcode;
    const char *name;
};

static const struct opname opcodes[] = {
    {0x00, 0, "Header"}, {0x00, 5, "Extension"}, {0x00, 8, "RDComplete"},
    {0x00, 32, "EndExtension"},
    {0x01, 10, "Read"}, {0x01, 11, "Write"}, {0x01, 12, "ReadInit"}, {0x01, 13, "WriteInit"},
    {0x01, 14, "FlushBuffers"}, {0x01, 15, "FlushInit"}, {0x01, 34, "DrvMjFnCall"},
    {0x01, 35, "DrvMjFnRet"}, {0x01, 37, "DrvComplRout"}, {0x01, 52, "DrvComplReq"},
    {0x01, 53, "DrvComplReqRet"},
    {0x02, 10, "TransitionFault"}, {0x02, 11, "DemandZeroFault"}, {0x02, 12, "CopyOnWrite"},
    {0x02, 13, "GuardPageFault"}, {0x02, 14, "HardPageFault"}, {0x02, 15, "AccessViolation"},
    {0x02, 32, "HardFault"}, {0x02, 98, "VirtualAlloc"}, {0x02, 99, "VirtualFree"},
    {0x02, 100, "HRRundown"}, {0x02, 101, "HRCreate"}, {0x02, 102, "HRReserve"},
    {0x02, 103, "HRRelease"}, {0x02, 104, "HRDestroy"}, {0x02, 105, "ImageLoadBacked"},
    {0x03, 1, "Start"}, {0x03, 2, "End"}, {0x03, 3, "DCStart"}, {0x03, 4, "DCEnd"},
    {0x03, 10, "Load"}, {0x03, 11, "Terminate"}, {0x03, 32, "PerfCtr"},
    {0x03, 33, "PerfCtrRundown"}, {0x03, 39, "Defunct"},
    {0x04, 0, "Name"}, {0x04, 32, "FileCreate"}, {0x04, 35, "FileDelete"},
    {0x04, 36, "FileRundown"}, {0x04, 64, "Create"}, {0x04, 65, "Cleanup"}, {0x04, 66, "Close"},
    {0x04, 67, "Read"}, {0x04, 68, "Write"}, {0x04, 69, "SetInfo"}, {0x04, 70, "Delete"},
    {0x04, 71, "Rename"}, {0x04, 72, "DirEnum"}, {0x04, 73, "Flush"}, {0x04, 74, "QueryInfo"},
    {0x04, 75, "FSControl"}, {0x04, 76, "OperationEnd"}, {0x04, 77, "DirNotify"},
    {0x05, 1, "Start"}, {0x05, 2, "End"}, {0x05, 3, "DCStart"}, {0x05, 4, "DCEnd"},
    {0x05, 36, "CSwitch"}, {0x05, 37, "CompCS"}, {0x05, 50, "ReadyThread"}, {0x05, 57, "WorkerThread"},
    {0x05, 72, "SetName"},
    {0x06, 10, "Send"}, {0x06, 11, "Recv"}, {0x06, 12, "Connect"}, {0x06, 13, "Disconnect"},
    {0x06, 14, "Retransmit"}, {0x06, 15, "Accept"}, {0x06, 16, "Reconnect"}, {0x06, 17, "Fail"},
    {0x06, 18, "TCPCopy"}, {0x06, 19, "ARPCopy"}, {0x06, 20, "FullACK"}, {0x06, 21, "PartACK"},
    {0x06, 22, "DupACK"}, {0x06, 26, "SendIPV6"}, {0x06, 27, "RecvIPV6"},
    {0x06, 28, "ConnectIPV6"}, {0x06, 29, "DisconnectIPV6"}, {0x06, 30, "RetransmitIPV6"},
    {0x06, 31, "AcceptIPV6"}, {0x06, 32, "ReconnectIPV6"}, {0x06, 34, "TCPCopyIPV6"},
    {0x08, 10, "Send"}, {0x08, 11, "Recv"}, {0x08, 17, "Fail"}, {0x08, 26, "SendIPV6"},
    {0x08, 27, "RecvIPV6"},
    {0x09, 10, "Create"}, {0x09, 11, "Open"}, {0x09, 12, "Delete"}, {0x09, 13, "Query"},
    {0x09, 14, "SetValue"}, {0x09, 15, "DeleteValue"}, {0x09, 16, "QueryValue"},
    {0x09, 17, "EnumerateKey"}, {0x09, 18, "EnumerateValueKey"}, {0x09, 19, "QueryMultipleValue"},
    {0x09, 20, "SetInformation"}, {0x09, 21, "Flush"}, {0x09, 22, "KCBCreate"},
    {0x09, 23, "KCBDelete"}, {0x09, 24, "KCBRundownBegin"}, {0x09, 25, "KCBRundownEnd"},
    {0x09, 26, "Virtualize"}, {0x09, 27, "Close"},
    {0x0B, 10, "CPU"}, {0x0B, 11, "PhyDisk"}, {0x0B, 12, "LogDisk"}, {0x0B, 13, "NIC"},
    {0x0B, 14, "Video"}, {0x0B, 15, "Services"}, {0x0B, 16, "Power"}, {0x0B, 17, "Network"}, {0x0B, 21, "IRQ"},
    {0x0B, 22, "PnP"}, {0x0B, 23, "IDEChannel"},
    {0x0F, 46, "SampleProf"}, {0x0F, 51, "SysClEnter"}, {0x0F, 52, "SysClExit"},
    {0x0F, 58, "DebuggerEnabled"},
    {0x0F, 66, "ThreadedDPC"}, {0x0F, 67, "ISR"}, {0x0F, 68, "DPC"}, {0x0F, 69, "TimerDPC"},
    {0x0F, 72, "SetInterval"}, {0x0F, 73, "CollectionStart"}, {0x0F, 74, "CollectionEnd"},
    {0x14, 2, "Unload"}, {0x14, 3, "DCStart"}, {0x14, 4, "DCEnd"}, {0x14, 10, "Load"},
    {0x14, 33, "KernelBase"},
    {0x18, 32, "Stack"}, {0x18, 34, "KeyCreate"}, {0x18, 35, "KeyDelete"},
    {0x18, 36, "KeyRundown"}, {0x18, 37, "StackKeyKernel"}, {0x18, 38, "StackKeyUser"},
    {0x1A, 33, "SendMessage"}, {0x1A, 34, "ReceiveMessage"}, {0x1A, 35, "WaitForReply"},
    {0x1A, 36, "WaitForNewMessage"}, {0x1A, 37, "Unwait"},
    {0x1B, 32, "VolMgr"},
};

/* The table is kept sorted by group and opcode: every kernel event of a
 * trace looks its name up, so by binary search (test_mof looks up names
 * from every part of the table). */
const char *ntl_etl_opcode_name(uint8_t group, uint8_t opcode)
{
    size_t lo = 0, hi = sizeof opcodes / sizeof opcodes[0];
    unsigned key = (unsigned)group << 8 | opcode;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        unsigned k = (unsigned)opcodes[mid].group << 8 | opcodes[mid].opcode;
        if (k == key)
            return opcodes[mid].name;
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const char *ntl_etl_kind_name(enum ntl_etl_kind kind)
{
    static const char *const names[NTL_ETL_KIND_COUNT] = {
        "system", "compact", "perfinfo", "classic", "instance", "event", "message",
    };
    return (unsigned)kind < NTL_ETL_KIND_COUNT ? names[kind] : "?";
}

const char *ntl_etl_status_name(int status)
{
    if (status == NTL_ETL_TRUNCATED)
        return "file truncated";
    return ntl_status_name(status);
}

static const char *const levels[] = {
    "win:LogAlways", "win:Critical", "win:Error", "win:Warning", "win:Informational", "win:Verbose",
};
/* Bits 48..55; the bits above belong to channels, the ones below to the provider. */
static const char *const keywords[] = {
    "win:ResponseTime", "win:WDIContext", "win:WDIDiag", "win:SQM",
    "win:AuditFailure", "win:AuditSuccess", "win:CorrelationHint", "win:EventlogClassic",
};

const char *ntl_etl_level_name(uint8_t level)
{
    return level < sizeof levels / sizeof levels[0] ? levels[level] : NULL;
}

const char *ntl_etl_keyword_name(uint64_t mask)
{
    for (unsigned i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (mask == (uint64_t)1 << (48 + i))
            return keywords[i];
    return NULL;
}

/* "win:Error" or "Error". */
static bool std_name_is(const char *std, const char *name)
{
    return !strcasecmp(std, name) || !strcasecmp(std + 4, name);
}

int ntl_etl_level_parse(const char *name)
{
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        if (std_name_is(levels[i], name))
            return (int)i;
    return -1;
}

uint64_t ntl_etl_keyword_parse(const char *name)
{
    for (unsigned i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (std_name_is(keywords[i], name))
            return (uint64_t)1 << (48 + i);
    return 0;
}
