/* The kernel (MOF) classes beside the common ones in mof.c: the EventTrace
 * header and its extension events, the Windows 2000-2003 versions (0 and 1)
 * of Process, Thread, Image and SystemConfig, DiskIo v2 (Vista, 7), the
 * DiskIo driver-delay events, WorkerThread, CompCS, PerfInfo's
 * sampling-interval and DebuggerEnabled events, PageFault's heap-range and
 * ImageLoadBacked events and SplitIo, as the kernel's MOF and Microsoft's
 * class pages describe them.
 * Each layout is consumed exactly by mof.c in the trace's pointer size. */
#include "mof-internal.h"

#define HEX NTL_ETL_OUT_HEX

#define SYSTIME NTL_ETL_IN_SYSTEMTIME

/* EventTrace_Header (opcode 0): the trace's TRACE_LOGFILE_HEADER. The
 * MOF's TimeZoneInformation (uint8[176]) is a TIME_ZONE_INFORMATION (172
 * bytes) padded to 8; LoggerName and LogFileName are pointers the logger
 * left, the names themselves follow as strings. */
static const struct mof_field header[] = {
    {"BufferSize", U32, 0}, {"Version", X32, 0}, {"ProviderVersion", U32, 0},
    {"NumberOfProcessors", U32, 0}, {"EndTime", NTL_ETL_IN_FILETIME, 0},
    {"TimerResolution", U32, 0}, {"MaxFileSize", U32, 0}, {"LogFileMode", X32, 0},
    {"BuffersWritten", U32, 0}, {"StartBuffers", U32, 0}, {"PointerSize", U32, 0},
    {"EventsLost", U32, 0}, {"CPUSpeed", U32, 0}, {"LoggerName", P, 0}, {"LogFileName", P, 0},
    {"TimeZoneBias", S32, 0}, {"StandardName", FIXW | 32, 0}, {"StandardDate", SYSTIME, 0},
    {"StandardBias", S32, 0}, {"DaylightName", FIXW | 32, 0}, {"DaylightDate", SYSTIME, 0},
    {"DaylightBias", S32, 0}, {"TimeZonePad", U32, 0}, {"BootTime", NTL_ETL_IN_FILETIME, 0},
    {"PerfFreq", U64, 0}, {"StartTime", NTL_ETL_IN_FILETIME, 0}, {"ReservedFlags", X32, 0},
    {"BuffersLost", U32, 0}, {"SessionNameString", WSTR, 0}, {"LogFileNameString", WSTR, 0},
    {NULL, 0, 0},
};
/* Header_Extension_TypeGroup: Extension (5), EndExtension (32). */
static const struct mof_field extension[] = {
    {"GroupMask1", X32, 0}, {"GroupMask2", X32, 0}, {"GroupMask3", X32, 0},
    {"GroupMask4", X32, 0}, {"GroupMask5", X32, 0}, {"GroupMask6", X32, 0},
    {"GroupMask7", X32, 0}, {"GroupMask8", X32, 0}, {"KernelEventVersion", X32, 0},
    {NULL, 0, 0},
};
/* RDComplete (8): the rundown is complete; no payload. */
static const struct mof_field empty[] = {{NULL, 0, 0}};

/* Process_V0_TypeGroup1 (ids pointer-sized) and Process_V1_TypeGroup1. */
static const struct mof_field process_v0[] = {
    {"ProcessId", PTR, 0}, {"ParentId", PTR, 0}, {"UserSID", WMISID, 0},
    {"ImageFileName", ASTR, 0}, {NULL, 0, 0},
};
static const struct mof_field process_v1[] = {
    {"PageDirectoryBase", P, 0}, {"ProcessId", U32, 0}, {"ParentId", U32, 0},
    {"SessionId", U32, 0}, {"ExitStatus", S32, 0}, {"UserSID", WMISID, 0},
    {"ImageFileName", ASTR, 0}, {NULL, 0, 0},
};
/* Thread_V0_TypeGroup1; Thread_V1_TypeGroup1 (Start, DCStart) and
 * _TypeGroup2 (End, DCEnd); CSwitch_V1; WorkerThread (v1 and v2). */
