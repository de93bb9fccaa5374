/* Creating the output directory of `etl ipt` (platform code lives in
 * etl-mkdir-linux.c and etl-mkdir-win32.c). */
#ifndef NTLENS_TOOL_ETL_MKDIR_H
#define NTLENS_TOOL_ETL_MKDIR_H

/* Creates dir unless it exists as a directory: 0, or -1 with errno-like text in msg. */
int etl_mkdir(const char *dir, char *msg, unsigned size);

#endif
