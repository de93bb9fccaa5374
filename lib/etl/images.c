/* Image events: Image_Load (v2 and later) payloads of the kernel's Image and
 * Process groups, and of classic events with the Image class GUID.
 *
 * Payload: ImageBase ptr, ImageSize ptr, ProcessId u32, ImageCheckSum u32,
 * TimeDateStamp u32, 4 reserved/signature bytes, DefaultBase ptr, four
 * reserved u32, then the NUL-terminated UTF-16 file name. Version 1 has
 * only ImageBase, ImageSize, ProcessId and the name. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/etl_images.h"
#include "ntlens/reader.h"
#include "ntlens/utf16.h"

#define GROUP_PROCESS 0x03
#define GROUP_IMAGE 0x14

/* 2cb15d1d-5fc1-11d2-abe1-00a0c911f518 as stored. */
static const struct ntl_guid image_guid = {{0x1d, 0x5d, 0xb1, 0x2c, 0xc1, 0x5f, 0xd2, 0x11, 0xab,
                                            0xe1, 0x00, 0xa0, 0xc9, 0x11, 0xf5, 0x18}};

const char *ntl_etl_image_kind_name(enum ntl_etl_image_kind kind)
{
    switch (kind) {
    case NTL_ETL_IMAGE_LOAD: return "Load";
    case NTL_ETL_IMAGE_UNLOAD: return "Unload";
    case NTL_ETL_IMAGE_DCSTART: return "DCStart";
    case NTL_ETL_IMAGE_DCEND: return "DCEnd";
    }
    return "?";
}

static bool image_kind(uint8_t opcode, enum ntl_etl_image_kind *kind)
{
    switch (opcode) {
    case 10: *kind = NTL_ETL_IMAGE_LOAD; return true;
    case 2: *kind = NTL_ETL_IMAGE_UNLOAD; return true;
    case 3: *kind = NTL_ETL_IMAGE_DCSTART; return true;
    case 4: *kind = NTL_ETL_IMAGE_DCEND; return true;
    default: return false;
    }
}

/* units UTF-16 units at s as UTF-8 in dst (size bytes), as
 * ntl_utf16_to_utf8 writes them: an ASCII name (nearly every path; a
 * trace's rundown has thousands) copied a byte a unit, any other one
 * converted. */
static void name_utf8(const uint8_t *s, size_t units, char *dst, size_t size)
{
    size_t i = 0;
    for (; i < units && i < size - 1 && !s[2 * i + 1] && s[2 * i] < 0x80; i++)
        dst[i] = (char)s[2 * i];
    if (i == units || i == size - 1)
        dst[i] = '\0';
    else
        ntl_utf16_to_utf8(s, units, dst, size);
}

int ntl_etl_image_decode(const struct ntl_etl *t, const struct ntl_etl_event *ev,
                         struct ntl_etl_image *img, struct ntl_error *err)
{
    enum ntl_etl_image_kind kind;
    switch (ev->kind) {
    case NTL_ETL_KIND_SYSTEM:
    case NTL_ETL_KIND_COMPACT:
    case NTL_ETL_KIND_PERFINFO:
        if (ev->group != GROUP_PROCESS && ev->group != GROUP_IMAGE)
            return 0;
        break;
    case NTL_ETL_KIND_CLASSIC:
    case NTL_ETL_KIND_INSTANCE:
        if (!ntl_guid_equal(&ev->guid, &image_guid))
            return 0;
        break;
    default:
        return 0;
    }
    if (!image_kind(ev->opcode, &kind))
        return 0;
    /* Process-group opcodes 2..4 are process events unless the payload is
     * an image's: only opcode 10 is unambiguous there. */
    if (ev->group == GROUP_PROCESS && ev->kind != NTL_ETL_KIND_CLASSIC &&
        ev->kind != NTL_ETL_KIND_INSTANCE && kind != NTL_ETL_IMAGE_LOAD)
        return 0;

