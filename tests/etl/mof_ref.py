#!/usr/bin/env python3
"""An independent decoder of kernel events, for
cross-checking `etl events`.

Written from Microsoft's MOF class pages (Process_V2/V3/V4_TypeGroup1,
Process_Terminate_TypeGroup1, Process_V2_TypeGroup2, Thread_V2/V3_TypeGroup1,
Image_Load, SampledProfile, DiskIo_TypeGroup1-3, FileIo_Name,
PageFault_HardFault, StackWalk_Event, StackWalk_StackKeys, StackWalk_KeyEvent,
SystemConfig_V3_Services, UdpIp_TypeGroup1, the IPv6 UdpIp and TcpIp
classes, SystemConfig_CPU/PhyDisk/LogDisk/NIC/Video/Power/Network/IRQ/PnP/IDEChannel,
Registry_TypeGroup1, TcpIp_SendIPV4 and TcpIp_TypeGroup1-4, TcpIp_Fail, UdpIp_Fail,
the ALPC classes, PageFault_TypeGroup1, PageFault_VirtualAlloc, ISR
and the kernel's MOF for the CPU v3 and PnP v4 tails; the FileIo_* classes
and FileIo_V0/V1_Name; EventTrace_Header, Header_Extension_TypeGroup,
RDComplete; Process_V0/V1, Thread_V0/V1, CSwitch_V1, WorkerThread, Image_V0/V1,
DiskIo v2 and its driver-delay classes, SampledProfileInterval (v3 adds the
source's name), SystemConfig_V0/V1, CompCS, DebuggerEnabled, the PageFault
heap-range classes and PageFault_ImageLoadBacked, SplitIo_Info), with no code shared with lib/etl. Layouts are lists of
name:kind: p pointer (hex), n pointer-sized count, I u32, i s32, x u32 in
hex, q/Q s64/u64, B u8, b u8 in hex, H u16, P a big-endian port, 4 and 6
IPv4 and IPv6 addresses, s WmiSid, a ANSI string, w UTF-16 string, W an
optional trailing UTF-16 string, T FILETIME, S pointers to the end, F<n> a
char16[n] array (the text up to its first NUL), G a GUID, X u64 in hex, c
u16 in hex, h s16, L UTF-16 strings to the end, Y SYSTEMTIME. Reads the buffers with
etl_ref.

    mof_ref.py FILE.etl   (one JSON line per decoded event)
"""
import datetime
import json
import struct
import sys
import uuid

import etl_ref

PROC_V2 = "UniqueProcessKey:p ProcessId:I ParentId:I SessionId:I ExitStatus:i UserSID:s " \
          "ImageFileName:a CommandLine:w"
PROC_V3 = "UniqueProcessKey:p ProcessId:I ParentId:I SessionId:I ExitStatus:i " \
          "DirectoryTableBase:p UserSID:s ImageFileName:a CommandLine:w"
PROC_V4 = "UniqueProcessKey:p ProcessId:I ParentId:I SessionId:I ExitStatus:i " \
          "DirectoryTableBase:p Flags:x UserSID:s ImageFileName:a CommandLine:w " \
          "PackageFullName:w ApplicationId:w"
PERFCTR = "ProcessId:I PageFaultCount:I HandleCount:I Reserved:I " + " ".join(
    n + ":n" for n in ("PeakVirtualSize", "PeakWorkingSetSize", "PeakPagefileUsage",
                       "QuotaPeakPagedPoolUsage", "QuotaPeakNonPagedPoolUsage", "VirtualSize",
                       "WorkingSetSize", "PagefileUsage", "QuotaPagedPoolUsage",
                       "QuotaNonPagedPoolUsage", "PrivatePageCount"))
THREAD_V2 = "ProcessId:I TThreadId:I StackBase:p StackLimit:p UserStackBase:p UserStackLimit:p " \
            "StartAddr:p Win32StartAddr:p TebBase:p SubProcessTag:x"
THREAD_V3 = "ProcessId:I TThreadId:I StackBase:p StackLimit:p UserStackBase:p UserStackLimit:p " \
            "Affinity:p Win32StartAddr:p TebBase:p SubProcessTag:x BasePriority:B " \
            "PagePriority:B IoPriority:B ThreadFlags:b ThreadName:W"
IMAGE_V2 = "ImageBase:p ImageSize:p ProcessId:I ImageCheckSum:x TimeDateStamp:x Reserved0:I " \
           "DefaultBase:p Reserved1:I Reserved2:I Reserved3:I Reserved4:I FileName:w"
