/* Intel PT flow decoding: ntlens's flow decoder against libipt's block
 * decoder (pt_blk_next, Debian's libipt-dev; never linked into the product)
 * on the kAFL recordings, in the same run, decoding as `ipt flow --quiet`
 * does (every instruction counted, none printed), best of 5 rounds of CPU
 * time each, two ways:
 *   cold: each decoder and its image made afresh per round (no cache
 *         carried over; libipt loads its pages in the round);
 *   warm: the decoder (ntlens) or the image (libipt, whose block cache
 *         lives in the image's sections) kept from a first round, as a
 *         fuzzer decoding trace after trace of one target does;
 *   insn: as cold, ntlens returning each instruction as an item (the
 *         path --no-inst took before run_ips);
 *   ips:  as cold, ntlens returning runs and each run's instruction
 *         addresses (ntl_ipt_flow_run_ips, the path of --no-inst, which
 *         prints every address);
 *   ipsw: as ips, warm.
 * Prints MB/s of trace, instructions/s and the ratio of each. hase-loopy
 * (perf's capture of an ELF, with RET compression and MTC/TSC) is decoded
 * with its reference.txt's CPU and timing options and time tracked, so
 * the timing path is measured too.
 *   bench_ipt_flow [RECORDING_DIR...]   default: the kafl-* recordings
 *                                       and hase-loopy
 *   bench_ipt_flow --ptxed RECORDING_DIR
 *       ptxed --no-inst --insn-decoder's work on libipt: every instruction
 *       (pt_insn_next) and event printed as ptxed prints them, to stdout
 *       (the rival of the whole `ntlens ipt flow --no-inst` command, timed
 *       side by side by flow_noinst.sh) */
#include <dirent.h>
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <intel-pt.h>

#include "ntlens/buf.h"
#include "ntlens/ipt_flow.h"
#include "ntlens/ipt_image.h"

#define ROUNDS 5

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* CPU time: the machine is shared */
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* hase-loopy's options (its reference.txt): --cpu 6/94/3 --mtc-freq 3
 * --cpuid-0x15.eax 2 --cpuid-0x15.ebx 266 --nom-freq 32, image the ELF. */
#define LOOPY_ELF "loopy"

struct rec {
    const char *dir;
    bool ips;       /* runs told by address (ntl_ipt_flow_run_ips) */
    bool elf; /* the image is dir/LOOPY_ELF with hase-loopy's options */
    struct ntl_buf trace;
    struct ntl_ipt_image *img;
    struct ntl_ipt_flow *warm_ntl;  /* warm: the decoder kept */
    struct ntl_ipt_flow *warm_ips;  /* ipsw: the decoder kept */
    struct pt_image *warm_ipt;      /* warm: libipt's image kept */
    struct pt_image_section_cache *iscache; /* keeps its sections mapped */
};

/* A run's instructions by address (ips); sum of them, so that they are
 * used. Returns how many. */
static uint64_t run_ips(struct ntl_ipt_flow *f, uint64_t *sum)
{
    static uint64_t ips[4096];
    struct ntl_error err;
    uint64_t n = 0;
    int k;
    while ((k = ntl_ipt_flow_run_ips(f, ips, 4096, &err)) > 0) {
        for (int i = 0; i < k; i++)
            *sum += ips[i];
        n += (uint64_t)k;
    }
    return n;
}

/* Every instruction of r's trace through f, from its start (ips: each
 * run's told by address). */
static uint64_t decode_ntl(struct ntl_ipt_flow *f, bool ips)
{
    struct ntl_ipt_flow_item it;
    struct ntl_error err;
    uint64_t n = 0, sum = 0;
    bool enabled;
    if (ntl_ipt_flow_sync(f, &err) == 0) {
        for (;;) {
            int rc = ntl_ipt_flow_next(f, &it, &err);
            if (rc > 0) {
                if (it.kind == NTL_IPT_FL_RUN)
                    n += ips ? run_ips(f, &sum) : it.b;
                else
                    n += it.kind == NTL_IPT_FL_INSN;
                continue;
            }
            if (rc == 0 || ntl_ipt_flow_resync(f, &enabled, &err) < 0)
                break;
        }
    }
    return n + (sum == 1); /* (never: the sum is only used) */
}

