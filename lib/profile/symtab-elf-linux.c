/* ELF symbols through elfutils' libelf. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"

static int elf_fail(struct ntl_error *err, const char *what)
{
    return ntl_error_set(err, NTL_ERR_FORMAT, "ELF", NTL_NO_OFFSET, "%s: %s", what,
                         elf_errmsg(-1));
}

/* The PT_LOAD segments: a symbol's address becomes a file offset through
 * the one holding it, since a mapping places a file offset, not an
 * address (lld's segments do not keep vaddr - offset constant). */
struct segs {
    GElf_Phdr v[64];
    size_t n;
};

static int load_segments(Elf *e, struct segs *s, struct ntl_error *err)
{
    size_t n;
    GElf_Phdr ph;
    s->n = 0;
    if (elf_getphdrnum(e, &n) != 0)
        return elf_fail(err, "program headers");
    for (size_t i = 0; i < n && s->n < sizeof s->v / sizeof *s->v; i++) {
        if (!gelf_getphdr(e, (int)i, &ph))
            return elf_fail(err, "program header");
        if (ph.p_type == PT_LOAD)
            s->v[s->n++] = ph;
    }
    return 0;
}

/* The file offset of addr, or false when no segment holds it. */
static bool file_offset(const struct segs *s, uint64_t addr, uint64_t *off)
{
    for (size_t i = 0; i < s->n; i++)
        if (addr >= s->v[i].p_vaddr && addr - s->v[i].p_vaddr < s->v[i].p_memsz) {
            *off = addr - s->v[i].p_vaddr + s->v[i].p_offset;
            return true;
        }
    return false;
}

/* The section of type type, or NULL. */
static Elf_Scn *find_section(Elf *e, Elf64_Word type)
{
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    while ((scn = elf_nextscn(e, scn)))
        if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
            return scn;
    return NULL;
}

/* A symbol's size; an unsized one (_init, hand-written assembly) ends
 * where its section does at the latest, so it does not take in the next
 * section's code (_init would otherwise name every .plt entry). 0 when its
 * section is not known: it then ends at the next symbol. */
static uint64_t symbol_size(Elf *e, const GElf_Sym *sym)
{
    GElf_Shdr sh;
    Elf_Scn *scn = sym->st_size || sym->st_shndx >= SHN_LORESERVE
                       ? NULL : elf_getscn(e, sym->st_shndx);
    if (!scn || !gelf_getshdr(scn, &sh) || sym->st_value < sh.sh_addr ||
        sym->st_value - sh.sh_addr >= sh.sh_size)
        return sym->st_size;
    return sh.sh_addr + sh.sh_size - sym->st_value;
}

/* A function symbol, before aliases at one address are settled. */
struct candidate {
    uint64_t offset, size;
    GElf_Xword st_size;
    unsigned char bind;
    const char *name;
};

static int by_offset(const void *a, const void *b)
{
    const struct candidate *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static size_t leading_underscores(const char *s)
{
    return strspn(s, "_");
}

/* Whether a names the address better than b, by the rule perf applies to
 * aliases (so both tools name a frame alike): a sized symbol, then a
 * non-weak one, then a global one, then fewer leading underscores, then the
 * longer name; the rest by name, so the choice does not depend on order. */
static bool better(const struct candidate *a, const struct candidate *b)
{
    if ((a->st_size != 0) != (b->st_size != 0))
        return a->st_size != 0;
    if ((a->bind == STB_WEAK) != (b->bind == STB_WEAK))
        return b->bind == STB_WEAK;
    if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
        return a->bind == STB_GLOBAL;
    size_t ua = leading_underscores(a->name), ub = leading_underscores(b->name);
    if (ua != ub)
        return ua < ub;
    size_t la = strlen(a->name), lb = strlen(b->name);
    if (la != lb)
        return la > lb;
    return strcmp(a->name, b->name) < 0;
}

/* The STT_FUNC symbols with a name, at their file offsets. */
static int gather(Elf *e, Elf_Scn *scn, const struct segs *segs, struct candidate **out,
                  size_t *count, struct ntl_error *err)
{
    GElf_Shdr sh;
    GElf_Sym sym;
    uint64_t off;
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!gelf_getshdr(scn, &sh) || !d || !sh.sh_entsize)
        return elf_fail(err, "symbol table");
    size_t n = d->d_size / sh.sh_entsize, k = 0;
    struct candidate *c = n ? malloc(n * sizeof *c) : NULL;
    if (n && !c)
        return ntl_error_set(err, NTL_ERR_NOMEM, "ELF", NTL_NO_OFFSET, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!gelf_getsym(d, (int)i, &sym)) {
            free(c);
            return elf_fail(err, "symbol");
        }
        const char *name = GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
                                   !file_offset(segs, sym.st_value, &off)
                               ? NULL : elf_strptr(e, sh.sh_link, sym.st_name);
        if (name && *name)
            c[k++] = (struct candidate){off, symbol_size(e, &sym), sym.st_size,
                                        GELF_ST_BIND(sym.st_info), name};
    }
    *out = c;
    *count = k;
    return 0;
}

/* Adds one symbol per address: perf keeps one of a set of aliases (glibc's
 * _exit and its weak _Exit), and so must ntlens to name frames as it does. */
static int add_functions(Elf *e, Elf_Scn *scn, const struct segs *segs,
                         struct ntl_profile_symtab *t, struct ntl_error *err)
{
    struct candidate *c = NULL;
    size_t n = 0;
    int rc = gather(e, scn, segs, &c, &n, err);
    if (rc < 0)
        return rc;
    if (n)
        qsort(c, n, sizeof *c, by_offset);
    if (n && rc == 0)
        rc = ntl_profile_symtab_reserve(t, n, err);   /* aliases make it fewer */
    for (size_t i = 0, best; rc == 0 && i < n; i++) {
        for (best = i; i + 1 < n && c[i + 1].offset == c[best].offset; i++)
            if (better(&c[i + 1], &c[best]))
                best = i + 1;
        rc = ntl_profile_symtab_add(t, c[best].name, c[best].offset, c[best].size, err);
    }
    free(c);
    return rc;
}

static int read_elf(Elf *e, struct ntl_profile_symtab *t, struct ntl_error *err)
{
    struct segs segs;
    int rc;
    if (elf_kind(e) != ELF_K_ELF)
        return ntl_error_set(err, NTL_ERR_FORMAT, "ELF", 0, "not an ELF file");
    if ((rc = load_segments(e, &segs, err)) < 0)
        return rc;
    Elf_Scn *scn = find_section(e, SHT_SYMTAB);
    if (!scn)
        scn = find_section(e, SHT_DYNSYM);
    return scn ? add_functions(e, scn, &segs, t, err) : 0;
}

int ntl_profile_symtab_from_elf(const char *path, struct ntl_profile_symtab **out,
                                struct ntl_error *err)
{
    struct ntl_profile_symtab *t;
    int rc;
    if (elf_version(EV_CURRENT) == EV_NONE)
        return ntl_error_set(err, NTL_ERR_UNSUPPORTED, "ELF", NTL_NO_OFFSET,
                             "libelf: %s", elf_errmsg(-1));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET, "%s", strerror(errno));
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!e)
        rc = elf_fail(err, "open");
    else if ((rc = ntl_profile_symtab_new(&t, err)) >= 0 && (rc = read_elf(e, t, err)) < 0)
        ntl_profile_symtab_free(t);
    if (e)
        elf_end(e);
    close(fd);
    if (rc >= 0)
        *out = t;
    return rc < 0 ? rc : 0;
}