IMAGE_V3 = "ImageBase:p ImageSize:p ProcessId:I ImageCheckSum:x TimeDateStamp:x " \
           "SignatureLevel:B SignatureType:B Reserved0:H DefaultBase:p Reserved1:I Reserved2:I " \
           "Reserved3:I Reserved4:I FileName:w"

SAMPLED_PROFILE = "InstructionPointer:p ThreadId:I Count:I"
DISK_RW = "DiskNumber:I IrpFlags:x TransferSize:I Reserved:I ByteOffset:q FileObject:p Irp:p " \
          "HighResResponseTime:Q IssuingThreadId:I"
DISK_FLUSH = "DiskNumber:I IrpFlags:x HighResResponseTime:Q Irp:p IssuingThreadId:I"
DISK_INIT = "Irp:p IssuingThreadId:I"
FILE_NAME = "FileObject:p FileName:w"
HARD_FAULT = "InitialTime:q ReadOffset:Q VirtualAddress:p FileObject:p TThreadId:I ByteCount:I"
STACK = "EventTimeStamp:Q StackProcess:I StackThread:I Stack:S"
STACK_KEY_REF = "EventTimeStamp:Q StackProcess:I StackThread:I StackKey:p"
STACK_KEY_DEF = "StackKey:p Stack:S"
SERVICES_V3 = "ProcessId:I ServiceState:I SubProcessTag:I ServiceName:w DisplayName:w ProcessName:w LoadOrderGroup:w SvcHostGroup:w"
UDP_V4 = "PID:I size:I daddr:4 saddr:4 dport:P sport:P seqnum:I connid:n"
IP_V6 = "PID:I size:I daddr:6 saddr:6 dport:P sport:P seqnum:I connid:n"
TCP_SEND_V6 = "PID:I size:I daddr:6 saddr:6 dport:P sport:P startime:I endtime:I seqnum:I connid:n"
CPU_V2 = "MHz:I NumberOfProcessors:I MemSize:I PageSize:I AllocationGranularity:I " \
         "ComputerName:F256 DomainName:F134 HyperThreadingFlag:p"
CONFIG = {
    (10, 2): CPU_V2,
    (10, 3): CPU_V2 + " HighestUserAddress:p ProcessorArchitecture:H ProcessorLevel:H "
                      "ProcessorRevision:c PaeEnabled:B NxEnabled:B MemorySpeed:I",
    (11, 2): "DiskNumber:I BytesPerSector:I SectorsPerTrack:I TracksPerCylinder:I Cylinders:Q "
             "SCSIPort:I SCSIPath:I SCSITarget:I SCSILun:I Manufacturer:F256 PartitionCount:I "
             "WriteCacheEnabled:B Pad:B BootDriveLetter:F3 Spare:F2",
    (12, 2): "StartOffset:Q PartitionSize:Q DiskNumber:I Size:I DriveType:I DriveLetterString:F4 "
             "Pad1:I PartitionNumber:I SectorsPerCluster:I BytesPerSector:I Pad2:I "
             "NumberOfFreeClusters:q TotalNumberOfClusters:q FileSystem:F16 VolumeExt:I Pad3:I",
    (13, 2): "PhysicalAddr:X PhysicalAddrLen:I Ipv4Index:I Ipv6Index:I NICDescription:w "
             "IpAddresses:w DnsServerAddresses:w",
    (16, 2): " ".join(n + ":B" for n in ("S1", "S2", "S3", "S4", "S5", "Pad1", "Pad2", "Pad3")),
    (17, 2): "TcbTablePartitions:I MaxHashTableSize:I MaxUserPort:I TcpTimedWaitDelay:I",
    (22, 4): "ClassGuid:G UpperFilterCount:I LowerFilterCount:I DeviceID:w DeviceDescription:w "
             "FriendlyName:w PdoName:w ServiceName:w Filters:L",
    (23, 2): "TargetId:I DeviceType:I DeviceTimingMode:I LocationInformationLen:I "
             "LocationInformation:w",
}
IP4_HEAD = "PID:I size:I daddr:4 saddr:4 dport:P sport:P"
IP6_HEAD = "PID:I size:I daddr:6 saddr:6 dport:P sport:P"
TCP_OPTIONS = "mss:H sackopt:H tsopt:H wsopt:H rcvwin:I rcvwinscale:h sndwinscale:h"
REGISTRY = "InitialTime:q Status:x Index:I KeyHandle:p KeyName:w"
FIXED16 = " ".join(n + ":F256" for n in ("ChipType", "DACType", "AdapterString", "BiosString",
                                          "DeviceId"))
