/* Starts stack_target.c and reads what its threads recorded of themselves;
 * shared by the live and the driver tests. */
#ifndef NTLENS_TEST_STACK_TARGET_H
#define NTLENS_TEST_STACK_TARGET_H

#include <windows.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define TARGET_THREADS 4
#define TARGET_MAX_FRAMES 62

struct target_thread {
    char name[32];
    uint32_t tid;
    uint64_t frames[TARGET_MAX_FRAMES];
    unsigned n;
};

struct target {
    PROCESS_INFORMATION pi;
    uint64_t start; /* the threads' start function */
    struct target_thread threads[TARGET_THREADS];
};

static bool target_parse(struct target *t, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[4096];
    int i = 0;
    unsigned long long start = 0;
    if (!fgets(line, sizeof(line), f) || sscanf(line, "start %llx", &start) != 1) {
        fclose(f);
        return false;
    }
    t->start = start;
    while (i < TARGET_THREADS && fgets(line, sizeof(line), f)) {
        struct target_thread *th = &t->threads[i];
        int used = 0;
        char *at = line;
        if (sscanf(at, "%31s %u%n", th->name, &th->tid, &used) != 2)
            break;
        at += used;
        unsigned long long a;
        while (th->n < TARGET_MAX_FRAMES && sscanf(at, " %llx%n", &a, &used) == 1) {
            th->frames[th->n++] = a;
            at += used;
        }
        i++;
    }
    fclose(f);
    return i == TARGET_THREADS;
}

/* Starts exe and waits (up to a minute: Wine on a busy machine) for its
 * record. false: it did not start or did not write one. */
static bool target_start(struct target *t, const char *exe)
{
    memset(t, 0, sizeof(*t));
    char dir[MAX_PATH], file[MAX_PATH + 64], cmd[2 * MAX_PATH + 128];
    GetTempPathA(sizeof(dir), dir);
    snprintf(file, sizeof(file), "%sntlens-stack-target-%lu.txt", dir, GetCurrentProcessId());
    DeleteFileA(file);
    snprintf(cmd, sizeof(cmd), "\"%s\" \"%s\"", exe, file);
    STARTUPINFOA si = {.cb = sizeof(si)};
    if (!CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &t->pi)) {
        fprintf(stderr, "cannot start %s (error %lu)\n", exe, GetLastError());
        return false;
    }
    for (int i = 0; i < 600; i++) {
        if (GetFileAttributesA(file) != INVALID_FILE_ATTRIBUTES) {
            bool ok = target_parse(t, file);
            DeleteFileA(file);
            return ok;
        }
        if (WaitForSingleObject(t->pi.hProcess, 100) == WAIT_OBJECT_0)
            break;
    }
    fprintf(stderr, "%s wrote no record\n", exe);
    return false;
}

static void target_stop(struct target *t)
{
    if (!t->pi.hProcess)
        return;
    TerminateProcess(t->pi.hProcess, 0);
    WaitForSingleObject(t->pi.hProcess, 30000);
    CloseHandle(t->pi.hProcess);
    CloseHandle(t->pi.hThread);
    t->pi.hProcess = NULL;
}

#endif