/* runs: as `ipt flow --quiet` decodes (runs of instructions, not each);
 * else as --no-inst does, one item per instruction. */
static struct ntl_ipt_flow *new_ntl(const struct rec *r, bool runs)
{
    struct ntl_ipt_flow_config cfg = {.trace = {.buf = r->trace.data, .size = r->trace.len},
                                      .read = ntl_ipt_image_read, .read_ctx = r->img,
                                      .runs = runs, .run_ips = runs && r->ips};
    if (r->elf) {
        struct ntl_ipt_cpu cpu = {6, 94, 3, true};
        cfg.trace.time = (struct ntl_ipt_time_config){.mtc_freq = 3, .nom_freq = 32,
                                                      .cpuid_15_eax = 2, .cpuid_15_ebx = 266};
        ntl_ipt_cpu_errata(&cpu, &cfg.trace.time.errata);
        cfg.trace.flags = NTL_IPT_CFG_TIME;
    }
    struct ntl_ipt_flow *f;
    struct ntl_error err;
    return ntl_ipt_flow_new(&f, &cfg, &err) < 0 ? NULL : f;
}

static uint64_t run_ntl(struct rec *r)
{
    struct ntl_ipt_flow *f = new_ntl(r, true);
    uint64_t n = f ? decode_ntl(f, r->ips) : 0;
    ntl_ipt_flow_free(f);
    return n;
}

static uint64_t run_ntl_insns(struct rec *r)
{
    struct ntl_ipt_flow *f = new_ntl(r, false);
    uint64_t n = f ? decode_ntl(f, false) : 0;
    ntl_ipt_flow_free(f);
    return n;
}

static uint64_t run_ntl_warm(struct rec *r)
{
    struct ntl_ipt_flow **f = r->ips ? &r->warm_ips : &r->warm_ntl;
    if (!*f && !(*f = new_ntl(r, true)))
        return 0;
    return decode_ntl(*f, r->ips);
}

/* One file range at addr into libipt's image (through isc when given: a
 * section stays mapped there, with its block cache). */
static int libipt_add(struct pt_image *image, struct pt_image_section_cache *isc,
                      const char *path, uint64_t off, uint64_t size, uint64_t addr)
{
    int isid = isc ? pt_iscache_add_file(isc, path, off, size, addr) : 0;
    return isid < 0 || (isc ? pt_image_add_cached(image, isc, isid, NULL)
                            : pt_image_add_file(image, path, off, size, NULL, addr)) < 0
               ? -1 : 0;
}

/* The ELF's PT_LOAD segments (their file bytes) at their addresses, as
 * ptxed --elf loads them. */
static int libipt_elf(struct pt_image *image, struct pt_image_section_cache *isc,
                      const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, LOOPY_ELF);
    FILE *fp = fopen(path, "rb");
    Elf64_Ehdr eh;
    int rc = fp && fread(&eh, sizeof eh, 1, fp) == 1 ? 0 : -1;
    for (unsigned i = 0; rc == 0 && i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (fseek(fp, (long)(eh.e_phoff + i * (uint64_t)eh.e_phentsize), SEEK_SET) != 0 ||
            fread(&ph, sizeof ph, 1, fp) != 1)
            rc = -1;
        else if (ph.p_type == PT_LOAD && ph.p_filesz)
            rc = libipt_add(image, isc, path, ph.p_offset, ph.p_filesz, ph.p_vaddr);
    }
    if (fp)
        fclose(fp);
    return rc;
}

/* The image's pages into libipt's image, as ptxed --raw loads them; or
 * hase-loopy's ELF. */