MORE = {  # (group, opcodes, version): layout, from the pages of the classes no shared trace has
    (6, (10,), 2): IP4_HEAD + " startime:I endtime:I seqnum:I connid:n",
    (6, (11, 13, 14, 16, 18), 2): IP4_HEAD + " seqnum:I connid:n",
    (6, (12, 15), 2): IP4_HEAD + " " + TCP_OPTIONS + " seqnum:I connid:n",
    (6, (29, 30, 32, 34), 2): IP6_HEAD + " seqnum:I connid:n",
    (6, (28, 31), 2): IP6_HEAD + " " + TCP_OPTIONS + " seqnum:I connid:n",
    (6, (17,), 2): "Proto:H FailureCode:H", (8, (17,), 2): "Proto:H FailureCode:H",
    (9, tuple(range(10, 28)), 2): REGISTRY,
    (0x1A, (33, 34, 35), 2): "MessageID:I", (0x1A, (36,), 2): "IsServerPort:I PortName:a",
    (0x1A, (37,), 2): "Status:x",
    (2, (10, 11, 12, 13, 14, 15), 2): "VirtualAddress:p ProgramCounter:p",
    (2, (98, 99), 2): "BaseAddress:p RegionSize:n ProcessId:I Flags:x",
    (0x0F, (67,), 2): "InitialTime:Q Routine:p ReturnValue:B Vector:B Reserved:H",
    (0x0B, (14,), 2): "MemorySize:I XResolution:I YResolution:I BitsPerPixel:I VRefresh:I " +
                      FIXED16 + " StateFlags:x",
    (0x0B, (21,), 2): "IRQAffinity:X IRQNum:I DeviceDescriptionLen:I DeviceDescription:w",
    (0x0B, (22,), 2): "IDLength:I DescriptionLength:I FriendlyNameLength:I DeviceID:w "
                      "DeviceDescription:w FriendlyName:w",
    # Windows XP/2003: Registry_V0/V1_TypeGroup1, TcpIp_V0_TypeGroup1, the TcpIp_V1 classes,
    # UdpIp_V0/V1_TypeGroup1, ISR_V1, DPC_V1
    (9, tuple(range(10, 22)), 0): "Status:p KeyHandle:p ElapsedTime:q KeyName:w",
    (9, tuple(range(10, 23)), 1): "Status:p KeyHandle:p ElapsedTime:q Index:I KeyName:w",
    (6, (10, 11, 12, 13, 14, 15), 0): "daddr:4 saddr:4 dport:P sport:P size:I PID:I",
    (6, (10,), 1): IP4_HEAD + " startime:I endtime:I connid:I seqnum:I",
    (6, (11, 13, 14, 16, 18, 19, 20, 21, 22), 1): IP4_HEAD + " connid:I seqnum:I",
    (6, (12, 15), 1): IP4_HEAD + " " + TCP_OPTIONS + " connid:I seqnum:I",
    (6, (17,), 1): "Proto:I",
    (8, (10, 11), 0): "context:p saddr:4 sport:P size:H daddr:4 dport:P dsize:H",
    (8, (10, 11), 1): IP4_HEAD,
    (0x0F, (67,), 1): "InitialTime:Q Routine:p ReturnValue:I",
    (0x0F, (68, 69), 1): "InitialTime:Q Routine:p",
}

FILEIO_HEAD = "IrpPtr:p TTID:n FileObject:p"  # TTID is pointer-sized in v2
# TIME_ZONE_INFORMATION (172 bytes), padded to the MOF's 176
TIME_ZONE = "TimeZoneBias:i StandardName:F32 StandardDate:Y StandardBias:i DaylightName:F32 " \
            "DaylightDate:Y DaylightBias:i TimeZonePad:I"
HEADER = "BufferSize:I Version:x ProviderVersion:I NumberOfProcessors:I EndTime:T " \
         "TimerResolution:I MaxFileSize:I LogFileMode:x BuffersWritten:I StartBuffers:I " \
         "PointerSize:I EventsLost:I CPUSpeed:I LoggerName:p LogFileName:p " + TIME_ZONE + \
         " BootTime:T PerfFreq:Q StartTime:T ReservedFlags:x BuffersLost:I " \
         "SessionNameString:w LogFileNameString:w"
