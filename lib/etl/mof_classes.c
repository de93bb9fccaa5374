/* More kernel (MOF) classes, as Microsoft's MSNT_SystemTrace class pages and
 * the kernel's MOF describe them: Registry, TcpIp v2 (IPv4 and IPv6 groups,
 * Fail), UdpIp Fail, ALPC, PageFault faults and VirtualAlloc, PerfInfo ISR,
 * and the older versions of Registry, TcpIp, UdpIp, ISR and DPC
 * (SystemConfig is in mof_config.c).
 * Each layout is consumed exactly by mof.c in the trace's pointer size. */
#include "mof-internal.h"

#define IPV4 NTL_ETL_OUT_IPV4
#define PORT NTL_ETL_OUT_PORT
#define HEX NTL_ETL_OUT_HEX

/* Registry_TypeGroup1 (v2): every registry operation and KCB rundown. */
static const struct mof_field registry[] = {
    {"InitialTime", I64, 0}, {"Status", X32, 0}, {"Index", U32, 0}, {"KeyHandle", P, 0},
    {"KeyName", WSTR, 0}, {NULL, 0, 0},
};
/* TcpIp_SendIPV4, TcpIp_TypeGroup1 (Recv, Disconnect, Retransmit, Reconnect,
 * TCPCopy) and TcpIp_TypeGroup2 (Connect, Accept), IPv4; the IPv6 forms of
 * group 2 are TcpIp_TypeGroup4. */
static const struct mof_field tcp_send_v4[] = {
    {"PID", U32, 0}, {"size", U32, 0}, {"daddr", U32, IPV4}, {"saddr", U32, IPV4},
    {"dport", U16, PORT}, {"sport", U16, PORT}, {"startime", U32, 0}, {"endtime", U32, 0},
    {"seqnum", U32, 0}, {"connid", PTR, 0}, {NULL, 0, 0},
};
static const struct mof_field tcp_group1[] = {
    {"PID", U32, 0}, {"size", U32, 0}, {"daddr", U32, IPV4}, {"saddr", U32, IPV4},
    {"dport", U16, PORT}, {"sport", U16, PORT}, {"seqnum", U32, 0}, {"connid", PTR, 0},
    {NULL, 0, 0},
};
static const struct mof_field tcp_group2[] = {
    {"PID", U32, 0}, {"size", U32, 0}, {"daddr", U32, IPV4}, {"saddr", U32, IPV4},
    {"dport", U16, PORT}, {"sport", U16, PORT}, {"mss", U16, 0}, {"sackopt", U16, 0},
    {"tsopt", U16, 0}, {"wsopt", U16, 0}, {"rcvwin", U32, 0}, {"rcvwinscale", S16, 0},
    {"sndwinscale", S16, 0}, {"seqnum", U32, 0}, {"connid", PTR, 0}, {NULL, 0, 0},
};
static const struct mof_field tcp_group4[] = {
    {"PID", U32, 0}, {"size", U32, 0}, {"daddr", IPV6, NTL_ETL_OUT_IPV6},
    {"saddr", IPV6, NTL_ETL_OUT_IPV6}, {"dport", U16, PORT}, {"sport", U16, PORT},
    {"mss", U16, 0}, {"sackopt", U16, 0}, {"tsopt", U16, 0}, {"wsopt", U16, 0},
    {"rcvwin", U32, 0}, {"rcvwinscale", S16, 0}, {"sndwinscale", S16, 0}, {"seqnum", U32, 0},
    {"connid", PTR, 0}, {NULL, 0, 0},
};
static const struct mof_field tcp_group3[] = {
    {"PID", U32, 0}, {"size", U32, 0}, {"daddr", IPV6, NTL_ETL_OUT_IPV6},
    {"saddr", IPV6, NTL_ETL_OUT_IPV6}, {"dport", U16, PORT}, {"sport", U16, PORT},
    {"seqnum", U32, 0}, {"connid", PTR, 0}, {NULL, 0, 0},
};
/* TcpIp_Fail and UdpIp_Fail. */
static const struct mof_field ip_fail[] = {
    {"Proto", U16, 0}, {"FailureCode", U16, 0}, {NULL, 0, 0},
};
/* ALPC: Send-, Receive-Message and Wait-For-Reply carry the message id. */
static const struct mof_field alpc_message[] = {{"MessageID", U32, 0}, {NULL, 0, 0}};
static const struct mof_field alpc_wait_new[] = {
    {"IsServerPort", U32, 0}, {"PortName", ASTR, 0}, {NULL, 0, 0},
};
static const struct mof_field alpc_unwait[] = {{"Status", X32, 0}, {NULL, 0, 0}};
/* PageFault_V2_TypeGroup1 (TransitionFault .. AccessViolation) and
 * PageFault_VirtualAlloc (VirtualAlloc, VirtualFree). */
