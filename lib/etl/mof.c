/* Kernel (MOF) event payloads: the NT Kernel Logger's classes as Microsoft
 * documents them (MSNT_SystemTrace and its children), one layout per group,
 * opcodes and version, in the trace's pointer size. */
#include <stdint.h>
#include <string.h>

#include "ntlens/reader.h"
#include "ntlens/utf16.h"

#include "mof-internal.h"

/* Process_V2..V4_TypeGroup1: Start, End, DCStart, DCEnd, Defunct. */
static const struct mof_field process_v2[] = {
    {"UniqueProcessKey", P, 0}, {"ProcessId", U32, 0}, {"ParentId", U32, 0},
    {"SessionId", U32, 0}, {"ExitStatus", S32, 0}, {"UserSID", WMISID, 0},
    {"ImageFileName", ASTR, 0}, {"CommandLine", WSTR, 0}, {NULL, 0, 0},
};
static const struct mof_field process_v3[] = {
    {"UniqueProcessKey", P, 0}, {"ProcessId", U32, 0}, {"ParentId", U32, 0},
    {"SessionId", U32, 0}, {"ExitStatus", S32, 0}, {"DirectoryTableBase", P, 0},
    {"UserSID", WMISID, 0}, {"ImageFileName", ASTR, 0}, {"CommandLine", WSTR, 0}, {NULL, 0, 0},
};
static const struct mof_field process_v4[] = {
    {"UniqueProcessKey", P, 0}, {"ProcessId", U32, 0}, {"ParentId", U32, 0},
    {"SessionId", U32, 0}, {"ExitStatus", S32, 0}, {"DirectoryTableBase", P, 0},
    {"Flags", X32, 0}, {"UserSID", WMISID, 0}, {"ImageFileName", ASTR, 0},
    {"CommandLine", WSTR, 0}, {"PackageFullName", WSTR, 0}, {"ApplicationId", WSTR, 0},
    {NULL, 0, 0},
};
/* Process_V5 (Defunct): V4 and the exit time. */
static const struct mof_field process_v5[] = {
    {"UniqueProcessKey", P, 0}, {"ProcessId", U32, 0}, {"ParentId", U32, 0},
    {"SessionId", U32, 0}, {"ExitStatus", S32, 0}, {"DirectoryTableBase", P, 0},
    {"Flags", X32, 0}, {"UserSID", WMISID, 0}, {"ImageFileName", ASTR, 0},
    {"CommandLine", WSTR, 0}, {"PackageFullName", WSTR, 0}, {"ApplicationId", WSTR, 0},
    {"ExitTime", NTL_ETL_IN_FILETIME, 0}, {NULL, 0, 0},
};
/* Process_Terminate_TypeGroup1. */
static const struct mof_field process_terminate[] = {{"ProcessId", U32, 0}, {NULL, 0, 0}};
/* Process_V2_TypeGroup2: PerfCtr, PerfCtrRundown. */
static const struct mof_field process_perfctr[] = {
    {"ProcessId", U32, 0}, {"PageFaultCount", U32, 0}, {"HandleCount", U32, 0},
    {"Reserved", U32, 0}, {"PeakVirtualSize", PTR, 0}, {"PeakWorkingSetSize", PTR, 0},
    {"PeakPagefileUsage", PTR, 0}, {"QuotaPeakPagedPoolUsage", PTR, 0},
    {"QuotaPeakNonPagedPoolUsage", PTR, 0}, {"VirtualSize", PTR, 0},
    {"WorkingSetSize", PTR, 0}, {"PagefileUsage", PTR, 0}, {"QuotaPagedPoolUsage", PTR, 0},
    {"QuotaNonPagedPoolUsage", PTR, 0}, {"PrivatePageCount", PTR, 0}, {NULL, 0, 0},
};
/* Thread_V2_TypeGroup1 and Thread_V3_TypeGroup1: Start, End, DCStart, DCEnd. */
static const struct mof_field thread_v2[] = {
    {"ProcessId", U32, 0}, {"TThreadId", U32, 0}, {"StackBase", P, 0}, {"StackLimit", P, 0},
    {"UserStackBase", P, 0}, {"UserStackLimit", P, 0}, {"StartAddr", P, 0},
    {"Win32StartAddr", P, 0}, {"TebBase", P, 0}, {"SubProcessTag", X32, 0}, {NULL, 0, 0},
};
static const struct mof_field thread_v3[] = {
    {"ProcessId", U32, 0}, {"TThreadId", U32, 0}, {"StackBase", P, 0}, {"StackLimit", P, 0},
    {"UserStackBase", P, 0}, {"UserStackLimit", P, 0}, {"Affinity", P, 0},
    {"Win32StartAddr", P, 0}, {"TebBase", P, 0}, {"SubProcessTag", X32, 0},
    {"BasePriority", U8, 0}, {"PagePriority", U8, 0}, {"IoPriority", U8, 0},
    {"ThreadFlags", U8, NTL_ETL_OUT_HEX}, {"ThreadName", WSTR_OPTIONAL, 0}, {NULL, 0, 0},
};
/* Image_Load v2 and v3: Load, Unload, DCStart, DCEnd (and Process group Load). */
static const struct mof_field image_v2[] = {
    {"ImageBase", P, 0}, {"ImageSize", P, 0}, {"ProcessId", U32, 0}, {"ImageCheckSum", X32, 0},
    {"TimeDateStamp", X32, 0}, {"Reserved0", U32, 0}, {"DefaultBase", P, 0},
    {"Reserved1", U32, 0}, {"Reserved2", U32, 0}, {"Reserved3", U32, 0}, {"Reserved4", U32, 0},
    {"FileName", WSTR, 0}, {NULL, 0, 0},
};
static const struct mof_field image_v3[] = {
    {"ImageBase", P, 0}, {"ImageSize", P, 0}, {"ProcessId", U32, 0}, {"ImageCheckSum", X32, 0},
    {"TimeDateStamp", X32, 0}, {"SignatureLevel", U8, 0}, {"SignatureType", U8, 0},
    {"Reserved0", U16, 0}, {"DefaultBase", P, 0}, {"Reserved1", U32, 0}, {"Reserved2", U32, 0},
    {"Reserved3", U32, 0}, {"Reserved4", U32, 0}, {"FileName", WSTR, 0}, {NULL, 0, 0},
};
/* Image KernelBase (opcode 33): where ntoskrnl is mapped. */
static const struct mof_field image_kernel_base[] = {{"ImageBase", P, 0}, {NULL, 0, 0}};

