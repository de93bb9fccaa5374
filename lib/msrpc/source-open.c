/* Opening any source spec: remote ones here, the rest in lib/source. */
#include "ntlens/msrpc_source.h"

#include "smb-spec.h"

int ntl_msrpc_source_open(const char *spec, const struct ntl_source_options *opt,
                          struct ntl_source **out, struct ntl_error *err)
{
    if (spec && ntl_source_spec_is_remote(spec))
        return ntl_msrpc_smb_open(spec, opt, out, err);
    return ntl_source_open(spec, opt, out, err);
}

int ntl_msrpc_source_check_spec(const char *spec, struct ntl_error *err)
{
    struct ntl_smb_spec s;
    return ntl_smb_spec_parse(spec, &s, err);
}
