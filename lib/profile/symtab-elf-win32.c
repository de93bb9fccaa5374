/* The Windows build has no ELF reader: libelf is a Linux library. */
#include "model.h"

int ntl_profile_symtab_from_elf(const char *path, struct ntl_profile_symtab **out,
                                struct ntl_error *err)
{
    (void)path;
    (void)out;
    return ntl_error_set(err, NTL_ERR_UNSUPPORTED, "ELF", NTL_NO_OFFSET,
                         "ELF symbols need libelf, which the Windows build does not have");
}