static const struct mof_field page_fault[] = {
    {"VirtualAddress", P, 0}, {"ProgramCounter", P, 0}, {NULL, 0, 0},
};
static const struct mof_field virtual_alloc[] = {
    {"BaseAddress", P, 0}, {"RegionSize", PTR, 0}, {"ProcessId", U32, 0}, {"Flags", X32, 0},
    {NULL, 0, 0},
};
/* ISR (v2). */
static const struct mof_field isr[] = {
    {"InitialTime", U64, 0}, {"Routine", P, 0}, {"ReturnValue", U8, 0}, {"Vector", U8, 0},
    {"Reserved", U16, 0}, {NULL, 0, 0},
};

/* The Windows XP and Server 2003 forms: Registry_V0/V1_TypeGroup1 (Status is
 * pointer-sized there), TcpIp_V0_TypeGroup1, the TcpIp_V1 classes (connid
 * a u32 before seqnum), UdpIp_V0/V1_TypeGroup1, ISR_V1 and DPC_V1. */
static const struct mof_field registry_v0[] = {
    {"Status", P, 0}, {"KeyHandle", P, 0}, {"ElapsedTime", I64, 0}, {"KeyName", WSTR, 0},
    {NULL, 0, 0},
};
static const struct mof_field registry_v1[] = {
    {"Status", P, 0}, {"KeyHandle", P, 0}, {"ElapsedTime", I64, 0}, {"Index", U32, 0},
    {"KeyName", WSTR, 0}, {NULL, 0, 0},
};
static const struct mof_field tcp_v0[] = {
    {"daddr", U32, IPV4}, {"saddr", U32, IPV4}, {"dport", U16, PORT}, {"sport", U16, PORT},
    {"size", U32, 0}, {"PID", U32, 0}, {NULL, 0, 0},
};
static const struct mof_field tcp_v1_send[] = {
    {"PID", U32, 0}, {"size", U32, 0}, {"daddr", U32, IPV4}, {"saddr", U32, IPV4},
    {"dport", U16, PORT}, {"sport", U16, PORT}, {"startime", U32, 0}, {"endtime", U32, 0},
    {"connid", U32, 0}, {"seqnum", U32, 0}, {NULL, 0, 0},
};
static const struct mof_field tcp_v1[] = {
    {"PID", U32, 0}, {"size", U32, 0}, {"daddr", U32, IPV4}, {"saddr", U32, IPV4},
    {"dport", U16, PORT}, {"sport", U16, PORT}, {"connid", U32, 0}, {"seqnum", U32, 0},
    {NULL, 0, 0},
};
static const struct mof_field tcp_v1_group2[] = {
    {"PID", U32, 0}, {"size", U32, 0}, {"daddr", U32, IPV4}, {"saddr", U32, IPV4},
    {"dport", U16, PORT}, {"sport", U16, PORT}, {"mss", U16, 0}, {"sackopt", U16, 0},
    {"tsopt", U16, 0}, {"wsopt", U16, 0}, {"rcvwin", U32, 0}, {"rcvwinscale", S16, 0},
    {"sndwinscale", S16, 0}, {"connid", U32, 0}, {"seqnum", U32, 0}, {NULL, 0, 0},
};
static const struct mof_field tcp_v1_fail[] = {{"Proto", U32, 0}, {NULL, 0, 0}};
static const struct mof_field udp_v0[] = {
    {"context", P, 0}, {"saddr", U32, IPV4}, {"sport", U16, PORT}, {"size", U16, 0},
    {"daddr", U32, IPV4}, {"dport", U16, PORT}, {"dsize", U16, 0}, {NULL, 0, 0},
};
static const struct mof_field udp_v1[] = {
    {"PID", U32, 0}, {"size", U32, 0}, {"daddr", U32, IPV4}, {"saddr", U32, IPV4},
    {"dport", U16, PORT}, {"sport", U16, PORT}, {NULL, 0, 0},
};
static const struct mof_field isr_v1[] = {
    {"InitialTime", U64, 0}, {"Routine", P, 0}, {"ReturnValue", U32, 0}, {NULL, 0, 0},
};
static const struct mof_field dpc_v1[] = {{"InitialTime", U64, 0}, {"Routine", P, 0}, {NULL, 0, 0}};

