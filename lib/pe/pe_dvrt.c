/* The dynamic value relocation table. */
#include "ntlens/pe_dvrt.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/reader.h"

const char *ntl_dvrt_symbol_name(uint64_t symbol)
{
    switch (symbol) {
    case NTL_DVRT_GUARD_RF_PROLOGUE: return "GUARD_RF_PROLOGUE";
    case NTL_DVRT_GUARD_RF_EPILOGUE: return "GUARD_RF_EPILOGUE";
    case NTL_DVRT_GUARD_IMPORT_CONTROL_TRANSFER: return "IMPORT_CONTROL_TRANSFER";
    case NTL_DVRT_GUARD_INDIR_CONTROL_TRANSFER: return "INDIR_CONTROL_TRANSFER";
    case NTL_DVRT_GUARD_SWITCHTABLE_BRANCH: return "SWITCHTABLE_BRANCH";
    case NTL_DVRT_ARM64X: return "ARM64X";
    case NTL_DVRT_FUNCTION_OVERRIDE: return "FUNCTION_OVERRIDE";
    case NTL_DVRT_ARM64_KERNEL_IMPORT_CALL_TRANSFER: return "ARM64_KERNEL_IMPORT_CALL_TRANSFER";
    default: return NULL;
    }
}

static unsigned entry_size(uint64_t symbol)
{
    return symbol == NTL_DVRT_GUARD_IMPORT_CONTROL_TRANSFER ? 4 : 2;
}

static void decode(uint64_t symbol, uint32_t raw, uint32_t page, struct ntl_dvrt_fixup *f)
{
    memset(f, 0, sizeof *f);
    f->raw = raw;
    f->rva = page + (raw & 0xfff);
    switch (symbol) {
    case NTL_DVRT_GUARD_IMPORT_CONTROL_TRANSFER:
        f->indirect_call = (raw >> 12) & 1;
        f->iat_index = raw >> 13;
        break;
    case NTL_DVRT_GUARD_INDIR_CONTROL_TRANSFER:
        f->indirect_call = (raw >> 12) & 1;
        f->rex_w = (raw >> 13) & 1;
        f->cfg_check = (raw >> 14) & 1;
        break;
    default:
        f->reg_or_type = (uint8_t)((raw >> 12) & 0xf);
        break;
    }
}

/* Parses the fixup blocks of one relocation: [p, p+size) at file offset off. */
static int parse_blocks(struct ntl_dvrt *d, struct ntl_dvrt_reloc *r, const uint8_t *p,
                        uint32_t size, uint64_t off, size_t *cap, struct ntl_error *err)
{
    unsigned es = entry_size(r->symbol);
    uint32_t pos = 0;

    r->first_fixup = d->fixup_count;
    while (pos < size) {
        uint32_t page, bsize, n;
        if (size - pos < 8)
            return ntl_error_set(err, NTL_ERR_TRUNCATED, "IMAGE_BASE_RELOCATION", off + pos,
                                 "%u bytes left in the fixups of symbol %" PRIu64
                                 ", too few for a block header", size - pos, r->symbol);
        page = ntl_le32(p + pos);
        bsize = ntl_le32(p + pos + 4);
        if (bsize < 8 || bsize > size - pos || (bsize - 8) % es)
            return ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_BASE_RELOCATION", off + pos + 4,
                                 "SizeOfBlock 0x%x is invalid (0x%x bytes left, %u-byte entries)",
                                 bsize, size - pos, es);
        n = (bsize - 8) / es;
        /* 16-bit entries pad a block to 4 bytes with a zero entry. */
        if (es == 2 && n && bsize % 4 == 0 && ntl_le16(p + pos + bsize - 2) == 0 && (n & 1) == 0)
            n--;
        if (d->fixup_count + n > *cap) {
            size_t ncap = *cap ? *cap : 64;
            struct ntl_dvrt_fixup *f;
            while (ncap < d->fixup_count + n)
                ncap *= 2;
            f = realloc(d->fixups, ncap * sizeof *f);
            if (!f)
                return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
            d->fixups = f;
            *cap = ncap;
        }
        for (uint32_t k = 0; k < n; k++) {
            const uint8_t *e = p + pos + 8 + k * es;
            struct ntl_dvrt_fixup *f = &d->fixups[d->fixup_count++];
            decode(r->symbol, es == 4 ? ntl_le32(e) : ntl_le16(e), page, f);
            f->file_offset = off + pos + 8 + k * es;
        }
        r->block_count++;
        pos += bsize;
    }
    r->fixup_count = d->fixup_count - r->first_fixup;
    return NTL_OK;
}

