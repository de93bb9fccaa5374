/* ntlens.sys: a thread's kernel call stack, for `ntlens stacks --kernel`.
 *
 * One IOCTL (ntlens-ioctl.h): given a thread id, return the return
 * addresses of the thread's kernel stack. A kernel stack can only be walked
 * safely by its own thread (another thread's stack may change or be paged
 * out under the walker), so, as System Informer does on x64, the driver
 * queues a special kernel APC to the thread; the APC runs in that thread,
 * walks its own frames with RtlWalkFrameChain and signals an event. The
 * caller waits for it with a timeout.
 *
 * Safety rules this file keeps:
 * - METHOD_BUFFERED: the I/O manager copies the request and the reply, so
 *   no user address is ever touched here; every length is checked first.
 * - The capture context is reference-counted (the waiter's and the APC's
 *   reference), because the APC may run after the wait timed out, or never
 *   (its thread exits: the rundown routine drops the APC's reference).
 * - While an APC is queued it holds a reference on the driver object, and
 *   drops it with ObDereferenceObjectDeferDelete, so the driver's image
 *   stays mapped until no APC routine of ours can run.
 * - Only callers holding SeDebugPrivilege (administrators) may open the
 *   device: kernel addresses are for them only.
 * The frame walk itself runs only on a real Windows kernel; Wine runs the
 * rest (docs/stacks.md says what is tested where). */
#include <ddk/ntddk.h>

#include "ntlens-ioctl.h"

#define POOL_TAG 0x736e6c4eu /* "Nlns" in a pool dump */
#define WAIT_MS 1000

/* Undocumented but exported by every x64 ntoskrnl since Windows XP. */
typedef enum _KAPC_ENVIRONMENT {
    OriginalApcEnvironment,
    AttachedApcEnvironment,
    CurrentApcEnvironment,
    InsertApcEnvironment
} KAPC_ENVIRONMENT;

NTKERNELAPI VOID NTAPI KeInitializeApc(PKAPC Apc, PKTHREAD Thread, KAPC_ENVIRONMENT Environment,
                                       PKKERNEL_ROUTINE KernelRoutine,
                                       PKRUNDOWN_ROUTINE RundownRoutine,
                                       PKNORMAL_ROUTINE NormalRoutine, KPROCESSOR_MODE Mode,
                                       PVOID NormalContext);
NTKERNELAPI BOOLEAN NTAPI KeInsertQueueApc(PKAPC Apc, PVOID Argument1, PVOID Argument2,
                                           KPRIORITY Increment);

/* Documented, but declared in ntifs.h, which does not mix with ntddk.h. */
NTKERNELAPI NTSTATUS NTAPI PsLookupThreadByThreadId(HANDLE ThreadId, PETHREAD *Thread);

typedef LONG_PTR(NTAPI *defer_deref_fn)(PVOID Object);

static PDRIVER_OBJECT driver;
/* ObDereferenceObjectDeferDelete (Vista on), looked up rather than
 * imported: Wine's ntoskrnl lacks it, and then captures are refused
 * (STATUS_NOT_SUPPORTED) while the rest still loads and answers. */
static defer_deref_fn defer_deref;

struct capture {
    KAPC apc;
    KEVENT done;
    volatile LONG refs;
    ULONG max, count;
    PVOID frames[];
};

static VOID capture_release(struct capture *c)
{
    if (InterlockedDecrement(&c->refs) == 0)
        ExFreePoolWithTag(c, POOL_TAG);
}

/* Runs in the target thread at APC_LEVEL. Flags 0: kernel frames only. */
static VOID NTAPI capture_apc(PKAPC apc, PKNORMAL_ROUTINE *normal, PVOID *context, PVOID *arg1,
                              PVOID *arg2)
{
    struct capture *c = CONTAINING_RECORD(apc, struct capture, apc);
    UNREFERENCED_PARAMETER(normal);
    UNREFERENCED_PARAMETER(context);
    UNREFERENCED_PARAMETER(arg1);
    UNREFERENCED_PARAMETER(arg2);
    c->count = RtlWalkFrameChain(c->frames, c->max, 0);
    KeSetEvent(&c->done, IO_NO_INCREMENT, FALSE);
    capture_release(c);
    defer_deref(driver);
}

/* The thread exited with the APC still queued. */
static VOID NTAPI capture_rundown(PKAPC apc)
{
    capture_release(CONTAINING_RECORD(apc, struct capture, apc));
    defer_deref(driver);
}

/* Fills reply with up to max frames of thread. */
static NTSTATUS capture_thread(PETHREAD thread, ULONG max, struct ntlens_stack_reply *reply)
{
    if (!defer_deref)
        return STATUS_NOT_SUPPORTED;
    /* max <= NTLENS_MAX_FRAMES, checked by the caller: no overflow. */
    struct capture *c = ExAllocatePoolWithTag(NonPagedPoolNx,
                                              sizeof(*c) + max * sizeof(PVOID), POOL_TAG);
    if (!c)
        return STATUS_INSUFFICIENT_RESOURCES;
    RtlZeroMemory(c, sizeof(*c));
    c->max = max;
    c->refs = 2; /* ours and the APC's */
    KeInitializeEvent(&c->done, NotificationEvent, FALSE);
    KeInitializeApc(&c->apc, (PKTHREAD)thread, OriginalApcEnvironment, capture_apc,
                    capture_rundown, NULL, KernelMode, NULL);
    ObReferenceObject(driver);
    if (!KeInsertQueueApc(&c->apc, NULL, NULL, IO_NO_INCREMENT)) {
        /* Not queued (the thread is exiting): the APC's reference is ours to drop. */
        ObDereferenceObject(driver);
        capture_release(c);
        capture_release(c);
        return STATUS_THREAD_IS_TERMINATING;
    }
    LARGE_INTEGER timeout;
    timeout.QuadPart = -10000LL * WAIT_MS; /* relative, 100 ns units */
    NTSTATUS st = KeWaitForSingleObject(&c->done, Executive, KernelMode, FALSE, &timeout);
    if (st == STATUS_SUCCESS) {
        reply->count = c->count <= max ? c->count : max;
        for (ULONG i = 0; i < reply->count; i++)
            reply->frames[i] = (ULONG64)(ULONG_PTR)c->frames[i];
    } else {
        st = STATUS_IO_TIMEOUT; /* an error status: STATUS_TIMEOUT counts as success */
    }
    capture_release(c);
    return st;
}

