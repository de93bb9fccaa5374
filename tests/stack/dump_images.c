/* Adds the images of this process's modules to a minidump dbghelp wrote,
 * so that the dump holds their headers, .pdata and UNWIND_INFO: what
 * MiniDumpWithFullMemory gives for them, without the rest of the process
 * (about 110 MB under Wine, 10-90 s to write on a loaded machine). Wine's
 * dbghelp (8.0) has no cheaper way: MiniDumpWithCodeSegs and
 * MiniDumpWithDataSegs add nothing, and it asks for no MemoryCallback or
 * IncludeVmRegionCallback (tried: only ModuleCallback and ThreadCallback).
 *
 * The committed pages of every image (VirtualQuery's MEM_IMAGE) go into one
 * Memory64ListStream appended to the file and entered in an unused slot of
 * the stream directory (dbghelp pads it to a multiple of four). dbghelp's
 * MemoryList already holds small pieces of the images (each function's
 * UNWIND_INFO, the bytes around each thread's instruction pointer): those
 * descriptors are dropped, so that no two ranges overlap, as in the dumps
 * Windows writes. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <dbghelp.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_REGIONS 4096
#define MAX_STREAMS 64

struct region {
    ULONG64 start, size;
};

/* The committed, readable pages of every image, adjacent ones merged. */
static size_t image_regions(struct region *r, size_t max)
{
    MEMORY_BASIC_INFORMATION mbi;
    size_t n = 0;
    for (const char *p = NULL; n < max && VirtualQuery(p, &mbi, sizeof mbi) == sizeof mbi;
         p = (const char *)mbi.BaseAddress + mbi.RegionSize) {
        ULONG64 base = (ULONG_PTR)mbi.BaseAddress;
        if (mbi.State == MEM_COMMIT && mbi.Type == MEM_IMAGE &&
            !(mbi.Protect & (PAGE_NOACCESS | PAGE_GUARD))) {
            if (n && r[n - 1].start + r[n - 1].size == base)
                r[n - 1].size += mbi.RegionSize;
            else
                r[n++] = (struct region){base, mbi.RegionSize};
        }
        if (base + mbi.RegionSize < base)
            break;
    }
    return n;
}

static BOOL file_at(HANDLE f, ULONG64 off, void *buf, DWORD len, BOOL write)
{
    LARGE_INTEGER li;
    DWORD done = 0;
    li.QuadPart = (LONGLONG)off;
    return SetFilePointerEx(f, li, NULL, FILE_BEGIN) &&
           (write ? WriteFile(f, buf, len, &done, NULL) : ReadFile(f, buf, len, &done, NULL)) &&
           done == len;
}

static BOOL in_images(const struct region *r, size_t n, ULONG64 va)
{
    for (size_t i = 0; i < n; i++)
        if (va - r[i].start < r[i].size)
            return TRUE;
    return FALSE;
}

/* Drops the MemoryList's descriptors that lie in an image (in place). */
static BOOL drop_image_pieces(HANDLE f, MINIDUMP_DIRECTORY *d, const struct region *r, size_t n)
{
    ULONG32 count, kept = 0;
    if (!file_at(f, d->Location.Rva, &count, sizeof count, FALSE) || count > 1000000)
        return FALSE;
    MINIDUMP_MEMORY_DESCRIPTOR *m = calloc(count ? count : 1, sizeof *m);
    BOOL ok = m && file_at(f, d->Location.Rva + 4, m, count * (DWORD)sizeof *m, FALSE);
    for (ULONG32 i = 0; ok && i < count; i++)
        if (!in_images(r, n, m[i].StartOfMemoryRange))
            m[kept++] = m[i];
    ok = ok && file_at(f, d->Location.Rva, &kept, sizeof kept, TRUE) &&
         (!kept || file_at(f, d->Location.Rva + 4, m, kept * (DWORD)sizeof *m, TRUE));
    d->Location.DataSize = 4 + kept * (ULONG32)sizeof *m;
    free(m);
    return ok;
}

/* The Memory64List at the end of the file: count, where the bytes start,
 * the descriptors, then every region's bytes back to back. */
static BOOL append_images(HANDLE f, MINIDUMP_DIRECTORY *d, const struct region *r, size_t n)
{
    LARGE_INTEGER end;
    if (!GetFileSizeEx(f, &end))
        return FALSE;
    ULONG64 list = (ULONG64)end.QuadPart, head[2] = {n, list + 16 + 16 * n}, at = head[1];
    BOOL ok = file_at(f, list, head, sizeof head, TRUE);
    for (size_t i = 0; ok && i < n; i++) {
        MINIDUMP_MEMORY_DESCRIPTOR64 m = {r[i].start, r[i].size};
        ok = file_at(f, list + 16 + 16 * i, &m, sizeof m, TRUE) &&
             file_at(f, at, (void *)(ULONG_PTR)r[i].start, (DWORD)r[i].size, TRUE);
        at += r[i].size;
    }
    d->StreamType = Memory64ListStream;
    d->Location.DataSize = (ULONG32)(16 + 16 * n);
    d->Location.Rva = (RVA)list;
    return ok;
}

BOOL dump_add_images(const char *path)
{
    static struct region r[MAX_REGIONS];
    MINIDUMP_DIRECTORY dir[MAX_STREAMS];
    MINIDUMP_HEADER h;
    size_t n = image_regions(r, MAX_REGIONS);
    int unused = -1, memory = -1;
    HANDLE f = CreateFileA(path, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING, 0, NULL);
    BOOL ok = f != INVALID_HANDLE_VALUE && file_at(f, 0, &h, sizeof h, FALSE) &&
              h.NumberOfStreams <= MAX_STREAMS &&
              file_at(f, h.StreamDirectoryRva, dir, h.NumberOfStreams * (DWORD)sizeof *dir, FALSE);
    for (ULONG32 i = 0; ok && i < h.NumberOfStreams; i++) {
        if (dir[i].StreamType == UnusedStream && unused < 0)
            unused = (int)i;
        if (dir[i].StreamType == MemoryListStream)
            memory = (int)i;
    }
    ok = ok && unused >= 0 && memory >= 0 && n > 0 && n < MAX_REGIONS &&
         drop_image_pieces(f, &dir[memory], r, n) && append_images(f, &dir[unused], r, n) &&
         file_at(f, h.StreamDirectoryRva, dir, h.NumberOfStreams * (DWORD)sizeof *dir, TRUE);
    if (!ok)
        fprintf(stderr, "adding the images to %s failed (%zu regions, error %lu)\n", path, n,
                GetLastError());
    if (f != INVALID_HANDLE_VALUE)
        CloseHandle(f);
    return ok;
}