int ntl_dvrt_parse(const uint8_t *data, size_t size, uint64_t origin, uint32_t rva, bool pe32plus,
                   struct ntl_dvrt *out, struct ntl_error *err)
{
    size_t rcap = 0, fcap = 0;
    uint32_t pos;
    int rc = NTL_OK;

    memset(out, 0, sizeof *out);
    out->rva = rva;
    out->file_offset = origin;
    if (size < 8)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "IMAGE_DYNAMIC_RELOCATION_TABLE", origin,
                             "table header needs 8 bytes, 0x%zx available", size);
    out->version = ntl_le32(data);
    out->size = ntl_le32(data + 4);
    if (out->size > size - 8)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "IMAGE_DYNAMIC_RELOCATION_TABLE", origin + 4,
                             "Size 0x%x overruns the 0x%zx bytes available", out->size, size - 8);
    if (out->version != 1 && out->version != 2)
        return ntl_error_set(err, NTL_ERR_UNSUPPORTED, "IMAGE_DYNAMIC_RELOCATION_TABLE", origin,
                             "Version %u (known: 1, 2)", out->version);
    out->present = true;
    data += 8;
    origin += 8;
    pos = 0;
    while (pos < out->size && rc >= 0) {
        uint32_t left = out->size - pos;
        const uint8_t *h = data + pos;
        struct ntl_dvrt_reloc *r;
        uint32_t hdr, fixups;

        if (out->reloc_count == rcap) {
            size_t ncap = rcap ? rcap * 2 : 8;
            struct ntl_dvrt_reloc *v = realloc(out->relocs, ncap * sizeof *v);
            if (!v) {
                rc = ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
                break;
            }
            out->relocs = v;
            rcap = ncap;
        }
        r = &out->relocs[out->reloc_count];
        memset(r, 0, sizeof *r);
        r->file_offset = origin + pos;
        if (out->version == 1) {
            hdr = pe32plus ? 12 : 8;
            if (left < hdr) {
                rc = ntl_error_set(err, NTL_ERR_TRUNCATED, pe32plus ? "IMAGE_DYNAMIC_RELOCATION64"
                                   : "IMAGE_DYNAMIC_RELOCATION32", origin + pos,
                                   "entry header needs %u bytes, %u left in the table", hdr, left);
                break;
            }
            r->symbol = pe32plus ? ntl_le64(h) : ntl_le32(h);
            fixups = ntl_le32(h + hdr - 4);
        } else {
            uint32_t fixed = pe32plus ? 24 : 20;
            const uint8_t *q = h + (pe32plus ? 16 : 12);
            if (left < fixed) {
                rc = ntl_error_set(err, NTL_ERR_TRUNCATED, "IMAGE_DYNAMIC_RELOCATION_V2",
                                   origin + pos, "entry header needs %u bytes, %u left in the table",
                                   fixed, left);
                break;
            }
            hdr = r->header_size = ntl_le32(h);
            fixups = ntl_le32(h + 4);
            r->symbol = pe32plus ? ntl_le64(h + 8) : ntl_le32(h + 8);
            r->symbol_group = ntl_le32(q);
            r->flags = ntl_le32(q + 4);
            if (hdr < fixed || hdr > left) {
                rc = ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_DYNAMIC_RELOCATION_V2", origin + pos,
                                   "HeaderSize 0x%x is invalid (0x%x..0x%x)", hdr, fixed, left);
                break;
            }
            if (r->symbol == NTL_DVRT_GUARD_RF_PROLOGUE && hdr > fixed) {
                r->prologue_size = h[fixed];
                r->prologue_offset = origin + pos + fixed + 1;
                if ((uint32_t)r->prologue_size + 1 > hdr - fixed) {
                    rc = ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_PROLOGUE_DYNAMIC_RELOCATION_HEADER",
                                       origin + pos + fixed, "PrologueByteCount %u overruns the "
                                       "0x%x-byte header", r->prologue_size, hdr - fixed - 1);
                    break;
                }
            }
            if (r->symbol == NTL_DVRT_GUARD_RF_EPILOGUE && hdr > fixed) {
                const uint8_t *e = h + fixed;
                if (hdr - fixed < 8) {
                    rc = ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_EPILOGUE_DYNAMIC_RELOCATION_HEADER",
                                       origin + pos + fixed, "needs 8 bytes, the header has %u",
                                       hdr - fixed);
                    break;
                }
                r->epilogue_count = ntl_le32(e);
                r->epilogue_size = e[4];
                r->branch_descriptor_size = e[5];
                r->branch_descriptor_count = ntl_le16(e + 6);
                if ((uint64_t)r->branch_descriptor_size * r->branch_descriptor_count > hdr - fixed - 8) {
                    rc = ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_EPILOGUE_DYNAMIC_RELOCATION_HEADER",
                                       origin + pos + fixed, "%u branch descriptors of %u bytes "
                                       "overrun the 0x%x-byte header", r->branch_descriptor_count,
                                       r->branch_descriptor_size, hdr - fixed - 8);
                    break;
                }
            }
        }
        r->fixup_size = fixups;
        if (fixups > left - hdr) {
            rc = ntl_error_set(err, NTL_ERR_TRUNCATED, "IMAGE_DYNAMIC_RELOCATION", origin + pos,
                               "fixup size 0x%x of symbol %" PRIu64 " overruns the table "
                               "(0x%x bytes left)", fixups, r->symbol, left - hdr);
            break;
        }
        out->reloc_count++;
        rc = parse_blocks(out, r, h + hdr, fixups, origin + pos + hdr, &fcap, err);
        pos += hdr + fixups;
    }
    if (rc < 0)
        ntl_dvrt_free(out);
    return rc;
}

