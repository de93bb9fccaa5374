/* Import optimization behind a builder: a kernel that exports and a driver
 * that imports from it (tests/pe/pe_gen.c) are valid images; the driver's
 * dynamic value relocation table, and optionally the code at its sites, come
 * from the input. Blind mutation of a whole PE rarely keeps the load config,
 * the section table and the DVRT's sizes consistent, so fuzz_dvrt alone
 * never reaches the patcher; here every input is parsed through
 * ntl_pe_dvrt, applied and bound as `dump build --import-optimization` does.
 *
 * Input: a flags byte (bit 0: the next 0x60 bytes are the code at the sites;
 * bit 1: version 2 table; bit 2: the table header's size comes from the
 * input too), then the table's entries. */
#include <stdint.h>
#include <string.h>

#include "ntlens/buf.h"
#include "ntlens/importopt.h"
#include "ntlens/pe.h"
#include "ntlens/reader.h"
#include "pe/pe_gen.h"

#define SITES_RVA 0x2000u
#define SITES_SIZE 0x60u
#define DVRT_RVA 0x2800u /* section 1, offset 0x1800: past the sites */
#define DVRT_MAX (SEC_RVA + SEC_SIZE - DVRT_RVA)
#define KERNEL_BASE 0xfffff80000000000u
#define DRIVER_BASE 0xfffff80001000000u

static struct img kernel, driver;

/* The driver with the input's table (and site code). */
static void build(const uint8_t *data, size_t size)
{
    unsigned flags = data[0];
    data++, size--;
    build_driver(&driver, DRIVER_BASE);
    if ((flags & 1) && size >= SITES_SIZE) {
        memcpy(at(&driver, SITES_RVA), data, SITES_SIZE);
        data += SITES_SIZE, size -= SITES_SIZE;
    }
    uint8_t *t = at(&driver, DVRT_RVA);
    size_t body = size < DVRT_MAX - 8 ? size : DVRT_MAX - 8;
    ntl_put_le32(t, (flags & 2) ? 2 : 1);
    ntl_put_le32(t + 4, (uint32_t)body);
    if ((flags & 4) && body >= 4) {
        memcpy(t + 4, data, 4);
        data += 4, body -= 4;
    }
    memcpy(t + 8, data, body);
    uint8_t *lc = at(&driver, 0x1500);
    ntl_put_le32(lc + 224, DVRT_RVA - SEC_RVA);
    ntl_put_le16(lc + 228, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_pe pe[2];
    struct ntl_buf image[2];
    struct ntl_error err;
    struct ntl_iopt_report rep;
    int parsed = 0;

    if (size < 1)
        return 0;
    if (!kernel.b[0])
        build_kernel(&kernel);
    build(data, size);
    const struct img *files[2] = {&kernel, &driver};
    for (; parsed < 2; parsed++) {
        ntl_buf_init(&image[parsed], 0);
        if (ntl_pe_parse(files[parsed]->b, IMG_FILE, &pe[parsed], &err) < 0)
            goto out;
        if (ntl_pe_map(&pe[parsed], &image[parsed], &err) < 0) {
            ntl_pe_free(&pe[parsed]);
            goto out;
        }
    }
    struct ntl_iopt_module mods[2] = {
        {"ntoskrnl.exe", &pe[0], image[0].data, image[0].len, KERNEL_BASE},
        {"drv.sys", &pe[1], image[1].data, image[1].len, DRIVER_BASE},
    };
    if (ntl_importopt_apply(mods, 2, &rep, &err) >= 0)
        ntl_iopt_report_free(&rep);
    ntl_importopt_bind(mods, 2, &err);
out:
    for (int i = 0; i < parsed; i++)
        ntl_pe_free(&pe[i]);
    for (int i = 0; i <= parsed && i < 2; i++)
        ntl_buf_free(&image[i]);
    return 0;
}
