#include "pe_gen.h"

#include <string.h>

#include "ntlens/pe.h"
#include "ntlens/pe_dvrt.h"
#include "ntlens/reader.h"

uint8_t *at(struct img *m, uint32_t rva) { return m->b + SEC_RAW + (rva - SEC_RVA); }

void set_dir(struct img *m, int i, uint32_t rva, uint32_t size)
{
    ntl_put_le32(m->b + DIRS + 8 * i, rva);
    ntl_put_le32(m->b + DIRS + 8 * i + 4, size);
}

void img_init(struct img *m, uint64_t image_base)
{
    memset(m, 0, sizeof *m);
    m->b[0] = 'M';
    m->b[1] = 'Z';
    ntl_put_le32(m->b + 0x3c, 0x40);
    memcpy(m->b + 0x40, "PE\0\0", 4);
    ntl_put_le16(m->b + 0x44, NTL_PE_MACHINE_AMD64);
    ntl_put_le16(m->b + 0x46, 1);
    ntl_put_le32(m->b + 0x48, 0x5eed1234);
    ntl_put_le16(m->b + 0x54, 240);
    ntl_put_le16(m->b + 0x56, 0x22);
    ntl_put_le16(m->b + OPT, 0x20b);
    ntl_put_le32(m->b + OPT + 16, SEC_RVA);
    ntl_put_le64(m->b + OPT + 24, image_base);
    ntl_put_le32(m->b + OPT + 32, 0x1000);
    ntl_put_le32(m->b + OPT + 36, 0x200);
    ntl_put_le32(m->b + OPT + 56, SEC_RVA + SEC_SIZE);
    ntl_put_le32(m->b + OPT + 60, SEC_RAW);
    ntl_put_le32(m->b + OPT + 64, 0xc0ffee);
    ntl_put_le16(m->b + OPT + 68, 1);
    ntl_put_le32(m->b + OPT + 108, 16);
    memcpy(m->b + SECHDR, ".text", 5);
    ntl_put_le32(m->b + SECHDR + 8, SEC_SIZE);
    ntl_put_le32(m->b + SECHDR + 12, SEC_RVA);
    ntl_put_le32(m->b + SECHDR + 16, SEC_SIZE);
    ntl_put_le32(m->b + SECHDR + 20, SEC_RAW);
    ntl_put_le32(m->b + SECHDR + 36, 0x60000020);
}

void put_str(struct img *m, uint32_t rva, const char *s) { memcpy(at(m, rva), s, strlen(s) + 1); }

/* Kernel image: exports KeFoo (0x1800), ExBar (0x1810), a forwarder
 * HalFwd -> NTOSKRNL.KeFoo, and ordinal-only 0x1820 (ordinal 12). */
void build_kernel(struct img *m)
{
    uint8_t *d;
    img_init(m, 0x140000000ull);
    d = at(m, 0x1100);
    ntl_put_le32(d + 12, 0x1200); /* Name */
    ntl_put_le32(d + 16, 10);     /* Base */
    ntl_put_le32(d + 20, 4);      /* NumberOfFunctions */
    ntl_put_le32(d + 24, 3);      /* NumberOfNames */
    ntl_put_le32(d + 28, 0x1140);
    ntl_put_le32(d + 32, 0x1160);
    ntl_put_le32(d + 36, 0x1180);
    ntl_put_le32(at(m, 0x1140), 0x1800);
    ntl_put_le32(at(m, 0x1144), 0x1810);
    ntl_put_le32(at(m, 0x1148), 0x1220); /* forwarder string inside the directory */
    ntl_put_le32(at(m, 0x114c), 0x1820);
    ntl_put_le32(at(m, 0x1160), 0x1240);
    ntl_put_le32(at(m, 0x1164), 0x1250);
    ntl_put_le32(at(m, 0x1168), 0x1260);
    ntl_put_le16(at(m, 0x1180), 1); /* ExBar */
    ntl_put_le16(at(m, 0x1182), 2); /* HalFwd */
    ntl_put_le16(at(m, 0x1184), 0); /* KeFoo */
    put_str(m, 0x1200, "ntoskrnl.exe");
    put_str(m, 0x1220, "NTOSKRNL.KeFoo");
    put_str(m, 0x1240, "ExBar");
    put_str(m, 0x1250, "HalFwd");
    put_str(m, 0x1260, "KeFoo");
    set_dir(m, NTL_PE_DIR_EXPORT, 0x1100, 0x200);
    at(m, 0x1800)[0] = 0xc3;
}

/* Driver: imports KeFoo, ExBar (ntoskrnl.exe) and HalFwd (HAL.dll); IAT at
 * 0x1300: [KeFoo, ExBar, 0, HalFwd, 0]. Five sites in the DVRT. */
