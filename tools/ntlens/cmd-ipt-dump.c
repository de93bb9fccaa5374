/* ntlens ipt dump: Intel PT packets in exactly the format of libipt's ptdump
 * (same options, same columns, same diagnostics), or one record per packet
 * through the writer. This file loads the trace and runs the event decoder;
 * ipt-dump.h names the files that parse, print and render. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "ipt-dump.h"
#include "out.h"
#include "progress.h"
#include "ntlens/ipt_config.h"
#include "ntlens/ipt_trace.h"

/* The bytes to decode: the trace, or the range TRACE:FROM-TO of the file. */
struct input {
    struct ntl_ipt_trace trace;
    const uint8_t *data;
    size_t size;
    bool ranged;
};

/* The offset a line shows: in the file, or, as ptdump counts them, from
 * the start of a range. */
static uint64_t shown_offset(const struct input *in, uint64_t off)
{
    return in->ranged ? off : ntl_ipt_trace_file_offset(&in->trace, off);
}

static int load(const char *cmd, const struct ipt_dump_opts *o, struct input *in)
{
    struct ntl_error err;
    ntl_error_clear(&err);
    if (ntl_ipt_trace_load(&in->trace, o->path, o->wrapped, o->wrap_pos, &err) < 0)
        return cli_fail(cmd, &err, o->path);
    in->data = in->trace.data;
    in->size = in->trace.size;
    if (!o->ranged)
        return EXIT_OK;
    uint64_t to = o->to ? o->to : in->size;
    if (o->from >= in->size)
        return cli_failf(cmd, "%s: the range starts at 0x%" PRIx64 ", past the end of the %zu-byte file",
                         o->path, o->from, in->size);
    if (to > in->size)
        return cli_failf(cmd, "%s: the range ends at 0x%" PRIx64 ", past the end of the %zu-byte file",
                         o->path, to, in->size);
    in->data += o->from;
    in->size = (size_t)(to - o->from);
    in->ranged = true;
    return EXIT_OK;
}

/* The event layer's configuration for the options given. */
static void config_of(const struct ipt_dump_opts *o, const struct input *in, struct ntl_ipt_config *c)
{
    memset(c, 0, sizeof *c);
    c->buf = in->data;
    c->size = in->size;
    c->time = o->tc;
    c->flags = (o->show != IPT_SHOW_NONE ? NTL_IPT_CFG_TIME : 0) |
               (o->no_tcal ? NTL_IPT_CFG_NO_TCAL : 0) |
               (o->keep_tcal_on_ovf ? NTL_IPT_CFG_KEEP_TCAL_ON_OVF : 0) |
               (o->no_cyc ? NTL_IPT_CFG_NO_CYC : 0);
}

/* The lines or records of one event: a run of PAD decodes as one packet,
 * ptdump prints each byte. */
static void print_event(struct ntl_ipt_event *ev, struct ipt_dump_state *s, const struct input *in)
{
    const struct ipt_dump_opts *o = s->o;
    uint64_t off = ev->offset;
    unsigned copies = ev->pkt.type == NTL_IPT_PAD ? ev->pkt.count : 1;
    if (ev->pkt.type == NTL_IPT_PAD)
        ev->pkt.size = ev->pkt.count = 1;
    for (unsigned i = 0; i < copies; i++, off++) {
        struct ipt_line l;
        memset(&l, 0, sizeof l);
        uint64_t shown = shown_offset(in, off);
        if (!o->no_offset)
            snprintf(l.offset, sizeof l.offset, "%016" PRIx64, shown);
        if (o->show_raw)
            ipt_line_raw(&l, in->data + off, ev->pkt.size);
        ipt_line_format(ev, &l, s, shown);
        if (s->out)
            ipt_records_row(s->out, ev, &l, shown, o);
        else
            ipt_line_print(&l, o);
    }
}

/* After a decode error: ptdump's diagnostic, then on at the next PSB.
 * Returns false when there is none. */
static bool recover(struct ipt_dump_state *s, const struct input *in, uint64_t off, int rc)
{
    struct ntl_error err;
    uint64_t shown = shown_offset(in, off);
    ntl_error_clear(&err);
    if (rc == NTL_ERR_TRUNCATED) {
        fflush(stdout);
        cli_warn(s->cmd, "the trace ends inside a packet at offset 0x%" PRIx64, shown);
    } else {
        ipt_dump_diag(s, "error decoding packet", shown, ntl_ipt_fault_str(s->evd.pkt.fault));
    }
    if (ntl_ipt_evd_resync(&s->evd, &err) < 0)
        return false;
    s->tsc = s->fcr = 0;
    return true;
}

/* Every event to the end of the trace, with a progress bar when the
 * packets go elsewhere than the terminal. */
static void decode(struct ipt_dump_state *s, const struct input *in)
{
    struct ntl_ipt_event ev;
    struct ntl_error err;
    struct progress prog = {0};
    bool bar = !isatty(fileno(stdout));
    size_t next_update = 0;
    if (bar)
        progress_start(&prog, "decoding", in->size);
    for (;;) {
        uint64_t off = ntl_ipt_offset(&s->evd.pkt);
        if (bar && off >= next_update) {
            progress_update(&prog, off);
            next_update = off + (1u << 20);
        }
        int rc = ntl_ipt_evd_next(&s->evd, &ev, &err);
        if (rc == 0)
            break;
        if (rc > 0)
            print_event(&ev, s, in);
        else if (!recover(s, in, off, rc))
            break;
    }
    if (bar)
        progress_end(&prog);
}

static int dump(struct ipt_dump_state *s, const struct input *in)
{
    struct ntl_ipt_config cfg;
    struct ntl_error err;
    const struct ipt_dump_opts *o = s->o;
    config_of(o, in, &cfg);
    ntl_ipt_evd_init(&s->evd, &cfg);
    ntl_error_clear(&err);
    if (o->no_sync) {
        ntl_ipt_evd_seek(&s->evd, 0);
    } else if (ntl_ipt_evd_sync_first(&s->evd, &err) < 0) {
        fflush(stdout);
        return cli_failf(s->cmd, "no PSB in the %zu-byte trace: nothing to decode (--no-sync decodes from offset 0)",
                         in->size);
    }
    if (o->fmt != IPT_FORMAT_PTDUMP) {
        if (!(s->out = out_new(stdout, (enum out_format)o->fmt)))
            return cli_failf(s->cmd, "out of memory");
        ipt_records_columns(s->out, o);
    }
    decode(s, in);
    if (s->out && out_close(s->out) < 0)
        return cli_failf(s->cmd, "write error");
    if (fflush(stdout) != 0)
        return cli_failf(s->cmd, "write error");
    return EXIT_OK;
}

int cmd_ipt_dump(int argc, char **argv)
{
    static char obuf[1 << 16];
    struct ipt_dump_opts o;
    struct ipt_dump_state s;
    struct input in;
    int rc;

    if ((rc = ipt_dump_parse_args(argc, argv, &o)) != CLI_CONTINUE)
        return rc;
    memset(&in, 0, sizeof in);
    if ((rc = load(argv[0], &o, &in)) == EXIT_OK) {
        memset(&s, 0, sizeof s);
        s.cmd = argv[0];
        s.o = &o;
        setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
        if (ntl_ipt_cpu_errata(&o.cpu, &o.tc.errata) < 0)
            ipt_dump_diag(&s, "failed to determine errata", 0, "unknown cpu");
        rc = dump(&s, &in);
    }
    ntl_ipt_trace_free(&in.trace);
    return rc;
}