/* SampledProfile. */
static const struct mof_field sampled_profile[] = {
    {"InstructionPointer", P, 0}, {"ThreadId", U32, 0}, {"Count", U32, 0}, {NULL, 0, 0},
};
/* DiskIo_TypeGroup1 v3 (Read, Write), _TypeGroup2 (FlushBuffers), _TypeGroup3 (*Init). */
static const struct mof_field diskio_rw[] = {
    {"DiskNumber", U32, 0}, {"IrpFlags", X32, 0}, {"TransferSize", U32, 0},
    {"Reserved", U32, 0}, {"ByteOffset", NTL_ETL_IN_INT64, 0}, {"FileObject", P, 0},
    {"Irp", P, 0}, {"HighResResponseTime", NTL_ETL_IN_UINT64, 0}, {"IssuingThreadId", U32, 0},
    {NULL, 0, 0},
};
static const struct mof_field diskio_flush[] = {
    {"DiskNumber", U32, 0}, {"IrpFlags", X32, 0}, {"HighResResponseTime", NTL_ETL_IN_UINT64, 0},
    {"Irp", P, 0}, {"IssuingThreadId", U32, 0}, {NULL, 0, 0},
};
static const struct mof_field diskio_init[] = {
    {"Irp", P, 0}, {"IssuingThreadId", U32, 0}, {NULL, 0, 0},
};
/* FileIo_Name: Name, FileCreate, FileDelete, FileRundown. */
static const struct mof_field fileio_name[] = {
    {"FileObject", P, 0}, {"FileName", WSTR, 0}, {NULL, 0, 0},
};
/* PageFault_HardFault. */
static const struct mof_field hard_fault[] = {
    {"InitialTime", NTL_ETL_IN_INT64, 0}, {"ReadOffset", NTL_ETL_IN_UINT64, 0},
    {"VirtualAddress", P, 0}, {"FileObject", P, 0}, {"TThreadId", U32, 0},
    {"ByteCount", U32, 0}, {NULL, 0, 0},
};
/* StackWalk_Event: the return addresses fill the rest of the payload. */
static const struct mof_field stack_walk[] = {
    {"EventTimeStamp", NTL_ETL_IN_UINT64, 0}, {"StackProcess", U32, 0}, {"StackThread", U32, 0},
    {"Stack", PTR_ARRAY, 0}, {NULL, 0, 0},
};
/* CSwitch v2: the thread switched to and from, and why the old one waits. */
static const struct mof_field cswitch[] = {
    {"NewThreadId", U32, 0}, {"OldThreadId", U32, 0}, {"NewThreadPriority", S8, 0},
    {"OldThreadPriority", S8, 0}, {"PreviousCState", U8, 0}, {"SpareByte", S8, 0},
    {"OldThreadWaitReason", S8, 0}, {"OldThreadWaitMode", S8, 0}, {"OldThreadState", S8, 0},
    {"OldThreadWaitIdealProcessor", S8, 0}, {"NewThreadWaitTime", U32, 0},
    {"Reserved", U32, 0}, {NULL, 0, 0},
};
/* ReadyThread v2. */
static const struct mof_field ready_thread[] = {
    {"TThreadId", U32, 0}, {"AdjustReason", S8, 0}, {"AdjustIncrement", S8, 0},
    {"Flag", S8, 0}, {"Reserved", S8, 0}, {NULL, 0, 0},
};
/* PerfInfo SysCallEnter, SysCallExit and the DPC class (DPC, TimerDPC, ThreadedDPC). */
static const struct mof_field syscall_enter[] = {{"SysCallAddress", P, 0}, {NULL, 0, 0}};
static const struct mof_field syscall_exit[] = {{"SysCallNtStatus", X32, 0}, {NULL, 0, 0}};
static const struct mof_field dpc[] = {
    {"InitialTime", NTL_ETL_IN_UINT64, 0}, {"Routine", P, 0}, {NULL, 0, 0},
};
/* StackWalk_StackKeys (StackKeyKernel, StackKeyUser): a reference to a
 * compressed stack's key, defined by a KeyCreate/KeyDelete/KeyRundown event. */
