/* NDR and winreg response-stub parsers on hostile bytes. Seeds: stubs of
 * OpenHKPD, OpenKey, QueryValue and CloseKey answers captured from smbd. */
#include <stddef.h>
#include <stdint.h>

#include "ntlens/ndr.h"
#include "ntlens/winreg.h"

static volatile uint8_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_winreg_value v;
    struct ntl_winreg_handle h;
    struct ntl_ndr_cv_array a;
    struct ntl_reader r;
    struct ntl_error err;
    uint32_t werror;

    /* Touch every data byte the parser vouched for. */
    if (ntl_winreg_parse_query_value_reply(data, size, &v, &err) == 0 && v.data)
        for (uint32_t i = 0; i < v.data_len; i++)
            sink ^= v.data[i];
    ntl_winreg_parse_handle_reply(data, size, &h, &werror, &err);
    ntl_reader_init(&r, data, size, 0);
    ntl_ndr_get_cv_array(&r, 2, &a, "array", &err);
    return 0;
}
