/* The report of `dump build` (dump-build.h). */
#include "dump-build.h"

#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "out.h"

/* IATIndex 0x7FFFF: the image asks that the site not be optimized. */
#define IAT_INDEX_DO_NOT_OPTIMIZE 0x7ffff

static void site_columns(struct out *t)
{
    out_column(t, "module", NULL, OUT_LEFT);
    out_column(t, "rva", "RVA", OUT_RIGHT);
    out_column(t, "address", NULL, OUT_RIGHT);
    out_column(t, "kind", NULL, OUT_LEFT);
    out_column(t, "iat_index", "IAT Index", OUT_RIGHT);
    out_column(t, "import", NULL, OUT_LEFT);
    out_column(t, "target", NULL, OUT_RIGHT);
    out_column(t, "resolved", NULL, OUT_LEFT);
    out_column(t, "result", NULL, OUT_LEFT);
    out_column(t, "detail", NULL, OUT_LEFT);
}

static void site_row(struct out *t, int fmt, const struct ntl_md_build *b, const struct ntl_iopt_site *s)
{
    out_str(t, ntl_md_base_name(b->modules[s->module].path));
    out_addr(t, s->rva, 0);
    out_addr(t, s->address, 16);
    out_str(t, s->call ? "call" : "jmp");
    if (s->iat_index == IAT_INDEX_DO_NOT_OPTIMIZE && fmt != OUT_JSON && fmt != OUT_JSONL)
        out_str(t, "0x7FFFF");
    else
        out_u64(t, s->iat_index);
    if (s->import_dll[0])
        out_strf(t, "%s!%s", s->import_dll, s->import_name);
    else
        out_null(t);
    if (s->target) {
        out_addr(t, s->target, 16);
        out_strf(t, "%s!%s", ntl_md_base_name(b->modules[s->target_module].path), s->target_name);
    } else {
        out_null(t);
        out_null(t);
    }
    out_str(t, s->status == NTL_IOPT_PATCHED ? "patched" : "skipped");
    if (s->detail[0])
        out_str(t, s->detail);
    else
        out_null(t);
    out_row_end(t);
}

int dump_build_print_sites(const struct ntl_md_build *b, int fmt)
{
    struct out *t = out_new(stdout, (enum out_format)fmt);
    if (!t)
        return -1;
    site_columns(t);
    for (size_t i = 0; i < b->report.count; i++)
        site_row(t, fmt, b, &b->report.sites[i]);
    return out_close(t) < 0 || fflush(stdout) != 0 ? -1 : 0;
}

void dump_build_warn_note(const char *cmd, const struct ntl_md_note *n)
{
    switch (n->kind) {
    case NTL_MD_NOTE_TRACE_SKIPPED:
        cli_warn(cmd, "%s: %s; %" PRIu64 " bad part(s) of the trace skipped", n->subject, n->detail,
                 n->value);
        break;
    case NTL_MD_NOTE_NOT_IN_SEARCH:
        cli_warn(cmd, "%s (0x%016" PRIx64 ") is not in the search directories", n->subject,
                 n->address);
        break;
    case NTL_MD_NOTE_MORE_NOT_FOUND:
        cli_warn(cmd, "%" PRIu64 " more of the trace's kernel modules are not in the search "
                 "directories", n->value);
        break;
    case NTL_MD_NOTE_SIZE_MISMATCH:
        cli_warn(cmd, "%s: SizeOfImage 0x%" PRIx64 ", the trace recorded 0x%" PRIx64
                 " (another build?)", n->subject, n->value, n->expected);
        break;
    case NTL_MD_NOTE_STAMP_MISMATCH:
        cli_warn(cmd, "%s: TimeDateStamp 0x%" PRIx64 ", the trace recorded 0x%" PRIx64
                 " (another build?)", n->subject, n->value, n->expected);
        break;
    case NTL_MD_NOTE_BASE_UNUSED:
        cli_warn(cmd, "--base %s matches no --module", n->subject);
        break;
    case NTL_MD_NOTE_OVERLAP:
        cli_warn(cmd, "%s and %s overlap in memory", n->subject, n->other);
        break;
    }
}

void dump_build_summary(const struct ntl_md_build *b, const char *path, bool import_optimization)
{
    for (size_t i = 0; i < b->module_count; i++)
        fprintf(stderr, "%s: 0x%016" PRIx64 " size 0x%x (%s)\n", b->modules[i].dump_name,
                b->modules[i].base, b->modules[i].size,
                b->modules[i].origin == NTL_MD_ORIGIN_BASE ? "--base" : "trace");
    if (import_optimization)
        fprintf(stderr, "%zu import optimization sites: %zu patched, %zu skipped\n",
                b->report.count, b->report.patched, b->report.skipped);
    fprintf(stderr, "wrote %s: %zu modules, %zu bytes\n", path, b->module_count, b->dump.len);
}