static const struct mof_field stack_key_ref[] = {
    {"EventTimeStamp", NTL_ETL_IN_UINT64, 0}, {"StackProcess", U32, 0}, {"StackThread", U32, 0},
    {"StackKey", P, 0}, {NULL, 0, 0},
};
/* StackWalk_KeyEvent: a key and its stack. */
static const struct mof_field stack_key_def[] = {
    {"StackKey", P, 0}, {"Stack", PTR_ARRAY, 0}, {NULL, 0, 0},
};
/* SystemConfig_V3_Services (the rundown of installed services). */
static const struct mof_field config_services_v3[] = {
    {"ProcessId", U32, 0}, {"ServiceState", U32, 0}, {"SubProcessTag", U32, 0},
    {"ServiceName", WSTR, 0}, {"DisplayName", WSTR, 0}, {"ProcessName", WSTR, 0},
    {"LoadOrderGroup", WSTR, 0}, {"SvcHostGroup", WSTR, 0}, {NULL, 0, 0},
};
/* UdpIp_TypeGroup1 (IPv4 Send, Recv) and the IPv6 forms (SendIPV6, RecvIPV6). */
static const struct mof_field udpip_v4[] = {
    {"PID", U32, 0}, {"size", U32, 0}, {"daddr", U32, NTL_ETL_OUT_IPV4},
    {"saddr", U32, NTL_ETL_OUT_IPV4}, {"dport", U16, NTL_ETL_OUT_PORT},
    {"sport", U16, NTL_ETL_OUT_PORT}, {"seqnum", U32, 0}, {"connid", PTR, 0}, {NULL, 0, 0},
};
static const struct mof_field ip_v6[] = {
    {"PID", U32, 0}, {"size", U32, 0}, {"daddr", IPV6, NTL_ETL_OUT_IPV6},
    {"saddr", IPV6, NTL_ETL_OUT_IPV6}, {"dport", U16, NTL_ETL_OUT_PORT},
    {"sport", U16, NTL_ETL_OUT_PORT}, {"seqnum", U32, 0}, {"connid", PTR, 0}, {NULL, 0, 0},
};
/* TcpIp_SendIPV6 carries the send's start and end times. */
static const struct mof_field tcpip_send_v6[] = {
    {"PID", U32, 0}, {"size", U32, 0}, {"daddr", IPV6, NTL_ETL_OUT_IPV6},
    {"saddr", IPV6, NTL_ETL_OUT_IPV6}, {"dport", U16, NTL_ETL_OUT_PORT},
    {"sport", U16, NTL_ETL_OUT_PORT}, {"startime", U32, 0}, {"endtime", U32, 0},
    {"seqnum", U32, 0}, {"connid", PTR, 0}, {NULL, 0, 0},
};

