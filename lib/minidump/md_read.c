/* Reads any minidump: directory, modules, memory, threads, system info. */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "ntlens/minidump.h"
#include "ntlens/reader.h"
#include "ntlens/utf16.h"

#define HEADER_SIZE 32
#define MODULE_SIZE 108
#define THREAD_SIZE 48
#define MAX_NAME_BYTES 65534

const char *ntl_md_stream_name(uint32_t type)
{
    static const char *const names[] = {
        "UnusedStream", "ReservedStream0", "ReservedStream1", "ThreadListStream",
        "ModuleListStream", "MemoryListStream", "ExceptionStream", "SystemInfoStream",
        "ThreadExListStream", "Memory64ListStream", "CommentStreamA", "CommentStreamW",
        "HandleDataStream", "FunctionTableStream", "UnloadedModuleListStream", "MiscInfoStream",
        "MemoryInfoListStream", "ThreadInfoListStream", "HandleOperationListStream", "TokenStream",
        "JavaScriptDataStream", "SystemMemoryInfoStream", "ProcessVmCountersStream",
        "IptTraceStream", "ThreadNamesStream"};
    if (type < sizeof names / sizeof names[0])
        return names[type];
    /* Breakpad's Linux streams, as lldb writes them. */
    static const char *const breakpad[] = {
        NULL, "BreakpadInfo", "AssertionInfo", "LinuxCPUInfo", "LinuxProcStatus",
        "LinuxLSBRelease", "LinuxCMDLine", "LinuxEnviron", "LinuxAuxv", "LinuxMaps",
        "LinuxDSODebug", "LinuxProcStat", "LinuxProcUptime", "LinuxProcFD"};
    if (type > 0x47670000 && type - 0x47670000 < sizeof breakpad / sizeof breakpad[0])
        return breakpad[type - 0x47670000];
    return NULL;
}

static int nomem(struct ntl_error *err)
{
    return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
}

/* Notes something odd at file offset off; parsing goes on. */
static void irregular(struct ntl_minidump *md, uint64_t off, const char *fmt, ...)
    NTL_PRINTF(3, 4);
static void irregular(struct ntl_minidump *md, uint64_t off, const char *fmt, ...)
{
    if (md->irregular_count < NTL_MD_MAX_IRREGULARITIES) {
        struct ntl_md_irregularity *x = &md->irregular[md->irregular_count];
        va_list ap;
        x->offset = off;
        va_start(ap, fmt);
        vsnprintf(x->what, sizeof x->what, fmt, ap);
        va_end(ap);
    }
    md->irregular_count++;
}

/* The MINIDUMP_STRING whose RVA sits at file offset field, in UTF-8. Errors
 * give the field's offset and the RVA as a value, not as an offset. */
static int read_string(const struct ntl_minidump *md, uint64_t field, const char *what,
                       char **out, struct ntl_error *err)
{
    uint32_t rva = ntl_le32(md->data + field), len;
    if (!ntl_range_ok(md->size, rva, 4))
        return ntl_error_set(err, NTL_ERR_FORMAT, what, field,
                             "MINIDUMP_STRING at RVA 0x%x (outside the file of size 0x%zx)", rva,
                             md->size);
    len = ntl_le32(md->data + rva);
    if (len > MAX_NAME_BYTES || !ntl_range_ok(md->size, (uint64_t)rva + 4, len))
        return ntl_error_set(err, NTL_ERR_FORMAT, "MINIDUMP_STRING", rva,
                             "Length 0x%x runs past the end of the file (size 0x%zx)", len,
                             md->size);
    *out = ntl_utf16_to_utf8_dup(md->data + rva + 4, ntl_utf16_unit_len(md->data + rva + 4, len / 2));
    return *out ? NTL_OK : nomem(err);
}

/* Counted lists may carry 4 bytes of padding after a 32-bit count (Windows
 * pads ThreadList and MemoryList to 8 bytes); the stream size tells. */
static int list_start(const struct ntl_md_stream *s, uint32_t count, uint32_t esize,
                      const char *what, uint32_t *first, struct ntl_error *err)
{
    uint64_t need = 4 + (uint64_t)count * esize;
    if (s->size >= need + 4 && s->size - 4 - (uint64_t)count * esize == 8)
        *first = s->rva + 8;
    else if (s->size >= need)
        *first = s->rva + 4;
    else
        return ntl_error_set(err, NTL_ERR_FORMAT, what, s->rva,
                             "%u entries of %u bytes overrun the stream's 0x%x bytes", count,
                             esize, s->size);
    return NTL_OK;
}

