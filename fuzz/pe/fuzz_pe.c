/* libFuzzer harness: every lib/pe parser, mapping, rebasing and import
 * optimization of an image against itself, on arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>

#include "ntlens/importopt.h"
#include "ntlens/pe.h"
#include "ntlens/pe_dvrt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_pe pe;
    struct ntl_error err;
    struct ntl_pe_exports ex;
    struct ntl_pe_imports im;
    struct ntl_pe_reloc *rel;
    size_t nrel;
    struct ntl_pe_codeview cv;
    const uint8_t *res;
    size_t nres;
    struct ntl_dvrt d;
    struct ntl_buf map;

    if (ntl_pe_parse(data, size, &pe, &err) < 0)
        return 0;
    if (ntl_pe_exports_parse(&pe, &ex, &err) >= 0)
        ntl_pe_exports_free(&ex);
    if (ntl_pe_imports_parse(&pe, &im, &err) >= 0)
        ntl_pe_imports_free(&im);
    if (ntl_pe_relocs_parse(&pe, &rel, &nrel, &err) >= 0)
        free(rel);
    (void)ntl_pe_codeview(&pe, &cv, &err);
    (void)ntl_pe_resource_find(&pe, "WEVT_TEMPLATE", 0, &res, &nres, &err);
    (void)ntl_pe_resource_find(&pe, NULL, NTL_PE_RT_MESSAGETABLE, &res, &nres, &err);
    if (ntl_pe_dvrt(&pe, &d, &err) >= 0)
        ntl_dvrt_free(&d);
    /* Mapping allocates SizeOfImage: keep the fuzzer's images small. */
    if (pe.size_of_image <= (16u << 20) && ntl_pe_map(&pe, &map, &err) >= 0) {
        struct ntl_iopt_module m = {"ntoskrnl.exe", &pe, map.data, map.len, 0xfffff80000000000ull};
        struct ntl_iopt_report rep;
        (void)ntl_pe_rebase(&pe, map.data, map.len, m.base, &err);
        (void)ntl_importopt_bind(&m, 1, &err);
        if (ntl_importopt_apply(&m, 1, &rep, &err) >= 0)
            ntl_iopt_report_free(&rep);
        ntl_buf_free(&map);
    }
    ntl_pe_free(&pe);
    return 0;
}
