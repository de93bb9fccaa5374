#include "etl-mkdir.h"

#include <stdio.h>
#include <windows.h>

int etl_mkdir(const char *dir, char *msg, unsigned size)
{
    if (CreateDirectoryA(dir, NULL))
        return 0;
    DWORD e = GetLastError();
    DWORD attr = GetFileAttributesA(dir);
    if (e == ERROR_ALREADY_EXISTS && attr != INVALID_FILE_ATTRIBUTES &&
        (attr & FILE_ATTRIBUTE_DIRECTORY))
        return 0;
    snprintf(msg, size, "CreateDirectory failed (error %lu)", (unsigned long)e);
    return -1;
}
