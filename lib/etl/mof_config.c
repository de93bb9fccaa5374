/* SystemConfig (group 0x0B): the hardware and network configuration the
 * kernel logger writes at a trace's end, v2 classes as Microsoft's
 * SystemConfig pages describe them (PhyDisk, Video, Power, IRQ and PnP are
 * the same in v0 and v1; the others' v0/v1 are in mof_old.c), and CPU v3
 * and PnP v4. */
#include "mof-internal.h"

#define HEX NTL_ETL_OUT_HEX

/* SystemConfig_CPU v2: HyperThreadingFlag is pointer-sized (its Pointer
 * qualifier). v3 appends what the kernel's SYSTEM_INFO-like block holds
 * (Microsoft's pages stop at v2; these sizes fill the payload exactly). */
#define CPU_V2_FIELDS                                                                      \
    {"MHz", U32, 0}, {"NumberOfProcessors", U32, 0}, {"MemSize", U32, 0},                  \
    {"PageSize", U32, 0}, {"AllocationGranularity", U32, 0},                               \
    {"ComputerName", FIXW | 256, 0}, {"DomainName", FIXW | 134, 0},                        \
    {"HyperThreadingFlag", P, 0}
static const struct mof_field config_cpu_v2[] = {CPU_V2_FIELDS, {NULL, 0, 0}};
static const struct mof_field config_cpu_v3[] = {
    CPU_V2_FIELDS, {"HighestUserAddress", P, 0}, {"ProcessorArchitecture", U16, 0},
    {"ProcessorLevel", U16, 0}, {"ProcessorRevision", U16, HEX}, {"PaeEnabled", U8, 0},
    {"NxEnabled", U8, 0}, {"MemorySpeed", U32, 0}, {NULL, 0, 0},
};
static const struct mof_field config_phydisk[] = {
    {"DiskNumber", U32, 0}, {"BytesPerSector", U32, 0}, {"SectorsPerTrack", U32, 0},
    {"TracksPerCylinder", U32, 0}, {"Cylinders", U64, 0}, {"SCSIPort", U32, 0},
    {"SCSIPath", U32, 0}, {"SCSITarget", U32, 0}, {"SCSILun", U32, 0},
    {"Manufacturer", FIXW | 256, 0}, {"PartitionCount", U32, 0}, {"WriteCacheEnabled", U8, 0},
    {"Pad", U8, 0}, {"BootDriveLetter", FIXW | 3, 0}, {"Spare", FIXW | 2, 0}, {NULL, 0, 0},
};
static const struct mof_field config_logdisk[] = {
    {"StartOffset", U64, 0}, {"PartitionSize", U64, 0}, {"DiskNumber", U32, 0},
    {"Size", U32, 0}, {"DriveType", U32, 0}, {"DriveLetterString", FIXW | 4, 0},
    {"Pad1", U32, 0}, {"PartitionNumber", U32, 0}, {"SectorsPerCluster", U32, 0},
    {"BytesPerSector", U32, 0}, {"Pad2", U32, 0}, {"NumberOfFreeClusters", I64, 0},
    {"TotalNumberOfClusters", I64, 0}, {"FileSystem", FIXW | 16, 0}, {"VolumeExt", U32, 0},
    {"Pad3", U32, 0}, {NULL, 0, 0},
};
static const struct mof_field config_nic[] = {
    {"PhysicalAddr", U64, HEX}, {"PhysicalAddrLen", U32, 0}, {"Ipv4Index", U32, 0},
    {"Ipv6Index", U32, 0}, {"NICDescription", WSTR, 0}, {"IpAddresses", WSTR, 0},
    {"DnsServerAddresses", WSTR, 0}, {NULL, 0, 0},
};
static const struct mof_field config_video[] = {
    {"MemorySize", U32, 0}, {"XResolution", U32, 0}, {"YResolution", U32, 0},
    {"BitsPerPixel", U32, 0}, {"VRefresh", U32, 0}, {"ChipType", FIXW | 256, 0},
    {"DACType", FIXW | 256, 0}, {"AdapterString", FIXW | 256, 0}, {"BiosString", FIXW | 256, 0},
    {"DeviceId", FIXW | 256, 0}, {"StateFlags", X32, 0}, {NULL, 0, 0},
};
static const struct mof_field config_power[] = {
    {"S1", U8, 0}, {"S2", U8, 0}, {"S3", U8, 0}, {"S4", U8, 0}, {"S5", U8, 0},
    {"Pad1", U8, 0}, {"Pad2", U8, 0}, {"Pad3", U8, 0}, {NULL, 0, 0},
};
static const struct mof_field config_network[] = {
    {"TcbTablePartitions", U32, 0}, {"MaxHashTableSize", U32, 0}, {"MaxUserPort", U32, 0},
    {"TcpTimedWaitDelay", U32, 0}, {NULL, 0, 0},
};
static const struct mof_field config_irq[] = {
    {"IRQAffinity", U64, HEX}, {"IRQNum", U32, 0}, {"DeviceDescriptionLen", U32, 0},
    {"DeviceDescription", WSTR, 0}, {NULL, 0, 0},
};
static const struct mof_field config_pnp_v2[] = {
    {"IDLength", U32, 0}, {"DescriptionLength", U32, 0}, {"FriendlyNameLength", U32, 0},
    {"DeviceID", WSTR, 0}, {"DeviceDescription", WSTR, 0}, {"FriendlyName", WSTR, 0},
    {NULL, 0, 0},
};
/* PnP v4 (Windows 8): the device's class GUID and filter counts first, the
 * PDO and service names after the three strings, then the upper and the
 * lower filter drivers' names (UpperFilterCount + LowerFilterCount strings). */
