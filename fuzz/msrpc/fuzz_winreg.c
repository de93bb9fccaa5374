/* NDR and winreg response-stub parsers on hostile bytes. Seeds: stubs of
 * OpenHKPD, OpenKey, QueryValue and CloseKey answers captured from smbd. */
#include <stddef.h>
#include <stdint.h>

#include "ntlens/ndr.h"
#include "ntlens/winreg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_winreg_value v;
    struct ntl_winreg_handle h;
    struct ntl_ndr_cv_array a;
    struct ntl_reader r;
    struct ntl_error err;
    uint32_t werror;

    if (ntl_winreg_parse_query_value_reply(data, size, &v, &err) == 0 && v.data) {
        volatile uint8_t sink = 0;
        for (uint32_t i = 0; i < v.data_len; i++)
            sink ^= v.data[i];
    }
    ntl_winreg_parse_handle_reply(data, size, &h, &werror, &err);
    ntl_reader_init(&r, data, size, 0);
    ntl_ndr_get_cv_array(&r, 2, &a, "array", &err);
    return 0;
}