static int libipt_pages(struct pt_image *image, struct pt_image_section_cache *isc,
                        const char *dir, bool elf)
{
    if (elf)
        return libipt_elf(image, isc, dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/image", dir);
    DIR *d = opendir(path);
    struct dirent *e;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        char *end;
        uint64_t addr = strtoull(e->d_name, &end, 16);
        if (strcmp(end, ".bin") != 0)
            continue;
        snprintf(path, sizeof path, "%s/image/%s", dir, e->d_name);
        if (libipt_add(image, isc, path, 0, UINT64_MAX, addr) < 0) {
            closedir(d);
            return -1;
        }
    }
    closedir(d);
    return 0;
}

/* libipt's configuration for r's trace. Returns 0, or -1. */
static int libipt_config(const struct rec *r, struct pt_config *config)
{
    pt_config_init(config);
    config->begin = r->trace.data;
    config->end = r->trace.data + r->trace.len;
    if (r->elf) {
        config->cpu = (struct pt_cpu){.vendor = pcv_intel, .family = 6, .model = 94,
                                      .stepping = 3};
        config->mtc_freq = 3;
        config->nom_freq = 32;
        config->cpuid_0x15_eax = 2;
        config->cpuid_0x15_ebx = 266;
        if (pt_cpu_errata(&config->errata, &config->cpu) < 0)
            return -1;
    }
    return 0;
}

/* Every instruction of r's trace through libipt's block decoder over
 * image, or over pages it loads itself when image is NULL. */
static uint64_t decode_libipt(const struct rec *r, struct pt_image *image)
{
    struct pt_config config;
    if (libipt_config(r, &config) < 0)
        return 0;
    struct pt_block_decoder *d = pt_blk_alloc_decoder(&config);
    uint64_t n = 0;
    if (!d)
        return 0;
    if (image ? pt_blk_set_image(d, image) < 0
              : libipt_pages(pt_blk_get_image(d), NULL, r->dir, r->elf) < 0) {
        pt_blk_free_decoder(d);
        return 0;
    }
    for (;;) {
        int status = pt_blk_sync_forward(d);
        if (status < 0)
            break;
        for (;;) {
            while (status & pts_event_pending) {
                struct pt_event ev;
                status = pt_blk_event(d, &ev, sizeof ev);
                if (status < 0)
                    break;
            }
            if (status < 0)
                break;
            struct pt_block b;
            memset(&b, 0, sizeof b);
            status = pt_blk_next(d, &b, sizeof b);
            n += b.ninsn;
            if (status < 0)
                break;
        }
        if (status == -pte_eos)
            break;
    }
    pt_blk_free_decoder(d);
    return n;
}

/* ptxed --no-inst --insn-decoder's loop: each instruction's address and
 * each event printed (ptxed's printf per line), errors as it goes on. */
static int ptxed_insns(const struct rec *r)
{
    struct pt_config config;
    if (libipt_config(r, &config) < 0)
        return 1;
    struct pt_insn_decoder *d = pt_insn_alloc_decoder(&config);
    if (!d || libipt_pages(pt_insn_get_image(d), NULL, r->dir, r->elf) < 0)
        return 1;
    for (;;) {
        int status = pt_insn_sync_forward(d);
        if (status < 0)
            break;
        for (;;) {
            while (status & pts_event_pending) {
                struct pt_event ev;
                status = pt_insn_event(d, &ev, sizeof ev);
                if (status < 0)
                    break;
                printf("[event %d]\n", (int)ev.type);
            }
            if (status < 0)
                break;
            struct pt_insn insn;
            status = pt_insn_next(d, &insn, sizeof insn);
            if (status < 0)
                break;
            printf("%016" PRIx64 "\n", insn.ip);
        }
        printf("[%d]\n", status);
        if (status == -pte_eos)
            break;
    }
    pt_insn_free_decoder(d);
    return 0;
}

static uint64_t run_libipt(struct rec *r)
{
    return decode_libipt(r, NULL);
}

static uint64_t run_libipt_warm(struct rec *r)
{
    if (!r->warm_ipt) {
        if (!(r->warm_ipt = pt_image_alloc(NULL)) || !(r->iscache = pt_iscache_alloc(NULL)))
            return 0;
        if (libipt_pages(r->warm_ipt, r->iscache, r->dir, r->elf) < 0)
            return 0;
    }
    return decode_libipt(r, r->warm_ipt);
}

