#include "etl-mkdir.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int etl_mkdir(const char *dir, char *msg, unsigned size)
{
    struct stat st;
    if (mkdir(dir, 0777) == 0)
        return 0;
    if (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    snprintf(msg, size, "%s", errno == EEXIST ? "exists and is not a directory" : strerror(errno));
    return -1;
}