static int parse_modules(struct ntl_minidump *md, const struct ntl_md_stream *s,
                         struct ntl_error *err)
{
    uint32_t n, first = 0;
    int rc;

    if (s->size < 4)
        return ntl_error_set(err, NTL_ERR_FORMAT, "MINIDUMP_MODULE_LIST", s->rva, "stream too short");
    n = ntl_le32(md->data + s->rva);
    if ((rc = list_start(s, n, MODULE_SIZE, "MINIDUMP_MODULE_LIST", &first, err)) < 0)
        return rc;
    md->modules = calloc(n ? n : 1, sizeof *md->modules);
    if (!md->modules)
        return nomem(err);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t off = (uint64_t)first + (uint64_t)i * MODULE_SIZE;
        const uint8_t *e = md->data + off;
        struct ntl_md_module *m = &md->modules[md->module_count];
        uint32_t cv_size, cv_rva;

        m->entry_offset = off;
        m->base = ntl_le64(e);
        m->size = ntl_le32(e + 8);
        m->checksum = ntl_le32(e + 12);
        m->timestamp = ntl_le32(e + 16);
        rc = read_string(md, off + 20, "MINIDUMP_MODULE ModuleNameRva", &m->name, err);
        if (rc < 0)
            return rc;
        if (m->size == 0)
            irregular(md, off + 8, "module %s has SizeOfImage 0: no address lies in it", m->name);
        cv_size = ntl_le32(e + 76);
        cv_rva = ntl_le32(e + 80);
        if (cv_size) {
            const uint8_t *cv;
            if (!ntl_range_ok(md->size, cv_rva, cv_size)) {
                free(m->name);
                m->name = NULL;
                return ntl_error_set(err, NTL_ERR_FORMAT, "MINIDUMP_MODULE CvRecord", off + 76,
                                     "CodeView record at RVA 0x%x size 0x%x (outside the file "
                                     "of size 0x%zx)",
                                     cv_rva, cv_size, md->size);
            }
            cv = md->data + cv_rva;
            if (cv_size >= 24 && memcmp(cv, "RSDS", 4) == 0) {
                size_t k = strnlen((const char *)cv + 24, cv_size - 24);
                if (k >= sizeof m->pdb)
                    k = sizeof m->pdb - 1;
                m->has_cv = true;
                memcpy(m->guid, cv + 4, 16);
                m->age = ntl_le32(cv + 20);
                memcpy(m->pdb, cv + 24, k);
                m->pdb[k] = 0;
            }
        }
        md->module_count++; /* whole: a partial parse keeps it */
    }
    return NTL_OK;
}

static int add_range(struct ntl_minidump *md, size_t *cap, uint64_t start, uint64_t size,
                     uint64_t file_off, uint64_t desc_off, struct ntl_error *err)
{
    if (!ntl_range_ok(md->size, file_off, size))
        return ntl_error_set(err, NTL_ERR_FORMAT, "MINIDUMP_MEMORY_DESCRIPTOR", desc_off,
                             "range 0x%" PRIx64 "+0x%" PRIx64 " has its bytes at 0x%" PRIx64
                             ", outside the file (size 0x%zx)", start, size, file_off, md->size);
    if (md->range_count == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        struct ntl_md_range *r = realloc(md->ranges, ncap * sizeof *r);
        if (!r)
            return nomem(err);
        md->ranges = r;
        *cap = ncap;
    }
    md->ranges[md->range_count++] = (struct ntl_md_range){start, size, file_off, desc_off};
    return NTL_OK;
}

static int parse_memory64(struct ntl_minidump *md, const struct ntl_md_stream *s, size_t *cap,
                          struct ntl_error *err)
{
    const uint8_t *p = md->data + s->rva;
    uint64_t n, at;

