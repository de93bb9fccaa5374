/* ptdump's --cpu auto: the CPU this runs on, from CPUID as libipt's
 * pt_cpu_read reads it. The same on Linux and Windows; on a machine that is
 * not x86 there is nothing to read. */
#include <string.h>

#include "ipt-dump.h"

#if defined(__i386__) || defined(__x86_64__)
#include <cpuid.h>

bool ipt_dump_host_cpu(struct ntl_ipt_cpu *cpu)
{
    unsigned max_leaf, eax, ebx, ecx, edx;
    char vendor[13];

    memset(cpu, 0, sizeof *cpu);
    if (!__get_cpuid(0, &max_leaf, &ebx, &ecx, &edx) || max_leaf < 1)
        return false;
    memcpy(vendor, &ebx, 4);
    memcpy(vendor + 4, &edx, 4);
    memcpy(vendor + 8, &ecx, 4);
    vendor[12] = '\0';
    /* Another vendor's CPU has none of the errata: decode as for none. */
    if (strcmp(vendor, "GenuineIntel") != 0)
        return true;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
        return false;
    cpu->family = (eax >> 8) & 0xf;
    if (cpu->family == 0xf)
        cpu->family += (eax >> 20) & 0xff;
    cpu->model = (eax >> 4) & 0xf;
    if (cpu->family == 0x6 || cpu->family >= 0xf)
        cpu->model += ((eax >> 16) & 0xf) << 4;
    cpu->stepping = eax & 0xf;
    cpu->known = true;
    return true;
}

#else

bool ipt_dump_host_cpu(struct ntl_ipt_cpu *cpu)
{
    memset(cpu, 0, sizeof *cpu);
    return false;
}

#endif