static const uint8_t type_group1[] = {1, 2, 3, 4, 39, END};
static const uint8_t terminate[] = {11, END};
static const uint8_t perfctr[] = {32, 33, END};
static const uint8_t thread_ops[] = {1, 2, 3, 4, END};
static const uint8_t image_ops[] = {2, 3, 4, 10, END};
static const uint8_t load[] = {10, END};
static const uint8_t kernel_base[] = {33, END};
static const uint8_t op_46[] = {46, END}, op_32[] = {32, END};
static const uint8_t op_26[] = {26, END}, op_27[] = {27, END};
static const uint8_t disk_rw[] = {10, 11, END}, disk_flush[] = {14, END};
static const uint8_t disk_init[] = {12, 13, 15, END};
static const uint8_t file_names[] = {0, 32, 35, 36, END}, udp_v4[] = {10, 11, END};
static const uint8_t udp_v6[] = {26, 27, END};
static const uint8_t key_refs[] = {37, 38, END}, key_defs[] = {34, 35, 36, END};
static const uint8_t op_15[] = {15, END}, op_36[] = {36, END}, op_50[] = {50, END};
static const uint8_t op_51[] = {51, END}, op_52[] = {52, END}, dpc_ops[] = {66, 68, 69, END};

static const struct mof_layout layouts[] = {
    {0x03, type_group1, 2, 2, "Process", process_v2},
    {0x03, type_group1, 3, 3, "Process", process_v3},
    {0x03, type_group1, 4, 4, "Process", process_v4},
    {0x03, type_group1, 5, 5, "Process", process_v5},
    {0x03, terminate, 2, 2, "Process", process_terminate},
    {0x03, perfctr, 2, 2, "Process", process_perfctr},
    {0x03, load, 2, 2, "Image", image_v2},
    {0x03, load, 3, 3, "Image", image_v3},
    {0x05, thread_ops, 2, 2, "Thread", thread_v2},
    {0x05, thread_ops, 3, 3, "Thread", thread_v3},
    {0x14, image_ops, 2, 2, "Image", image_v2},
    {0x14, image_ops, 3, 3, "Image", image_v3},
    {0x14, kernel_base, 2, 2, "Image", image_kernel_base},
    {0x0F, op_46, 2, 2, "PerfInfo", sampled_profile},
    {0x01, disk_rw, 3, 3, "DiskIo", diskio_rw},
    {0x01, disk_flush, 3, 3, "DiskIo", diskio_flush},
    {0x01, disk_init, 3, 3, "DiskIo", diskio_init},
    {0x04, file_names, 2, 2, "FileIo", fileio_name},
    {0x02, op_32, 2, 2, "PageFault", hard_fault},
    {0x18, op_32, 2, 2, "StackWalk", stack_walk},
    {0x18, key_refs, 2, 2, "StackWalk", stack_key_ref},
    {0x18, key_defs, 2, 2, "StackWalk", stack_key_def},
    {0x0B, op_15, 3, 3, "SystemConfig", config_services_v3},
    {0x05, op_36, 2, 2, "Thread", cswitch},
    {0x05, op_50, 2, 2, "Thread", ready_thread},
    {0x0F, op_51, 2, 2, "PerfInfo", syscall_enter},
    {0x0F, op_52, 2, 2, "PerfInfo", syscall_exit},
    {0x0F, dpc_ops, 2, 2, "PerfInfo", dpc},
    {0x08, udp_v4, 2, 2, "UdpIp", udpip_v4},
    {0x08, udp_v6, 2, 2, "UdpIp", ip_v6},
    {0x06, op_26, 2, 2, "TcpIp", tcpip_send_v6},
    {0x06, op_27, 2, 2, "TcpIp", ip_v6},
};

