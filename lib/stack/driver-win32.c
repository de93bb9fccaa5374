/* Kernel frames through ntlens.sys: load it as a kernel service, open its
 * device, ask it for one thread's frames at a time, and name them from the
 * kernel's module list. What the driver does is in drivers/ntlens-sys/. */
#include <windows.h>
#include <winternl.h>
#include <winioctl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens-ioctl.h"
#include "win32.h"

#ifndef ERROR_INVALID_IMAGE_HASH
#define ERROR_INVALID_IMAGE_HASH 577L /* not in every mingw-w64 winerror.h */
#endif

struct kernel_module {
    uint64_t base, size;
    char name[64];
};

struct win_driver {
    HANDLE device;
    SC_HANDLE scm, service;
    bool created, started;    /* by us: undone by win_driver_close */
    struct kernel_module *modules;
    size_t nmodules;
};

/* ntlens.sys next to the running program. */
static int default_path(char *path, size_t size, struct ntl_error *err)
{
    DWORD n = GetModuleFileNameA(NULL, path, (DWORD)size);
    char *slash = n && n < size ? strrchr(path, '\\') : NULL;
    if (!slash || (size_t)(slash - path) + sizeof("\\ntlens.sys") > size)
        return ntl_error_set(err, NTL_ERR_SYSTEM, NULL, NTL_NO_OFFSET,
                             "cannot tell where the running program is (error %lu)",
                             GetLastError());
    strcpy(slash, "\\ntlens.sys");
    return 0;
}

/* Creates the service (or opens the one an earlier run or the
 * administrator left) and starts it. */
static int start_service(struct win_driver *d, const char *path, struct ntl_error *err)
{
    d->scm = OpenSCManagerA(NULL, NULL, SC_MANAGER_CONNECT | SC_MANAGER_CREATE_SERVICE);
    if (!d->scm)
        return ntl_error_set(err, GetLastError() == ERROR_ACCESS_DENIED ? NTL_ERR_ACCESS
                                                                        : NTL_ERR_SYSTEM,
                             NULL, NTL_NO_OFFSET, "loading ntlens.sys needs an administrator "
                             "(OpenSCManager: error %lu)", GetLastError());
    DWORD access = SERVICE_START | SERVICE_STOP | SERVICE_QUERY_STATUS | DELETE;
    d->service = CreateServiceA(d->scm, NTLENS_SERVICE_NAME, "ntlens thread stacks", access,
                                SERVICE_KERNEL_DRIVER, SERVICE_DEMAND_START,
                                SERVICE_ERROR_NORMAL, path, NULL, NULL, NULL, NULL, NULL);
    d->created = d->service != NULL;
    if (!d->service && GetLastError() == ERROR_SERVICE_EXISTS)
        d->service = OpenServiceA(d->scm, NTLENS_SERVICE_NAME, access);
    if (!d->service)
        return ntl_error_set(err, NTL_ERR_SYSTEM, NULL, NTL_NO_OFFSET,
                             "cannot create the ntlens kernel service for %s (error %lu)", path,
                             GetLastError());
    /* The database stays locked while the service manager starts other
     * services (Wine's, right after boot): wait for it, up to 30 s. */
    DWORD e = 0;
    for (int tries = 0; tries < 60; tries++) {
        if (StartServiceA(d->service, 0, NULL)) {
            d->started = true;
            return 0;
        }
        if ((e = GetLastError()) != ERROR_SERVICE_DATABASE_LOCKED)
            break;
        Sleep(500);
    }
    if (e == ERROR_SERVICE_ALREADY_RUNNING)
        return 0;
    if (e == ERROR_INVALID_IMAGE_HASH)
        return ntl_error_set(err, NTL_ERR_ACCESS, NULL, NTL_NO_OFFSET,
                             "Windows refused to load %s: it is not signed (turn test signing "
                             "on with `bcdedit /set testsigning on`, or sign it)", path);
    return ntl_error_set(err, e == ERROR_ACCESS_DENIED ? NTL_ERR_ACCESS : NTL_ERR_SYSTEM, NULL,
                         NTL_NO_OFFSET, "starting the ntlens kernel service (%s) failed "
                         "(error %lu)", path, e);
}

