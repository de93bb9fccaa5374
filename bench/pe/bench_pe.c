/* Benchmark: reading PE images (headers, exports, imports, relocations,
 * DVRT), building a kernel-module dump (map, rebase, bind, import
 * optimization, write) and reading it back, on two synthetic images made
 * here: a kernel exporting 4000 routines and a driver importing 2000 of them
 * through 2000 retpoline-style sites in its DVRT. Rival, in the same run:
 * Python's pefile (Debian python3-pefile) parsing the same two files with
 * their directories and dynamic relocations, the reader people reach for.
 *     bench_pe [SECONDS_PER_MEASURE] */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ntlens/importopt.h"
#include "ntlens/minidump.h"
#include "ntlens/pe.h"
#include "ntlens/pe_dvrt.h"
#include "ntlens/reader.h"

#define NEXPORTS 4000
#define NSITES 2000
#define SEC_RVA 0x1000u
#define SEC_RAW 0x400u
#define SEC_SIZE 0x40000u
#define OPT 0x58u

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint8_t *img_new(uint64_t base)
{
    uint8_t *b = calloc(1, SEC_RAW + SEC_SIZE);
    if (!b)
        exit(1);
    b[0] = 'M';
    b[1] = 'Z';
    ntl_put_le32(b + 0x3c, 0x40);
    memcpy(b + 0x40, "PE\0\0", 4);
    ntl_put_le16(b + 0x44, NTL_PE_MACHINE_AMD64);
    ntl_put_le16(b + 0x46, 1);
    ntl_put_le16(b + 0x54, 240);
    ntl_put_le16(b + OPT, 0x20b);
    ntl_put_le64(b + OPT + 24, base);
    ntl_put_le32(b + OPT + 32, 0x1000);
    ntl_put_le32(b + OPT + 36, 0x200);
    ntl_put_le32(b + OPT + 56, SEC_RVA + SEC_SIZE);
    ntl_put_le32(b + OPT + 60, SEC_RAW);
    ntl_put_le32(b + OPT + 108, 16);
    memcpy(b + OPT + 240, ".text", 5);
    ntl_put_le32(b + OPT + 240 + 8, SEC_SIZE);
    ntl_put_le32(b + OPT + 240 + 12, SEC_RVA);
    ntl_put_le32(b + OPT + 240 + 16, SEC_SIZE);
    ntl_put_le32(b + OPT + 240 + 20, SEC_RAW);
    ntl_put_le32(b + OPT + 240 + 36, 0xe0000060);
    return b;
}

static uint8_t *at(uint8_t *b, uint32_t rva) { return b + SEC_RAW + rva - SEC_RVA; }
static void dir(uint8_t *b, int i, uint32_t rva, uint32_t size)
{
    ntl_put_le32(b + OPT + 112 + 8 * i, rva);
    ntl_put_le32(b + OPT + 112 + 8 * i + 4, size);
}

/* Kernel: code stubs at 0x1000 (16 bytes each), export directory after. */
static uint8_t *make_kernel(void)
{
    uint8_t *b = img_new(0x140000000ull);
    uint32_t ed = SEC_RVA + NEXPORTS * 16, funcs = ed + 40, names = funcs + 4 * NEXPORTS,
             ords = names + 4 * NEXPORTS, str = ords + 2 * NEXPORTS;
    ntl_put_le32(at(b, ed) + 12, str);
    memcpy(at(b, str), "ntoskrnl.exe", 13);
    str += 13;
    ntl_put_le32(at(b, ed) + 16, 1);
    ntl_put_le32(at(b, ed) + 20, NEXPORTS);
    ntl_put_le32(at(b, ed) + 24, NEXPORTS);
    ntl_put_le32(at(b, ed) + 28, funcs);
    ntl_put_le32(at(b, ed) + 32, names);
    ntl_put_le32(at(b, ed) + 36, ords);
    for (uint32_t i = 0; i < NEXPORTS; i++) {
        at(b, SEC_RVA + 16 * i)[0] = 0xc3;
        ntl_put_le32(at(b, funcs + 4 * i), SEC_RVA + 16 * i);
        ntl_put_le32(at(b, names + 4 * i), str);
        ntl_put_le16(at(b, ords + 2 * i), (uint16_t)i);
        str += (uint32_t)sprintf((char *)at(b, str), "KeRoutine%05u", i) + 1;
    }
    dir(b, NTL_PE_DIR_EXPORT, ed, str - ed);
    return b;
}

/* Driver: NSITES call sites (12 bytes each) from 0x1000, imports of every
 * other kernel export, a load config and a DVRT listing every site. */