static const struct mof_field thread_v0[] = {{"TThreadId", U32, 0}, {"ProcessId", U32, 0},
                                             {NULL, 0, 0}};
static const struct mof_field thread_v1_start[] = {
    {"ProcessId", U32, 0}, {"TThreadId", U32, 0}, {"StackBase", P, 0}, {"StackLimit", P, 0},
    {"UserStackBase", P, 0}, {"UserStackLimit", P, 0}, {"StartAddr", P, 0},
    {"Win32StartAddr", P, 0}, {"WaitMode", S8, 0}, {NULL, 0, 0},
};
static const struct mof_field thread_v1_end[] = {{"ProcessId", U32, 0}, {"TThreadId", U32, 0},
                                                 {NULL, 0, 0}};
static const struct mof_field cswitch_v1[] = {
    {"NewThreadId", U32, 0}, {"OldThreadId", U32, 0}, {"NewThreadPriority", S8, 0},
    {"OldThreadPriority", S8, 0}, {"NewThreadQuantum", S8, 0}, {"OldThreadQuantum", S8, 0},
    {"OldThreadWaitReason", S8, 0}, {"OldThreadWaitMode", S8, 0}, {"OldThreadState", S8, 0},
    {"OldThreadWaitIdealProcessor", S8, 0}, {"NewThreadWaitTime", U32, 0}, {NULL, 0, 0},
};
static const struct mof_field worker_thread[] = {
    {"TThreadId", U32, 0}, {"StartTime", U64, 0}, {"ThreadRoutine", P, 0}, {NULL, 0, 0},
};
/* Image_V0_Load and Image_V1_Load. */
static const struct mof_field image_v0[] = {
    {"BaseAddress", P, 0}, {"ModuleSize", U32, 0}, {"ImageFileName", WSTR, 0}, {NULL, 0, 0},
};
static const struct mof_field image_v1[] = {
    {"ImageBase", P, 0}, {"ImageSize", P, 0}, {"ProcessId", U32, 0}, {"FileName", WSTR, 0},
    {NULL, 0, 0},
};
/* DiskIo v2: TypeGroup1 (Read, Write), TypeGroup2 (the Init events),
 * TypeGroup3 (FlushBuffers): v3 without IssuingThreadId. */
static const struct mof_field disk_rw_v2[] = {
    {"DiskNumber", U32, 0}, {"IrpFlags", X32, 0}, {"TransferSize", U32, 0},
    {"Reserved", U32, 0}, {"ByteOffset", I64, 0}, {"FileObject", P, 0}, {"Irp", P, 0},
    {"HighResResponseTime", U64, 0}, {NULL, 0, 0},
};
static const struct mof_field disk_init_v2[] = {{"Irp", P, 0}, {NULL, 0, 0}};
static const struct mof_field disk_flush_v2[] = {
    {"DiskNumber", U32, 0}, {"IrpFlags", X32, 0}, {"HighResResponseTime", U64, 0},
    {"Irp", P, 0}, {NULL, 0, 0},
};
/* The driver-delay events: DrvMjFnCall (34), DrvMjFnRet (35),
 * DrvComplRout (37), DrvComplReq (52), DrvComplReqRet (53). */
static const struct mof_field drv_call[] = {
    {"MajorFunction", U32, 0}, {"MinorFunction", U32, 0}, {"RoutineAddr", P, 0},
    {"FileObject", P, 0}, {"Irp", P, 0}, {"UniqMatchId", U32, 0}, {NULL, 0, 0},
};
static const struct mof_field drv_ret[] = {{"Irp", P, 0}, {"UniqMatchId", U32, 0},
                                           {NULL, 0, 0}};
static const struct mof_field drv_compl_rout[] = {
    {"Routine", P, 0}, {"IrpPtr", P, 0}, {"UniqMatchId", U32, 0}, {NULL, 0, 0},
};
static const struct mof_field drv_compl_req[] = {
    {"RoutineAddr", P, 0}, {"Irp", P, 0}, {"UniqMatchId", U32, 0}, {NULL, 0, 0},
};
/* SampledProfileInterval: SetInterval (72), CollectionStart (73),
 * CollectionEnd (74); v3 (Windows 8) appends the profile source's name. */