/* The kernel's modules, for naming frames. RTL_PROCESS_MODULES: a count,
 * then 296-byte entries (x64) whose file name starts at OffsetToFileName in
 * a 256-byte path. A list we cannot read only leaves frames unnamed. */
static void load_modules(struct win_driver *d)
{
    ULONG size = 1u << 16, need = 0;
    uint8_t *buf = NULL;
    for (int tries = 0; tries < 4; tries++) {
        free(buf);
        if (!(buf = malloc(size)))
            return;
        NTSTATUS st = NtQuerySystemInformation((SYSTEM_INFORMATION_CLASS)11, buf, size, &need);
        if (st >= 0)
            break;
        size = need > size ? need + 4096 : size * 2;
        if (tries == 3) {
            free(buf);
            return;
        }
    }
    enum { FIRST = 8, ENTRY = 296, BASE = 16, SIZE = 24, NAME_OFF = 38, PATH = 40 };
    uint32_t count;
    memcpy(&count, buf, 4);
    if (count > (size - FIRST) / ENTRY || !(d->modules = calloc(count ? count : 1,
                                                                  sizeof(*d->modules)))) {
        free(buf);
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *e = buf + FIRST + (size_t)i * ENTRY;
        struct kernel_module *m = &d->modules[i];
        uint32_t image_size;
        uint16_t name_off;
        memcpy(&m->base, e + BASE, 8);
        memcpy(&image_size, e + SIZE, 4);
        memcpy(&name_off, e + NAME_OFF, 2);
        m->size = image_size;
        const char *path = (const char *)e + PATH;
        size_t len = strnlen(path, 256);
        snprintf(m->name, sizeof(m->name), "%.*s", (int)(len - (name_off < len ? name_off : len)),
                 path + (name_off < len ? name_off : len));
    }
    d->nmodules = count;
    free(buf);
}

int win_driver_open(const char *path, struct win_driver **out, struct ntl_error *err)
{
    char own[MAX_PATH], full[MAX_PATH];
    if (!path) {
        int rc = default_path(own, sizeof(own), err);
        if (rc < 0)
            return rc;
        path = own;
    }
    /* The service needs an absolute path with backslashes (Wine's loader
     * fails on "Z:/..."). */
    DWORD n = GetFullPathNameA(path, sizeof(full), full, NULL);
    if (n == 0 || n >= sizeof(full))
        return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                             "bad driver path %s (error %lu)", path, GetLastError());
    path = full;
    struct win_driver *d = calloc(1, sizeof(*d));
    if (!d)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    /* A driver already running (an earlier run, an administrator) serves. */
    d->device = CreateFileA(NTLENS_USER_PATH, GENERIC_READ, 0, NULL, OPEN_EXISTING, 0, NULL);
    int rc = 0;
    if (d->device == INVALID_HANDLE_VALUE) {
        if (GetFileAttributesA(path) == INVALID_FILE_ATTRIBUTES)
            rc = ntl_error_set(err, NTL_ERR_NOT_FOUND, NULL, NTL_NO_OFFSET,
                               "no driver file %s", path);
        if (rc == 0)
            rc = start_service(d, path, err);
        if (rc == 0) {
            d->device = CreateFileA(NTLENS_USER_PATH, GENERIC_READ, 0, NULL, OPEN_EXISTING, 0,
                                    NULL);
            DWORD e = GetLastError();
            /* The driver opens only for holders of SeDebugPrivilege. */
            if (d->device == INVALID_HANDLE_VALUE)
                rc = ntl_error_set(err, e == ERROR_PRIVILEGE_NOT_HELD || e == ERROR_ACCESS_DENIED
                                            ? NTL_ERR_ACCESS : NTL_ERR_SYSTEM,
                                   NULL, NTL_NO_OFFSET, "cannot open %s (error %lu)%s",
                                   NTLENS_USER_PATH, e, e == ERROR_PRIVILEGE_NOT_HELD
                                   ? ": it needs SeDebugPrivilege (an administrator)" : "");
        }
    }
    if (rc < 0) {
        win_driver_close(d);
        return rc;
    }
    load_modules(d);
    *out = d;
    return 0;
}

