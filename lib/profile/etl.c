/* ETW events into a profile: SampledProfile, Image, Process and Thread.
 * Each event is decoded to an item (etl-item.h) and applied to the model. */
#include <string.h>

#include "etl-item.h"
#include "etl-stacks.h"
#include "model.h"
#include "ntlens/reader.h"

#define GROUP_PROCESS 0x03
#define GROUP_THREAD 0x05
#define GROUP_PERFINFO 0x0F
#define GROUP_STACKWALK 0x18
#define OP_SAMPLED_PROFILE 46
#define OP_START 1
#define OP_DCSTART 3
#define OP_DCEND 4

static uint64_t le(const uint8_t *b, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i--;)
        v = v << 8 | b[i];
    return v;
}

static int short_payload(const struct ntl_etl_event *ev, const char *what, size_t need,
                         struct ntl_error *err)
{
    return ntl_error_set(err, NTL_ERR_TRUNCATED, what, ev->offset,
                         "payload of %zu bytes, %zu needed", ev->payload_size, need);
}

static bool wanted(uint64_t ts, uint32_t tid, uint32_t pid,
                   const struct ntl_profile_etl_options *opt)
{
    return (!opt->pid_set || pid == opt->pid) && (!opt->tid_set || tid == opt->tid) &&
           (!opt->start || ts >= opt->start) && (!opt->end || ts < opt->end);
}

/* SampledProfile: InstructionPointer (pointer), ThreadId u32, Count u16,
 * Reserved u16. Each event is one sample, whatever Count says: Microsoft
 * documents the (u32) Count as "not used"; its low 16 bits are 1 in all
 * 79,528 events of net.4.5.2.x64.etl (the high ones vary), and the event
 * is the unit xperf's and WPA's sample counts use. The payload must hold
 * it all the same: a shorter one is not this event. */
static int decode_sample(const struct ntl_etl_event *ev, struct etl_item *it,
                         struct ntl_error *err)
{
    unsigned psz = ev->is64 ? 8 : 4;
    if (ev->payload_size < psz + 8)
        return short_payload(ev, "SampledProfile", psz + 8, err);
    it->type = ITEM_SAMPLE;
    it->ip = ev->is64 ? ntl_le64(ev->payload) : ntl_le32(ev->payload);
    it->tid = ntl_le32(ev->payload + psz);
    return 0;
}

int etl_sample_apply(struct ntl_profile *p, struct ntl_profile_etl_stacks *stacks,
                     const struct etl_sample *sm, const struct ntl_profile_etl_options *opt,
                     struct ntl_error *err)
{
    struct ntl_profile_sample s = {.ip = sm->ip, .tid = sm->tid};
    s.pid = ntl_profile_pid_of(p, s.tid);
    if (!wanted(sm->ts, s.tid, s.pid, opt))
        return NTL_PROFILE_ETL_FILTERED;
    size_t index = p->nsamples + p->ndropped; /* ntl_profile_sample_count, inline */
    int rc = ntl_profile_add_sample(p, &s, err);
    if (rc >= 0 && stacks)
        rc = etl_stacks_sample(stacks, sm->ts, s.tid, index, err);
    return rc < 0 ? rc : NTL_PROFILE_ETL_SAMPLE;
}

/* Image Load/DCStart add a range, Unload ends it. DCEnd (the rundown at
 * the end of the trace) mostly repeats what Load/DCStart said; a module it
 * names that no active range holds was loaded before what the trace kept
 * (a circular buffer overwrote the start rundown, a Load event was lost):
 * it is added as there since the start, for ntl_profile_place_late. */
static int image(struct ntl_profile *p, const struct etl_item *it, unsigned shift,
                 struct ntl_error *err)
{
    bool dcend = it->kind == NTL_ETL_IMAGE_DCEND;
    if (it->kind == NTL_ETL_IMAGE_UNLOAD) {
        ntl_profile_end_range(p, it->pid, it->base);
        return NTL_PROFILE_ETL_IMAGE;
    }
    if (!it->size || it->base + it->size - 1 < it->base ||
        (dcend && model_range_at(p, it->pid, it->base) >= 0))
        return NTL_PROFILE_ETL_IMAGE;
    const char *name = it->name, *slash;
    while ((slash = strpbrk(name, "\\/")))
        name = slash + 1;
    int rc = ntl_profile_add_range(p, it->pid, name, it->name, it->base, it->size, shift, err);
    if (rc >= 0 && dcend)
        ntl_profile_range_since_start(p, (size_t)rc);
    return rc < 0 ? rc : NTL_PROFILE_ETL_IMAGE;
}

