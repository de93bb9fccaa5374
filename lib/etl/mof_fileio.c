/* FileIo (group 0x04): the file operations the kernel logger records with
 * EVENT_TRACE_FLAG_FILE_IO / _FILE_IO_INIT, as Microsoft's FileIo_* class
 * pages describe them (version 2, Vista and 7: TTID is pointer-sized there),
 * and the FileIo_V0/V1 Name classes of Windows 2000 to 2003.
 * Flags and status codes are shown in hex. Each layout is consumed exactly by
 * mof.c in the trace's pointer size. */
#include "mof-internal.h"


/* FileIo_V0_Name, FileIo_V1_Name: a file object and its name. */
static const struct mof_field name[] = {{"FileObject", P, 0}, {"FileName", WSTR, 0}, {NULL, 0, 0}};
/* FileIo_Create (64). */
static const struct mof_field create[] = {
    {"IrpPtr", P, 0}, {"TTID", PTR, 0}, {"FileObject", P, 0}, {"CreateOptions", X32, 0},
    {"FileAttributes", X32, 0}, {"ShareAccess", X32, 0}, {"OpenPath", WSTR, 0}, {NULL, 0, 0},
};
/* FileIo_SimpleOp: Cleanup (65), Close (66), Flush (73). */
static const struct mof_field simple_op[] = {
    {"IrpPtr", P, 0}, {"TTID", PTR, 0}, {"FileObject", P, 0}, {"FileKey", P, 0}, {NULL, 0, 0},
};
/* FileIo_ReadWrite: Read (67), Write (68). */
static const struct mof_field read_write[] = {
    {"Offset", U64, 0}, {"IrpPtr", P, 0}, {"TTID", PTR, 0}, {"FileObject", P, 0},
    {"FileKey", P, 0}, {"IoSize", U32, 0}, {"IoFlags", X32, 0}, {NULL, 0, 0},
};
/* FileIo_Info: SetInfo (69), Delete (70), Rename (71), QueryInfo (74), FSControl (75). */
static const struct mof_field info[] = {
    {"IrpPtr", P, 0}, {"TTID", PTR, 0}, {"FileObject", P, 0}, {"FileKey", P, 0},
    {"ExtraInfo", P, 0}, {"InfoClass", U32, 0}, {NULL, 0, 0},
};
/* FileIo_DirEnum: DirEnum (72), DirNotify (77). */
static const struct mof_field dir_enum[] = {
    {"IrpPtr", P, 0}, {"TTID", PTR, 0}, {"FileObject", P, 0}, {"FileKey", P, 0},
    {"Length", U32, 0}, {"InfoClass", U32, 0}, {"FileIndex", U32, 0}, {"FileName", WSTR, 0},
    {NULL, 0, 0},
};
/* FileIo_OpEnd: OperationEnd (76), the status of the IRP an earlier event began. */
static const struct mof_field op_end[] = {
    {"IrpPtr", P, 0}, {"ExtraInfo", P, 0}, {"NtStatus", X32, 0}, {NULL, 0, 0},
};

static const uint8_t op_0[] = {0, END}, v1_names[] = {0, 32, END}, op_64[] = {64, END};
static const uint8_t simple_ops[] = {65, 66, 73, END}, rw_ops[] = {67, 68, END};
static const uint8_t info_ops[] = {69, 70, 71, 74, 75, END}, dir_ops[] = {72, 77, END};
static const uint8_t op_76[] = {76, END};

const struct mof_layout ntl_etl_mof_fileio[] = {
    {0x04, op_0, 0, 0, "FileIo", name},
    {0x04, v1_names, 1, 1, "FileIo", name},
    {0x04, op_64, 2, 2, "FileIo", create},
    {0x04, simple_ops, 2, 2, "FileIo", simple_op},
    {0x04, rw_ops, 2, 2, "FileIo", read_write},
    {0x04, info_ops, 2, 2, "FileIo", info},
    {0x04, dir_ops, 2, 2, "FileIo", dir_enum},
    {0x04, op_76, 2, 2, "FileIo", op_end},
};
const size_t ntl_etl_mof_nfileio = sizeof ntl_etl_mof_fileio / sizeof ntl_etl_mof_fileio[0];