    if (s->size < 16)
        return ntl_error_set(err, NTL_ERR_FORMAT, "MINIDUMP_MEMORY64_LIST", s->rva, "stream too short");
    n = ntl_le64(p);
    at = ntl_le64(p + 8);
    if (n > (s->size - 16) / 16)
        return ntl_error_set(err, NTL_ERR_FORMAT, "MINIDUMP_MEMORY64_LIST", s->rva,
                             "%" PRIu64 " descriptors overrun the stream's 0x%x bytes", n, s->size);
    md->memory64 = true;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t d = s->rva + 16 + 16 * i;
        uint64_t size = ntl_le64(md->data + d + 8);
        int rc = add_range(md, cap, ntl_le64(md->data + d), size, at, d, err);
        if (rc < 0)
            return rc;
        at += size;
    }
    return NTL_OK;
}

static int parse_memory32(struct ntl_minidump *md, const struct ntl_md_stream *s, size_t *cap,
                          struct ntl_error *err)
{
    uint32_t n, first = 0;
    int rc;

    if (s->size < 4)
        return ntl_error_set(err, NTL_ERR_FORMAT, "MINIDUMP_MEMORY_LIST", s->rva, "stream too short");
    n = ntl_le32(md->data + s->rva);
    if ((rc = list_start(s, n, 16, "MINIDUMP_MEMORY_LIST", &first, err)) < 0)
        return rc;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t d = (uint64_t)first + 16 * i;
        rc = add_range(md, cap, ntl_le64(md->data + d), ntl_le32(md->data + d + 8),
                       ntl_le32(md->data + d + 12), d, err);
        if (rc < 0)
            return rc;
    }
    return NTL_OK;
}

static int parse_threads(struct ntl_minidump *md, const struct ntl_md_stream *s,
                         struct ntl_error *err)
{
    uint32_t n, first = 0;
    int rc;

    if (s->size < 4)
        return ntl_error_set(err, NTL_ERR_FORMAT, "MINIDUMP_THREAD_LIST", s->rva, "stream too short");
    n = ntl_le32(md->data + s->rva);
    if ((rc = list_start(s, n, THREAD_SIZE, "MINIDUMP_THREAD_LIST", &first, err)) < 0)
        return rc;
    md->threads = calloc(n ? n : 1, sizeof *md->threads);
    if (!md->threads)
        return nomem(err);
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *t = md->data + first + (uint64_t)i * THREAD_SIZE;
        struct ntl_md_thread *th = &md->threads[md->thread_count++];
        th->id = ntl_le32(t);
        th->teb = ntl_le64(t + 16);
        th->stack_start = ntl_le64(t + 24);
        th->stack_size = ntl_le32(t + 32);
        th->stack_rva = ntl_le32(t + 36);
        th->context_size = ntl_le32(t + 40);
        th->context_rva = ntl_le32(t + 44);
    }
    return NTL_OK;
}

static int parse_sysinfo(struct ntl_minidump *md, const struct ntl_md_stream *s,
                         struct ntl_error *err)
{
    const uint8_t *p = md->data + s->rva;
    struct ntl_md_system_info *si = &md->sys;
    uint32_t csd;

    if (s->size < 32)
        return ntl_error_set(err, NTL_ERR_FORMAT, "MINIDUMP_SYSTEM_INFO", s->rva,
                             "stream of 0x%x bytes is shorter than 32", s->size);
    si->present = true;
    si->arch = ntl_le16(p);
    si->level = ntl_le16(p + 2);
    si->revision = ntl_le16(p + 4);
    si->processors = p[6];
    si->product_type = p[7];
    si->major = ntl_le32(p + 8);
    si->minor = ntl_le32(p + 12);
    si->build = ntl_le32(p + 16);
    si->platform = ntl_le32(p + 20);
    csd = ntl_le32(p + 24);
    if (csd) {
        char *s8;
        int rc = read_string(md, (uint64_t)s->rva + 24, "MINIDUMP_SYSTEM_INFO CSDVersionRva",
                             &s8, err);
        if (rc < 0)
            return rc;
        snprintf(si->csd_version, sizeof si->csd_version, "%s", s8);
        free(s8);
    }
    return NTL_OK;
}

