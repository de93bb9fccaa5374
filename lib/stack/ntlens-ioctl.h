/* The one request ntlens.sys answers, shared by the user side
 * (driver-win32.c) and the driver (drivers/ntlens-sys/ntlens-sys.c). Types
 * are the Windows ones both wdm.h and windows.h define, so the layout is the
 * same on both sides. */
#ifndef NTLENS_IOCTL_H
#define NTLENS_IOCTL_H

#define NTLENS_DEVICE_NAME L"\\Device\\ntlens"
#define NTLENS_LINK_NAME L"\\DosDevices\\ntlens"
#define NTLENS_USER_PATH "\\\\.\\ntlens"
#define NTLENS_SERVICE_NAME "ntlens"

/* METHOD_BUFFERED: the I/O manager copies both buffers, so the driver never
 * touches user memory. FILE_READ_ACCESS: a handle opened for reading. */
#define NTLENS_DEVICE_TYPE 0x8a7eu /* 0x8000 and up: for vendors; unsigned: it is shifted into bit 31 */
#define NTLENS_IOCTL_THREAD_STACK CTL_CODE(NTLENS_DEVICE_TYPE, 0x801, METHOD_BUFFERED, FILE_READ_ACCESS)

/* The deepest kernel stack one request returns (Windows' kernel stacks are
 * 24 KiB or so: 256 frames is far more than they hold). */
#define NTLENS_MAX_FRAMES 256u

/* Input: exactly this. */
struct ntlens_stack_request {
    ULONG tid;
    ULONG max_frames; /* 1..NTLENS_MAX_FRAMES */
};

/* Output: at least FIELD_OFFSET(frames) + max_frames * 8 bytes; the
 * driver writes count frames, innermost first (return addresses). */
struct ntlens_stack_reply {
    ULONG count;
    ULONG reserved;
    ULONG64 frames[];
};

#endif
