/* Writes an Intel PT trace with libipt's encoder (pt_enc_next; Debian
 * libipt-dev, a test peer only) from a script of packets, one a line:
 *     psb | psbend | mode64 | tnt BITS (oldest first, 1 taken) |
 *     pge ADDR | tip ADDR | pgd ADDR | pgd - (IP suppressed) | pip CR3
 * so that tests can give `ipt flow` a trace of code they built:
 *     ipt_encode OUT.pt < SCRIPT */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ip_packet(struct pt_packet *p, enum pt_packet_type type, const char *arg)
{
    p->type = type;
    if (!strcmp(arg, "-")) {
        p->payload.ip.ipc = pt_ipc_suppressed;
        return 0;
    }
    p->payload.ip.ipc = pt_ipc_full;
    p->payload.ip.ip = strtoull(arg, NULL, 0);
    return 0;
}

/* One script line into *p; -1 when it is not one. */
static int parse(const char *word, const char *arg, struct pt_packet *p)
{
    memset(p, 0, sizeof *p);
    if (!strcmp(word, "psb")) {
        p->type = ppt_psb;
    } else if (!strcmp(word, "psbend")) {
        p->type = ppt_psbend;
    } else if (!strcmp(word, "mode64")) {
        p->type = ppt_mode;
        p->payload.mode.leaf = pt_mol_exec;
        p->payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
    } else if (!strcmp(word, "tnt")) {
        size_t n = strlen(arg);
        if (n == 0 || n > 6)
            return -1;
        p->type = ppt_tnt_8;
        p->payload.tnt.bit_size = (uint8_t)n;
        for (size_t i = 0; i < n; i++)
            p->payload.tnt.payload = p->payload.tnt.payload << 1 | (arg[i] == '1');
    } else if (!strcmp(word, "pge")) {
        return ip_packet(p, ppt_tip_pge, arg);
    } else if (!strcmp(word, "tip")) {
        return ip_packet(p, ppt_tip, arg);
    } else if (!strcmp(word, "pgd")) {
        return ip_packet(p, ppt_tip_pgd, arg);
    } else if (!strcmp(word, "pip")) {
        p->type = ppt_pip;
        p->payload.pip.cr3 = strtoull(arg, NULL, 0);
    } else {
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static uint8_t buf[1 << 16];
    struct pt_config cfg;
    char line[256], word[32], arg[64];
    uint64_t size = 0;

    if (argc != 2)
        return 2;
    pt_config_init(&cfg);
    cfg.begin = buf;
    cfg.end = buf + sizeof buf;
    struct pt_encoder *enc = pt_alloc_encoder(&cfg);
    if (!enc)
        return 1;
    while (fgets(line, sizeof line, stdin)) {
        struct pt_packet p;
        arg[0] = '\0';
        if (sscanf(line, "%31s %63s", word, arg) < 1)
            continue;
        if (parse(word, arg, &p) < 0 || pt_enc_next(enc, &p) < 0) {
            fprintf(stderr, "ipt_encode: cannot encode '%s'\n", line);
            return 1;
        }
    }
    pt_enc_get_offset(enc, &size);
    pt_free_encoder(enc);
    FILE *f = fopen(argv[1], "wb");
    if (!f || fwrite(buf, 1, size, f) != size || fclose(f) != 0)
        return 1;
    return 0;
}