/* Best CPU time of ROUNDS runs (warm ones: after a first that fills the
 * caches); *insns the instructions of the last. */
static double best(uint64_t (*fn)(struct rec *), struct rec *r, bool warm, uint64_t *insns)
{
    if (warm)
        fn(r);
    double b = 1e30;
    for (int i = 0; i < ROUNDS; i++) {
        double t0 = now();
        *insns = fn(r);
        double t = now() - t0;
        if (t < b)
            b = t;
    }
    return b;
}

/* r's trace, image and kind (hase-loopy's ELF, else pages) loaded. */
static int load(struct rec *r, const char *dir)
{
    struct ntl_error err;
    char path[4096];
    r->dir = dir;
    snprintf(path, sizeof path, "%s/%s", dir, LOOPY_ELF);
    FILE *probe = fopen(path, "rb");
    r->elf = probe != NULL;
    if (probe)
        fclose(probe);
    snprintf(path, sizeof path, "%s/trace.pt", dir);
    ntl_buf_init(&r->trace, 0);
    if (ntl_file_read(path, (size_t)1 << 30, &r->trace, &err) < 0 ||
        ntl_ipt_image_new(&r->img, &err) < 0)
        return fprintf(stderr, "%s: %s\n", path, err.message), 1;
    snprintf(path, sizeof path, "%s/%s", dir, r->elf ? LOOPY_ELF : "image");
    if ((r->elf ? ntl_ipt_image_add_elf(r->img, path, false, 0, &err)
                : ntl_ipt_image_add_pages(r->img, path, &err)) < 0)
        return fprintf(stderr, "%s: %s\n", path, err.message), 1;
    return 0;
}

static int bench(const char *dir)
{
    struct rec r = {0};
    if (load(&r, dir) != 0)
        return 1;
    const char *name = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    double mb = (double)r.trace.len / 1e6;
    /* cold, warm, cold one instruction at a time, and runs told by
     * address cold and warm (--no-inst's path) */
    static const char *const way[] = {"cold", "warm", "insn", "ips", "ipsw"};
    for (int w = 0; w < 5; w++) {
        uint64_t n_ntl, n_ipt;
        bool warm = w == 1 || w == 4;
        r.ips = w >= 3;
        double t_ntl = best(warm ? run_ntl_warm : w == 2 ? run_ntl_insns : run_ntl, &r, warm,
                            &n_ntl);
        double t_ipt = best(warm ? run_libipt_warm : run_libipt, &r, warm, &n_ipt);
        printf("%-16s %-4s %8.1f KB  ntlens %8.1f MB/s %7.1f Minsn/s (%" PRIu64 ")  libipt %7.1f "
               "MB/s %7.1f Minsn/s (%" PRIu64 ")  ratio %.1fx\n",
               name, way[w], mb * 1e3, mb / t_ntl, (double)n_ntl / t_ntl / 1e6, n_ntl,
               mb / t_ipt, (double)n_ipt / t_ipt / 1e6, n_ipt, t_ipt / t_ntl);
    }
    ntl_ipt_flow_free(r.warm_ntl);
    ntl_ipt_flow_free(r.warm_ips);
    pt_image_free(r.warm_ipt);
    pt_iscache_free(r.iscache);
    ntl_ipt_image_free(r.img);
    ntl_buf_free(&r.trace);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const defaults[] = {"kafl-foo", "kafl-unzip", "kafl-mruby",
                                           "kafl-avscript32", "hase-loopy"};
    int rc = 0;
    if (argc == 3 && strcmp(argv[1], "--ptxed") == 0) {
        struct rec r = {0};
        return load(&r, argv[2]) != 0 || ptxed_insns(&r) != 0;
    }
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            rc |= bench(argv[i]);
        return rc;
    }
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/ipt/real/%s", NTL_SHARED_DATA, defaults[i]);
        rc |= bench(dir);
    }
    return rc;
}