DISK_RW_V2 = "DiskNumber:I IrpFlags:x TransferSize:I Reserved:I ByteOffset:q FileObject:p " \
             "Irp:p HighResResponseTime:Q"
OLDER = {  # the EventTrace classes, FileIo, and versions before and beside the common ones
    (0, (0,), 2): HEADER,
    (0, (5, 32), 2): " ".join("GroupMask%d:x" % i for i in range(1, 9)) + " KernelEventVersion:x",
    (0, (8,), 2): "",
    (4, (0,), 0): FILE_NAME, (4, (0, 32), 1): FILE_NAME,
    (4, (64,), 2): FILEIO_HEAD + " CreateOptions:x FileAttributes:x ShareAccess:x OpenPath:w",
    (4, (65, 66, 73), 2): FILEIO_HEAD + " FileKey:p",
    (4, (67, 68), 2): "Offset:Q " + FILEIO_HEAD + " FileKey:p IoSize:I IoFlags:x",
    (4, (69, 70, 71, 74, 75), 2): FILEIO_HEAD + " FileKey:p ExtraInfo:p InfoClass:I",
    (4, (72, 77), 2): FILEIO_HEAD + " FileKey:p Length:I InfoClass:I FileIndex:I FileName:w",
    (4, (76,), 2): "IrpPtr:p ExtraInfo:p NtStatus:x",
    (3, (1, 2, 3, 4), 0): "ProcessId:n ParentId:n UserSID:s ImageFileName:a",
    (3, (1, 2, 3, 4), 1): "PageDirectoryBase:p ProcessId:I ParentId:I SessionId:I ExitStatus:i "
                          "UserSID:s ImageFileName:a",
    (5, (1, 2, 3, 4), 0): "TThreadId:I ProcessId:I",
    (5, (1, 3), 1): "ProcessId:I TThreadId:I StackBase:p StackLimit:p UserStackBase:p "
                    "UserStackLimit:p StartAddr:p Win32StartAddr:p WaitMode:j",
    (5, (2, 4), 1): "ProcessId:I TThreadId:I",
    (5, (36,), 1): "NewThreadId:I OldThreadId:I NewThreadPriority:j OldThreadPriority:j "
                   "NewThreadQuantum:j OldThreadQuantum:j OldThreadWaitReason:j "
                   "OldThreadWaitMode:j OldThreadState:j OldThreadWaitIdealProcessor:j "
                   "NewThreadWaitTime:I",
    (5, (57,), 1): "TThreadId:I StartTime:Q ThreadRoutine:p",
    (5, (57,), 2): "TThreadId:I StartTime:Q ThreadRoutine:p",
    (0x14, (10,), 0): "BaseAddress:p ModuleSize:I ImageFileName:w",
    (0x14, (10,), 1): "ImageBase:p ImageSize:p ProcessId:I FileName:w",
    (1, (10, 11), 2): DISK_RW_V2, (1, (12, 13, 15), 2): "Irp:p",
    (1, (14,), 2): "DiskNumber:I IrpFlags:x HighResResponseTime:Q Irp:p",
    (1, (34,), 2): "MajorFunction:I MinorFunction:I RoutineAddr:p FileObject:p Irp:p "
                   "UniqMatchId:I",
    (1, (35, 53), 2): "Irp:p UniqMatchId:I", (1, (37,), 2): "Routine:p IrpPtr:p UniqMatchId:I",
    (1, (52,), 2): "RoutineAddr:p Irp:p UniqMatchId:I",
    (0x0F, (72, 73, 74), 2): "Source:I NewInterval:I OldInterval:I",
    (0x0F, (72, 73, 74), 3): "Source:I NewInterval:I OldInterval:I SourceName:w",
    (5, (37,), 2): "", (0x0F, (58,), 2): "",  # CompCS, DebuggerEnabled
    (2, (100,), 2): "HeapHandle:p HRFlags:x HRPid:I HRRangeCount:I",
    (2, (101,), 2): "HeapHandle:p FirstRangeSize:n HRCreateFlags:x",
    (2, (102, 103), 2): "HeapHandle:p HRAddress:p HRSize:n", (2, (104,), 2): "HeapHandle:p",
    (2, (105,), 2): "FileObject:p DeviceChar:x FileChar:c LoadFlags:c",
    (0x1B, (32,), 2): "ParentIrp:p ChildIrp:p",
}
for v in (0, 1):  # SystemConfig_V0 and _V1 are the same
    OLDER.update({
        (0x0B, (10,), v): CPU_V2.replace("F134", "F132"),
        (0x0B, (11,), v): CONFIG[(11, 2)], (0x0B, (12,), v): CONFIG[(12, 2)][:-len(" Pad3:I")],
        (0x0B, (13,), v): "NICName:F256 Index:I PhysicalAddrLen:I PhysicalAddr:F8 Size:I " +
                          " ".join(n + ":i" for n in (
                              "IpAddress", "SubnetMask", "DhcpServer", "Gateway",
                              "PrimaryWinsServer", "SecondaryWinsServer", "DnsServer1",
                              "DnsServer2", "DnsServer3", "DnsServer4")) + " Data:I",
        (0x0B, (14,), v): MORE[(0x0B, (14,), 2)], (0x0B, (15,), v):
            "ServiceName:F34 DisplayName:F256 ProcessName:F34 ProcessId:I",
        (0x0B, (16,), v): CONFIG[(16, 2)], (0x0B, (21,), v): MORE[(0x0B, (21,), 2)],
        (0x0B, (22,), v): MORE[(0x0B, (22,), 2)]})