#define INTERVAL_FIELDS {"Source", U32, 0}, {"NewInterval", U32, 0}, {"OldInterval", U32, 0}
static const struct mof_field interval_v2[] = {INTERVAL_FIELDS, {NULL, 0, 0}};
static const struct mof_field interval_v3[] = {INTERVAL_FIELDS, {"SourceName", WSTR, 0},
                                               {NULL, 0, 0}};

/* PageFault_HeapRangeRundown (100), _HeapRangeCreate (101),
 * _HeapRangeTypeGroup (HRReserve 102, HRRelease 103), _HeapRangeDestroy
 * (104), _ImageLoadBacked (105); SplitIo_Info (VolMgr). */
static const struct mof_field hr_rundown[] = {
    {"HeapHandle", P, 0}, {"HRFlags", X32, 0}, {"HRPid", U32, 0}, {"HRRangeCount", U32, 0},
    {NULL, 0, 0},
};
static const struct mof_field hr_create[] = {
    {"HeapHandle", P, 0}, {"FirstRangeSize", PTR, 0}, {"HRCreateFlags", X32, 0}, {NULL, 0, 0},
};
static const struct mof_field hr_range[] = {
    {"HeapHandle", P, 0}, {"HRAddress", P, 0}, {"HRSize", PTR, 0}, {NULL, 0, 0},
};
static const struct mof_field hr_destroy[] = {{"HeapHandle", P, 0}, {NULL, 0, 0}};
static const struct mof_field image_load_backed[] = {
    {"FileObject", P, 0}, {"DeviceChar", X32, 0}, {"FileChar", U16, HEX},
    {"LoadFlags", U16, HEX}, {NULL, 0, 0},
};
static const struct mof_field split_io[] = {{"ParentIrp", P, 0}, {"ChildIrp", P, 0},
                                            {NULL, 0, 0}};

/* SystemConfig_V0/V1 where they differ from v2: CPU (a 132-unit domain
 * name), LogDisk (no Pad3), NIC (fixed-size names and IPv4 addresses),
 * Services (fixed-size names, no state). */
static const struct mof_field config_cpu_v0[] = {
    {"MHz", U32, 0}, {"NumberOfProcessors", U32, 0}, {"MemSize", U32, 0},
    {"PageSize", U32, 0}, {"AllocationGranularity", U32, 0}, {"ComputerName", FIXW | 256, 0},
    {"DomainName", FIXW | 132, 0}, {"HyperThreadingFlag", P, 0}, {NULL, 0, 0},
};
static const struct mof_field config_logdisk_v0[] = {
    {"StartOffset", U64, 0}, {"PartitionSize", U64, 0}, {"DiskNumber", U32, 0},
    {"Size", U32, 0}, {"DriveType", U32, 0}, {"DriveLetterString", FIXW | 4, 0},
    {"Pad1", U32, 0}, {"PartitionNumber", U32, 0}, {"SectorsPerCluster", U32, 0},
    {"BytesPerSector", U32, 0}, {"Pad2", U32, 0}, {"NumberOfFreeClusters", I64, 0},
    {"TotalNumberOfClusters", I64, 0}, {"FileSystem", FIXW | 16, 0}, {"VolumeExt", U32, 0},
    {NULL, 0, 0},
};
static const struct mof_field config_nic_v0[] = {
    {"NICName", FIXW | 256, 0}, {"Index", U32, 0}, {"PhysicalAddrLen", U32, 0},
    {"PhysicalAddr", FIXW | 8, 0}, {"Size", U32, 0}, {"IpAddress", S32, 0},
    {"SubnetMask", S32, 0}, {"DhcpServer", S32, 0}, {"Gateway", S32, 0},
    {"PrimaryWinsServer", S32, 0}, {"SecondaryWinsServer", S32, 0}, {"DnsServer1", S32, 0},
    {"DnsServer2", S32, 0}, {"DnsServer3", S32, 0}, {"DnsServer4", S32, 0}, {"Data", U32, 0},
    {NULL, 0, 0},
};
static const struct mof_field config_services_v0[] = {
    {"ServiceName", FIXW | 34, 0}, {"DisplayName", FIXW | 256, 0},
    {"ProcessName", FIXW | 34, 0}, {"ProcessId", U32, 0}, {NULL, 0, 0},
};

