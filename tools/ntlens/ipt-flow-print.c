/* ipt flow's lines, as libipt's ptxed prints instructions and events. */
#ifdef NTLENS_HAVE_IPT_FLOW
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "ipt-flow.h"

static const char *mode_name(unsigned mode)
{
    switch (mode) {
    case NTL_IPT_MODE_16: return "16-bit";
    case NTL_IPT_MODE_32: return "32-bit";
    case NTL_IPT_MODE_64: return "64-bit";
    default: return "<unknown>";
    }
}

static void print_insn(const struct ntl_ipt_flow_item *it, const struct ipt_flow_opts *o)
{
    if (it->flags & NTL_IPT_FL_SPECULATIVE)
        printf("? ");
    printf("%016" PRIx64, it->ip);
    char text[256];
    if (!o->no_inst && ipt_flow_insn_text(it, o->spaces, text, sizeof text))
        printf("  %s", text);
    printf("\n");
}

/* The 8 hex digits of v (lower case), as the bytes of a word in memory
 * order: its nibbles spread to one a byte, most significant first, then
 * made digits all at once. */
static inline uint64_t hex8(uint32_t v)
{
    uint64_t x = v;
    x = (x | x << 16) & 0x0000ffff0000ffffull;
    x = (x | x << 8) & 0x00ff00ff00ff00ffull;
    x = (x | x << 4) & 0x0f0f0f0f0f0f0f0full;
    x = __builtin_bswap64(x);
    uint64_t letters = ((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;
    return x + 0x3030303030303030ull + letters * ('a' - '0' - 10);
}

int ipt_flow_print_run(struct ntl_ipt_flow *f, const struct ntl_ipt_flow_item *it,
                       struct ntl_error *err)
{
    enum { N = 2048 };
    static uint64_t ips[N];
    static char text[N * 19];
    bool spec = it->flags & NTL_IPT_FL_SPECULATIVE;
    /* The high half's digits change seldom: made again only then. */
    uint32_t hi = 0;
    uint64_t hi_text = hex8(0);
    int k;
    while ((k = ntl_ipt_flow_run_ips(f, ips, N, err)) > 0) {
        char *p = text;
        for (int i = 0; i < k; i++) {
            if (spec) {
                memcpy(p, "? ", 2);
                p += 2;
            }
            if (ips[i] >> 32 != hi) {
                hi = (uint32_t)(ips[i] >> 32);
                hi_text = hex8(hi);
            }
            uint64_t lo_text = hex8((uint32_t)ips[i]);
            memcpy(p, &hi_text, 8);
            memcpy(p + 8, &lo_text, 8);
            p[16] = '\n';
            p += 17;
        }
        fwrite(text, 1, (size_t)(p - text), stdout);
    }
    return k;
}

/* A line being built. */
struct text {
    char *buf;
    size_t size, len;
};

static void add(struct text *t, const char *fmt, ...) NTL_PRINTF(2, 3);
static void add(struct text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len = t->len + (size_t)n < t->size ? t->len + (size_t)n : t->size - 1;
}

/* ", ip: X" where ptxed adds it with --event:ip. */
static void event_ip(struct text *t, const struct ntl_ipt_flow_item *it,
                     const struct ipt_flow_opts *o, const char *what)
{
    if (o->event_ip && !(it->flags & NTL_IPT_FL_IP_SUPPRESSED))
        add(t, ", %s: %016" PRIx64, what, it->ip);
}

/* An Event Trace event, in ptxed's words. */
static void cfe_text(struct text *t, const struct ntl_ipt_flow_item *it,
                     const struct ipt_flow_opts *o)
{
    static const char *const names[] = {
        [NTL_IPT_CFE_INTR] = "interrupt", [NTL_IPT_CFE_IRET] = "iret",
        [NTL_IPT_CFE_SMI] = "smi",        [NTL_IPT_CFE_RSM] = "rsm",
        [NTL_IPT_CFE_SIPI] = "sipi",      [NTL_IPT_CFE_INIT] = "init",
        [NTL_IPT_CFE_VMENTRY] = "vmentry", [NTL_IPT_CFE_VMEXIT] = "vmexit",
        [NTL_IPT_CFE_VMEXIT_INTR] = "vmexit", [NTL_IPT_CFE_SHUTDOWN] = "shutdown",
        [NTL_IPT_CFE_UINTR] = "uintr",    [NTL_IPT_CFE_UIRET] = "uiret",
        [NTL_IPT_CFE_SWINTR] = "swintr",  [NTL_IPT_CFE_SYSCALL] = "syscall",
    };
    unsigned type = (unsigned)(it->a & 0xff), vector = (unsigned)(it->a >> 8 & 0xff);
    add(t, "%s", type < sizeof names / sizeof names[0] && names[type] ? names[type] : "cfe");
    switch (type) {
    case NTL_IPT_CFE_INTR: case NTL_IPT_CFE_UINTR: case NTL_IPT_CFE_SWINTR:
        add(t, " %u", vector);
        break;
    case NTL_IPT_CFE_SIPI:
        add(t, ": %x", vector);
        return; /* ptxed names no IP for it */
    case NTL_IPT_CFE_VMEXIT_INTR:
        add(t, ", intr: %u", vector);
        break;
    default:
        break;
    }
    if (it->flags & NTL_IPT_FL_CR2)
        add(t, ", cr2: %016" PRIx64, it->b);
    if (it->flags & NTL_IPT_FL_VMXR)
        add(t, ", vmxr: %016" PRIx64, it->b);
    if (it->flags & NTL_IPT_FL_VMXQ)
        add(t, ", vmxq: %016" PRIx64, it->c);
    event_ip(t, it, o, "ip");
}

static void event_text(struct text *t, const struct ntl_ipt_flow_item *it,
                       const struct ipt_flow_opts *o)
{
    static const char *const tsx[] = { "", "begin transaction", "committed", "aborted" };
    switch (it->kind) {
    case NTL_IPT_FL_ENABLED:
        add(t, "%s", it->flags & NTL_IPT_FL_RESUMED ? "resumed" : "enabled");
        event_ip(t, it, o, "ip");
        break;
    case NTL_IPT_FL_DISABLED:
        add(t, "disabled");
        event_ip(t, it, o, "ip");
        break;
    case NTL_IPT_FL_ASYNC_DISABLED:
        add(t, "disabled");
        if (o->event_ip) {
            add(t, ", at: %016" PRIx64, it->ip);
            if (!(it->flags & NTL_IPT_FL_IP_SUPPRESSED))
                add(t, ", ip: %016" PRIx64, it->a);
        }
        break;
    case NTL_IPT_FL_INTERRUPT:
        add(t, "interrupt");
        if (o->event_ip) {
            add(t, ", from: %016" PRIx64, it->ip);
            if (!(it->flags & NTL_IPT_FL_IP_SUPPRESSED))
                add(t, ", to: %016" PRIx64, it->a);
        }
        break;
    case NTL_IPT_FL_OVERFLOW:
        add(t, "overflow");
        event_ip(t, it, o, "ip");
        break;
    case NTL_IPT_FL_EXEC_MODE:
        add(t, "exec mode: %s", mode_name(it->mode));
        event_ip(t, it, o, "ip");
        break;
    case NTL_IPT_FL_TSX:
        add(t, "%s", tsx[it->a & 3]);
        event_ip(t, it, o, "ip");
        break;
    case NTL_IPT_FL_PAGING:
        add(t, "paging, cr3: %016" PRIx64 "%s", it->a, it->flags & NTL_IPT_FL_NR ? ", nr" : "");
        break;
    case NTL_IPT_FL_VMCS:
        add(t, "vmcs, base: %016" PRIx64, it->a);
        break;
    case NTL_IPT_FL_STOP:
        add(t, "stopped");
        break;
    case NTL_IPT_FL_CBR:
        add(t, "cbr: %" PRIx64, it->a);
        break;
    case NTL_IPT_FL_MNT:
        add(t, "mnt: %" PRIx64, it->a);
        break;
    case NTL_IPT_FL_PWRE:
        add(t, "pwre c%u.%u%s", (unsigned)((it->a >> 4) + 1) & 0xf, (unsigned)(it->a + 1) & 0xf,
               it->flags & NTL_IPT_FL_HW ? " hw" : "");
        break;
    case NTL_IPT_FL_END:
        add(t, "end of trace");
        break;
    case NTL_IPT_FL_PTWRITE:
        add(t, "ptwrite: %" PRIx64, it->a);
        event_ip(t, it, o, "ip");
        break;
    case NTL_IPT_FL_EXSTOP:
        add(t, "exstop");
        event_ip(t, it, o, "ip");
        break;
    case NTL_IPT_FL_MWAIT:
        add(t, "mwait %" PRIx64 " %" PRIx64, it->a, it->b);
        event_ip(t, it, o, "ip");
        break;
    case NTL_IPT_FL_CFE:
        cfe_text(t, it, o);
        break;
    case NTL_IPT_FL_TRIG:
        add(t, "trig %02x%s", (unsigned)(it->a & 0xff), it->a & 0x100 ? ", mult" : "");
        event_ip(t, it, o, "ip");
        break;
    case NTL_IPT_FL_IFLAGS:
        add(t, "interrupts %s", it->a ? "enabled" : "disabled");
        event_ip(t, it, o, "ip");
        break;
    case NTL_IPT_FL_TICK:
        add(t, "tick");
        event_ip(t, it, o, "ip");
        break;
    case NTL_IPT_FL_PWRX: {
        unsigned wr = (unsigned)(it->a >> 8);
        add(t, "pwrx %s%s%sc%u (c%u)", wr & 1 ? "int: " : "", wr & 4 ? "st: " : "",
               wr & 8 ? "hw: " : "", (unsigned)((it->a >> 4) + 1) & 0xf,
               (unsigned)(it->a + 1) & 0xf);
        break;
    }
    }
}

void ipt_flow_event_text(const struct ntl_ipt_flow_item *it, const struct ipt_flow_opts *o,
                         char *buf, size_t size)
{
    struct text t = { buf, size, 0 };
    buf[0] = '\0';
    event_text(&t, it, o);
}

bool ipt_flow_insn_text(const struct ntl_ipt_flow_item *it, struct ntl_ipt_spaces *mem, char *buf,
                        size_t size)
{
    static const struct {
        ZydisMachineMode mm;
        ZydisStackWidth sw;
    } modes[] = {
        [NTL_IPT_MODE_16] = { ZYDIS_MACHINE_MODE_LEGACY_16, ZYDIS_STACK_WIDTH_16 },
        [NTL_IPT_MODE_32] = { ZYDIS_MACHINE_MODE_LEGACY_32, ZYDIS_STACK_WIDTH_32 },
        [NTL_IPT_MODE_64] = { ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64 },
    };
    ZydisDecoder dec;
    ZydisFormatter fmt;
    ZydisDecodedInstruction z;
    ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
    unsigned m = it->mode >= NTL_IPT_MODE_16 && it->mode <= NTL_IPT_MODE_64 ? it->mode
                                                                            : NTL_IPT_MODE_64;
    uint8_t bytes[15];
    size_t got = 0;
    while (got < it->size) {
        int n = ntl_ipt_spaces_read(bytes + got, it->size - got, it->ip + got, mem);
        if (n <= 0)
            return false;
        got += (size_t)n;
    }
    ZydisDecoderInit(&dec, modes[m].mm, modes[m].sw);
    ZydisFormatterInit(&fmt, ZYDIS_FORMATTER_STYLE_INTEL);
    /* Lower-case hex, as the addresses around it. */
    ZydisFormatterSetProperty(&fmt, ZYDIS_FORMATTER_PROP_HEX_UPPERCASE, ZYAN_FALSE);
    if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, bytes, it->size, &z, ops))) {
        /* FRED's returns and APX's JMPABS, which Zydis 4 does not know
         * (lib/ipt classes them by their bytes). */
        bool fred = it->size == 4 && (bytes[0] == 0xf2 || bytes[0] == 0xf3) && bytes[1] == 0x0f &&
                    bytes[2] == 0x01 && bytes[3] == 0xca;
        size_t j = it->size - 11u;
        bool jmpabs = it->size >= 11 && bytes[j] == 0xd5 && bytes[j + 2] == 0xa1;
        uint64_t to = 0;
        for (int i = 7; jmpabs && i >= 0; i--)
            to = to << 8 | bytes[j + 3 + (size_t)i];
        if (fred)
            snprintf(buf, size, "%s", bytes[0] == 0xf2 ? "erets" : "eretu");
        else if (jmpabs)
            snprintf(buf, size, "jmpabs 0x%" PRIx64, to);
        return fred || jmpabs;
    }
    return ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&fmt, &z, ops, z.operand_count_visible, buf,
                                                        size, it->ip, NULL));
}

void ipt_flow_print(const struct ntl_ipt_flow_item *it, const struct ipt_flow_opts *o,
                    uint64_t off)
{
    if (o->quiet)
        return;
    if (it->kind == NTL_IPT_FL_INSN) {
        if (o->offset)
            printf("%016" PRIx64 "  ", off);
        print_insn(it, o);
        return;
    }
    char text[160];
    ipt_flow_event_text(it, o, text, sizeof text);
    printf("[");
    if (o->offset)
        printf("%016" PRIx64 "  ", off);
    if (o->event_tsc && it->timed)
        printf("%016" PRIx64 "  ", it->tsc);
    printf("%s]\n", text);
}
#endif
