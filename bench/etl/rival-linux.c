#include "rival.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <sys/types.h>

typedef ssize_t (*samba_fn)(const uint8_t *, uint32_t, uint8_t *, uint32_t);
typedef int (*create_fn)(int, size_t, unsigned, void **);
typedef int (*create_d_fn)(int, size_t, void **);
typedef size_t (*compress_fn)(const void *, size_t, void *, size_t, void *);
typedef int (*decompress_fn)(const void *, size_t, void *, size_t, void *);

static samba_fn samba;
static compress_fn wim_compress;
static decompress_fn wim_decompress;
static void *wim_c, *wim_d;
static bool loaded;

static void load(void)
{
    if (loaded)
        return;
    loaded = true;
    void *h = dlopen("/usr/lib/x86_64-linux-gnu/samba/libndr-samba-samba4.so.0", RTLD_NOW);
    if (h)
        *(void **)&samba = dlsym(h, "lzxpress_decompress");
    h = dlopen("libwim.so.15", RTLD_NOW);
    if (h) {
        create_fn cc;
        create_d_fn cd;
        *(void **)&cc = dlsym(h, "wimlib_create_compressor");
        *(void **)&cd = dlsym(h, "wimlib_create_decompressor");
        *(void **)&wim_compress = dlsym(h, "wimlib_compress");
        *(void **)&wim_decompress = dlsym(h, "wimlib_decompress");
        /* 1: WIMLIB_COMPRESSION_TYPE_XPRESS */
        if (!cc || !cd || cc(1, 65536, 0, &wim_c) || cd(1, 65536, &wim_d))
            wim_compress = NULL;
    }
}

long rival_samba_xpress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
    load();
    return samba ? (long)samba(in, (uint32_t)in_size, out, (uint32_t)out_size) : -1;
}

long rival_wimlib_huff_compress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
    load();
    return wim_compress ? (long)wim_compress(in, in_size, out, out_size, wim_c) : -1;
}

long rival_wimlib_huff_decompress(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
    load();
    if (!wim_compress || !wim_decompress)
        return -1;
    return wim_decompress(in, in_size, out, out_size, wim_d) ? -1 : (long)out_size;
}