static uint8_t *make_driver(void)
{
    static const uint8_t nop5[5] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
    uint8_t *b = img_new(0x140000000ull);
    uint32_t code = SEC_RVA, idesc = 0x10000, ilt = idesc + 40, iat = ilt + 8 * (NSITES + 1),
             hn = iat + 8 * (NSITES + 1), lc, dv, p, page = 0, blk = 0;
    ntl_put_le32(at(b, idesc), ilt);
    ntl_put_le32(at(b, idesc) + 16, iat);
    for (uint32_t i = 0; i < NSITES; i++) {
        uint32_t site = code + 12 * i;
        uint8_t *s = at(b, site);
        ntl_put_le64(at(b, ilt + 8 * i), hn);
        ntl_put_le64(at(b, iat + 8 * i), hn);
        hn += (uint32_t)sprintf((char *)at(b, hn + 2), "KeRoutine%05u", 2 * i) + 3;
        s[0] = 0x48;
        s[1] = 0xff;
        s[2] = 0x15;
        ntl_put_le32(s + 3, iat + 8 * i - (site + 7));
        memcpy(s + 7, nop5, 5);
    }
    ntl_put_le32(at(b, idesc) + 12, hn);
    memcpy(at(b, hn), "ntoskrnl.exe", 13);
    dir(b, NTL_PE_DIR_IMPORT, idesc, 40);
    dir(b, NTL_PE_DIR_IAT, iat, 8 * (NSITES + 1));
    lc = (hn + 64) & ~15u;
    dv = lc + 0x100;
    ntl_put_le32(at(b, lc), 0x100);
    ntl_put_le32(at(b, lc) + 224, dv - SEC_RVA);
    ntl_put_le16(at(b, lc) + 228, 1);
    dir(b, NTL_PE_DIR_LOAD_CONFIG, lc, 0x100);
    ntl_put_le32(at(b, dv), 1);
    ntl_put_le64(at(b, dv) + 8, 3);
    p = dv + 20;
    for (uint32_t i = 0; i < NSITES; i++) {
        uint32_t site = code + 12 * i;
        if (!blk || (site & ~0xfffu) != page) {
            if (blk)
                ntl_put_le32(at(b, blk) + 4, p - blk);
            blk = p;
            page = site & ~0xfffu;
            ntl_put_le32(at(b, blk), page);
            p += 8;
        }
        ntl_put_le32(at(b, p), (site & 0xfff) | 1u << 12 | i << 13);
        p += 4;
    }
    ntl_put_le32(at(b, blk) + 4, p - blk);
    ntl_put_le32(at(b, dv) + 16, p - (dv + 20));
    ntl_put_le32(at(b, dv) + 4, p - (dv + 8));
    return b;
}

static void parse_all(const uint8_t *b, size_t n)
{
    struct ntl_pe pe;
    struct ntl_pe_exports ex;
    struct ntl_pe_imports im;
    struct ntl_pe_reloc *r;
    size_t nr;
    struct ntl_dvrt d;
    struct ntl_error err;
    if (ntl_pe_parse(b, n, &pe, &err) < 0 || ntl_pe_exports_parse(&pe, &ex, &err) < 0 ||
        ntl_pe_imports_parse(&pe, &im, &err) < 0 || ntl_pe_relocs_parse(&pe, &r, &nr, &err) < 0 ||
        ntl_pe_dvrt(&pe, &d, &err) < 0) {
        fprintf(stderr, "bench_pe: %s\n", err.message);
        exit(1);
    }
    ntl_pe_exports_free(&ex);
    ntl_pe_imports_free(&im);
    free(r);
    ntl_dvrt_free(&d);
    ntl_pe_free(&pe);
}

static size_t build_dump(const uint8_t *k, const uint8_t *d, size_t n, struct ntl_buf *out,
                         size_t *patched)
{
    struct ntl_pe kp, dp;
    struct ntl_buf km, dm;
    struct ntl_iopt_report rep;
    struct ntl_error err;
    ntl_pe_parse(k, n, &kp, &err);
    ntl_pe_parse(d, n, &dp, &err);
    ntl_pe_map(&kp, &km, &err);
    ntl_pe_map(&dp, &dm, &err);
    ntl_pe_rebase(&kp, km.data, km.len, 0xfffff80000000000ull, &err);
    ntl_pe_rebase(&dp, dm.data, dm.len, 0xfffff80010000000ull, &err);
    struct ntl_iopt_module mods[2] = {
        {"ntoskrnl.exe", &kp, km.data, km.len, 0xfffff80000000000ull},
        {"drv.sys", &dp, dm.data, dm.len, 0xfffff80010000000ull},
    };
    ntl_importopt_bind(mods, 2, &err);
    if (ntl_importopt_apply(mods, 2, &rep, &err) < 0)
        exit(1);
    *patched = rep.patched;
    ntl_iopt_report_free(&rep);
    struct ntl_md_module_spec ms[2] = {
        {"ntoskrnl.exe", mods[0].base, kp.size_of_image, 0, 0, NULL, 0, km.data, km.len, NULL, 0},
        {"drv.sys", mods[1].base, dp.size_of_image, 0, 0, NULL, 0, dm.data, dm.len, NULL, 0},
    };
    struct ntl_md_spec spec = {.arch = NTL_MD_ARCH_AMD64, .modules = ms, .module_count = 2};
    ntl_md_write(&spec, out, &err);
    ntl_buf_free(&km);
    ntl_buf_free(&dm);
    ntl_pe_free(&kp);
    ntl_pe_free(&dp);
    return out->len;
}