/* Validates the request before anything else happens. */
static NTSTATUS thread_stack(PIRP irp, PIO_STACK_LOCATION sl, ULONG_PTR *written)
{
    ULONG in = sl->Parameters.DeviceIoControl.InputBufferLength;
    ULONG out = sl->Parameters.DeviceIoControl.OutputBufferLength;
    struct ntlens_stack_request req;
    if (in != sizeof(req))
        return STATUS_INVALID_BUFFER_SIZE;
    RtlCopyMemory(&req, irp->AssociatedIrp.SystemBuffer, sizeof(req));
    if (req.max_frames == 0 || req.max_frames > NTLENS_MAX_FRAMES)
        return STATUS_INVALID_PARAMETER_2;
    if (out < sizeof(struct ntlens_stack_reply) + (ULONG)req.max_frames * sizeof(ULONG64))
        return STATUS_BUFFER_TOO_SMALL;
    if (req.tid == 0)
        return STATUS_INVALID_CID;
    PETHREAD thread;
    NTSTATUS st = PsLookupThreadByThreadId(ULongToHandle(req.tid), &thread);
    if (!NT_SUCCESS(st))
        return st;
    struct ntlens_stack_reply *reply = irp->AssociatedIrp.SystemBuffer;
    reply->count = 0;
    reply->reserved = 0;
    st = capture_thread(thread, req.max_frames, reply);
    ObDereferenceObject(thread);
    if (NT_SUCCESS(st))
        *written = sizeof(*reply) + reply->count * sizeof(ULONG64);
    return st;
}

static NTSTATUS complete(PIRP irp, NTSTATUS st, ULONG_PTR written)
{
    irp->IoStatus.Status = st;
    irp->IoStatus.Information = written;
    IoCompleteRequest(irp, IO_NO_INCREMENT);
    return st;
}

static NTSTATUS NTAPI dispatch_create_close(PDEVICE_OBJECT dev, PIRP irp)
{
    UNREFERENCED_PARAMETER(dev);
    PIO_STACK_LOCATION sl = IoGetCurrentIrpStackLocation(irp);
    if (sl->MajorFunction == IRP_MJ_CREATE && irp->RequestorMode == UserMode &&
        !SeSinglePrivilegeCheck(RtlConvertLongToLuid(SE_DEBUG_PRIVILEGE), UserMode))
        return complete(irp, STATUS_PRIVILEGE_NOT_HELD, 0);
    return complete(irp, STATUS_SUCCESS, 0);
}

static NTSTATUS NTAPI dispatch_ioctl(PDEVICE_OBJECT dev, PIRP irp)
{
    UNREFERENCED_PARAMETER(dev);
    PIO_STACK_LOCATION sl = IoGetCurrentIrpStackLocation(irp);
    ULONG_PTR written = 0;
    NTSTATUS st = STATUS_INVALID_DEVICE_REQUEST;
    if (sl->Parameters.DeviceIoControl.IoControlCode == NTLENS_IOCTL_THREAD_STACK)
        st = thread_stack(irp, sl, &written);
    return complete(irp, st, written);
}

static VOID NTAPI unload(PDRIVER_OBJECT drv)
{
    UNICODE_STRING link = RTL_CONSTANT_STRING(NTLENS_LINK_NAME);
    IoDeleteSymbolicLink(&link);
    IoDeleteDevice(drv->DeviceObject);
}

NTSTATUS NTAPI DriverEntry(PDRIVER_OBJECT drv, PUNICODE_STRING registry)
{
    UNREFERENCED_PARAMETER(registry);
    UNICODE_STRING name = RTL_CONSTANT_STRING(NTLENS_DEVICE_NAME);
    UNICODE_STRING link = RTL_CONSTANT_STRING(NTLENS_LINK_NAME);
    UNICODE_STRING defer_name = RTL_CONSTANT_STRING(L"ObDereferenceObjectDeferDelete");
    PDEVICE_OBJECT dev;
    NTSTATUS st = IoCreateDevice(drv, 0, &name, FILE_DEVICE_UNKNOWN, FILE_DEVICE_SECURE_OPEN,
                                 FALSE, &dev);
    if (!NT_SUCCESS(st))
        return st;
    st = IoCreateSymbolicLink(&link, &name);
    if (!NT_SUCCESS(st)) {
        IoDeleteDevice(dev);
        return st;
    }
    driver = drv;
    defer_deref = (defer_deref_fn)MmGetSystemRoutineAddress(&defer_name);
    drv->MajorFunction[IRP_MJ_CREATE] = dispatch_create_close;
    drv->MajorFunction[IRP_MJ_CLOSE] = dispatch_create_close;
    drv->MajorFunction[IRP_MJ_DEVICE_CONTROL] = dispatch_ioctl;
    drv->DriverUnload = unload;
    return STATUS_SUCCESS;
}
