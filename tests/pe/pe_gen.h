/* PE32+ images built byte by byte for the pe and minidump tests: a kernel
 * that exports, and a driver that imports from it and HAL with five import
 * optimization sites. */
#ifndef NTLENS_TEST_PE_GEN_H
#define NTLENS_TEST_PE_GEN_H

#include <stdbool.h>
#include <stdint.h>

/* One-section PE32+ image: headers in 0x400 file bytes, section .text at RVA
 * 0x1000 (file 0x400), 0x3000 bytes, SizeOfImage 0x4000. */
#define SEC_RVA 0x1000u
#define SEC_RAW 0x400u
#define SEC_SIZE 0x3000u
#define IMG_FILE (SEC_RAW + SEC_SIZE)
#define OPT 0x58u
#define DIRS (OPT + 112)
#define SECHDR (OPT + 240)

struct img {
    uint8_t b[IMG_FILE];
};

uint8_t *at(struct img *m, uint32_t rva);
void set_dir(struct img *m, int i, uint32_t rva, uint32_t size);
void img_init(struct img *m, uint64_t image_base);
void put_str(struct img *m, uint32_t rva, const char *s);
/* Kernel image: exports KeFoo (0x1800), ExBar (0x1810), a forwarder
 * HalFwd -> NTOSKRNL.KeFoo, and ordinal-only 0x1820 (ordinal 12). */
void build_kernel(struct img *m);
/* Driver: imports KeFoo, ExBar (ntoskrnl.exe) and HalFwd (HAL.dll); IAT at
 * 0x1300: [KeFoo, ExBar, 0, HalFwd, 0]. Five sites in the DVRT. */
void build_driver(struct img *m, uint64_t base);

#endif
