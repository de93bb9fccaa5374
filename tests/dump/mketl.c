/* Writes a small kernel trace (.etl) whose image events load the given
 * modules, for `ntlens dump build --etl` tests. Built on tests/etl's
 * byte-by-byte generator. Before the real loads it logs a load and unload of
 * the first module at a stale address, which the build must ignore.
 *     mketl OUT.etl NAME BASE SIZE [NAME BASE SIZE]... */
#include <stdio.h>
#include <stdlib.h>

#include "../etl/etl_gen.h"
#include "ntlens/buf.h"

int main(int argc, char **argv)
{
    struct gen g;
    struct ntl_error err = {0};
    uint64_t ts = 1000;

    if (argc < 5 || (argc - 2) % 3)
        return 2;
    gen_init(&g, 0x10000, 8, 0x10001, 0, 10000000, 133000000000000000ull, 1, "NT Kernel Logger",
             "kernel.etl");
    gen_image(&g, false, false, true, 10, ts++, 0xfffff80000100000ull,
              strtoull(argv[4], NULL, 0), 0, 0, 0, 0x140000000, argv[2]);
    gen_image(&g, false, false, true, 2, ts++, 0xfffff80000100000ull,
              strtoull(argv[4], NULL, 0), 0, 0, 0, 0x140000000, argv[2]);
    for (int i = 2; i + 2 < argc; i += 3)
        gen_image(&g, false, false, true, i == 2 ? 3 : 10, ts++, strtoull(argv[i + 1], NULL, 0),
                  strtoull(argv[i + 2], NULL, 0), 0, 0, 0, 0x140000000, argv[i]);
    gen_finish(&g);
    if (ntl_file_write(argv[1], g.file.data, g.file.len, &err) < 0) {
        fprintf(stderr, "mketl: %s\n", err.message);
        return 1;
    }
    gen_free(&g);
    return 0;
}