static int cmp_range(const void *a, const void *b)
{
    const struct ntl_md_range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Parses one stream into md. */
static int parse_stream(struct ntl_minidump *md, const struct ntl_md_stream *s, size_t *cap,
                        struct ntl_error *err)
{
    switch (s->type) {
    case NTL_MD_MODULE_LIST:
        return md->modules ? NTL_OK : parse_modules(md, s, err);
    case NTL_MD_MEMORY64_LIST: return parse_memory64(md, s, cap, err);
    case NTL_MD_MEMORY_LIST: return parse_memory32(md, s, cap, err);
    case NTL_MD_THREAD_LIST:
        return md->threads ? NTL_OK : parse_threads(md, s, err);
    case NTL_MD_SYSTEM_INFO: return parse_sysinfo(md, s, err);
    case NTL_MD_MISC_INFO:
        if (s->size >= 12) {
            md->has_misc = true;
            md->misc_flags = ntl_le32(md->data + s->rva + 4);
            md->process_id = ntl_le32(md->data + s->rva + 8);
        }
        return NTL_OK;
    default:
        return NTL_OK;
    }
}

/* Header and directory: without them nothing can be read. */
static int parse_directory(struct ntl_minidump *md, uint32_t *n, uint32_t *dir,
                           struct ntl_error *err)
{
    const uint8_t *d = md->data;
    if (md->size < HEADER_SIZE)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "MINIDUMP_HEADER", 0,
                             "file of %zu bytes is shorter than the 32-byte header", md->size);
    if (ntl_le32(d) != NTL_MD_SIGNATURE)
        return ntl_error_set(err, NTL_ERR_FORMAT, "MINIDUMP_HEADER", 0, "no MDMP signature");
    md->version = ntl_le32(d + 4);
    *n = ntl_le32(d + 8);
    *dir = ntl_le32(d + 12);
    md->timestamp = ntl_le32(d + 20);
    md->flags = ntl_le64(d + 24);
    if (!ntl_range_ok(md->size, *dir, (uint64_t)*n * 12))
        return ntl_error_set(err, NTL_ERR_FORMAT, "MINIDUMP_DIRECTORY", 12,
                             "%u directory entries at 0x%x lie outside the file (size 0x%zx)", *n,
                             *dir, md->size);
    if (*n == 0)
        irregular(md, 8, "NumberOfStreams is 0: the dump holds nothing");
    md->streams = calloc(*n ? *n : 1, sizeof *md->streams);
    if (!md->streams)
        return nomem(err);
    md->stream_count = *n;
    return NTL_OK;
}

/* True when stream i's type (other than UnusedStream) came earlier. */
static bool listed_before(const struct ntl_minidump *md, uint32_t i)
{
    for (uint32_t j = 0; j < i && md->streams[i].type != 0; j++)
        if (md->streams[j].type == md->streams[i].type)
            return true;
    return false;
}

/* Every stream; a bad one fails the parse (strict) or is marked and skipped. */
static int parse_all(struct ntl_minidump *md, bool partial, struct ntl_error *err)
{
    uint32_t n = 0, dir = 0;
    size_t cap = 0;
    int rc = parse_directory(md, &n, &dir, err), first = NTL_OK;
    for (uint32_t i = 0; i < n && rc >= 0; i++) {
        const uint8_t *e = md->data + dir + 12 * i;
        struct ntl_md_stream *s = &md->streams[i];
        struct ntl_error one = {0};
        s->type = ntl_le32(e);
        s->size = ntl_le32(e + 4);
        s->rva = ntl_le32(e + 8);
        if (s->type != 0 && !ntl_range_ok(md->size, s->rva, s->size))
            s->status = ntl_error_set(&one, NTL_ERR_FORMAT, "MINIDUMP_DIRECTORY", dir + 12 * i,
                                      "stream %u (%s) at RVA 0x%x size 0x%x (outside the file "
                                      "of size 0x%zx)", i, ntl_md_stream_name(s->type)
                                      ? ntl_md_stream_name(s->type) : "?", s->rva, s->size, md->size);
        else if (listed_before(md, i))
            irregular(md, dir + 12 * i, "stream %u lists %s again; only its first entry is read",
                      i, ntl_md_stream_name(s->type) ? ntl_md_stream_name(s->type) : "a type");
        else
            s->status = parse_stream(md, s, &cap, &one);
        if (s->status < 0 && first == NTL_OK) {
            first = s->status;
            if (err)
                *err = one;
        }
        if (s->status == NTL_ERR_NOMEM || (s->status < 0 && !partial))
            rc = s->status;
    }
    if (md->range_count > 1)
        qsort(md->ranges, md->range_count, sizeof *md->ranges, cmp_range);
    if (rc >= 0 && first < 0)
        rc = NTL_MD_INCOMPLETE;
    return rc;
}

