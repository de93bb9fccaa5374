/* Writes a minidump of mapped modules. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/minidump.h"
#include "ntlens/reader.h"
#include "ntlens/utf16.h"

#define HEADER_SIZE 32
#define DIR_ENTRY_SIZE 12
#define MODULE_SIZE 108
#define THREAD_SIZE 48
#define SYSINFO_SIZE 56
#define MISC_SIZE 24
#define AMD64_CONTEXT_SIZE 1232
#define STREAM_COUNT 5

static int fail(struct ntl_error *err, int rc)
{
    return ntl_error_set(err, rc, "minidump", NTL_NO_OFFSET,
                         rc == NTL_ERR_LIMIT ? "dump would exceed the size limit" : "out of memory");
}

/* Appends a MINIDUMP_STRING (byte length, UTF-16LE, NUL) and returns its RVA. */
static int put_string(struct ntl_buf *b, const char *s, uint32_t *rva)
{
    size_t units = ntl_utf8_to_utf16(s, NULL, 0);
    uint8_t *p;
    int rc;

    if (units > 32767)
        units = 32767;
    if ((rc = ntl_buf_align(b, 4)) < 0)
        return rc;
    *rva = (uint32_t)b->len;
    if ((rc = ntl_buf_put_u32(b, (uint32_t)(units * 2))) < 0 ||
        (rc = ntl_buf_grow_zero(b, units * 2 + 2, &p)) < 0)
        return rc;
    ntl_utf8_to_utf16(s, p, units);
    return NTL_OK;
}

static void put_dir(uint8_t *d, uint32_t type, uint32_t size, uint32_t rva)
{
    ntl_put_le32(d, type);
    ntl_put_le32(d + 4, size);
    ntl_put_le32(d + 8, rva);
}