void build_driver(struct img *m, uint64_t base)
{
    static const uint8_t nop5[5] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
    uint8_t *p;
    img_init(m, base);
    /* import descriptors */
    p = at(m, 0x1100);
    ntl_put_le32(p, 0x1340);
    ntl_put_le32(p + 12, 0x1400);
    ntl_put_le32(p + 16, 0x1300);
    ntl_put_le32(p + 20, 0x1358);
    ntl_put_le32(p + 32, 0x1410);
    ntl_put_le32(p + 36, 0x1318);
    set_dir(m, NTL_PE_DIR_IMPORT, 0x1100, 60);
    set_dir(m, NTL_PE_DIR_IAT, 0x1300, 0x28);
    ntl_put_le64(at(m, 0x1340), 0x1420);
    ntl_put_le64(at(m, 0x1348), 0x1430);
    ntl_put_le64(at(m, 0x1358), 0x1440);
    memcpy(at(m, 0x1300), at(m, 0x1340), 16);
    memcpy(at(m, 0x1318), at(m, 0x1358), 8);
    put_str(m, 0x1400, "ntoskrnl.exe");
    put_str(m, 0x1410, "HAL.dll");
    put_str(m, 0x1422, "KeFoo");
    put_str(m, 0x1432, "ExBar");
    put_str(m, 0x1442, "HalFwd");
    /* sites in page 0x2000 */
    struct { uint32_t rva; bool call; uint32_t slot; } sites[] = {
        {0x2000, true, 0}, {0x2010, false, 1}, {0x2020, true, 3}, {0x2030, true, 0}, {0x2040, true, 1},
    };
    for (size_t i = 0; i < sizeof sites / sizeof sites[0]; i++) {
        p = at(m, sites[i].rva);
        p[0] = 0x48;
        p[1] = 0xff;
        p[2] = sites[i].call ? 0x15 : 0x25;
        ntl_put_le32(p + 3, (uint32_t)(0x1300 + 8 * sites[i].slot - (sites[i].rva + 7)));
        if (sites[i].call)
            memcpy(p + 7, nop5, 5);
        else
            memset(p + 7, 0xcc, 5);
    }
    at(m, 0x2040 + 8)[0] = 0x90; /* site 5: not the expected nop */
    at(m, 0x2020 + 11)[0] = 0x08; /* site 3: LLVM's nop dword [rax+rax*1+8] */
    /* load config at 0x1500 pointing at the DVRT at section 1 offset 0x600 */
    p = at(m, 0x1500);
    ntl_put_le32(p, 0x100);
    ntl_put_le32(p + 144, 0x00100000);
    ntl_put_le32(p + 224, 0x600);
    ntl_put_le16(p + 228, 1);
    set_dir(m, NTL_PE_DIR_LOAD_CONFIG, 0x1500, 0x100);
    p = at(m, 0x1600);
    ntl_put_le32(p, 1);
    ntl_put_le32(p + 4, 12 + 8 + 6 * 4 + 12 + 8 + 4);
    /* symbol 3: one block, 6 entries (5 sites + a 0x7FFFF one) */
    ntl_put_le64(p + 8, 3);
    ntl_put_le32(p + 16, 8 + 6 * 4);
    ntl_put_le32(p + 20, 0x2000);
    ntl_put_le32(p + 24, 8 + 6 * 4);
    ntl_put_le32(p + 28, 0x000 | 1u << 12 | 0u << 13);
    ntl_put_le32(p + 32, 0x010 | 0u << 12 | 1u << 13);
    ntl_put_le32(p + 36, 0x020 | 1u << 12 | 3u << 13);
    ntl_put_le32(p + 40, 0x030 | 1u << 12 | NTL_DVRT_IAT_INDEX_NONE << 13);
    ntl_put_le32(p + 44, 0x040 | 1u << 12 | 0u << 13);
    ntl_put_le32(p + 48, 0x050 | 1u << 12 | 2u << 13); /* slot 2: the null terminator */
    /* symbol 4: one block with one 16-bit entry and padding */
    ntl_put_le64(p + 52, 4);
    ntl_put_le32(p + 60, 12);
    ntl_put_le32(p + 64, 0x2000);
    ntl_put_le32(p + 68, 12);
    ntl_put_le16(p + 72, 0x070 | 1u << 12 | 1u << 13 | 1u << 14);
    ntl_put_le16(p + 74, 0);
    /* base relocations: a DIR64 at 0x1700 and padding */
    ntl_put_le64(at(m, 0x1700), base + 0x2000);
    p = at(m, 0x1780);
    ntl_put_le32(p, 0x1000);
    ntl_put_le32(p + 4, 12);
    ntl_put_le16(p + 8, (uint16_t)(NTL_PE_REL_DIR64 << 12 | 0x700));
    ntl_put_le16(p + 10, 0);
    set_dir(m, NTL_PE_DIR_BASERELOC, 0x1780, 12);
    /* CodeView */
    p = at(m, 0x1900);
    ntl_put_le32(p + 12, 2);
    ntl_put_le32(p + 16, 24 + 8);
    ntl_put_le32(p + 20, 0x1920);
    ntl_put_le32(p + 24, SEC_RAW + 0x920);
    memcpy(at(m, 0x1920), "RSDS0123456789abcdef\x07\0\0\0drv.pdb", 32);
    set_dir(m, NTL_PE_DIR_DEBUG, 0x1900, 28);
}