    const uint8_t *p = ev->payload;
    size_t n = ev->payload_size, ps = ev->is64 ? 8 : 4;
    size_t fixed = ev->version >= 2 ? 3 * ps + 16 + 16 : 2 * ps + 4;
    if (n < fixed)
        return ntl_error_set(err, NTL_ERR_TRUNCATED, "Image event", ev->offset,
                             "%zu payload bytes, too few for a version %u Image event (%zu)", n,
                             ev->version, fixed);
#define PTR(off) (ps == 8 ? ntl_le64(p + (off)) : ntl_le32(p + (off)))
    memset(img, 0, offsetof(struct ntl_etl_image, name)); /* the name is written below */
    img->kind = kind;
    img->base = PTR(0);
    img->size = PTR(ps);
    img->pid = ntl_le32(p + 2 * ps);
    if (ev->version >= 2) {
        img->checksum = ntl_le32(p + 2 * ps + 4);
        img->time_date_stamp = ntl_le32(p + 2 * ps + 8);
        img->default_base = PTR(2 * ps + 16);
    }
#undef PTR
    img->kernel = ps == 8 ? (img->base >> 63) != 0 : (img->base >> 31) != 0;
    img->timestamp = ev->timestamp;
    img->filetime = t ? ntl_etl_time_to_filetime(t, ev->timestamp) : 0;
    size_t units = (n - fixed) / 2;
    name_utf8(p + fixed, ntl_utf16_unit_len(p + fixed, units), img->name, sizeof img->name);
    return 1;
}

/* Keeps the first error skipped. */
static void salvage_note(struct ntl_etl_salvage *sv, const struct ntl_error *err)
{
    if (!sv->first.status)
        sv->first = *err;
}

int ntl_etl_images_load(const char *path, bool keep_going, struct ntl_etl_image **out,
                        size_t *count, struct ntl_etl_salvage *salvage, struct ntl_error *err)
{
    struct ntl_etl *t;
    struct ntl_etl_event ev;
    struct ntl_etl_image *arr = NULL;
    struct ntl_etl_salvage sv = {0};
    size_t n = 0, cap = 0;
    int rc = ntl_etl_open_file(path, NULL, &t, err);
    if (rc < 0)
        return rc;
    for (;;) {
        rc = ntl_etl_next(t, &ev, err);
        if (rc == 0)
            break;
        if (rc < 0) {
            bool cut = rc == NTL_ETL_TRUNCATED;
            if (!keep_going || (!cut && !ntl_etl_can_continue(t)))
                goto fail;
            salvage_note(&sv, err);
            sv.truncated |= cut;
            sv.bad_buffers += !cut;
            continue; /* after a cut, the next call ends the trace */
        }
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            struct ntl_etl_image *a = realloc(arr, nc * sizeof *a);
            if (!a) {
                rc = ntl_error_set(err, NTL_ERR_NOMEM, "Image event", NTL_NO_OFFSET, "out of memory");
                goto fail;
            }
            arr = a;
            cap = nc;
        }
        rc = ntl_etl_image_decode(t, &ev, &arr[n], err);
        if (rc < 0) {
            if (!keep_going)
                goto fail;
            salvage_note(&sv, err);
            sv.bad_events++;
            continue;
        }
        n += (size_t)rc;
    }
    ntl_etl_close(t);
    ntl_error_clear(err);
    *out = arr;
    *count = n;
    if (salvage)
        *salvage = sv;
    return 0;
fail:
    ntl_etl_close(t);
    free(arr);
    return rc;
}

const struct ntl_etl_image *ntl_etl_images_find(const struct ntl_etl_image *imgs, size_t count,
                                                uint64_t addr)
{
    for (size_t i = count; i-- > 0;) {
        const struct ntl_etl_image *m = &imgs[i];
        if (addr >= m->base && addr - m->base < m->size)
            return m->kind == NTL_ETL_IMAGE_UNLOAD ? NULL : m;
    }
    return NULL;
}