static const struct mof_field config_pnp_v4[] = {
    {"ClassGuid", GUID, 0}, {"UpperFilterCount", U32, 0}, {"LowerFilterCount", U32, 0},
    {"DeviceID", WSTR, 0}, {"DeviceDescription", WSTR, 0}, {"FriendlyName", WSTR, 0},
    {"PdoName", WSTR, 0}, {"ServiceName", WSTR, 0}, {"Filters", WSTR_ARRAY, 0}, {NULL, 0, 0},
};
static const struct mof_field config_ide[] = {
    {"TargetId", U32, 0}, {"DeviceType", U32, 0}, {"DeviceTimingMode", U32, 0},
    {"LocationInformationLen", U32, 0}, {"LocationInformation", WSTR, 0}, {NULL, 0, 0},
};

static const uint8_t cfg_10[] = {10, END}, cfg_11[] = {11, END}, cfg_12[] = {12, END};
static const uint8_t cfg_13[] = {13, END}, cfg_14[] = {14, END}, cfg_16[] = {16, END};
static const uint8_t cfg_17[] = {17, END}, cfg_21[] = {21, END}, cfg_22[] = {22, END};
static const uint8_t cfg_23[] = {23, END};

const struct mof_layout ntl_etl_mof_config[] = {
    {0x0B, cfg_10, 2, 2, "SystemConfig", config_cpu_v2},
    {0x0B, cfg_10, 3, 3, "SystemConfig", config_cpu_v3},
    {0x0B, cfg_11, 0, 2, "SystemConfig", config_phydisk},
    {0x0B, cfg_12, 2, 2, "SystemConfig", config_logdisk},
    {0x0B, cfg_13, 2, 2, "SystemConfig", config_nic},
    {0x0B, cfg_14, 0, 2, "SystemConfig", config_video},
    {0x0B, cfg_16, 0, 2, "SystemConfig", config_power},
    {0x0B, cfg_17, 2, 2, "SystemConfig", config_network},
    {0x0B, cfg_21, 0, 2, "SystemConfig", config_irq},
    {0x0B, cfg_22, 0, 2, "SystemConfig", config_pnp_v2},
    {0x0B, cfg_22, 4, 4, "SystemConfig", config_pnp_v4},
    {0x0B, cfg_23, 2, 2, "SystemConfig", config_ide},
};
const size_t ntl_etl_mof_nconfig = sizeof ntl_etl_mof_config / sizeof ntl_etl_mof_config[0];
