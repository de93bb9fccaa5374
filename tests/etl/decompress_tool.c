/* etl_decompress FORMAT SIZE < compressed > plain: the library's MS-XCA
 * decompressors for peer tests (Samba's and wimlib's compressors). */
#include <stdio.h>
#include <stdlib.h>

#include "ntlens/compress.h"
#include "ntlens/error.h"

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int format = ntl_compress_format_parse(argv[1]);
    long size = atol(argv[2]);
    size_t cap = 1 << 20, n = 0;
    uint8_t *in = malloc(cap), *out = malloc((size_t)size + 1);
    if (!in || !out || format < 0)
        return 2;
    size_t got;
    while ((got = fread(in + n, 1, cap - n, stdin)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *m = realloc(in, cap *= 2);
            if (!m)
                return 2;
            in = m;
        }
    }
    struct ntl_error err = {0};
    long r = ntl_decompress(format, in, n, out, (size_t)size, 0, &err);
    if (r < 0) {
        char buf[400];
        fprintf(stderr, "%s\n", ntl_error_format(&err, buf, sizeof buf));
        return 1;
    }
    fwrite(out, 1, (size_t)r, stdout);
    free(in);
    free(out);
    return 0;
}