void win_driver_close(struct win_driver *d)
{
    if (!d)
        return;
    if (d->device && d->device != INVALID_HANDLE_VALUE)
        CloseHandle(d->device);
    /* Leave the system as we found it: stop what we started, delete what
     * we created. */
    SERVICE_STATUS status;
    if (d->started)
        ControlService(d->service, SERVICE_CONTROL_STOP, &status);
    if (d->created)
        DeleteService(d->service);
    if (d->service)
        CloseServiceHandle(d->service);
    if (d->scm)
        CloseServiceHandle(d->scm);
    free(d->modules);
    free(d);
}

static const struct kernel_module *module_of(const struct win_driver *d, uint64_t pc)
{
    for (size_t i = 0; i < d->nmodules; i++)
        if (d->modules[i].base && pc - d->modules[i].base < d->modules[i].size)
            return &d->modules[i];
    return NULL;
}

/* What the driver's refusals mean (its NTSTATUS as Windows maps it). */
static const char *refusal(DWORD e)
{
    switch (e) {
    case ERROR_INVALID_PARAMETER: return "no such thread";
    case ERROR_SEM_TIMEOUT: return "the thread did not run the driver's APC in time";
    case ERROR_NOT_SUPPORTED: return "this kernel cannot run the driver's APC";
    case ERROR_ACCESS_DENIED: return "the thread is exiting";
    default: return "the driver refused";
    }
}

int win_driver_add_frames(struct win_driver *d, struct ntl_stack_process *p,
                          struct ntl_stack_thread *t, unsigned max_frames,
                          struct ntl_error *err)
{
    struct ntlens_stack_request req = {
        .tid = t->tid, .max_frames = max_frames < NTLENS_MAX_FRAMES ? max_frames : NTLENS_MAX_FRAMES,
    };
    union {
        struct ntlens_stack_reply r;
        uint8_t bytes[sizeof(struct ntlens_stack_reply) + NTLENS_MAX_FRAMES * 8];
    } reply;
    DWORD got = 0;
    if (!DeviceIoControl(d->device, NTLENS_IOCTL_THREAD_STACK, &req, sizeof(req), &reply,
                         sizeof(reply), &got, NULL))
        return ntl_error_set(err, NTL_ERR_SYSTEM, NULL, NTL_NO_OFFSET, "%s (error %lu)",
                             refusal(GetLastError()), GetLastError());
    if (got < sizeof(reply.r) || reply.r.count > req.max_frames ||
        got < sizeof(reply.r) + reply.r.count * 8u)
        return ntl_error_set(err, NTL_ERR_FORMAT, "ntlens_stack_reply", 0,
                             "%lu bytes for %lu frames", (unsigned long)got,
                             (unsigned long)reply.r.count);
    /* The first frames are the driver's own APC routine: not the thread's. */
    uint32_t i = 0;
    while (i < reply.r.count && module_of(d, reply.r.frames[i]) &&
           !strcmp(module_of(d, reply.r.frames[i])->name, "ntlens.sys"))
        i++;
    for (; i < reply.r.count; i++) {
        const struct kernel_module *m = module_of(d, reply.r.frames[i]);
        struct ntl_stack_frame f = {
            .pc = reply.r.frames[i], .mode = NTL_STACK_KERNEL, .how = NTL_STACK_KERNEL_LIST,
            .module = m ? m->name : "", .module_base = m ? m->base : 0,
        };
        int rc = ntl_stack_frame_add(p, t, &f, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}
