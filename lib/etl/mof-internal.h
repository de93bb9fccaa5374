/* The kernel (MOF) class layouts, shared by the decoder (mof.c) and the
 * class tables (mof.c, mof_classes.c). Private to lib/etl. */
#ifndef NTLENS_ETL_MOF_INTERNAL_H
#define NTLENS_ETL_MOF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ntlens/etl_fields.h"

/* Pseudo in-types beside enum ntl_etl_intype: a pointer-sized count, a
 * WmiSid, a last UTF-16 string that older kernels leave out, an IPv6
 * address, and the pointers or UTF-16 strings that fill the rest. */
enum {
    PTR = 0x100, WMISID = 0x200, WSTR_OPTIONAL = 0x300, IPV6 = 0x400, PTR_ARRAY = 0x500,
    WSTR_ARRAY = 0x600,
};
/* A char16 array of n units (a fixed-size field, NUL-padded): FIXW | n. */
#define FIXW 0x10000u
#define FIXW_UNITS 0xffffu

struct mof_field {
    const char *name;
    unsigned type;      /* enum ntl_etl_intype, PTR (a pointer-sized count), WMISID */
    uint8_t out;
};

#define END 0xff /* ends an opcode list (0 is FileIo's Name) */

struct mof_layout {
    uint8_t group;
    const uint8_t *opcodes;   /* END-terminated */
    uint8_t min_version, max_version;
    const char *class_name;
    const struct mof_field *fields;
};

#define U8 NTL_ETL_IN_UINT8
#define S8 NTL_ETL_IN_INT8
#define U16 NTL_ETL_IN_UINT16
#define U32 NTL_ETL_IN_UINT32
#define S32 NTL_ETL_IN_INT32
#define X32 NTL_ETL_IN_HEXINT32
#define P NTL_ETL_IN_POINTER
#define ASTR NTL_ETL_IN_ANSISTRING
#define WSTR NTL_ETL_IN_UNICODESTRING
#define S16 NTL_ETL_IN_INT16
#define GUID NTL_ETL_IN_GUID
#define I64 NTL_ETL_IN_INT64
#define U64 NTL_ETL_IN_UINT64

/* The class tables beside mof.c's: mof_classes.c (Registry, TcpIp v2,
 * ALPC, PageFault faults and VirtualAlloc, PerfInfo ISR), mof_config.c
 * (SystemConfig), mof_fileio.c (FileIo) and mof_old.c (the EventTrace
 * header and extension, versions 0 and 1, DiskIo v2 and the rest). */
extern const struct mof_layout ntl_etl_mof_more[], ntl_etl_mof_config[], ntl_etl_mof_fileio[],
    ntl_etl_mof_old[];
extern const size_t ntl_etl_mof_nmore, ntl_etl_mof_nconfig, ntl_etl_mof_nfileio, ntl_etl_mof_nold;

#endif
