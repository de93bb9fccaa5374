/* Names of well-known ETW providers and kernel event classes, by GUID:
 * what a trace's GUIDs mean without a manifest at hand. */
#include <string.h>
#include <strings.h>

#include "ntlens/etl_fields.h"

static const struct {
    const char *guid, *name;
} providers[] = {
    /* The CLR (ClrEtwAll.man) */
    {"e13c0d23-ccbc-4e12-931b-d9cc2eee27e4", "Microsoft-Windows-DotNETRuntime"},
    {"a669021c-c450-4609-a035-5af59af4df18", "Microsoft-Windows-DotNETRuntimeRundown"},
    {"763fd754-7086-4dfe-95eb-c01a46faf4ca", "Microsoft-Windows-DotNETRuntimePrivate"},
    {"cc2bcbba-16b6-4cf3-8990-d74c2e8af500", "Microsoft-Windows-DotNETRuntimeStress"},
    /* Manifest providers of Windows */
    {"22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716", "Microsoft-Windows-Kernel-Process"},
    {"edd08927-9cc4-4e65-b970-c2560fb5c289", "Microsoft-Windows-Kernel-File"},
    {"7dd42a49-5329-4832-8dfd-43d979153a88", "Microsoft-Windows-Kernel-Network"},
    {"70eb4f03-c1de-4f73-a051-33d13d5413bd", "Microsoft-Windows-Kernel-Registry"},
    {"b675ec37-bdb6-4648-bc92-f3fdc74d3ca2", "Microsoft-Windows-Kernel-EventTracing"},
    {"331c3b3a-2005-44c2-ac5e-77220c37d6b4", "Microsoft-Windows-Kernel-Power"},
    {"9c205a39-1250-487d-abd7-e831c6290539", "Microsoft-Windows-Kernel-PnP"},
    {"2f07e2ee-15db-40f1-90ef-9d7ba282188a", "Microsoft-Windows-TCPIP"},
    {"1c95126e-7eea-49a9-a3fe-a378b03ddb4d", "Microsoft-Windows-DNS-Client"},
    {"a0c1853b-5c40-4b15-8766-3cf1c58f985a", "Microsoft-Windows-PowerShell"},
    {"6ad52b32-d609-4be9-ae07-ce8dae937e39", "Microsoft-Windows-RPC"},
    {"54849625-5478-4994-a5ba-3e3b0328c30d", "Microsoft-Windows-Security-Auditing"},
    {"1418ef04-b0b4-4623-bf7e-d74ab47bbdaa", "Microsoft-Windows-WMI-Activity"},
    {"5770385f-c22a-43e0-bf4c-06f5698ffbd9", "Microsoft-Windows-Sysmon"},
    {"bbccf6c1-6cd1-48c4-80ff-839482e37671", "Microsoft-Windows-EventMetadata"},
    /* The NT Kernel Logger and its classes (classic events of relogged traces) */
    {"9e814aad-3204-11d2-9a82-006008a86939", "Windows Kernel"},
    {"68fdd900-4a3e-11d1-84f4-0000f80464e3", "Windows Kernel/EventTrace"},
    {"3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c", "Windows Kernel/Process"},
    {"3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c", "Windows Kernel/Thread"},
    {"2cb15d1d-5fc1-11d2-abe1-00a0c911f518", "Windows Kernel/Image"},
    {"3d6fa8d4-fe05-11d0-9dda-00c04fd7ba7c", "Windows Kernel/DiskIo"},
    {"90cbdc39-4a3e-11d1-84f4-0000f80464e3", "Windows Kernel/FileIo"},
    {"9a280ac0-c8e0-11d1-84e2-00c04fb998a2", "Windows Kernel/TcpIp"},
    {"bf3a50c5-a9c9-4988-a005-2df0b7c80f80", "Windows Kernel/UdpIp"},
    {"ae53722e-c863-11d2-8659-00c04fa321a1", "Windows Kernel/Registry"},
    {"3d6fa8d3-fe05-11d0-9dda-00c04fd7ba7c", "Windows Kernel/PageFault"},
    {"ce1dbfb4-137e-4da6-87b0-3f59aa102cbc", "Windows Kernel/PerfInfo"},
    {"def2fe46-7bd6-4b80-bd94-f57fe20d0ce3", "Windows Kernel/StackWalk"},
    {"45d8cccd-539f-4b72-a8b7-5c683142609a", "Windows Kernel/ALPC"},
    {"01853a65-418f-4f36-aefc-dc0f1d2fd235", "Windows Kernel/SystemConfig"},
    /* xperf's KernelTraceControl: rundown merged into a trace */
    {"b3e675d7-2554-4f18-830b-2762732560de", "KernelTraceControl/ImageID"},
    {"9b79ee91-b5fd-41c0-a243-4248e266e9d0", "KernelTraceControl/SystemConfigEx"},
    {"ff1fd2fd-6008-42bb-9e75-00a20051f3be", "Windows Kernel/IPT"},
};

const char *ntl_etl_provider_name(const struct ntl_guid *g)
{
    char text[40];
    ntl_guid_format(g, text, sizeof text);
    for (size_t i = 0; i < sizeof providers / sizeof providers[0]; i++)
        if (!strcmp(text, providers[i].guid))
            return providers[i].name;
    return NULL;
}

bool ntl_etl_provider_lookup(const char *name, struct ntl_guid *g)
{
    for (size_t i = 0; i < sizeof providers / sizeof providers[0]; i++)
        if (!strcasecmp(name, providers[i].name))
            return ntl_guid_parse(providers[i].guid, g);
    return false;
}