/* Whether pid has a name already (DCEnd names only the unnamed). */
static bool named(const struct ntl_profile *p, uint32_t pid)
{
    const uint64_t *i = u64map_get(&p->proc_of, pid);
    return i && p->procs[*i].name;
}

/* A DCEnd event's error rc, told only if the process has no name by its
 * time (it->error); any other's at once. */
static int later(struct etl_item *it, int rc, struct ntl_error *err)
{
    if (!it->dcend)
        return rc;
    it->error = err;
    return 0;
}

/* Process (v2-v4) Start/DCStart/DCEnd: UniqueProcessKey (pointer), ProcessId,
 * ParentId, SessionId, ExitStatus, [DirectoryTableBase (pointer), v3+],
 * [Flags, v4], UserSID (a TOKEN_USER and its SID, or 4 zero bytes), then
 * ImageFileName in ANSI. A DCEnd event of a named process is passed over
 * before its SID is read: it->error then holds what reading it found. */
static int decode_process(const struct ntl_etl_event *ev, struct etl_item *it, char *image,
                          size_t size, struct ntl_error *err)
{
    const uint8_t *b = ev->payload;
    size_t n = ev->payload_size, psz = ev->is64 ? 8 : 4;
    size_t sid = psz + 16 + (ev->version >= 3 ? psz : 0) + (ev->version >= 4 ? 4 : 0);
    if (n < sid + 4)
        return short_payload(ev, "Process", sid + 4, err);
    it->type = ITEM_PROCESS;
    it->pid = (uint32_t)le(b + psz, 4);
    it->name = image;
    size_t name = sid + 4;
    if (le(b + sid, 4) != 0) {
        /* TOKEN_USER (two pointers), then the SID: 8 bytes and 4 per
         * sub-authority, their count in the SID's second byte. */
        if (n < sid + 2 * psz + 8)
            return later(it, short_payload(ev, "Process", sid + 2 * psz + 8, err), err);
        name = sid + 2 * psz + 8 + 4 * (size_t)b[sid + 2 * psz + 1];
    }
    if (n < name)
        return later(it, short_payload(ev, "Process", name, err), err);
    size_t len = 0;
    while (name + len < n && b[name + len] && len + 1 < size) {
        image[len] = (char)b[name + len];
        len++;
    }
    image[len] = 0;
    return 0;
}

static int process(struct ntl_profile *p, const struct etl_item *it, struct ntl_error *err)
{
    if (it->dcend && named(p, it->pid))
        return NTL_PROFILE_ETL_PROCESS;
    if (it->error) {
        if (err && err != it->error)
            *err = *it->error;
        return it->error->status;
    }
    int rc = ntl_profile_set_process(p, it->pid, it->name, err);
    return rc < 0 ? rc : NTL_PROFILE_ETL_PROCESS;
}

/* Thread (v2-v4) Start/DCStart/DCEnd: ProcessId u32, TThreadId u32, ...
 * DCEnd attributes only a thread the trace never placed (its start
 * rundown lost); ntl_profile_place_late then moves its samples. */
static int decode_thread(const struct ntl_etl_event *ev, struct etl_item *it,
                         struct ntl_error *err)
{
    if (ev->payload_size < 8)
        return short_payload(ev, "Thread", 8, err);
    it->type = ITEM_THREAD;
    it->pid = (uint32_t)le(ev->payload, 4);
    it->tid = (uint32_t)le(ev->payload + 4, 4);
    return 0;
}

static int thread(struct ntl_profile *p, const struct etl_item *it, struct ntl_error *err)
{
    if (it->dcend && ntl_profile_pid_of(p, it->tid) != NTL_PROFILE_NO_PID)
        return NTL_PROFILE_ETL_THREAD;
    int rc = ntl_profile_set_thread(p, it->tid, it->pid, err);
    return rc < 0 ? rc : NTL_PROFILE_ETL_THREAD;
}