int ntl_md_write(const struct ntl_md_spec *spec, struct ntl_buf *b, struct ntl_error *err)
{
    uint8_t *p;
    uint32_t dir, sys, misc, threads, ctx, modules, mem, csd, *name_rva = NULL;
    uint64_t data_rva, total = 0;
    size_t n = spec->module_count, nmem = 0;
    int rc;

    ntl_buf_init(b, (size_t)(NTL_MD_MAX_WRITE < SIZE_MAX / 2 ? NTL_MD_MAX_WRITE : SIZE_MAX / 2));
    if (n > 65535)
        return ntl_error_set(err, NTL_ERR_LIMIT, "minidump", NTL_NO_OFFSET,
                             "%zu modules (at most 65535)", n);
    for (size_t i = 0; i < n; i++) {
        const struct ntl_md_module_spec *m = &spec->modules[i];
        if (!m->memory || !m->memory_size)
            continue;
        if (!m->range_count) {
            nmem++;
            total += m->memory_size;
        }
        for (size_t k = 0; k < m->range_count; k++) {
            if (m->ranges[k][0] > m->memory_size || m->ranges[k][1] > m->memory_size - m->ranges[k][0])
                return ntl_error_set(err, NTL_ERR_ARGUMENT, "minidump", NTL_NO_OFFSET,
                                     "range %zu of module %zu lies outside its memory", k, i);
            nmem++;
            total += m->ranges[k][1];
        }
    }
    if (total > NTL_MD_MAX_WRITE)
        return fail(err, NTL_ERR_LIMIT);

    /* Header and directory, filled in at the end. */
    if ((rc = ntl_buf_grow_zero(b, HEADER_SIZE + STREAM_COUNT * DIR_ENTRY_SIZE, NULL)) < 0)
        return fail(err, rc);
    dir = HEADER_SIZE;

    /* SystemInfo and its (empty) CSDVersion string. */
    if ((rc = ntl_buf_align(b, 8)) < 0 || (rc = ntl_buf_grow_zero(b, SYSINFO_SIZE, &p)) < 0)
        return fail(err, rc);
    sys = (uint32_t)(p - b->data);
    if ((rc = put_string(b, "", &csd)) < 0)
        return fail(err, rc);
    p = b->data + sys;
    ntl_put_le16(p, spec->arch);
    ntl_put_le16(p + 2, 6);              /* ProcessorLevel: family 6 */
    p[6] = spec->processors ? spec->processors : 1;
    p[7] = spec->product_type ? spec->product_type : 1;
    ntl_put_le32(p + 8, spec->major);
    ntl_put_le32(p + 12, spec->minor);
    ntl_put_le32(p + 16, spec->build);
    ntl_put_le32(p + 20, 2);             /* VER_PLATFORM_WIN32_NT */
    ntl_put_le32(p + 24, csd);
    if (spec->arch == NTL_MD_ARCH_AMD64 || spec->arch == NTL_MD_ARCH_X86) {
        memcpy(p + 32, "GenuineIntel", 12); /* CPU_INFORMATION.X86CpuInfo.VendorId */
    }

    /* MiscInfo: the process id. */
    if ((rc = ntl_buf_align(b, 8)) < 0 || (rc = ntl_buf_grow_zero(b, MISC_SIZE, &p)) < 0)
        return fail(err, rc);
    misc = (uint32_t)(p - b->data);
    ntl_put_le32(p, MISC_SIZE);
    ntl_put_le32(p + 4, 1);              /* MINIDUMP_MISC1_PROCESS_ID */
    ntl_put_le32(p + 8, spec->process_id);

    /* One thread with an AMD64 CONTEXT (debuggers want a thread). */
    if ((rc = ntl_buf_align(b, 16)) < 0 || (rc = ntl_buf_grow_zero(b, AMD64_CONTEXT_SIZE, &p)) < 0)
        return fail(err, rc);
    ctx = (uint32_t)(p - b->data);
    ntl_put_le32(p + 0x30, 0x100007);    /* CONTEXT_AMD64 | CONTROL | INTEGER | SEGMENTS */
    ntl_put_le32(p + 0x34, 0x1f80);      /* MxCsr */
    ntl_put_le16(p + 0x38, 0x10);        /* kernel CS */
    ntl_put_le16(p + 0x42, 0x18);        /* kernel SS */
    ntl_put_le32(p + 0x44, 0x202);       /* EFlags: IF */
    ntl_put_le64(p + 0xf8, spec->thread_ip);
    if ((rc = ntl_buf_grow_zero(b, 4 + THREAD_SIZE, &p)) < 0)
        return fail(err, rc);
    threads = (uint32_t)(p - b->data);
    ntl_put_le32(p, 1);
    ntl_put_le32(p + 4, spec->thread_id);
    ntl_put_le32(p + 4 + 40, AMD64_CONTEXT_SIZE);
    ntl_put_le32(p + 4 + 44, ctx);

    /* Module names and CodeView records, then the module list. */
    name_rva = calloc(n ? n * 3 : 1, sizeof *name_rva);
    if (!name_rva)
        return fail(err, NTL_ERR_NOMEM);
    for (size_t i = 0; i < n && rc >= 0; i++) {
        const struct ntl_md_module_spec *m = &spec->modules[i];
        rc = put_string(b, m->name ? m->name : "", &name_rva[3 * i]);
        if (rc >= 0 && m->cv_record && m->cv_size) {
            if ((rc = ntl_buf_align(b, 4)) >= 0) {
                name_rva[3 * i + 1] = (uint32_t)b->len;
                name_rva[3 * i + 2] = m->cv_size;
                rc = ntl_buf_append(b, m->cv_record, m->cv_size);
            }
        }
    }
    if (rc >= 0 && (rc = ntl_buf_align(b, 8)) >= 0)
        rc = ntl_buf_grow_zero(b, 4 + n * MODULE_SIZE, &p);
    if (rc < 0) {
        free(name_rva);
        return fail(err, rc);
    }
    modules = (uint32_t)(p - b->data);
    ntl_put_le32(p, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        const struct ntl_md_module_spec *m = &spec->modules[i];
        uint8_t *e = p + 4 + i * MODULE_SIZE;
        ntl_put_le64(e, m->base);
        ntl_put_le32(e + 8, m->size);
        ntl_put_le32(e + 12, m->checksum);
        ntl_put_le32(e + 16, m->timestamp);
        ntl_put_le32(e + 20, name_rva[3 * i]);
        ntl_put_le32(e + 24, 0xfeef04bd); /* VS_FIXEDFILEINFO.dwSignature */
        ntl_put_le32(e + 76, name_rva[3 * i + 2]);
        ntl_put_le32(e + 80, name_rva[3 * i + 1]);
    }
    free(name_rva);

    /* Memory64List: descriptors, then every range's bytes back to back. */
    if ((rc = ntl_buf_align(b, 8)) < 0 || (rc = ntl_buf_grow_zero(b, 16 + nmem * 16, &p)) < 0)
        return fail(err, rc);
    mem = (uint32_t)(p - b->data);
    if ((rc = ntl_buf_align(b, 16)) < 0)
        return fail(err, rc);
    data_rva = b->len;
    p = b->data + mem;
    ntl_put_le64(p, nmem);
    ntl_put_le64(p + 8, data_rva);
    for (size_t i = 0, k = 0; i < n; i++) {
        const struct ntl_md_module_spec *m = &spec->modules[i];
        const uint64_t whole[1][2] = {{0, m->memory_size}};
        const uint64_t (*r)[2] = m->range_count ? m->ranges : whole;
        size_t nr = m->range_count ? m->range_count : 1;
        if (!m->memory || !m->memory_size)
            continue;
        for (size_t j = 0; j < nr; j++, k++) {
            ntl_put_le64(b->data + mem + 16 + 16 * k, m->base + r[j][0]);
            ntl_put_le64(b->data + mem + 16 + 16 * k + 8, r[j][1]);
            if ((rc = ntl_buf_append(b, m->memory + r[j][0], (size_t)r[j][1])) < 0)
                return fail(err, rc);
        }
    }

    p = b->data;
    ntl_put_le32(p, NTL_MD_SIGNATURE);
    ntl_put_le32(p + 4, NTL_MD_VERSION);
    ntl_put_le32(p + 8, STREAM_COUNT);
    ntl_put_le32(p + 12, dir);
    ntl_put_le32(p + 20, spec->timestamp);
    put_dir(p + dir, NTL_MD_THREAD_LIST, 4 + THREAD_SIZE, threads);
    put_dir(p + dir + 12, NTL_MD_MODULE_LIST, 4 + (uint32_t)n * MODULE_SIZE, modules);
    put_dir(p + dir + 24, NTL_MD_MEMORY64_LIST, 16 + (uint32_t)nmem * 16, mem);
    put_dir(p + dir + 36, NTL_MD_SYSTEM_INFO, SYSINFO_SIZE, sys);
    put_dir(p + dir + 48, NTL_MD_MISC_INFO, MISC_SIZE, misc);
    return NTL_OK;
}