static bool has_opcode(const uint8_t *list, uint8_t opcode)
{
    for (; *list != END; list++)
        if (*list == opcode)
            return true;
    return false;
}

static const struct mof_layout *find(const struct mof_layout *table, size_t n,
                                     const struct ntl_etl_event *ev)
{
    for (size_t i = 0; i < n; i++) {
        const struct mof_layout *l = &table[i];
        if (l->group == ev->group && ev->version >= l->min_version &&
            ev->version <= l->max_version && has_opcode(l->opcodes, ev->opcode))
            return l;
    }
    return NULL;
}

/* ev's layout: from its kind, group, opcode, version only (the prefix's
 * promise); NULL when none. */
static const struct mof_layout *layout_of(const struct ntl_etl_event *ev)
{
    const struct mof_layout *l;
    if (ev->kind > NTL_ETL_KIND_PERFINFO)
        return NULL;
    if (!(l = find(layouts, sizeof layouts / sizeof layouts[0], ev)) &&
        !(l = find(ntl_etl_mof_more, ntl_etl_mof_nmore, ev)) &&
        !(l = find(ntl_etl_mof_config, ntl_etl_mof_nconfig, ev)) &&
        !(l = find(ntl_etl_mof_fileio, ntl_etl_mof_nfileio, ev)))
        l = find(ntl_etl_mof_old, ntl_etl_mof_nold, ev);
    return l;
}

int ntl_etl_mof_begin(struct ntl_etl_mof *d, const struct ntl_etl_event *ev)
{
    const struct mof_layout *l = layout_of(ev);
    memset(d, 0, sizeof *d);
    d->ev = ev;
    if (!l)
        return 0;
    d->class_name = l->class_name;
    d->layout = l->fields;
    return 1;
}

/* The bytes of a field whose size the payload does not decide; 0 for the
 * others (SIDs, strings, char16 arrays cut at their NUL, arrays). */
static size_t fixed_len(unsigned type, size_t psz)
{
    switch (type) {
    case U8: case S8: return 1;
    case U16: case S16: return 2;
    case GUID: case NTL_ETL_IN_SYSTEMTIME: case IPV6: return 16;
    case U32: case S32: case X32: return 4;
    case NTL_ETL_IN_FILETIME: case NTL_ETL_IN_INT64: case NTL_ETL_IN_UINT64: return 8;
    case P: case PTR: return psz;
    default: return 0;
    }
}

