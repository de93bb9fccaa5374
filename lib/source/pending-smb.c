/* TEMPORARY: lets the tree link until the smb producer lands. Its owner
 * deletes this file (lib/source/meson.build picks it up only while it exists). */
#include "ntlens/source.h"

int ntl_source_smb_open(const char *spec, const struct ntl_source_options *opt, struct ntl_source **out, struct ntl_error *err)
{
    (void)spec; (void)opt;
    *out = NULL;
    return ntl_error_set(err, NTL_ERR_UNSUPPORTED, NULL, NTL_NO_OFFSET, "the smb source is not built yet");
}