static const uint8_t registry_ops[] = {10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                                       23, 24, 25, 26, 27, END};
static const uint8_t op_10[] = {10, END}, op_17[] = {17, END};
static const uint8_t tcp_g1[] = {11, 13, 14, 16, 18, END}, tcp_g2[] = {12, 15, END};
static const uint8_t tcp_g3[] = {27, 29, 30, 32, 34, END}, tcp_g4[] = {28, 31, END};
static const uint8_t alpc_msg[] = {33, 34, 35, END}, op_36[] = {36, END}, op_37[] = {37, END};
static const uint8_t faults[] = {10, 11, 12, 13, 14, 15, END}, valloc[] = {98, 99, END};
static const uint8_t op_67[] = {67, END}, registry_v0_ops[] = {10, 11, 12, 13, 14, 15, 16, 17,
                                                                 18, 19, 20, 21, END};
static const uint8_t registry_v1_ops[] = {10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, END};
static const uint8_t tcp_v0_ops[] = {10, 11, 12, 13, 14, 15, END}, udp_ops[] = {10, 11, END};
static const uint8_t tcp_v1_ops[] = {11, 13, 14, 16, 18, 19, 20, 21, 22, END};
static const uint8_t dpc_v1_ops[] = {68, 69, END};

const struct mof_layout ntl_etl_mof_more[] = {
    {0x09, registry_ops, 2, 2, "Registry", registry},
    {0x06, op_10, 2, 2, "TcpIp", tcp_send_v4},
    {0x06, tcp_g1, 2, 2, "TcpIp", tcp_group1},
    {0x06, tcp_g2, 2, 2, "TcpIp", tcp_group2},
    {0x06, tcp_g3, 2, 2, "TcpIp", tcp_group3},
    {0x06, tcp_g4, 2, 2, "TcpIp", tcp_group4},
    {0x06, op_17, 2, 2, "TcpIp", ip_fail},
    {0x08, op_17, 2, 2, "UdpIp", ip_fail},
    {0x1A, alpc_msg, 0, 2, "ALPC", alpc_message},
    {0x1A, op_36, 0, 2, "ALPC", alpc_wait_new},
    {0x1A, op_37, 0, 2, "ALPC", alpc_unwait},
    {0x02, faults, 2, 2, "PageFault", page_fault},
    {0x02, valloc, 2, 2, "PageFault", virtual_alloc},
    {0x0F, op_67, 2, 2, "PerfInfo", isr},
    {0x09, registry_v0_ops, 0, 0, "Registry", registry_v0},
    {0x09, registry_v1_ops, 1, 1, "Registry", registry_v1},
    {0x06, tcp_v0_ops, 0, 0, "TcpIp", tcp_v0},
    {0x06, op_10, 1, 1, "TcpIp", tcp_v1_send},
    {0x06, tcp_v1_ops, 1, 1, "TcpIp", tcp_v1},
    {0x06, tcp_g2, 1, 1, "TcpIp", tcp_v1_group2},
    {0x06, op_17, 1, 1, "TcpIp", tcp_v1_fail},
    {0x08, udp_ops, 0, 0, "UdpIp", udp_v0},
    {0x08, udp_ops, 1, 1, "UdpIp", udp_v1},
    {0x0F, op_67, 1, 1, "PerfInfo", isr_v1},
    {0x0F, dpc_v1_ops, 1, 1, "PerfInfo", dpc_v1},
};
const size_t ntl_etl_mof_nmore = sizeof ntl_etl_mof_more / sizeof ntl_etl_mof_more[0];