static double rival_pefile(const char *kpath, const char *dpath, double secs)
{
    char cmd[2048];
    FILE *f;
    double per = -1;
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"\n"
             "import time, pefile\n"
             "n, t0 = 0, time.monotonic()\n"
             "while time.monotonic() - t0 < %g:\n"
             "    for p in ('%s', '%s'):\n"
             "        pe = pefile.PE(p)\n"
             "        assert hasattr(pe, 'DIRECTORY_ENTRY_EXPORT') or pe.DIRECTORY_ENTRY_LOAD_CONFIG.dynamic_relocations\n"
             "    n += 1\n"
             "print((time.monotonic() - t0) / n)\n\" 2>/dev/null",
             secs, kpath, dpath);
    f = popen(cmd, "r");
    if (!f || fscanf(f, "%lf", &per) != 1)
        per = -1;
    if (f)
        pclose(f);
    return per;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0, t0, ours, per_dump, per_read;
    size_t n = SEC_RAW + SEC_SIZE, iters, patched = 0, dump_len = 0;
    uint8_t *k = make_kernel(), *d = make_driver();
    char kpath[] = "/tmp/ntlens-bench-kernel-XXXXXX", dpath[] = "/tmp/ntlens-bench-driver-XXXXXX";
    struct ntl_error err;

    for (iters = 0, t0 = now(); now() - t0 < secs; iters++) {
        parse_all(k, n);
        parse_all(d, n);
    }
    ours = (now() - t0) / (double)iters;
    for (iters = 0, t0 = now(); now() - t0 < secs; iters++) {
        struct ntl_buf out;
        dump_len = build_dump(k, d, n, &out, &patched);
        ntl_buf_free(&out);
    }
    per_dump = (now() - t0) / (double)iters;
    {
        struct ntl_buf out;
        struct ntl_minidump md;
        uint8_t byte;
        build_dump(k, d, n, &out, &patched);
        for (iters = 0, t0 = now(); now() - t0 < secs; iters++) {
            if (ntl_md_parse(out.data, out.len, &md, &err) < 0)
                return 1;
            for (uint32_t i = 0; i < NSITES; i++)
                ntl_md_read(&md, 0xfffff80010001000ull + 12 * i, &byte, 1);
            ntl_md_free(&md);
        }
        per_read = (now() - t0) / (double)iters;
        ntl_buf_free(&out);
    }
    printf("images: kernel %u exports, driver %u imports and DVRT sites, %zu bytes each\n",
           NEXPORTS, NSITES, n);
    printf("pe parse (headers, exports, imports, relocs, DVRT; both images): %.1f us\n", ours * 1e6);
    printf("dump build (map, rebase, bind, import-optimize %zu sites, write %zu bytes): %.1f us "
           "(%.0f sites/s)\n", patched, dump_len, per_dump * 1e6, NSITES / per_dump);
    printf("dump read (parse + %u reads by address): %.1f us\n", NSITES, per_read * 1e6);

    int kf = mkstemp(kpath), df = mkstemp(dpath);
    if (kf >= 0 && df >= 0) {
        FILE *f1 = fdopen(kf, "wb"), *f2 = fdopen(df, "wb");
        fwrite(k, 1, n, f1);
        fwrite(d, 1, n, f2);
        fclose(f1);
        fclose(f2);
        double rival = rival_pefile(kpath, dpath, secs);
        if (rival > 0)
            printf("rival pefile %s (same images, full parse): %.1f us; ntlens is %.0fx faster\n",
                   "2023.2.7", rival * 1e6, rival / ours);
        else
            printf("rival pefile: not available (/usr/bin/python3 with python3-pefile)\n");
        remove(kpath);
        remove(dpath);
    }
    free(k);
    free(d);
    return 0;
}