int ntl_md_parse(const void *data, size_t size, struct ntl_minidump *md, struct ntl_error *err)
{
    memset(md, 0, sizeof *md);
    md->data = data;
    md->size = size;
    int rc = parse_all(md, false, err);
    if (rc < 0)
        ntl_md_free(md);
    return rc;
}

int ntl_md_parse_partial(const void *data, size_t size, struct ntl_minidump *md,
                         struct ntl_error *err)
{
    memset(md, 0, sizeof *md);
    md->data = data;
    md->size = size;
    int rc = parse_all(md, true, err);
    if (rc < 0 && rc != NTL_MD_INCOMPLETE)
        ntl_md_free(md);
    return rc;
}

void ntl_md_free(struct ntl_minidump *md)
{
    for (size_t i = 0; i < md->module_count; i++)
        free(md->modules[i].name);
    free(md->modules);
    free(md->ranges);
    free(md->threads);
    free(md->streams);
    memset(md, 0, sizeof *md);
}

/* The last range starting at or below va (ranges are sorted by start). */
static const struct ntl_md_range *range_at(const struct ntl_minidump *md, uint64_t va)
{
    size_t lo = 0, hi = md->range_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (md->ranges[mid].start <= va)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0;) {
        const struct ntl_md_range *r = &md->ranges[i];
        if (va - r->start < r->size)
            return r;
        if (i + 8 < lo)
            break; /* overlapping ranges are rare; do not scan the whole list */
    }
    return NULL;
}

size_t ntl_md_read(const struct ntl_minidump *md, uint64_t va, void *buf, size_t len)
{
    uint8_t *out = buf;
    size_t done = 0;
    while (done < len) {
        const struct ntl_md_range *r = range_at(md, va + done);
        uint64_t in, k;
        if (!r)
            break;
        in = va + done - r->start;
        k = r->size - in;
        if (k > len - done)
            k = len - done;
        memcpy(out + done, md->data + r->file_offset + in, (size_t)k);
        done += (size_t)k;
        if (va + done < va)
            break; /* wrapped around the address space */
    }
    return done;
}

const struct ntl_md_module *ntl_md_module_at(const struct ntl_minidump *md, uint64_t va)
{
    for (size_t i = 0; i < md->module_count; i++)
        if (va - md->modules[i].base < md->modules[i].size)
            return &md->modules[i];
    return NULL;
}

static bool same_nocase(const char *a, const char *b)
{
    while (*a && *b && tolower((unsigned char)*a) == tolower((unsigned char)*b))
        a++, b++;
    return !*a && !*b;
}

const struct ntl_md_module *ntl_md_module_find(const struct ntl_minidump *md, const char *name)
{
    for (size_t i = 0; i < md->module_count; i++)
        if (same_nocase(md->modules[i].name, name) ||
            same_nocase(ntl_md_base_name(md->modules[i].name), ntl_md_base_name(name)))
            return &md->modules[i];
    return NULL;
}

int ntl_md_relocate(uint8_t *data, size_t size, const char *name, uint64_t new_base,
                    struct ntl_error *err)
{
    struct ntl_minidump md;
    const struct ntl_md_module *m;
    uint64_t old, delta;
    int rc = ntl_md_parse(data, size, &md, err), moved = 0;

    if (rc < 0)
        return rc;
    m = ntl_md_module_find(&md, name);
    if (!m) {
        ntl_md_free(&md);
        return ntl_error_set(err, NTL_ERR_NOT_FOUND, "MINIDUMP_MODULE_LIST", NTL_NO_OFFSET,
                             "no module named %s", name);
    }
    old = m->base;
    delta = new_base - old;
    ntl_put_le64(data + m->entry_offset, new_base);
    for (size_t i = 0; i < md.range_count; i++) {
        const struct ntl_md_range *r = &md.ranges[i];
        if (r->start - old < m->size) {
            ntl_put_le64(data + r->desc_offset, r->start + delta);
            moved++;
        }
    }
    ntl_md_free(&md);
    return moved;
}
