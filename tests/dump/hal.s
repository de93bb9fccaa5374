# A stand-in "HAL.dll": one routine of its own, the rest forwarded to ntoskrnl.
        .text
        .globl HalEntry
HalEntry:
        xorl %eax, %eax
        retq
        .p2align 4
        .globl HalQueryRealTimeClock
HalQueryRealTimeClock:
        movl $0x77, %eax
        retq
