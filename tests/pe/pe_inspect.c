/* Prints what lib/pe reads from an image as JSON, for test_images.py to
 * compare with Python's pefile:
 *     pe_inspect IMAGE */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "ntlens/pe.h"
#include "ntlens/pe_dvrt.h"

static void jstr(const char *s)
{
    putchar('"');
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        putchar(*s);
    }
    putchar('"');
}

static int fail(const struct ntl_error *err)
{
    char buf[512];
    fprintf(stderr, "pe_inspect: %s\n", ntl_error_format(err, buf, sizeof buf));
    return 1;
}

int main(int argc, char **argv)
{
    struct ntl_buf file;
    struct ntl_pe pe;
    struct ntl_pe_exports ex;
    struct ntl_pe_imports im;
    struct ntl_pe_reloc *rel;
    size_t nrel;
    struct ntl_pe_codeview cv;
    struct ntl_pe_load_config lc;
    struct ntl_dvrt d;
    struct ntl_error err = {0};

    if (argc != 2)
        return 2;
    if (ntl_file_read(argv[1], 1u << 30, &file, &err) < 0 ||
        ntl_pe_parse(file.data, file.len, &pe, &err) < 0 ||
        ntl_pe_exports_parse(&pe, &ex, &err) < 0 || ntl_pe_imports_parse(&pe, &im, &err) < 0 ||
        ntl_pe_relocs_parse(&pe, &rel, &nrel, &err) < 0 || ntl_pe_codeview(&pe, &cv, &err) < 0 ||
        ntl_pe_load_config(&pe, &lc, &err) < 0 || ntl_pe_dvrt(&pe, &d, &err) < 0)
        return fail(&err);

    printf("{\"machine\": %u, \"pe32plus\": %s, \"image_base\": %" PRIu64
           ", \"size_of_image\": %u, \"entry\": %u, \"timestamp\": %u, \"checksum\": %u,\n",
           pe.machine, pe.pe32plus ? "true" : "false", pe.image_base, pe.size_of_image,
           pe.entry_rva, pe.timestamp, pe.checksum);
    printf(" \"sections\": [");
    for (int i = 0; i < pe.section_count; i++) {
        const struct ntl_pe_section *s = &pe.sections[i];
        printf("%s{\"name\": ", i ? ", " : "");
        jstr(s->name);
        printf(", \"va\": %u, \"vsize\": %u, \"raw_offset\": %u, \"raw_size\": %u}",
               s->virtual_address, s->virtual_size, s->raw_offset, s->raw_size);
    }
    printf("],\n \"exports\": [");
    for (size_t i = 0; i < ex.count; i++) {
        printf("%s{\"ordinal\": %u, \"rva\": %u, \"name\": ", i ? ", " : "", ex.entries[i].ordinal,
               ex.entries[i].rva);
        if (ex.entries[i].name) jstr(ex.entries[i].name); else printf("null");
        printf(", \"forwarder\": ");
        if (ex.entries[i].forwarder) jstr(ex.entries[i].forwarder); else printf("null");
        printf("}");
    }
    printf("],\n \"imports\": [");
    for (size_t i = 0; i < im.count; i++) {
        printf("%s{\"dll\": ", i ? ", " : "");
        jstr(im.entries[i].dll);
        printf(", \"name\": ");
        if (im.entries[i].name) jstr(im.entries[i].name); else printf("null");
        printf(", \"ordinal\": %u, \"iat_rva\": %u}", im.entries[i].ordinal, im.entries[i].iat_rva);
    }
    printf("],\n \"relocs\": [");
    for (size_t i = 0; i < nrel; i++)
        printf("%s[%u, %u]", i ? ", " : "", rel[i].rva, rel[i].type);
    printf("],\n \"codeview\": ");
    if (cv.present) {
        printf("{\"age\": %u, \"pdb\": ", cv.age);
        jstr(cv.pdb);
        printf(", \"guid\": \"");
        for (int i = 0; i < 16; i++)
            printf("%02x", cv.guid[i]);
        printf("\"}");
    } else {
        printf("null");
    }
    printf(",\n \"load_config\": {\"present\": %s, \"size\": %u, \"guard_flags\": %" PRIu64
           ", \"dvrt_offset\": %u, \"dvrt_section\": %u},\n",
           lc.present ? "true" : "false", lc.size, lc.guard_flags, lc.dvrt_offset, lc.dvrt_section);
    printf(" \"dvrt\": ");
    if (d.present) {
        printf("{\"version\": %u, \"size\": %u, \"relocs\": [", d.version, d.size);
        for (size_t i = 0; i < d.reloc_count; i++) {
            const struct ntl_dvrt_reloc *r = &d.relocs[i];
            printf("%s{\"symbol\": %" PRIu64 ", \"size\": %u, \"blocks\": %u, \"fixups\": [",
                   i ? ", " : "", r->symbol, r->fixup_size, r->block_count);
            for (size_t k = 0; k < r->fixup_count; k++) {
                const struct ntl_dvrt_fixup *f = &d.fixups[r->first_fixup + k];
                printf("%s{\"rva\": %u, \"indirect_call\": %d, \"iat_index\": %u}", k ? ", " : "",
                       f->rva, f->indirect_call, f->iat_index);
            }
            printf("]}");
        }
        printf("]}\n");
    } else {
        printf("null\n");
    }
    printf("}\n");
    ntl_dvrt_free(&d);
    free(rel);
    ntl_pe_imports_free(&im);
    ntl_pe_exports_free(&ex);
    ntl_pe_free(&pe);
    ntl_buf_free(&file);
    return 0;
}
