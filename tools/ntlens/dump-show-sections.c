/* The tables of `dump show`: streams, system information, threads, modules
 * and memory ranges. Addresses are hex strings in every format; sizes and
 * offsets hex text in tables and integers in JSON; times ISO 8601. */
#include "dump-show.h"

#include <inttypes.h>
#include <stdio.h>

#include "dump-common.h"
#include "out.h"

static const char *arch_name(uint16_t a)
{
    switch (a) {
    case 0: return "x86";
    case 5: return "ARM";
    case 6: return "IA64";
    case 9: return "AMD64";
    case 12: return "ARM64";
    default: return "?";
    }
}

/* MINIDUMP_SYSTEM_INFO.PlatformId: Windows' VER_PLATFORM_* and Breakpad's. */
static const char *platform_name(uint32_t p)
{
    switch (p) {
    case 0: return "Win32s";
    case 1: return "Windows 9x";
    case 2: return "Windows NT";
    case 0x8000: return "Unix";
    case 0x8101: return "macOS";
    case 0x8102: return "iOS";
    case 0x8201: return "Linux";
    case 0x8202: return "Solaris";
    case 0x8203: return "Android";
    case 0x8204: return "PS3";
    case 0x8205: return "NaCl";
    case 0x8206: return "Fuchsia";
    default: return NULL;
    }
}

static void write_streams(struct out *t, int fmt, const struct ntl_minidump *md)
{
    out_column(t, "index", NULL, OUT_RIGHT);
    out_column(t, "type", NULL, OUT_RIGHT);
    out_column(t, "name", NULL, OUT_LEFT);
    out_column(t, "offset", NULL, OUT_RIGHT);
    out_column(t, "size", NULL, OUT_RIGHT);
    for (size_t i = 0; i < md->stream_count; i++) {
        const struct ntl_md_stream *s = &md->streams[i];
        const char *n = ntl_md_stream_name(s->type);
        out_u64(t, i);
        out_u64(t, s->type);
        if (n)
            out_str(t, n);
        else
            out_strf(t, "0x%x", s->type);
        dump_size_cell(t, fmt, s->rva);
        dump_size_cell(t, fmt, s->size);
        out_row_end(t);
    }
}

static void write_system(struct out *t, int fmt, const struct ntl_minidump *md)
{
    const struct ntl_md_system_info *s = &md->sys;
    (void)fmt; /* no size here */
    out_column(t, "architecture", NULL, OUT_LEFT);
    out_column(t, "processors", NULL, OUT_RIGHT);
    out_column(t, "product_type", NULL, OUT_RIGHT);
    out_column(t, "version", NULL, OUT_LEFT);
    out_column(t, "platform", NULL, OUT_LEFT);
    out_column(t, "csd_version", "CSD Version", OUT_LEFT);
    out_column(t, "pid", NULL, OUT_RIGHT);
    out_column(t, "timestamp", NULL, OUT_LEFT);
    if (!s->present)
        return;
    out_str(t, arch_name(s->arch));
    out_u64(t, s->processors);
    out_u64(t, s->product_type);
    out_strf(t, "%u.%u.%u", s->major, s->minor, s->build);
    if (platform_name(s->platform))
        out_str(t, platform_name(s->platform));
    else
        out_strf(t, "0x%x", s->platform);
    out_str(t, s->csd_version);
    if (md->has_misc && (md->misc_flags & 1)) /* MINIDUMP_MISC1_PROCESS_ID */
        out_u64(t, md->process_id);
    else
        out_null(t);
    dump_stamp_time_cell(t, md->timestamp);
    out_row_end(t);
}

static void write_threads(struct out *t, int fmt, const struct ntl_minidump *md)
{
    out_column(t, "tid", NULL, OUT_RIGHT);
    out_column(t, "teb", "TEB", OUT_RIGHT);
    out_column(t, "stack_start", NULL, OUT_RIGHT);
    out_column(t, "stack_size", NULL, OUT_RIGHT);
    out_column(t, "context_size", NULL, OUT_RIGHT);
    for (size_t i = 0; i < md->thread_count; i++) {
        const struct ntl_md_thread *th = &md->threads[i];
        out_u64(t, th->id);
        out_addr(t, th->teb, 16);
        out_addr(t, th->stack_start, 16);
        dump_size_cell(t, fmt, th->stack_size);
        dump_size_cell(t, fmt, th->context_size);
        out_row_end(t);
    }
}

