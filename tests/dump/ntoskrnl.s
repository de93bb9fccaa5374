# A stand-in "ntoskrnl.exe": exports the routines the test driver imports.
        .text
        .globl KiSystemStartup
KiSystemStartup:
        xorl %eax, %eax
        retq

        .p2align 4
        .globl KeAcquireSpinLockAtDpcLevel
KeAcquireSpinLockAtDpcLevel:
        movl $0x11, %eax
        retq

        .p2align 4
        .globl ExAllocatePool2
ExAllocatePool2:
        movl $0x22, %eax
        retq

        .p2align 4
        .globl ExFreePool
ExFreePool:
        movl $0x33, %eax
        retq

        .p2align 4
        .globl IoCompleteRequest
IoCompleteRequest:
        movl $0x44, %eax
        retq

        .p2align 4
        .globl KeStallExecutionProcessor
KeStallExecutionProcessor:
        movl $0x55, %eax
        retq

        .p2align 4
        .globl RtlOrdinalOnly
RtlOrdinalOnly:
        movl $0x66, %eax
        retq

        .data
        .p2align 3
# A pointer the loader must relocate (an IMAGE_REL_BASED_DIR64 entry).
KiStartupPointer:
        .quad KiSystemStartup