# (group, opcode, version) -> layout
LAYOUTS = {}
for op in (1, 2, 3, 4, 39):
    LAYOUTS.update({(3, op, 2): PROC_V2, (3, op, 3): PROC_V3, (3, op, 4): PROC_V4,
                    (3, op, 5): PROC_V4 + " ExitTime:T"})
for op in (1, 2, 3, 4):
    LAYOUTS.update({(5, op, 2): THREAD_V2, (5, op, 3): THREAD_V3})
for op in (2, 3, 4, 10):
    LAYOUTS.update({(0x14, op, 2): IMAGE_V2, (0x14, op, 3): IMAGE_V3})
LAYOUTS.update({(3, 11, 2): "ProcessId:I", (3, 32, 2): PERFCTR, (3, 33, 2): PERFCTR,
                (3, 10, 2): IMAGE_V2, (3, 10, 3): IMAGE_V3, (0x14, 33, 2): "ImageBase:p",
                (0x0F, 46, 2): SAMPLED_PROFILE, (1, 10, 3): DISK_RW, (1, 11, 3): DISK_RW,
                (1, 14, 3): DISK_FLUSH, (1, 12, 3): DISK_INIT, (1, 13, 3): DISK_INIT,
                (1, 15, 3): DISK_INIT, (2, 32, 2): HARD_FAULT, (0x18, 32, 2): STACK,
                (8, 10, 2): UDP_V4, (8, 11, 2): UDP_V4, (8, 26, 2): IP_V6, (8, 27, 2): IP_V6,
                (6, 26, 2): TCP_SEND_V6, (6, 27, 2): IP_V6})
for op in (0, 32, 35, 36):
    LAYOUTS[(4, op, 2)] = FILE_NAME
LAYOUTS.update({(0x18, 37, 2): STACK_KEY_REF, (0x18, 38, 2): STACK_KEY_REF,
                (0x18, 34, 2): STACK_KEY_DEF, (0x18, 35, 2): STACK_KEY_DEF,
                (0x18, 36, 2): STACK_KEY_DEF, (0x0B, 15, 3): SERVICES_V3})
LAYOUTS.update({(0x0B, op, v): layout for (op, v), layout in CONFIG.items()})
LAYOUTS.update({(g, op, v): layout for (g, ops, v), layout in MORE.items() for op in ops})
LAYOUTS.update({(g, op, v): layout for (g, ops, v), layout in OLDER.items() for op in ops})
KERNEL = {"system": 32, "compact": 24, "perfinfo": 16}


def sid_text(b):
    auth = int.from_bytes(b[2:8], "big")
    subs = struct.unpack_from("<%dI" % b[1], b, 8)
    return "S-1-%d" % auth + "".join("-%d" % s for s in subs)


def utf16(p, pos):
    end = pos
    while end + 1 < len(p) and p[end:end + 2] != b"\0\0":
        end += 2
    return p[pos:end].decode("utf-16-le", "replace"), end + 2


