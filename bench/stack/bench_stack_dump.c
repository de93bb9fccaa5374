/* Benchmark: minidump stack walking, frames per second. Walks every thread
 * of DUMP (with module files from MODULES_DIR) again and again for SECONDS
 * and reports threads, frames, how they were found, and the rate. Each
 * walk is a whole ntl_stack_from_dump: parsing the dump, loading and
 * mapping the module files it needs, unwinding, naming.
 *     walk_dump DUMP MODULES_DIR [SECONDS]   (stack_dump.sh makes the dump and runs it) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ntlens/buf.h"
#include "ntlens/stack.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now(void) { return clock_s(CLOCK_MONOTONIC); }

int main(int argc, char **argv)
{
    struct ntl_buf dump;
    struct ntl_error err = {0};
    if (argc < 3) {
        fprintf(stderr, "usage: walk_dump DUMP MODULES_DIR [SECONDS]\n");
        return 2;
    }
    double seconds = argc > 3 ? atof(argv[3]) : 3.0;
    if (ntl_file_read(argv[1], 1u << 30, &dump, &err) < 0) {
        fprintf(stderr, "%s: %s\n", argv[1], err.message);
        return 1;
    }
    struct ntl_stack_options o = {.modules_dir = argv[2]};
    size_t walks = 0, frames = 0, threads = 0, noted = 0, by_how[NTL_STACK_SCAN + 1] = {0};
    /* CPU time too: on a shared machine the wall clock measures the others. */
    double start = now(), end = start, cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    while (end - start < seconds || walks == 0) {
        struct ntl_stack_process *p;
        if (ntl_stack_from_dump(dump.data, dump.len, &o, &p, &err) < 0) {
            fprintf(stderr, "%s: %s\n", argv[1], err.message);
            return 1;
        }
        if (walks++ == 0) {
            threads = p->nthreads;
            for (size_t i = 0; i < p->nthreads; i++) {
                frames += p->threads[i]->nframes;
                noted += *p->threads[i]->note != 0;
                for (size_t k = 0; k < p->threads[i]->nframes; k++)
                    by_how[p->threads[i]->frames[k].how]++;
            }
        }
        ntl_stack_process_free(p);
        end = now();
    }
    double per = (end - start) / (double)walks;
    double cpu = (clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0) / (double)walks;
    printf("dump: %zu bytes, %zu threads (%zu with a note), %zu frames per walk\n", dump.len,
           threads, noted, frames);
    printf("frames by how: context %zu, cfi %zu, frame-pointer %zu, scan %zu\n",
           by_how[NTL_STACK_CONTEXT], by_how[NTL_STACK_CFI], by_how[NTL_STACK_FRAME_POINTER],
           by_how[NTL_STACK_SCAN]);
    printf("%zu walks in %.2f s: %.2f ms per walk, %.0f frames/s, %.0f threads/s (wall clock)\n",
           walks, end - start, per * 1e3, (double)frames / per, (double)threads / per);
    printf("CPU: %.2f ms per walk, %.0f frames per CPU-second, %.0f threads per CPU-second\n",
           cpu * 1e3, (double)frames / cpu, (double)threads / cpu);
    ntl_buf_free(&dump);
    return 0;
}