/* A WmiSid: TOKEN_USER (two pointers' worth) then the SID, or 4 zero bytes. */
static bool wmisid(const uint8_t *p, size_t n, size_t psz, size_t *skip, size_t *len)
{
    if (n < 4)
        return false;
    if (!ntl_le32(p)) {
        *skip = 4;
        *len = 0;
        return true;
    }
    *skip = 2 * psz;
    if (n < *skip + 8)
        return false;
    *len = 8 + 4u * p[*skip + 1];
    return *len <= n - *skip;
}

static bool extent(const struct mof_field *m, const uint8_t *p, size_t n, size_t psz,
                   size_t *skip, size_t *len, size_t *total)
{
    const uint8_t *nul;
    *skip = 0;
    if (m->type & FIXW) { /* the string ends at its first NUL, the field at its size */
        size_t units = m->type & FIXW_UNITS;
        *total = 2 * units;
        *len = 2 * ntl_utf16_unit_len(p, (n < *total ? n : *total) / 2);
        return *total <= n;
    }
    if ((*len = fixed_len(m->type, psz))) {
        *total = *len;
        return *total <= n;
    }
    switch (m->type) {
    case WMISID:
        if (!wmisid(p, n, psz, skip, len))
            return false;
        break;
    case ASTR:
        if (!(nul = memchr(p, 0, n)))
            return false;
        *len = (size_t)(nul - p);
        *total = *len + 1;
        return true;
    case WSTR: case WSTR_OPTIONAL:
        *len = 2 * ntl_utf16_unit_len(p, n / 2);
        *total = *len + 2;
        return *total <= n;
    default:
        return false;
    }
    *total = *skip + *len;
    return *total <= n;
}

/* A field cleared by copying a zero one: memset of its ~100 bytes became
 * `rep stos`, whose start-up was 40% of this decoder's time per field. */
static const struct ntl_etl_field zero_field;

/* The VALUE item of m: its size bytes at data, the field at pos. */
static void value_field(struct ntl_etl_field *f, const struct mof_field *m, const uint8_t *data,
                        size_t size, size_t pos)
{
    *f = zero_field;
    f->item = NTL_ETL_ITEM_VALUE;
    f->name = m->name;
    f->in_type = (uint8_t)(m->type == PTR ? P : m->type == WMISID ? NTL_ETL_IN_SID
                           : m->type == WSTR_OPTIONAL || m->type & FIXW ? WSTR
                           : m->type == IPV6 ? NTL_ETL_IN_BINARY : m->type);
    f->out_type = m->type == PTR ? NTL_ETL_OUT_UNSIGNED : m->out;
    f->data = data;
    f->size = size;
    f->payload_offset = pos;
}

/* The UTF-16 strings that fill the rest of the payload: how many, or
 * SIZE_MAX when the last has no NUL. */
static size_t count_strings(const uint8_t *p, size_t n)
{
    size_t count = 0, pos = 0;
    while (pos < n) {
        size_t len = 2 * ntl_utf16_unit_len(p + pos, (n - pos) / 2);
        if (pos + len + 2 > n)
            return SIZE_MAX;
        pos += len + 2;
        count++;
    }
    return count;
}

/* The pointers (PTR_ARRAY) or UTF-16 strings (WSTR_ARRAY) that fill the
 * rest of the payload: ARRAY_BEGIN, the elements, ARRAY_END. */