def decode(layout, p, psz):
    out, pos = {}, 0
    pfmt = "<Q" if psz == 8 else "<I"
    for item in layout.split():
        name, kind = item.split(":")
        if kind == "W" and pos == len(p):
            continue
        if kind[0] == "F":
            units = int(kind[1:])
            out[name] = utf16(p[pos:pos + 2 * units] + b"\0\0", 0)[0]
            pos += 2 * units
            continue
        if kind == "L":
            out[name] = []
            while pos < len(p):
                text, pos = utf16(p, pos)
                out[name].append(text)
            continue
        if kind == "Y":
            w = struct.unpack_from("<8H", p, pos)
            out[name] = "%04u-%02u-%02uT%02u:%02u:%02u.%03u" % (w[0], w[1], w[3], w[4], w[5],
                                                                w[6], w[7])
            pos += 16
            continue
        if kind == "j":
            out[name] = struct.unpack_from("<b", p, pos)[0]
            pos += 1
            continue
        if kind == "G":
            out[name] = str(uuid.UUID(bytes_le=bytes(p[pos:pos + 16])))
            pos += 16
            continue
        if kind in "Xch":
            size = {"X": 8, "c": 2, "h": 2}[kind]
            v = struct.unpack_from({"X": "<Q", "c": "<H", "h": "<h"}[kind], p, pos)[0]
            out[name] = v if kind == "h" else "0x%0*x" % (2 * size, v)
            pos += size
            continue
        if kind in "pn":
            v = struct.unpack_from(pfmt, p, pos)[0]
            out[name] = "0x%0*x" % (2 * psz, v) if kind == "p" else v
            pos += psz
        elif kind in "qQ":
            out[name] = struct.unpack_from("<" + kind, p, pos)[0]
            pos += 8
        elif kind == "4":
            out[name] = ".".join(str(b) for b in p[pos:pos + 4])
            pos += 4
        elif kind == "6":
            out[name] = ":".join("%x" % w for w in struct.unpack_from(">8H", p, pos))
            pos += 16
        elif kind == "P":
            out[name] = struct.unpack_from(">H", p, pos)[0]
            pos += 2
        elif kind == "S":
            n = (len(p) - pos) // psz
            out[name] = ["0x%0*x" % (2 * psz, v) for v in struct.unpack_from("<%d%s" % (n, pfmt[1]), p, pos)]
            pos += n * psz
        elif kind in "Iix":
            v = struct.unpack_from("<" + kind.replace("x", "I"), p, pos)[0]
            out[name] = "0x%08x" % v if kind == "x" else v
            pos += 4
        elif kind in "Bb":
            out[name] = p[pos] if kind == "B" else "0x%02x" % p[pos]
            pos += 1
        elif kind == "H":
            out[name] = struct.unpack_from("<H", p, pos)[0]
            pos += 2
        elif kind == "T":
            v = struct.unpack_from("<Q", p, pos)[0]
            t = datetime.datetime(1601, 1, 1) + datetime.timedelta(microseconds=v // 10)
            out[name] = t.strftime("%Y-%m-%dT%H:%M:%S") + ".%07dZ" % (v % 10000000)
            pos += 8
        elif kind == "s":
            if struct.unpack_from("<I", p, pos)[0] == 0:
                out[name] = ""
                pos += 4
            else:
                start = pos + 2 * psz
                n = 8 + 4 * p[start + 1]
                out[name] = sid_text(p[start:start + n])
                pos = start + n
        elif kind == "a":
            end = p.index(b"\0", pos)
            out[name] = p[pos:end].decode("latin-1")
            pos = end + 1
        else:
            out[name], pos = utf16(p, pos)
    if pos != len(p):
        raise ValueError("%s: %d of %d bytes" % (layout.split()[0], pos, len(p)))
    return out


def events(path):
    for kind, htype, rec in etl_ref.all_records(path):
        if kind not in KERNEL:
            continue
        marker = struct.unpack_from("<H", rec, 0)[0]
        hook = struct.unpack_from("<H", rec, 6)[0]
        layout = LAYOUTS.get((hook >> 8, hook & 0xFF, marker & 0xFF))
        if layout is None:
            continue
        ext = (8 if marker & 0x8000 else 0) + 8 * ((marker >> 8) & 7)
        size = struct.unpack_from("<H", rec, 4)[0]
        payload = rec[KERNEL[kind] + ext:size]
        yield decode(layout, payload, 8 if htype in (2, 4, 0x11) else 4)


if __name__ == "__main__":
    for ev in events(sys.argv[1]):
        print(json.dumps(ev))
