/* Memory images for the Intel PT flow decoder: the code bytes at the
 * addresses the trace names, as libipt's pt_image holds sections and its
 * read_memory_callback reads them.
 *
 * The flow decoder (ipt_flow.h) reads memory only through one callback,
 * ntl_ipt_read_fn; an ntl_ipt_image is the usual one (pass
 * ntl_ipt_image_read with the image as its context), filled from raw files
 * at addresses (ptxed's --raw FILE:ADDR), ELF files' loadable segments
 * (--elf) and folders of ADDR.bin pages (the kAFL recordings' image/). Sections never overlap, so a lookup is one
 * binary search. */
#ifndef NTLENS_IPT_IMAGE_H
#define NTLENS_IPT_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads up to size bytes at addr into buf. Returns the number of bytes read
 * (> 0, fewer than size where the mapping ends), or NTL_ERR_NOT_FOUND when
 * nothing is mapped at addr. */
typedef int (*ntl_ipt_read_fn)(uint8_t *buf, size_t size, uint64_t addr, void *ctx);

/* Largest image (all sections together). */
#define NTL_IPT_MAX_IMAGE ((size_t)1 << 32)

struct ntl_ipt_image;

/* An empty image into *img. Returns 0, or NTL_ERR_NOMEM (err set). */
int ntl_ipt_image_new(struct ntl_ipt_image **img, struct ntl_error *err);
/* Frees img and its sections; NULL is fine. */
void ntl_ipt_image_free(struct ntl_ipt_image *img);

/* Adds a copy of bytes[0, size) at addr. Returns 0, or:
 *   NTL_ERR_ARGUMENT  size is 0, the section wraps past 2^64, or it
 *                     overlaps a section already added (err names both);
 *   NTL_ERR_LIMIT     the image would exceed NTL_IPT_MAX_IMAGE;
 *   NTL_ERR_NOMEM. */
int ntl_ipt_image_add(struct ntl_ipt_image *img, const uint8_t *bytes, size_t size,
                      uint64_t addr, struct ntl_error *err);

/* Adds the whole file at path at addr (ptxed --raw FILE:ADDR). Returns 0,
 * ntl_file_read's statuses (NTL_ERR_IO, NTL_ERR_LIMIT, NTL_ERR_NOMEM), or
 * ntl_ipt_image_add's; err names the file. */
int ntl_ipt_image_add_file(struct ntl_ipt_image *img, const char *path, uint64_t addr,
                           struct ntl_error *err);

/* Adds every file of folder dir named ADDR.bin (ADDR in hex, as kAFL names
 * its page dumps) at ADDR; other names are skipped. Returns the number of
 * files added (>= 0), or:
 *   NTL_ERR_IO        the folder cannot be read;
 *   ntl_ipt_image_add_file's statuses for the first file that failed. */
int ntl_ipt_image_add_pages(struct ntl_ipt_image *img, const char *dir, struct ntl_error *err);

/* Adds the loadable segments (PT_LOAD, their file bytes) of the ELF32 or
 * ELF64 executable or shared object at path, at their own addresses, or
 * with at_base moved so the lowest starts at base (ptxed --elf
 * FILE[:BASE]). Returns 0, or:
 *   ntl_file_read's statuses;
 *   NTL_ERR_FORMAT       not ELF, or headers or a segment past the end;
 *   NTL_ERR_UNSUPPORTED  big-endian or an unknown class;
 *   NTL_ERR_TRUNCATED    the ELF header is cut short;
 *   NTL_ERR_NOT_FOUND    no loadable segment;
 *   ntl_ipt_image_add's statuses (overlapping segments).
 * err names the file and the header's offset. */
int ntl_ipt_image_add_elf(struct ntl_ipt_image *img, const char *path, bool at_base,
                          uint64_t base, struct ntl_error *err);
/* The same from an ELF file's bytes in memory (copied); the same statuses
 * but ntl_file_read's, err naming no file. */
int ntl_ipt_image_add_elf_bytes(struct ntl_ipt_image *img, const uint8_t *data, size_t len,
                                bool at_base, uint64_t base, struct ntl_error *err);

/* Where ntl_ipt_image_add_elf_bytes puts an ELF file (the same at_base and
 * base): *file0 the address its file offset 0 corresponds to (the lowest
 * segment's address less its file offset: where ELF symbols' file offsets
 * apply) and *end the end of the highest segment's bytes. Returns 0, or
 * NTL_ERR_FORMAT, NTL_ERR_UNSUPPORTED, NTL_ERR_TRUNCATED (the headers) and
 * NTL_ERR_NOT_FOUND (no loadable segment) as ntl_ipt_image_add_elf_bytes. */
int ntl_ipt_elf_extent(const uint8_t *data, size_t len, bool at_base, uint64_t base,
                       uint64_t *file0, uint64_t *end, struct ntl_error *err);

/* ntl_ipt_read_fn over an image (ctx is the struct ntl_ipt_image). Returns
 * the bytes read (> 0, up to the end of the section holding addr), or
 * NTL_ERR_NOT_FOUND when no section holds addr. */
int ntl_ipt_image_read(uint8_t *buf, size_t size, uint64_t addr, void *ctx);

/* Number of sections. Cannot fail. */
size_t ntl_ipt_image_sections(const struct ntl_ipt_image *img);

/* Address spaces: an image per CR3 and a default one, for traces that
 * switch between processes (a PIP packet, told as a PAGING item, gives the
 * new CR3). Reading in an address space reads its own image and, where that
 * holds nothing, the default (the kernel's modules, shared by every
 * process), as libipt's image sections without an ASID match any CR3. CR3s
 * are compared without their low 12 bits (the PCID, not the page tables). */
struct ntl_ipt_spaces;

/* An empty default image and no address space, reading the default, into
 * *s. Returns 0, or NTL_ERR_NOMEM (err set). */
int ntl_ipt_spaces_new(struct ntl_ipt_spaces **s, struct ntl_error *err);
/* Frees s and its images; NULL is fine. */
void ntl_ipt_spaces_free(struct ntl_ipt_spaces *s);
/* The default image. Cannot fail. */
struct ntl_ipt_image *ntl_ipt_spaces_default(struct ntl_ipt_spaces *s);
/* The image of address space cr3 into *img, made empty the first time.
 * Returns 0, or NTL_ERR_NOMEM, NTL_ERR_LIMIT (more than
 * NTL_IPT_MAX_SPACES spaces); err set. */
int ntl_ipt_spaces_image(struct ntl_ipt_spaces *s, uint64_t cr3, struct ntl_ipt_image **img,
                         struct ntl_error *err);
#define NTL_IPT_MAX_SPACES 4096
/* Reads in address space cr3 from now on (the default alone when no image
 * was made for it). Returns true when that changes what is read, so that
 * a decoder's decoded instructions must be forgotten
 * (ntl_ipt_flow_invalidate). Cannot fail. */
bool ntl_ipt_spaces_switch(struct ntl_ipt_spaces *s, uint64_t cr3);
/* ntl_ipt_read_fn over the current address space (ctx: the struct
 * ntl_ipt_spaces): its image's bytes at addr, else the default's. Returns
 * the bytes read, or NTL_ERR_NOT_FOUND when neither holds addr. */
int ntl_ipt_spaces_read(uint8_t *buf, size_t size, uint64_t addr, void *ctx);
/* Number of address spaces with an image of their own. Cannot fail. */
size_t ntl_ipt_spaces_count(const struct ntl_ipt_spaces *s);

#ifdef __cplusplus
}
#endif
#endif
