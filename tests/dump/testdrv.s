# A kernel-style driver built the way MSVC's /guard:retpoline builds one:
# every call to an import is `rex.w call [rip+__imp_X]` followed by a 5-byte
# nop, every tail call `rex.w jmp [rip+__imp_X]` followed by int3 padding,
# and the dynamic value relocation table (DVRT) lists each such site under
# IMAGE_DYNAMIC_RELOCATION_GUARD_IMPORT_CONTROL_TRANSFER (symbol 3).
#
# lld-link cannot emit a DVRT, so this file emits it as data in its own
# section .dvrt: block page RVAs come from .rva relocations and page-relative
# offsets from label differences (each block's code starts on a 4 KiB
# boundary). IATIndex depends on the IAT layout only the linker knows, so
# entries carry IATIndex 0 and fill_iat_index.py fills them in after linking
# from the IAT slot each instruction reads. The site marked 0x7FFFF ("do not
# optimize") is left alone. The load config (_load_config_used) points at the
# table through DynamicValueRelocTableOffset (.secrel32) and
# DynamicValueRelocTableSection (.secidx, 1-based in the image).

        .text
        .p2align 12
page0:
        .globl DriverEntry
DriverEntry:
        subq $40, %rsp
site_call1:
        .byte 0x48
        callq *__imp_KeAcquireSpinLockAtDpcLevel(%rip)
        .byte 0x0f, 0x1f, 0x44, 0x00, 0x00
site_call2:
        .byte 0x48
        callq *__imp_ExAllocatePool2(%rip)
        .byte 0x0f, 0x1f, 0x44, 0x00, 0x00
site_noopt:
        .byte 0x48
        callq *__imp_ExFreePool(%rip)
        .byte 0x0f, 0x1f, 0x44, 0x00, 0x00
site_hal:
        .byte 0x48
        callq *__imp_KeStallExecutionProcessor(%rip)
        .byte 0x0f, 0x1f, 0x44, 0x00, 0x00
        addq $40, %rsp
        jmp DrvHelper

        .p2align 12
page1:
DrvHelper:
        xorl %eax, %eax
site_tail:
        .byte 0x48
        jmpq *__imp_IoCompleteRequest(%rip)
        int3
        int3
        int3
        int3
        int3

        .data
        .p2align 3
DrvEntryPointer:
        .quad DriverEntry

        .section .dvrt,"dr"
        .p2align 3
        .quad 0         # pefile ignores a table at offset 0 of its section
dvrt:
        .long 1                                 # IMAGE_DYNAMIC_RELOCATION_TABLE.Version
        .long dvrt_end - dvrt_first             # .Size
dvrt_first:
        .quad 3                                 # IMAGE_DYNAMIC_RELOCATION64.Symbol
        .long ict_end - ict_blocks              # .BaseRelocSize
ict_blocks:
        .rva page0                              # IMAGE_BASE_RELOCATION.VirtualAddress
        .long blk0_end - ict_blocks             # .SizeOfBlock
        .long (site_call1 - page0) | (1 << 12)  # PageRelativeOffset:12 IndirectCall:1 IATIndex:19
        .long (site_call2 - page0) | (1 << 12)
        .long (site_noopt - page0) | (1 << 12) | (0x7ffff << 13)
        .long (site_hal - page0) | (1 << 12)
blk0_end:
        .rva page1
        .long blk1_end - blk0_end
        .long (site_tail - page1)               # IndirectCall 0: a tail jump
blk1_end:
ict_end:
dvrt_end:

        .section .rdata,"dr"
        .p2align 3
        .globl _load_config_used
_load_config_used:                              # IMAGE_LOAD_CONFIG_DIRECTORY64
        .long 0x100                             # Size
        .fill 140, 1, 0
        .long 0x00100000                        # GuardFlags (144): RETPOLINE_PRESENT
        .fill 76, 1, 0
        .secrel32 dvrt                          # DynamicValueRelocTableOffset (224)
        .secidx dvrt                            # DynamicValueRelocTableSection (228)
        .short 0
        .fill 24, 1, 0
