/* ntlens.sys under Wine (which runs kernel drivers in winedevice.exe): the
 * user side loads it as a kernel service, the device answers its IOCTL,
 * refuses every malformed request with its own status, and ntl_stack_live
 * with kernel frames asked for keeps the user frames and says per thread
 * why the kernel part is missing. Wine cannot run the APC frame walk (it
 * has no ObDereferenceObjectDeferDelete, so the driver refuses captures):
 * that part needs a real Windows kernel (docs/stacks.md).
 * argv[1]: ntlens.sys, argv[2]: stack_target.exe. */
#include "check.h"
#include "target.h"

#include <winioctl.h>

#include "../../../lib/stack/ntlens-ioctl.h"
#include "../../../lib/stack/win32.h"

union reply {
    struct ntlens_stack_reply r;
    uint8_t bytes[sizeof(struct ntlens_stack_reply) + (NTLENS_MAX_FRAMES + 1) * 8];
};

/* Sends a request of in_size bytes; returns the Win32 error (0: success). */
static DWORD ask(HANDLE dev, DWORD code, ULONG tid, ULONG max, DWORD in_size, DWORD out_size)
{
    struct ntlens_stack_request req = {.tid = tid, .max_frames = max};
    union reply reply;
    DWORD got = 0;
    if (DeviceIoControl(dev, code, &req, in_size, &reply, out_size, &got, NULL))
        return 0;
    return GetLastError();
}

static void check_requests(const struct target *tg)
{
    HANDLE dev = CreateFileA(NTLENS_USER_PATH, GENERIC_READ, 0, NULL, OPEN_EXISTING, 0, NULL);
    CHECK(dev != INVALID_HANDLE_VALUE);
    if (dev == INVALID_HANDLE_VALUE)
        return;
    const DWORD full = sizeof(union reply), code = NTLENS_IOCTL_THREAD_STACK;
    const ULONG tid = tg->threads[0].tid;
    const DWORD req = sizeof(struct ntlens_stack_request);
    /* The input must be exactly one request. */
    CHECK_EQ_INT(ask(dev, code, tid, 8, 4, full), ERROR_INVALID_USER_BUFFER);
    CHECK_EQ_INT(ask(dev, code, tid, 8, 0, full), ERROR_INVALID_USER_BUFFER);
    CHECK_EQ_INT(ask(dev, code, tid, 8, req + 4, full), ERROR_INVALID_USER_BUFFER);
    /* max_frames 1..NTLENS_MAX_FRAMES. */
    CHECK_EQ_INT(ask(dev, code, tid, 0, req, full), ERROR_INVALID_PARAMETER);
    CHECK_EQ_INT(ask(dev, code, tid, NTLENS_MAX_FRAMES + 1, req, full), ERROR_INVALID_PARAMETER);
    CHECK_EQ_INT(ask(dev, code, tid, 0xffffffffu, req, full), ERROR_INVALID_PARAMETER);
    /* Room for max_frames frames after the header. */
    CHECK_EQ_INT(ask(dev, code, tid, 8, req, 8 + 7 * 8), ERROR_INSUFFICIENT_BUFFER);
    CHECK_EQ_INT(ask(dev, code, tid, 8, req, 4), ERROR_INSUFFICIENT_BUFFER);
    /* No such thread. */
    CHECK_EQ_INT(ask(dev, code, 0, 8, req, full), ERROR_INVALID_PARAMETER);
    CHECK_EQ_INT(ask(dev, code, 0x7ffffffcu, 8, req, full), ERROR_INVALID_PARAMETER);
    /* Another request code. */
    CHECK_EQ_INT(ask(dev, code + 4, tid, 8, req, full), ERROR_INVALID_FUNCTION);
    /* A well-formed request reaches the capture, which Wine cannot run. */
    CHECK_EQ_INT(ask(dev, code, tid, 8, req, full), ERROR_NOT_SUPPORTED);
    CloseHandle(dev);
}

/* Kernel frames asked for: every thread keeps its user frames and says why
 * it has no kernel ones. */
static void check_live(const struct target *tg, const char *sys)
{
    struct ntl_stack_options o = {.kernel = true, .driver = sys};
    struct ntl_stack_process *p = NULL;
    struct ntl_error err = {0};
    CHECK_EQ_INT(ntl_stack_live(tg->pi.dwProcessId, &o, &p, &err), 0);
    if (!p)
        return;
    CHECK_EQ_STR(p->note, "");
    size_t seen = 0;
    for (size_t i = 0; i < p->nthreads; i++) {
        const struct ntl_stack_thread *t = p->threads[i];
        CHECK(strstr(t->note, "kernel frames: this kernel cannot run the driver's APC") != NULL);
        CHECK(t->nframes > 2 && t->frames[0].mode == NTL_STACK_USER);
        seen += t->tid == tg->threads[2].tid;
    }
    CHECK_EQ_INT(seen, 1);
    ntl_stack_process_free(p);
}

/* Closing stops and deletes the service it created: no device, no service. */
static void check_gone(void)
{
    HANDLE dev = CreateFileA(NTLENS_USER_PATH, GENERIC_READ, 0, NULL, OPEN_EXISTING, 0, NULL);
    CHECK(dev == INVALID_HANDLE_VALUE);
    if (dev != INVALID_HANDLE_VALUE)
        CloseHandle(dev);
    SC_HANDLE scm = OpenSCManagerA(NULL, NULL, SC_MANAGER_CONNECT);
    SC_HANDLE svc = scm ? OpenServiceA(scm, NTLENS_SERVICE_NAME, SERVICE_QUERY_STATUS) : NULL;
    CHECK(svc == NULL);
    if (svc)
        CloseServiceHandle(svc);
    if (scm)
        CloseServiceHandle(scm);
}

/* No driver running and no driver file: a process note, and the user frames. */
static void check_missing(const struct target *tg)
{
    struct ntl_stack_process *p = NULL;
    struct ntl_error err = {0};
    struct ntl_stack_options missing = {.kernel = true, .driver = "Z:\\nonexistent\\ntlens.sys"};
    CHECK_EQ_INT(ntl_stack_live(tg->pi.dwProcessId, &missing, &p, &err), 0);
    if (p) {
        CHECK(strstr(p->note, "no kernel frames: no driver file Z:\\nonexistent\\ntlens.sys"));
        CHECK(p->nthreads > TARGET_THREADS && p->threads[0]->nframes > 2);
        CHECK_EQ_STR(p->threads[0]->note, "");
        ntl_stack_process_free(p);
    }
}


int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_driver_win32 ntlens.sys stack_target.exe\n");
        return 2;
    }
    struct target tg;
    CHECK(target_start(&tg, argv[2]));
    struct win_driver *d = NULL;
    struct ntl_error err = {0};
    int rc = win_driver_open(argv[1], &d, &err);
    CHECK_EQ_INT(rc, 0);
    if (rc < 0)
        fprintf(stderr, "win_driver_open: %s\n", err.message);
    if (rc == 0 && tg.threads[0].n) {
        check_requests(&tg);
        /* A second user while the first holds it: the running driver serves. */
        check_live(&tg, argv[1]);
    }
    win_driver_close(d);
    if (rc == 0)
        check_gone();
    if (tg.threads[0].n)
        check_missing(&tg);
    target_stop(&tg);
    return check_exit();
}