static void decode_image(const struct ntl_etl_image *img, struct etl_item *it)
{
    it->type = ITEM_IMAGE;
    it->kind = img->kind;
    it->pid = img->kernel ? NTL_PROFILE_KERNEL_PID : img->pid;
    it->base = img->base;
    it->size = img->size;
    it->name = img->name;
}

int etl_item_decode(const struct ntl_etl *t, const struct ntl_etl_event *ev,
                    struct etl_item *it, struct etl_item_names *names, struct ntl_error *err)
{
    it->type = ITEM_OTHER;
    it->ts = ev->timestamp;
    it->dcend = ev->opcode == OP_DCEND;
    it->error = NULL;
    bool kernel = ev->kind == NTL_ETL_KIND_SYSTEM || ev->kind == NTL_ETL_KIND_COMPACT ||
                  ev->kind == NTL_ETL_KIND_PERFINFO;
    /* Samples and stacks first, most of a profile's events: these groups
     * hold no image event, so the image decoder (a call, then a test
     * that fails) need not see them. */
    if (kernel && ev->group == GROUP_PERFINFO && ev->opcode == OP_SAMPLED_PROFILE)
        return decode_sample(ev, it, err);
    if (kernel && ev->group == GROUP_STACKWALK &&
        (ev->opcode == 32 || (ev->opcode >= 34 && ev->opcode <= 38))) {
        it->type = ITEM_STACK;
        return 0;
    }
    int rc = ntl_etl_image_decode(t, ev, &names->img, err);
    if (rc != 0) {
        if (rc > 0)
            decode_image(&names->img, it);
        return rc < 0 ? rc : 0;
    }
    if (!kernel)
        return 0;
    if (ev->opcode != OP_START && ev->opcode != OP_DCSTART && ev->opcode != OP_DCEND)
        return 0;
    if (ev->group == GROUP_PROCESS)
        return decode_process(ev, it, names->process, sizeof names->process, err);
    if (ev->group == GROUP_THREAD)
        return decode_thread(ev, it, err);
    return 0;
}

int etl_item_apply(struct ntl_profile *p, struct ntl_profile_etl_stacks *stacks,
                   const struct etl_item *it, const struct ntl_profile_etl_options *opt,
                   struct ntl_error *err)
{
    switch (it->type) {
    case ITEM_SAMPLE:
        return etl_sample_apply(p, stacks, &(struct etl_sample){it->ts, it->ip, it->tid}, opt,
                                err);
    case ITEM_IMAGE:
        return image(p, it, opt->bucket_shift ? opt->bucket_shift : NTL_PROFILE_MIN_BUCKET_SHIFT,
                     err);
    case ITEM_PROCESS: return process(p, it, err);
    case ITEM_THREAD: return thread(p, it, err);
    default: return NTL_PROFILE_ETL_OTHER;
    }
}

int etl_bucket_shift_bad(unsigned shift, struct ntl_error *err)
{
    return ntl_error_set(err, NTL_ERR_ARGUMENT, "profile", NTL_NO_OFFSET,
                         "bucket size 2^%u is outside 2^2..2^31", shift);
}

int ntl_profile_etl_feed(struct ntl_profile *p, struct ntl_profile_etl_stacks *stacks,
                         const struct ntl_etl *t, const struct ntl_etl_event *ev,
                         const struct ntl_profile_etl_options *opt, struct ntl_error *err)
{
    struct etl_item it;
    struct etl_item_names names;
    unsigned shift;
    int rc = etl_bucket_shift(opt, &shift, err);
    if (rc < 0 || (rc = etl_item_decode(t, ev, &it, &names, err)) < 0)
        return rc;
    if (it.type == ITEM_STACK) {
        if (!stacks)
            return NTL_PROFILE_ETL_OTHER;
        rc = etl_stacks_event(stacks, ev, err);
        return rc < 0 ? rc : NTL_PROFILE_ETL_STACK;
    }
    return etl_item_apply(p, stacks, &it, opt, err);
}
