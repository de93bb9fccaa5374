/* The samples a profile keeps, with their stacks, for flame graphs. */
#include <string.h>

#include "model.h"

static int frames_add(struct ntl_profile *p, const uint64_t *stack, size_t depth, size_t *off,
                      struct ntl_error *err)
{
    int rc = ntl_buf_reserve(&p->frames, depth * 8);
    if (rc < 0)
        return ntl_error_set(err, rc, "profile stack", NTL_NO_OFFSET, "%s",
                             rc == NTL_ERR_LIMIT ? "stacks exceed 8 GiB" : "out of memory");
    /* Whole u64s at 8-byte offsets of a malloc'd buffer: aligned. */
    *off = p->frames.len / 8;
    ntl_buf_append(&p->frames, stack, depth * 8);
    return 0;
}

int model_keep_sample(struct ntl_profile *p, const struct ntl_profile_sample *s, uint32_t pid,
                      uint64_t weight, bool placed, struct ntl_error *err)
{
    size_t depth = p->no_stacks ? 0 : s->depth > NTL_PROFILE_MAX_DEPTH ? NTL_PROFILE_MAX_DEPTH
                                                                        : s->depth;
    size_t off = 0;
    int rc;
    if (p->nsamples + p->ndropped >= MODEL_MAX_SAMPLES)
        return ntl_error_set(err, NTL_ERR_LIMIT, "profile sample", NTL_NO_OFFSET,
                             "more than 2^30 samples");
    /* Without stacks, only ntl_profile_place_late reads a sample, and it
     * leaves one a range held in a known process as it is: 40 bytes a
     * sample not written (page faults were most of adding them). */
    if (p->no_stacks && placed && pid != NTL_PROFILE_NO_PID) {
        p->ndropped++;
        return 0;
    }
    if (model_reserve((void **)&p->samples, &p->cap_samples, p->nsamples, sizeof *p->samples) < 0)
        return ntl_error_set(err, NTL_ERR_NOMEM, "profile sample", NTL_NO_OFFSET,
                             "out of memory");
    if (depth && (rc = frames_add(p, s->stack, depth, &off, err)) < 0)
        return rc;
    p->samples[p->nsamples++] =
        (struct model_sample){pid, s->tid, weight, s->ip, off, (uint32_t)depth, placed};
    return 0;
}

void ntl_profile_keep_stacks(struct ntl_profile *p, bool keep) { p->no_stacks = !keep; }

size_t ntl_profile_sample_count(const struct ntl_profile *p)
{
    return p->nsamples + p->ndropped;
}

int ntl_profile_set_stack(struct ntl_profile *p, size_t sample, const uint64_t *stack,
                          size_t depth, struct ntl_error *err)
{
    size_t off = 0;
    int rc;
    if (sample >= p->nsamples + p->ndropped)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "profile sample", NTL_NO_OFFSET,
                             "no sample %zu", sample);
    if (p->no_stacks)
        return 0;
    if (p->ndropped) /* indices no longer match the kept samples' */
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "profile sample", NTL_NO_OFFSET,
                             "sample %zu: samples were added without stacks before", sample);
    if (depth > NTL_PROFILE_MAX_DEPTH)
        depth = NTL_PROFILE_MAX_DEPTH;
    if (depth && (rc = frames_add(p, stack, depth, &off, err)) < 0)
        return rc;
    p->samples[sample].off = off;
    p->samples[sample].depth = (uint32_t)depth;
    return 0;
}

uint64_t ntl_profile_frame_address(const struct ntl_profile *p, uint64_t entry)
{
    return p->info.frames_as_is ? entry : entry - 1;
}

int ntl_profile_stack_next(const struct ntl_profile *p, size_t *pos,
                           struct ntl_profile_sample *s)
{
    if (*pos >= p->nsamples)
        return 0;
    const struct model_sample *m = &p->samples[(*pos)++];
    *s = (struct ntl_profile_sample){.ip = m->ip, .pid = m->pid, .tid = m->tid,
                                     .weight = m->weight, .depth = m->depth,
                                     .stack = m->depth ? (const uint64_t *)(const void *)
                                                             p->frames.data + m->off
                                                       : NULL};
    return 1;
}
