# A PE32 (i386) DLL: exports, HIGHLOW base relocations, a CodeView record,
# and a 32-bit load config with a version 1 DVRT (IMAGE_DYNAMIC_RELOCATION32:
# u32 Symbol), so the PE32 layouts are checked against pefile too. The DVRT
# entries only exercise the format (no import sites in 32-bit code).
        .text
        .p2align 12
page0:
        .globl _X86Entry
_X86Entry:
        movl $1, %eax
        retl $12

        .p2align 4
        .globl _X86Add
_X86Add:
        movl 4(%esp), %eax
        addl 8(%esp), %eax
        retl

        .p2align 4
        .globl _X86Twice
_X86Twice:
        movl 4(%esp), %eax
        addl %eax, %eax
        retl

        .data
        .p2align 2
X86Table:
        .long _X86Add
        .long _X86Twice
        .long X86Table

        .section .dvrt,"dr"
        .p2align 2
        .long 0
dvrt:
        .long 1
        .long dvrt_end - dvrt_first
dvrt_first:
        .long 3                                 # IMAGE_DYNAMIC_RELOCATION32.Symbol
        .long blocks_end - blocks               # .BaseRelocSize
blocks:
        .rva page0
        .long blocks_end - blocks
        .long (_X86Add - page0) | (1 << 12) | (0x1234 << 13)
        .long (_X86Twice - page0) | (0x7ffff << 13)
blocks_end:
dvrt_end:

        .section .rdata,"dr"
        .p2align 2
        .globl __load_config_used
__load_config_used:                             # IMAGE_LOAD_CONFIG_DIRECTORY32
        .long 0xa0                              # Size
        .fill 132, 1, 0
        .secrel32 dvrt                          # DynamicValueRelocTableOffset (136)
        .secidx dvrt                            # DynamicValueRelocTableSection (140)
        .short 0
        .fill 16, 1, 0