static void guid_cell(struct out *t, const uint8_t *g)
{
    out_strf(t, "%08X-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X",
             (unsigned)(g[0] | g[1] << 8 | g[2] << 16 | (uint32_t)g[3] << 24),
             (unsigned)(g[4] | g[5] << 8), (unsigned)(g[6] | g[7] << 8), g[8], g[9], g[10], g[11],
             g[12], g[13], g[14], g[15]);
}

/* TimeDateStamp twice: as the hex a symbol server matches (with SizeOfImage)
 * and as the time it claims to be (a hash in reproducible builds). */
static void write_modules(struct out *t, int fmt, const struct ntl_minidump *md)
{
    out_column(t, "base", NULL, OUT_RIGHT);
    out_column(t, "size", NULL, OUT_RIGHT);
    out_column(t, "checksum", NULL, OUT_RIGHT);
    out_column(t, "time_date_stamp", "TimeDateStamp", OUT_RIGHT);
    out_column(t, "time", NULL, OUT_LEFT);
    out_column(t, "name", NULL, OUT_LEFT);
    out_column(t, "guid", "GUID", OUT_LEFT);
    out_column(t, "age", NULL, OUT_RIGHT);
    out_column(t, "pdb", "PDB", OUT_LEFT);
    for (size_t i = 0; i < md->module_count; i++) {
        const struct ntl_md_module *m = &md->modules[i];
        out_addr(t, m->base, 16);
        dump_size_cell(t, fmt, m->size);
        out_addr(t, m->checksum, 8);
        out_addr(t, m->timestamp, 8);
        dump_stamp_time_cell(t, m->timestamp);
        out_str(t, m->name);
        if (m->has_cv) {
            guid_cell(t, m->guid);
            out_u64(t, m->age);
            out_str(t, m->pdb);
        } else {
            out_null(t);
            out_null(t);
            out_null(t);
        }
        out_row_end(t);
    }
}

static void write_memory(struct out *t, int fmt, const struct ntl_minidump *md)
{
    out_column(t, "start", NULL, OUT_RIGHT);
    out_column(t, "end", NULL, OUT_RIGHT);
    out_column(t, "size", NULL, OUT_RIGHT);
    out_column(t, "file_offset", NULL, OUT_RIGHT);
    out_column(t, "module", NULL, OUT_LEFT);
    for (size_t i = 0; i < md->range_count; i++) {
        const struct ntl_md_range *r = &md->ranges[i];
        const struct ntl_md_module *m = ntl_md_module_at(md, r->start);
        out_addr(t, r->start, 16);
        out_addr(t, r->start + r->size, 16);
        dump_size_cell(t, fmt, r->size);
        dump_size_cell(t, fmt, r->file_offset);
        if (m)
            out_str(t, m->name);
        else
            out_null(t);
        out_row_end(t);
    }
}

/* What the reader found odd but read on (also warned about on stderr), so
 * that a saved report says the file is irregular. */
static void write_irregularities(struct out *t, int fmt, const struct ntl_minidump *md)
{
    size_t kept = md->irregular_count < NTL_MD_MAX_IRREGULARITIES ? md->irregular_count
                                                                  : NTL_MD_MAX_IRREGULARITIES;
    out_column(t, "offset", NULL, OUT_RIGHT);
    out_column(t, "irregularity", NULL, OUT_LEFT);
    for (size_t i = 0; i < kept; i++) {
        dump_size_cell(t, fmt, md->irregular[i].offset);
        out_str(t, md->irregular[i].what);
        out_row_end(t);
    }
    if (md->irregular_count > kept) {
        out_null(t);
        out_strf(t, "%zu more", md->irregular_count - kept);
        out_row_end(t);
    }
}

const struct dump_section dump_sections[DUMP_SECTION_COUNT] = {
    {"streams", "Streams", write_streams},
    {"system", "System", write_system},
    {"threads", "Threads", write_threads},
    {"modules", "Modules", write_modules},
    {"memory", "Memory", write_memory},
    {"irregularities", "Irregularities", write_irregularities},
};

const char *const dump_section_names[DUMP_SECTION_COUNT + 1] = {
    "streams", "system", "threads", "modules", "memory", "irregularities", NULL,
};