static int next_in_array(struct ntl_etl_mof *d, const struct mof_field *m, struct ntl_etl_field *f,
                         struct ntl_error *err)
{
    const struct ntl_etl_event *ev = d->ev;
    size_t psz = ev->is64 ? 8 : 4, left = ev->payload_size - d->pos;
    size_t n = m->type == PTR_ARRAY ? (left % psz ? SIZE_MAX : left / psz)
                                    : count_strings(ev->payload + d->pos, left);
    *f = zero_field;
    f->name = m->name;
    f->in_type = m->type == PTR_ARRAY ? P : WSTR;
    f->payload_offset = d->pos;
    if (!d->in_array) {
        if (n == SIZE_MAX || n > UINT32_MAX)
            return d->status = ntl_error_set(err, NTL_ERR_FORMAT, d->class_name, ev->offset,
                                             "field '%s': %zu bytes are no whole %s at %zu",
                                             m->name, left, m->type == PTR_ARRAY ? "pointers"
                                             : "strings", d->pos);
        d->in_array = true;
        d->array_index = 0;
        f->item = NTL_ETL_ITEM_ARRAY_BEGIN;
        f->count = (uint32_t)n;
        return 1;
    }
    if (!left) {
        d->in_array = false;
        d->index++;
        f->item = NTL_ETL_ITEM_ARRAY_END;
        return 1;
    }
    f->item = NTL_ETL_ITEM_VALUE;
    f->depth = 1;
    f->in_array = true;
    f->index = d->array_index++;
    f->data = ev->payload + d->pos;
    f->size = m->type == PTR_ARRAY ? psz : 2 * ntl_utf16_unit_len(f->data, left / 2);
    d->pos += m->type == PTR_ARRAY ? psz : f->size + 2;
    return 1;
}

int ntl_etl_mof_next(struct ntl_etl_mof *d, struct ntl_etl_field *f, struct ntl_error *err)
{
    const struct mof_field *m = &((const struct mof_field *)d->layout)[d->index];
    const struct ntl_etl_event *ev = d->ev;
    size_t skip, len, total, psz = ev->is64 ? 8 : 4;
    if (d->status < 0)
        return d->status;
    if (m->name && m->type == WSTR_OPTIONAL && d->pos == ev->payload_size)
        m++; /* written by Windows 10 and later only */
    if (!m->name) {
        if (d->pos == ev->payload_size)
            return 0;
        return d->status = ntl_error_set(err, NTL_ERR_FORMAT, d->class_name, ev->offset,
                                         "%zu payload bytes left after the last field at %zu",
                                         ev->payload_size - d->pos, d->pos);
    }
    if (m->type == PTR_ARRAY || m->type == WSTR_ARRAY)
        return next_in_array(d, m, f, err);
    if (!extent(m, ev->payload + d->pos, ev->payload_size - d->pos, psz, &skip, &len, &total))
        return d->status = ntl_error_set(err, NTL_ERR_TRUNCATED, d->class_name, ev->offset,
                                         "field '%s': value runs past the payload at %zu",
                                         m->name, d->pos);
    value_field(f, m, ev->payload + d->pos + skip, len, d->pos);
    d->pos += total;
    d->index++;
    return 1;
}

int ntl_etl_mof_prefix(struct ntl_etl_mof_prefix *p, const struct ntl_etl_event *ev)
{
    const struct mof_layout *l = layout_of(ev);
    size_t psz = ev->is64 ? 8 : 4, len;
    if (!l)
        return 0;
    p->class_name = l->class_name;
    p->layout = l->fields;
    p->n = p->total = 0;
    const struct mof_field *m = l->fields;
    for (; m->name && p->n < NTL_ETL_MOF_PREFIX_MAX && (len = fixed_len(m->type, psz)); m++) {
        value_field(&p->f[p->n++], m, NULL, len, p->total);
        p->total += len;
    }
    p->whole = !m->name;
    return 1;
}

int ntl_etl_mof_skip_pointers(struct ntl_etl_mof *d, const uint8_t **data)
{
    const struct mof_field *m = &((const struct mof_field *)d->layout)[d->index];
    if (d->status < 0 || !d->in_array || d->array_index || m->type != PTR_ARRAY)
        return -1;
    /* The pointers fill the rest of the payload (next_in_array checked it). */
    *data = d->ev->payload + d->pos;
    d->pos = d->ev->payload_size;
    return d->ev->is64 ? 8 : 4;
}

void ntl_etl_mof_resume(struct ntl_etl_mof *d, const struct ntl_etl_mof_prefix *p,
                        const struct ntl_etl_event *ev)
{
    memset(d, 0, sizeof *d);
    d->ev = ev;
    d->class_name = p->class_name;
    d->layout = p->layout;
    d->index = p->n;
    d->pos = p->total;
}