static const uint8_t op_0[] = {0, END}, ext_ops[] = {5, 32, END}, op_8[] = {8, END};
static const uint8_t type_group1[] = {1, 2, 3, 4, END}, starts[] = {1, 3, END};
static const uint8_t ends[] = {2, 4, END}, op_36[] = {36, END}, op_57[] = {57, END};
static const uint8_t op_10[] = {10, END}, disk_rw[] = {10, 11, END};
static const uint8_t disk_init[] = {12, 13, 15, END}, op_14[] = {14, END};
static const uint8_t op_34[] = {34, END}, drv_rets[] = {35, 53, END}, op_37[] = {37, END};
static const uint8_t op_52[] = {52, END}, interval_ops[] = {72, 73, 74, END};
static const uint8_t op_12[] = {12, END}, op_13[] = {13, END}, op_15[] = {15, END};
static const uint8_t op_58[] = {58, END}, op_100[] = {100, END}, op_101[] = {101, END};
static const uint8_t hr_ops[] = {102, 103, END}, op_104[] = {104, END}, op_105[] = {105, END};
static const uint8_t op_32[] = {32, END};

const struct mof_layout ntl_etl_mof_old[] = {
    {0x00, op_0, 2, 2, "EventTrace", header},
    {0x00, ext_ops, 2, 2, "EventTrace", extension},
    {0x00, op_8, 2, 2, "EventTrace", empty},
    {0x03, type_group1, 0, 0, "Process", process_v0},
    {0x03, type_group1, 1, 1, "Process", process_v1},
    {0x05, type_group1, 0, 0, "Thread", thread_v0},
    {0x05, starts, 1, 1, "Thread", thread_v1_start},
    {0x05, ends, 1, 1, "Thread", thread_v1_end},
    {0x05, op_36, 1, 1, "Thread", cswitch_v1},
    {0x05, op_57, 1, 2, "Thread", worker_thread},
    {0x05, op_37, 2, 2, "Thread", empty},
    {0x14, op_10, 0, 0, "Image", image_v0},
    {0x14, op_10, 1, 1, "Image", image_v1},
    {0x01, disk_rw, 2, 2, "DiskIo", disk_rw_v2},
    {0x01, disk_init, 2, 2, "DiskIo", disk_init_v2},
    {0x01, op_14, 2, 2, "DiskIo", disk_flush_v2},
    {0x01, op_34, 2, 2, "DiskIo", drv_call},
    {0x01, drv_rets, 2, 2, "DiskIo", drv_ret},
    {0x01, op_37, 2, 2, "DiskIo", drv_compl_rout},
    {0x01, op_52, 2, 2, "DiskIo", drv_compl_req},
    {0x0F, interval_ops, 2, 2, "PerfInfo", interval_v2},
    {0x0F, interval_ops, 3, 3, "PerfInfo", interval_v3},
    {0x0F, op_58, 2, 2, "PerfInfo", empty},
    {0x02, op_100, 2, 2, "PageFault", hr_rundown},
    {0x02, op_101, 2, 2, "PageFault", hr_create},
    {0x02, hr_ops, 2, 2, "PageFault", hr_range},
    {0x02, op_104, 2, 2, "PageFault", hr_destroy},
    {0x02, op_105, 2, 2, "PageFault", image_load_backed},
    {0x1B, op_32, 2, 2, "SplitIo", split_io},
    {0x0B, op_10, 0, 1, "SystemConfig", config_cpu_v0},
    {0x0B, op_12, 0, 1, "SystemConfig", config_logdisk_v0},
    {0x0B, op_13, 0, 1, "SystemConfig", config_nic_v0},
    {0x0B, op_15, 0, 1, "SystemConfig", config_services_v0},
};
const size_t ntl_etl_mof_nold = sizeof ntl_etl_mof_old / sizeof ntl_etl_mof_old[0];