int ntl_pe_dvrt(const struct ntl_pe *pe, struct ntl_dvrt *out, struct ntl_error *err)
{
    struct ntl_pe_load_config lc;
    const uint8_t *p;
    size_t avail;
    uint64_t off;
    uint32_t rva;
    int rc;

    memset(out, 0, sizeof *out);
    rc = ntl_pe_load_config(pe, &lc, err);
    if (rc < 0 || !lc.present)
        return rc;
    if (lc.dvrt_section) {
        const struct ntl_pe_section *s;
        if (lc.dvrt_section > pe->section_count)
            return ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_LOAD_CONFIG_DIRECTORY", NTL_NO_OFFSET,
                                 "DynamicValueRelocTableSection %u, image has %u sections",
                                 lc.dvrt_section, pe->section_count);
        s = &pe->sections[lc.dvrt_section - 1];
        if ((uint64_t)s->virtual_address + lc.dvrt_offset > UINT32_MAX)
            return ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_LOAD_CONFIG_DIRECTORY", NTL_NO_OFFSET,
                                 "DynamicValueRelocTableOffset 0x%x overflows", lc.dvrt_offset);
        rva = s->virtual_address + lc.dvrt_offset;
    } else if (lc.dvrt_va) {
        if (lc.dvrt_va < pe->image_base || lc.dvrt_va - pe->image_base >= pe->size_of_image)
            return ntl_error_set(err, NTL_ERR_FORMAT, "IMAGE_LOAD_CONFIG_DIRECTORY", NTL_NO_OFFSET,
                                 "DynamicValueRelocTable 0x%" PRIx64 " lies outside the image",
                                 lc.dvrt_va);
        rva = (uint32_t)(lc.dvrt_va - pe->image_base);
    } else {
        return NTL_OK;
    }
    rc = ntl_pe_rva_span(pe, rva, &p, &avail, &off, err);
    if (rc < 0) {
        ntl_error_prefix(err, "dynamic value relocation table");
        return rc;
    }
    return ntl_dvrt_parse(p, avail, off, rva, pe->pe32plus, out, err);
}

void ntl_dvrt_free(struct ntl_dvrt *d)
{
    free(d->relocs);
    free(d->fixups);
    memset(d, 0, sizeof *d);
}
